/*
 * The randomized model of notified RMA, shared by its rank code
 * (model_kernels.c) and its host driver (model_host.c), which both
 * regenerate every rank's program from the seed alone.
 *
 * Every rank runs `phases` phases of `steps` steps. At each step a rank may
 * issue one operation (a put, a notified put, a notification alone, or a
 * get, blocking or notified) to a target drawn from three per phase (its
 * right neighbour, itself, one more), with sizes across every protocol threshold of every path (0, the
 * leader's few words, an inbox entry's inline bytes, the inbox, the
 * proxy's read of 32 KiB, a command's 64 KiB chunk and, in the large
 * variant, the network's 1 MiB chunk) and offsets that pile up in a hot
 * zone, so that a source's puts overlap. Each rank's window part is a
 * staging area (the sources of its puts) and one slot per WORLD rank: in
 * phase f, source s writes only slot model_slot(s, t, f) of target t and
 * notifies with that slot's number as tag, so that what a target sees is
 * fixed by the order of each source's own operations, while the slots
 * change owner from phase to phase.
 *
 * While it runs a rank consumes the notifications of each source in order
 * and checks, after each, that the data of every earlier put of that
 * source is in place (every byte that no later put of the source rewrites:
 * those it may be writing while the rank looks, and they are checked after
 * the later put's notification); at the end of a phase every source
 * notifies each of its targets once more and the target checks its slots
 * exactly. The host then compares every window with a replay of the whole
 * program.
 *
 * A get of source s from target t reads s's own slot there (q = model_slot(s,
 * t, f)), which only s writes in phase f, into s's landing area: it must
 * find exactly what s's puts of earlier steps left, on top of what the
 * slot held when the phase began (the replay of earlier phases, or the
 * canary), and nothing of s's later puts. A notified get is checked once
 * s has issued its next operation (a get: before it), so that a put after
 * it to the same bytes is in flight while it is served. The rank paints
 * the expected bytes into an area of its own and compares.
 *
 * The same program runs on a communicator other than WORLD (model_comm):
 * on NODE, or on each communicator of a split of WORLD by a seeded colour
 * (one to three colours) and key (ties broken by WORLD rank), each with
 * its own program (model_comm_seed), its window made on it and its ranks
 * counted in it; the host finds each of its ranks' communicator rank and
 * size by its own count of the colours and keys.
 */
#ifndef DCUDA_TESTS_MODEL_H
#define DCUDA_TESTS_MODEL_H

#include "test_common.h"

/* Most WORLD ranks the model runs with (tags are slot numbers). */
#define MODEL_MAX_RANKS 64
/* Most steps of a phase (a rank keeps a source's operations to it). */
#define MODEL_MAX_STEPS 48
/* The hot zone at the start of each slot that half of the puts aim at. */
#define MODEL_HOT 256u

enum model_kind {
    MODEL_NONE = 0,
    MODEL_PUT,
    MODEL_PUT_NOTIFY,
    MODEL_NOTIFY,
    MODEL_GET,       /* blocking: dcuda_get */
    MODEL_GET_NOTIFY /* dcuda_get_notify, MODEL_GET_TAG to itself */
};
/* The tag of a notified get's notification (slots' tags are below it). */
#define MODEL_GET_TAG 255

/* Result slots of each rank: res[rank * MODEL_SLOTS + slot]. */
enum model_res {
    MODEL_RES_STATUS = 0, /* first failing rank API call (0: none) */
    MODEL_RES_BAD,        /* failed checks */
    MODEL_RES_NOTES,      /* notifications consumed */
    MODEL_RES_BYTES,      /* bytes checked */
    MODEL_RES_OPS,        /* operations issued */
    MODEL_RES_GETS,       /* gets checked */
    MODEL_RES_GOT,        /* bytes they brought, checked */
    MODEL_SLOTS
};

/* The communicator the program runs on. */
enum model_comm {
    MODEL_ON_WORLD = 0,
    MODEL_ON_SPLIT, /* each communicator of a seeded split of WORLD */
    MODEL_ON_NODE   /* NODE (the host runs it on one node: NODE is WORLD's ranks) */
};

/* The split: WORLD rank w's colour (one of 1 + seed % 3) and key (-2..2,
 * ties broken by WORLD rank), and the program seed of a colour. */
TEST_FN int model_colour(uint32_t seed, int w)
{
    return (int)(test_mix(seed ^ test_mix(0x5e11u + (uint32_t)w)) % (1u + seed % 3u));
}
TEST_FN int model_key(uint32_t seed, int w)
{
    return (int)(test_mix(seed ^ test_mix(0x6b3au * ((uint32_t)w + 1u))) % 5u) - 2;
}
TEST_FN uint32_t model_comm_seed(uint32_t seed, int colour)
{
    return seed ^ (0x2545f491u * (uint32_t)(colour + 1));
}

/* The user struct: the program's parameters, and each process's own
 * window memory (its ranks' parts, by DEVICE rank) and result slots. */
typedef struct model_data {
    uint32_t seed;
    int32_t phases, steps;
    int32_t comm;       /* model_comm */
    int32_t world;      /* WORLD size the host expects */
    uint64_t region;    /* bytes of the staging area and of each slot */
    unsigned char *buf; /* [device ranks][model_part_bytes(world, region)] */
    int64_t *res;       /* [device ranks][MODEL_SLOTS] */
} model_data_t;

/* One operation of the program. */
typedef struct model_op {
    int kind; /* model_kind */
    int target;
    uint64_t offset; /* in the target's slot */
    uint64_t size;
    uint64_t src; /* in the source's staging area (a get: its landing area) */
} model_op_t;

TEST_FN uint32_t model_hash(uint32_t seed, uint32_t a, uint32_t b, uint32_t c)
{
    return test_mix(
        seed ^ test_mix(a * 0x9e3779b9u ^ test_mix(b * 0x85ebca6bu ^ test_mix(c + 0x27d4eb2fu))));
}

/* The slot that source s writes in target t's part in phase f (for each
 * t and f a rotation of the sources), and the source that owns slot q. */
TEST_FN int model_slot(int s, int t, int f, int world)
{
    return (int)(((uint32_t)s + (uint32_t)f * (2u * (uint32_t)t + 1u)) % (uint32_t)world);
}
TEST_FN int model_owner(int q, int t, int f, int world)
{
    uint32_t shift = ((uint32_t)f * (2u * (uint32_t)t + 1u)) % (uint32_t)world;
    return (int)(((uint32_t)q + (uint32_t)world - shift) % (uint32_t)world);
}

/* Target k (0..2) of source s in phase f: its right neighbour, itself,
 * and one more. */
TEST_FN int model_candidate(uint32_t seed, int s, int f, int k, int world)
{
    uint32_t d = k == 0   ? 1u
                 : k == 1 ? 0u
                          : 1u + model_hash(seed, (uint32_t)s, (uint32_t)f, 99u) %
                                     (uint32_t)(world > 1 ? world - 1 : 1);
    return (int)(((uint32_t)s + d) % (uint32_t)world);
}

/* Is t one of source s's targets in phase f, and is k its first index? */
TEST_FN int model_first_candidate(uint32_t seed, int s, int f, int k, int world)
{
    int t = model_candidate(seed, s, f, k, world);
    for (int j = 0; j < k; j++)
        if (model_candidate(seed, s, f, j, world) == t)
            return 0;
    return 1;
}
TEST_FN int model_targets(uint32_t seed, int s, int t, int f, int world)
{
    for (int k = 0; k < 3; k++)
        if (model_candidate(seed, s, f, k, world) == t)
            return 1;
    return 0;
}

/* A size drawn across the thresholds: empty, the leader's few words and
 * the inline bytes of an inbox entry, small, an inbox's worth, across the
 * proxy's 32 KiB read, then up to the region (64 KiB commands; 1 MiB
 * network chunks when the region allows). */
TEST_FN uint64_t model_size(uint32_t h, uint32_t v, uint64_t region)
{
    uint32_t c = h % 1000u;
    uint64_t lo, hi;
    if (c < 40u)
        return 0;
    if (c < 300u) /* whole words half the time: the leader copies them alone */
        return (v & 1u) ? 4u * (1u + (v >> 1) % 4u) : 1u + (v >> 1) % 16u;
    if (c < 450u)
        lo = 17, hi = 64;
    else if (c < 600u)
        lo = 65, hi = 1024;
    else if (c < 760u)
        lo = 1025, hi = 16384;
    else if (c < 860u)
        lo = 16385, hi = 40000;
    else
        lo = 40001, hi = region;
    if (hi > region)
        hi = region;
    if (lo > hi)
        lo = hi;
    return lo + (uint64_t)v % (hi - lo + 1u);
}

/* A place for `size` bytes in `room`: in the hot zone half the time,
 * 8-byte aligned half the time. */
TEST_FN uint64_t model_place(uint32_t h, uint64_t size, uint64_t room)
{
    uint64_t span = room - size + 1u;
    if ((h & 1u) && size < MODEL_HOT && span > MODEL_HOT - size)
        span = MODEL_HOT - size;
    uint64_t at = (uint64_t)(h >> 2) % span;
    return (h & 2u) ? at & ~(uint64_t)7u : at;
}

/* Operation `step` of rank s in phase f. */
TEST_FN model_op_t model_op(uint32_t seed, int s, int f, int step, int world, uint64_t region)
{
    model_op_t op = { MODEL_NONE, 0, 0, 0, 0 };
    uint32_t key = (uint32_t)f * 4096u + (uint32_t)step;
#define MODEL_H(k) model_hash(seed, (uint32_t)s, key, (k))
    if (MODEL_H(0) % 100u >= 80u)
        return op;
    op.target = model_candidate(seed, s, f, (int)(MODEL_H(1) % 3u), world);
    uint32_t kind = MODEL_H(2) % 100u;
    op.kind = kind < 18u   ? MODEL_PUT
              : kind < 58u ? MODEL_PUT_NOTIFY
              : kind < 70u ? MODEL_NOTIFY
              : kind < 85u ? MODEL_GET
                           : MODEL_GET_NOTIFY;
    if (op.kind == MODEL_NOTIFY)
        return op;
    op.size = model_size(MODEL_H(3), MODEL_H(4), region);
    op.offset = model_place(MODEL_H(5), op.size, region);
    op.src = model_place(MODEL_H(6), op.size, region);
#undef MODEL_H
    return op;
}

TEST_FN int model_notifies(const model_op_t *op)
{
    return op->kind == MODEL_PUT_NOTIFY || op->kind == MODEL_NOTIFY;
}
TEST_FN int model_writes(const model_op_t *op)
{
    return (op->kind == MODEL_PUT || op->kind == MODEL_PUT_NOTIFY) && op->size > 0;
}
TEST_FN int model_gets(const model_op_t *op)
{
    return op->kind == MODEL_GET || op->kind == MODEL_GET_NOTIFY;
}

/* Byte `pos` of its slot as operation `step` of rank s in phase f writes
 * it; and what the host fills slot q of rank t with before the run. */
TEST_FN uint8_t model_byte(uint32_t seed, int s, int f, int step, uint64_t pos)
{
    return test_byte(seed ^ ((uint32_t)s * 0x10001u), (uint32_t)f << 16 | (uint32_t)step, pos);
}
TEST_FN uint8_t model_canary(uint32_t seed, int t, int q, uint64_t pos)
{
    return test_byte(seed ^ 0xc0ffee11u, (uint32_t)t << 16 | (uint32_t)q, pos);
}

/* One source's writing operations to one target in a phase, in step
 * order. */
typedef struct model_list {
    int count;
    int step[MODEL_MAX_STEPS];
    uint64_t offset[MODEL_MAX_STEPS];
    uint64_t size[MODEL_MAX_STEPS];
} model_list_t;

TEST_FN void model_list(uint32_t seed, int s, int t, int f, int steps, int world, uint64_t region,
                        model_list_t *l)
{
    l->count = 0;
    for (int step = 0; step < steps; step++) {
        model_op_t op = model_op(seed, s, f, step, world, region);
        if (op.target != t || !model_writes(&op))
            continue;
        l->step[l->count] = step;
        l->offset[l->count] = op.offset;
        l->size[l->count] = op.size;
        l->count++;
    }
}

TEST_FN int model_covers(const model_list_t *l, int j, uint64_t pos)
{
    return pos >= l->offset[j] && pos - l->offset[j] < l->size[j];
}

/* Does an entry after step `upto` write byte `pos`? Such a byte is checked
 * after that entry's notification (its source may be writing it now). */
TEST_FN int model_rewritten(const model_list_t *l, int upto, uint64_t pos)
{
    for (int j = l->count - 1; j >= 0 && l->step[j] > upto; j--)
        if (model_covers(l, j, pos))
            return 1;
    return 0;
}

/* The entry of steps <= upto that wrote byte `pos` last; entry i wrote it. */
TEST_FN int model_last_writer(const model_list_t *l, int i, int upto, uint64_t pos)
{
    int last = i;
    for (int j = i + 1; j < l->count && l->step[j] <= upto; j++)
        if (model_covers(l, j, pos))
            last = j;
    return last;
}

/* Bytes a check after step `upto` looks at: those of the entries of steps
 * [from, upto] that no later entry rewrites (counted per entry). */
TEST_FN int64_t model_check_bytes(const model_list_t *l, int from, int upto)
{
    int64_t n = 0;
    for (int i = 0; i < l->count; i++) {
        if (l->step[i] < from || l->step[i] > upto)
            continue;
        for (uint64_t k = 0; k < l->size[i]; k++)
            n += !model_rewritten(l, upto, l->offset[i] + k);
    }
    return n;
}

/* One rank's window part: the staging area, a slot per WORLD rank, the
 * landing area of its gets, and where it paints what a get must bring. */
TEST_FN uint64_t model_landing(int world, uint64_t region)
{
    return (1u + (uint64_t)world) * region;
}
TEST_FN uint64_t model_expected(int world, uint64_t region)
{
    return (2u + (uint64_t)world) * region;
}
TEST_FN uint64_t model_part_bytes(int world, uint64_t region)
{
    return ((uint64_t)world + 3u) * region;
}

#endif /* DCUDA_TESTS_MODEL_H */
