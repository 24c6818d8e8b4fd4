/*
 * The randomized test of the collectives (dcuda_broadcast, dcuda_reduce,
 * dcuda_allreduce, dcuda_reduce_scatter, dcuda_allgather, dcuda_alltoall),
 * shared by its rank code (coll_kernels.c) and its host driver
 * (coll_host.c), which both regenerate every step from the seed alone.
 *
 * Each rank has three windows: A on WORLD and B on DEVICE (where the
 * collectives work) and C on WORLD (user puts); the `split` case adds D
 * on a split of WORLD by parity, ranked from the highest WORLD rank down
 * (its collectives take the tree and the ring: the reads of one device's
 * parts need WORLD's or DEVICE's order). A step draws, from the
 * seed: the communicator, the collective, the root, the datatype and op, a
 * size across the protocols' thresholds (inline bytes, the tiny put, the
 * pushed form's 64-byte shares and its 4 KiB limit, the 4 KiB eager
 * limit, several 64 KiB chunks) and the algorithms' (reads of
 * the parts of one device's ranks, tree, ring or a broadcast's chain),
 * and an offset. Each
 * rank fills its data (its own values; a broadcast's root its bytes, the
 * others noise; an alltoall's blocks for each rank, noise where blocks
 * arrive) and a guard after the room the
 * call may use, sends a notified put with a user tag to its WORLD
 * neighbour, calls the collective, then checks the user put, the guard and
 * every element against a serial computation over the communicator's
 * ranks. Consecutive steps reuse the same memory at other offsets, and the
 * two communicators interleave; a quarter of the steps repeat the call of
 * the step before, with new data. The host checks the last step of each
 * window again.
 */
#ifndef DCUDA_TESTS_COLL_H
#define DCUDA_TESTS_COLL_H

#include "dcuda/dcuda_rank.h"
#include "test_common.h"

#define COLL_STEPS 24
#define COLL_MAX_BYTES 320000u /* a step's data at most (40000 doubles) */
#define COLL_SLACK 4096u       /* offsets are below this */
#define COLL_GUARD 64u         /* bytes after the room a call may use */
#define COLL_USER 64u          /* bytes of a step's user put */
#define COLL_USER_TAG 7
#define COLL_GUARD_BYTE 0xa5u

enum coll_kind {
    COLL_BROADCAST = 0,
    COLL_ALLREDUCE = 1,
    COLL_ALLGATHER = 2,
    COLL_REDUCE = 3,
    COLL_REDUCE_SCATTER = 4,
    COLL_ALLTOALL = 5,
    COLL_KINDS = 6
};

/* Result slots of each rank: res[rank * COLL_SLOTS + slot]. */
enum coll_res {
    COLL_RES_STATUS = 0, /* first failing rank API call (0: none) */
    COLL_RES_BAD,        /* steps with a wrong element, guard byte or user byte */
    COLL_RES_STEPS,      /* steps done */
    COLL_SLOTS
};

/* The communicators of the steps, and the index of their windows. */
enum { COLL_ON_WORLD = 0, COLL_ON_DEVICE = 1, COLL_ON_SPLIT = 2, COLL_ONS = 3 };

/* The ranks of a step's communicator: rank k is WORLD rank first +
 * stride * k. */
typedef struct coll_group {
    int first, stride, size;
} coll_group_t;

TEST_FN int coll_member(const coll_group_t *g, int k) { return g->first + g->stride * k; }
/* The rank in g of its member WORLD rank w. */
TEST_FN int coll_group_rank(const coll_group_t *g, int w) { return (w - g->first) / g->stride; }

/* The split: WORLD rank w's half (by parity), from its highest rank down. */
TEST_FN coll_group_t coll_split_group(int w, int world)
{
    coll_group_t g;
    g.first = (world - 1) - ((world - 1 - w) % 2);
    g.stride = -2;
    g.size = (g.first - w % 2) / 2 + 1;
    return g;
}

/* The user struct; each process has its own buf and res, of its ranks. */
typedef struct coll_data {
    uint32_t seed;
    int32_t steps;
    int32_t split;      /* the steps take D's split too */
    int32_t small;      /* every step of the small sizes (none of the large ones) */
    int32_t world;      /* WORLD size the host expects */
    int32_t device;     /* ranks of each process */
    unsigned char *buf; /* [device ranks][coll_rank_bytes(world)] */
    int64_t *res;       /* [device ranks][COLL_SLOTS] */
    /* coll_unreachable: COLL_PLAIN_BYTES a rank of memory not from
     * dcuda_host_alloc (other processes cannot map it); NULL in process 0. */
    unsigned char *plain;
} coll_data_t;

#define COLL_PLAIN_BYTES 64u

typedef struct coll_step {
    int kind, comm, root, type, op;
    uint64_t count;  /* elements (a reduce-scatter: a rank's block); a broadcast: bytes;
                      * an allgather, alltoall: bytes a block */
    uint64_t offset; /* in the window's part, a multiple of 8 */
} coll_step_t;

/* Bytes of window A's or B's part of a communicator of at most `world` ranks. */
TEST_FN uint64_t coll_part_bytes(int world)
{
    return COLL_SLACK + (uint64_t)COLL_MAX_BYTES * (1u + (uint64_t)dcuda_ceil_log2(world)) +
           COLL_GUARD;
}

/* A rank's share of buf: A's part, B's part, then C's (user puts received,
 * a slot a step, then the source), then D's. */
TEST_FN uint64_t coll_user_offset(int world) { return 2u * coll_part_bytes(world); }
TEST_FN uint64_t coll_user_bytes(void) { return (uint64_t)COLL_USER * (COLL_STEPS + 1u); }
TEST_FN uint64_t coll_split_offset(int world)
{
    return (coll_user_offset(world) + coll_user_bytes() + 63u) / 64u * 64u;
}
TEST_FN uint64_t coll_rank_bytes(int world, int split)
{
    return split ? coll_split_offset(world) + coll_part_bytes(world)
                 : coll_user_offset(world) + coll_user_bytes();
}
/* Where the part of the window of `on` (COLL_ON_*) starts in a rank's share. */
TEST_FN uint64_t coll_part_offset(int world, int on)
{
    return on == COLL_ON_WORLD    ? 0u
           : on == COLL_ON_DEVICE ? coll_part_bytes(world)
                                  : coll_split_offset(world);
}

TEST_FN uint32_t coll_hash(uint32_t seed, uint32_t s, uint32_t k)
{
    return test_mix(seed ^ test_mix(s * 0x9e3779b9u ^ test_mix(k * 0x85ebca6bu + 17u)));
}

/* Step s of a run on communicators of world_size and device_size ranks,
 * and with `split`, split_size (my half's). */
TEST_FN coll_step_t coll_step(uint32_t seed, int s, int world_size, int device_size, int split,
                              int split_size, int small)
{
    /* 16 and 17 elements, 64 and 65 bytes: the pushed form's largest
     * share its leader copies alone (impl/coll_push.h: DCU_PUSH_TINY),
     * and one element or byte more. */
    static const uint32_t counts[] = { 1u,  2u,   3u,    4u,    5u,    13u,  16u,
                                       17u, 256u, 1023u, 1024u, 1025u, 2600u };
    static const uint32_t bytes[] = { 0u,  1u,  3u,    12u,   16u,   17u,
                                      64u, 65u, 4095u, 4096u, 4097u, 9001u };
    coll_step_t t;
    /* A quarter of the steps repeat the call of the step before (its data
     * new): a pushed call then takes its checked arguments from the memo
     * of the last one (impl/coll_push.h). */
    while (s > 0 && coll_hash(seed, (uint32_t)s, 4u) % 4u == 0u)
        s--;
    uint32_t h = coll_hash(seed, (uint32_t)s, 0u), g = coll_hash(seed, (uint32_t)s, 1u);
    t.comm = (int)(h & 1u) ? COLL_ON_DEVICE : COLL_ON_WORLD;
    if (split && coll_hash(seed, (uint32_t)s, 3u) % 2u == 0u)
        t.comm = COLL_ON_SPLIT;
    t.kind = (int)((h >> 1) % (uint32_t)COLL_KINDS);
    int size = t.comm == COLL_ON_WORLD    ? world_size
               : t.comm == COLL_ON_DEVICE ? device_size
                                          : split_size;
    t.root = (int)((h >> 8) % (uint32_t)size);
    t.type = (int)((h >> 2) & 3u);
    t.op = (int)((h >> 4) % 3u);
    /* Several 64 KiB chunks: an allreduce's, a reduce's and an
     * allgather's often, across the sizes where they leave the tree for
     * the ring (up to 16 ranks: an allreduce from 32 KiB, a reduce from
     * 64 KiB, an allgather's whole array from 63 KiB: impl/coll_ring.h). */
    const int ringed = t.kind == COLL_ALLREDUCE || t.kind == COLL_ALLGATHER ||
                       t.kind == COLL_REDUCE || t.kind == COLL_BROADCAST;
    int large = !small && (g & 15u) < (ringed ? 10u : 1u);
    /* An allgather's (an alltoall's) blocks fit the room an allreduce of
     * COLL_MAX_BYTES has, and a reduce-scatter's data COLL_MAX_BYTES. */
    uint64_t block = (uint64_t)COLL_MAX_BYTES * (1u + (uint64_t)dcuda_ceil_log2(size)) /
                     (uint64_t)size / (t.kind == COLL_ALLTOALL ? 2u : 1u);
    uint64_t share = (uint64_t)COLL_MAX_BYTES / 8u / (uint64_t)size;
    uint64_t b = bytes[(g >> 4) % 12u], c = counts[(g >> 4) % 13u];
    /* A broadcast's bytes up to the whole part's room: from about 128 KiB
     * on 3 ranks to 390 KiB on 16 they go along the chain. */
    uint64_t cast = (uint64_t)COLL_MAX_BYTES * (1u + (uint64_t)dcuda_ceil_log2(size));
    if (t.kind == COLL_BROADCAST)
        t.count = large ? 65536u + (g >> 8) % (cast - 65536u) : b;
    else if (t.kind == COLL_ALLGATHER || t.kind == COLL_ALLTOALL)
        t.count = large ? block : b < block ? b : block;
    else if (t.kind == COLL_REDUCE_SCATTER)
        t.count = large ? share : c < share ? c : share;
    else
        t.count =
            large ? COLL_MAX_BYTES / 64u + (g >> 8) % (COLL_MAX_BYTES / 8u - COLL_MAX_BYTES / 64u)
                  : c;
    /* A WORLD allgather of a node's processes goes through the devices
     * while a process's blocks fit its node scratch: the largest block
     * that fits, and one byte more, a quarter of the small allgathers. */
    if (small && t.kind == COLL_ALLGATHER && (g >> 24) % 4u == 0u) {
        uint64_t edge = DCUDA_NODE_SCRATCH_BYTES / (uint64_t)device_size + ((g >> 26) & 1u);
        t.count = edge < block ? edge : block;
    }
    t.offset = (uint64_t)((g >> 12) % (COLL_SLACK / 8u)) * 8u;
    return t;
}

/* Bytes the call may use from the offset (data and scratch). */
TEST_FN uint64_t coll_room(const coll_step_t *t, int size)
{
    switch (t->kind) {
    case COLL_BROADCAST:
        return t->count;
    case COLL_ALLGATHER:
        return t->count * (uint64_t)size;
    case COLL_ALLTOALL:
        return dcuda_alltoall_room(size, (size_t)t->count);
    case COLL_REDUCE_SCATTER:
        return dcuda_reduce_scatter_room(size, (size_t)t->count, (dcuda_datatype_t)t->type);
    default:
        return dcuda_allreduce_room(size, (size_t)t->count, (dcuda_datatype_t)t->type);
    }
}

/* Elements of a reduction's input a rank fills (0: not a reduction). */
TEST_FN uint64_t coll_inputs(const coll_step_t *t, int size)
{
    if (t->kind == COLL_REDUCE_SCATTER)
        return t->count * (uint64_t)size;
    return t->kind == COLL_ALLREDUCE || t->kind == COLL_REDUCE ? t->count : 0u;
}

/* Element j of WORLD rank r's input at step s, as an integer in -1000..1000. */
TEST_FN int32_t coll_ival(uint32_t seed, int s, int r, uint64_t j)
{
    return (int32_t)(test_mix(coll_hash(seed, (uint32_t)s, 2u + (uint32_t)r) + (uint32_t)j) %
                     2001u) -
           1000;
}

/* Element j of rank r's input, stored as the step's type at p. Integers:
 * sums of up to 2^20 ranks stay exact; float and double values are exact
 * in binary, so a tree's order gives the serial sum. */
TEST_FN void coll_store(const coll_step_t *t, uint32_t seed, int s, int r, uint64_t j, void *p)
{
    int32_t v = coll_ival(seed, s, r, j);
    switch (t->type) {
    case DCUDA_INT32:
        *(int32_t *)p = v;
        break;
    case DCUDA_INT64:
        *(int64_t *)p = (int64_t)v * 0x100000001ll;
        break;
    case DCUDA_FLOAT:
        *(float *)p = (float)v;
        break;
    default:
        *(double *)p = (double)v + 0.25;
        break;
    }
}

/* Element j of the result, over the ranks of g in their order, compared
 * with the element at p: 1 if equal. */
TEST_FN int coll_reduced_ok(const coll_step_t *t, uint32_t seed, int s, const coll_group_t *g,
                            uint64_t j, const void *p)
{
    double acc = 0;
    int64_t iacc = 0;
    for (int m = 0; m < g->size; m++) {
        int32_t v = coll_ival(seed, s, coll_member(g, m), j);
        int64_t iv = t->type == DCUDA_INT64 ? (int64_t)v * 0x100000001ll : (int64_t)v;
        double dv = t->type == DCUDA_DOUBLE ? (double)v + 0.25 : (double)v;
        if (m == 0 || t->op == DCUDA_SUM) {
            iacc = m == 0 ? iv : iacc + iv;
            acc = m == 0 ? dv : acc + dv;
        } else if (t->op == DCUDA_MIN) {
            iacc = iv < iacc ? iv : iacc;
            acc = dv < acc ? dv : acc;
        } else {
            iacc = iv > iacc ? iv : iacc;
            acc = dv > acc ? dv : acc;
        }
    }
    switch (t->type) {
    case DCUDA_INT32:
        return *(const int32_t *)p == (int32_t)iacc;
    case DCUDA_INT64:
        return *(const int64_t *)p == iacc;
    case DCUDA_FLOAT:
        return *(const float *)p == (float)acc;
    default:
        return *(const double *)p == acc;
    }
}

/* Byte i of a broadcast's data at step s (the root's), and a non-root's
 * noise before the call. */
TEST_FN uint8_t coll_root_byte(uint32_t seed, int s, uint64_t i)
{
    return test_byte(seed ^ 0xb0adu, (uint32_t)s, i);
}
TEST_FN uint8_t coll_noise_byte(uint32_t seed, int s, int r, uint64_t i)
{
    return test_byte(seed ^ 0x7e57u ^ (uint32_t)r * 0x2545f491u, (uint32_t)s, i);
}

/* Byte i of WORLD rank r's block in an allgather at step s. */
TEST_FN uint8_t coll_block_byte(uint32_t seed, int s, int r, uint64_t i)
{
    return test_byte(seed ^ 0xa119u ^ (uint32_t)r * 0x68e31da4u, (uint32_t)s, i);
}

/* Byte i of the block WORLD rank r sends to rank j (of the step's
 * communicator) in an alltoall at step s. */
TEST_FN uint8_t coll_a2a_byte(uint32_t seed, int s, int r, int j, uint64_t i)
{
    return test_byte(seed ^ 0xa2a0u ^ (uint32_t)r * 0x68e31da4u ^ (uint32_t)j * 0x2545f491u,
                     (uint32_t)s, i);
}

/* What a rank checks after step s: units (bytes, or elements of a
 * reduction) of its data, each checked by coll_unit_ok. crank: the
 * rank in the step's communicator (of `size` ranks). */
TEST_FN uint64_t coll_units(const coll_step_t *t, int size, int crank)
{
    switch (t->kind) {
    case COLL_BROADCAST:
    case COLL_ALLREDUCE:
    case COLL_REDUCE_SCATTER:
        return t->count;
    case COLL_REDUCE:
        return crank == t->root ? t->count : 0u;
    default: /* allgather: every block; alltoall: those sent and those received */
        return t->count * (uint64_t)size * (t->kind == COLL_ALLTOALL ? 2u : 1u);
    }
}

/* Unit u of rank crank of the step's communicator g. */
TEST_FN int coll_unit_ok(const coll_step_t *t, uint32_t seed, int s, const coll_group_t *g,
                         int crank, uint64_t u, const unsigned char *data)
{
    uint64_t elem = dcuda_datatype_bytes((dcuda_datatype_t)t->type);
    switch (t->kind) {
    case COLL_BROADCAST:
        return data[u] == coll_root_byte(seed, s, u);
    case COLL_ALLGATHER:
        return data[u] ==
               coll_block_byte(seed, s, coll_member(g, (int)(u / t->count)), u % t->count);
    case COLL_ALLTOALL: {
        uint64_t block = u / t->count, i = u % t->count;
        if (block < (uint64_t)g->size) /* sent: as it was */
            return data[u] == coll_a2a_byte(seed, s, coll_member(g, crank), (int)block, i);
        return data[u] ==
               coll_a2a_byte(seed, s, coll_member(g, (int)(block - (uint64_t)g->size)), crank, i);
    }
    case COLL_REDUCE_SCATTER:
        return coll_reduced_ok(t, seed, s, g, (uint64_t)crank * t->count + u, data + u * elem);
    default:
        return coll_reduced_ok(t, seed, s, g, u, data + u * elem);
    }
}

/* The collective's name, for reports. */
TEST_FN const char *coll_name(int kind)
{
    return kind == COLL_BROADCAST        ? "broadcast"
           : kind == COLL_ALLREDUCE      ? "allreduce"
           : kind == COLL_ALLGATHER      ? "allgather"
           : kind == COLL_REDUCE         ? "reduce"
           : kind == COLL_REDUCE_SCATTER ? "reduce_scatter"
                                         : "alltoall";
}

/* Byte i of WORLD rank r's user put at step s. */
TEST_FN uint8_t coll_user_byte(uint32_t seed, int s, int r, uint64_t i)
{
    return test_byte(seed ^ 0x05e7u ^ (uint32_t)r * 0x9e3779b9u, (uint32_t)s, i);
}

#endif /* DCUDA_TESTS_COLL_H */
