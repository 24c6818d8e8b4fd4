/*
 * Shared between the benchmark's host side and its rank code: the modes,
 * the kernel (family) that runs each, and the arguments (the user struct,
 * per process).
 */
#ifndef DCUDA_BENCH_H
#define DCUDA_BENCH_H

#include <stddef.h>

enum bench_mode {
    /* Same device (DEVICE windows, device rank numbers). */
    BENCH_PINGPONG_PUT = 0,    /* rank 0 <-> peer: notified put of size each way */
    BENCH_PINGPONG_NOTIFY = 1, /* rank 0 <-> peer: notification only */
    BENCH_BW_ONE = 2,          /* rank 0 -> rank 1: back-to-back notified puts */
    BENCH_BW_ALL = 3,          /* every rank r -> r+1: back-to-back notified puts */
    BENCH_HOST_PING = 4,       /* rank 0 <-> host runtime: command queue round trips */
    BENCH_IDLE = 5,            /* this process sits the case out (its ranks only time nothing) */
    /* Between processes (WORLD windows, WORLD rank numbers): process 0's
     * ranks send, process 1's ranks answer, further processes idle. */
    BENCH_PEER_PINGPONG_PUT = 6, /* WORLD rank 0 <-> first rank of process 1: put_notify of size */
    BENCH_PEER_PINGPONG_NOTIFY = 7, /* the same pair: notification only */
    BENCH_PEER_BW = 8, /* first `senders` ranks of process 0 -> the same of process 1 */
    /* Same device again (no thesis counterpart). */
    BENCH_BARRIER = 9,     /* every rank: dcuda_comm_barrier(DEVICE) */
    BENCH_WIN_CREATE = 10, /* every rank: dcuda_win_create + dcuda_win_free on DEVICE */
    BENCH_PUT_FLUSH = 11,  /* rank 0: put of size to rank 1, then dcuda_win_flush */
    /* Every rank of every process. */
    BENCH_BARRIER_WORLD = 12,  /* every rank: dcuda_comm_barrier(WORLD) */
    BENCH_ALLREDUCE = 13,      /* every rank: dcuda_allreduce of size / 4 floats (sum), WORLD */
    BENCH_BROADCAST = 14,      /* every rank: dcuda_broadcast of size bytes from rank 0, WORLD */
    BENCH_ALLGATHER = 15,      /* every rank: dcuda_allgather of size bytes a rank, WORLD */
    BENCH_REDUCE = 16,         /* every rank: dcuda_reduce of size / 4 floats (sum) to the last
                               * rank, WORLD */
    BENCH_REDUCE_SCATTER = 17, /* every rank: dcuda_reduce_scatter of size / 4 floats a rank
                                * (sum), WORLD */
    BENCH_ALLTOALL = 18,       /* every rank: dcuda_alltoall of size bytes a block, WORLD */
    /* Gets: complete when the call returns. */
    BENCH_GET = 19,      /* same device: rank 0 gets size bytes of rank 1's part, DEVICE */
    BENCH_PEER_GET = 20, /* WORLD rank 0 gets size bytes of process 1's first rank's part */
    /* every rank: the allreduce a user writes with dcuda_put_notify (a ring)
     * of size / 4 floats (sum), WORLD; iters 0: once, on data rank + 1 */
    BENCH_ALLREDUCE_RING = 21,
    BENCH_BARRIER_NODE = 22, /* every rank: dcuda_comm_barrier(NODE) */
    BENCH_BARRIER_HALF = 23, /* every rank: the barrier of its half of WORLD (split by parity) */
    BENCH_SPLIT = 24,        /* every rank: dcuda_comm_split of WORLD by parity + dcuda_comm_free */
    /* A round trip of 4-byte notified puts between WORLD ranks 0 and 2
     * (the others pass): on a WORLD window, and as ranks 0 and 1 of their
     * half of WORLD (split by parity) on a window of the half. */
    BENCH_PAIR_WORLD = 25,
    BENCH_PAIR_HALF = 26,
    /* every rank: dcuda_allreduce of size / 4 floats (sum) on a window of
     * its half of WORLD (split by parity) */
    BENCH_ALLREDUCE_HALF = 27,
    /* every rank: the collectives a user writes with dcuda_put_notify
     * (bench_kernel.c), WORLD; iters 0: once, on data the host checks:
     * the broadcast (flat, from rank 0) of size bytes, the allgather (a
     * ring) and the alltoall (direct) of size bytes a block, the
     * reduce-scatter (the ring allreduce's first half) of size / 4 floats
     * a rank */
    BENCH_BROADCAST_USER = 28,
    BENCH_ALLGATHER_USER = 29,
    BENCH_ALLTOALL_USER = 30,
    BENCH_REDUCE_SCATTER_USER = 31,
    /* same device: rank 0's dcuda_atomic fetch-add of 1 to the first 8-byte
     * word of rank 1's part, DEVICE; complete when the call returns */
    BENCH_ATOMIC = 32,
    /* WORLD rank 0's dcuda_atomic fetch-add of 1 on the first word of process
     * 1's first rank's part (the peer get's ranks and windows) */
    BENCH_PEER_ATOMIC = 33,
    /* A device's data spread over its ranks: every rank's call on a window
     * of its group across the devices (WORLD split by device rank: one rank
     * a device), all groups at once; size bytes a rank. dcuda_allreduce of
     * size / 4 floats (sum), dcuda_allgather of size bytes a rank,
     * dcuda_broadcast of size bytes from the group's rank 0. */
    BENCH_ALLREDUCE_ACROSS = 34,
    BENCH_ALLGATHER_ACROSS = 35,
    BENCH_BROADCAST_ACROSS = 36
};

#if defined(__CUDACC__)
#define BENCH_FN static inline __host__ __device__
#else
#define BENCH_FN static inline
#endif

/* The benchmark's kernels, one a family of modes (bench_kernel.c). */
enum bench_family {
    BENCH_FAMILY_LATENCY = 0,   /* bench_latency: PINGPONG_PUT, PINGPONG_NOTIFY */
    BENCH_FAMILY_BANDWIDTH = 1, /* bench_bandwidth: BW_ONE, BW_ALL */
    BENCH_FAMILY_RUNTIME = 2,   /* bench_runtime: HOST_PING, BARRIER .. PUT_FLUSH, and the
                                 * WORLD modes (BARRIER_WORLD .. ALLTOALL) */
    BENCH_FAMILY_PEER = 3,      /* bench_peer: the PEER_ modes but PEER_GET */
    BENCH_FAMILY_GET = 4        /* bench_get: GET, PEER_GET, ATOMIC */
};

/* The family whose kernel runs `mode` (BENCH_IDLE runs in any of the
 * same-device ones). */
BENCH_FN int bench_family_of(int mode)
{
    if (mode <= BENCH_PINGPONG_NOTIFY)
        return BENCH_FAMILY_LATENCY;
    if (mode <= BENCH_BW_ALL)
        return BENCH_FAMILY_BANDWIDTH;
    if (mode == BENCH_GET || mode == BENCH_PEER_GET || mode == BENCH_ATOMIC ||
        mode == BENCH_PEER_ATOMIC)
        return BENCH_FAMILY_GET;
    if (mode >= BENCH_PEER_PINGPONG_PUT && mode <= BENCH_PEER_BW)
        return BENCH_FAMILY_PEER;
    return BENCH_FAMILY_RUNTIME;
}

/* The modes of a device's data spread over its ranks (the _ACROSS ones). */
BENCH_FN int bench_across_mode(int mode)
{
    return mode >= BENCH_ALLREDUCE_ACROSS && mode <= BENCH_BROADCAST_ACROSS;
}

/* Modes every rank of every process takes part in (a WORLD collective). */
BENCH_FN int bench_world_mode(int mode)
{
    return (mode >= BENCH_BARRIER_WORLD && mode <= BENCH_ALLTOALL) ||
           (mode >= BENCH_ALLREDUCE_RING && mode <= BENCH_REDUCE_SCATTER_USER) ||
           bench_across_mode(mode);
}

/* Modes whose calls take a window of the rank's group (a split of WORLD:
 * its half by parity, or its ranks across the devices by device rank). */
BENCH_FN int bench_group_mode(int mode)
{
    return mode == BENCH_PAIR_HALF || mode == BENCH_ALLREDUCE_HALF || bench_across_mode(mode);
}

/* The collectives a user writes with dcuda_put_notify (bench_kernel.c). */
BENCH_FN int bench_user_mode(int mode)
{
    return mode == BENCH_ALLREDUCE_RING ||
           (mode >= BENCH_BROADCAST_USER && mode <= BENCH_REDUCE_SCATTER_USER);
}

/* How a collective's result is checked: every run of a WORLD collective
 * first fills each part with known data, makes one call, and each rank
 * counts the elements of its part that differ from what the functions
 * below compute for them without any communication (the "wrong" column). */
enum bench_check {
    BENCH_CHECK_NONE = 0,
    BENCH_CHECK_SUM = 1,          /* floats: every part ends with the sum over the ranks */
    BENCH_CHECK_SUM_HALF = 2,     /* the same over my group (bench_group_mode) */
    BENCH_CHECK_ROOT_SUM = 3,     /* the reduce: the root's part holds the sum */
    BENCH_CHECK_SCATTER = 4,      /* dcuda_reduce_scatter: my first count floats are
                                   * block r of the sum */
    BENCH_CHECK_RING_SCATTER = 5, /* the ring's reduce-scatter: chunk r + 1 of the sum,
                                   * in place */
    BENCH_CHECK_BROADCAST = 6,    /* bytes: rank 0's everywhere */
    BENCH_CHECK_GATHER = 7,       /* bytes: every rank's block, in rank order */
    BENCH_CHECK_ALLTOALL = 8,     /* bytes: block s of the second half came from rank s */
    BENCH_CHECK_ALLTOALL_USER = 9 /* the same but my own block (never sent to myself) */
};

BENCH_FN int bench_check_of(int mode)
{
    switch (mode) {
    case BENCH_ALLREDUCE:
    case BENCH_ALLREDUCE_RING:
        return BENCH_CHECK_SUM;
    case BENCH_ALLREDUCE_HALF:
    case BENCH_ALLREDUCE_ACROSS:
        return BENCH_CHECK_SUM_HALF;
    case BENCH_REDUCE:
        return BENCH_CHECK_ROOT_SUM;
    case BENCH_REDUCE_SCATTER:
        return BENCH_CHECK_SCATTER;
    case BENCH_REDUCE_SCATTER_USER:
        return BENCH_CHECK_RING_SCATTER;
    case BENCH_BROADCAST:
    case BENCH_BROADCAST_USER:
    case BENCH_BROADCAST_ACROSS:
        return BENCH_CHECK_BROADCAST;
    case BENCH_ALLGATHER:
    case BENCH_ALLGATHER_USER:
    case BENCH_ALLGATHER_ACROSS:
        return BENCH_CHECK_GATHER;
    case BENCH_ALLTOALL:
        return BENCH_CHECK_ALLTOALL;
    case BENCH_ALLTOALL_USER:
        return BENCH_CHECK_ALLTOALL_USER;
    default:
        return BENCH_CHECK_NONE;
    }
}

/* Whether a check's elements are floats (else bytes). */
BENCH_FN int bench_check_floats(int check)
{
    return check >= BENCH_CHECK_SUM && check <= BENCH_CHECK_RING_SCATTER;
}

/* The elements a check fills and looks at from offset 0 of a part, at a
 * row's size (bytes) on `ranks` ranks: floats for the reductions (the
 * reduce-scatters: ranks blocks of size / 4), bytes otherwise (the
 * alltoalls: the blocks for every rank, then room for theirs). */
BENCH_FN size_t bench_check_elements(int check, size_t size, int ranks)
{
    const size_t blocks = (size_t)ranks;
    switch (check) {
    case BENCH_CHECK_SUM:
    case BENCH_CHECK_SUM_HALF:
    case BENCH_CHECK_ROOT_SUM:
        return size / 4;
    case BENCH_CHECK_SCATTER:
    case BENCH_CHECK_RING_SCATTER:
        return size / 4 * blocks;
    case BENCH_CHECK_BROADCAST:
        return size;
    case BENCH_CHECK_GATHER:
        return size * blocks;
    case BENCH_CHECK_ALLTOALL:
    case BENCH_CHECK_ALLTOALL_USER:
        return 2u * size * blocks;
    default:
        return 0;
    }
}

/* Float i that rank h of a reduction starts with: 1 .. 4, so that every
 * partial sum over up to 4 million ranks is a whole number a float holds
 * exactly (any order of the additions gives the same), and a block moved
 * to the wrong place shows. */
BENCH_FN float bench_float_in(int h, size_t i) { return (float)(((size_t)h + i) % 4u + 1u); }

/* Their sum over ranks 0 .. p - 1, in closed form (not by adding): each
 * run of 4 ranks adds 1 + 2 + 3 + 4, the last p % 4 ranks their own. */
BENCH_FN float bench_float_sum(int p, size_t i)
{
    long s = 10L * (p / 4);
    for (int j = 0; j < p % 4; j++)
        s += (long)((i + (size_t)j) % 4u) + 1;
    return (float)s;
}

/* Byte i of the data a byte collective's check starts from: rank `from`'s
 * block for rank `to` (the broadcast: from 0, to 0; the allgather: to 0).
 * Never 0, so that a block not written shows. */
BENCH_FN unsigned char bench_check_byte(int from, int to, size_t i)
{
    return (unsigned char)(1u + ((unsigned)from * 31u + (unsigned)to * 7u + (unsigned)i) % 251u);
}

/* Byte i that rank r of `ranks` fills its part with (n bytes a block). */
BENCH_FN unsigned char bench_fill_byte(int check, int r, int ranks, size_t n, size_t i)
{
    const size_t b = i / n, at = i % n;
    if (check == BENCH_CHECK_BROADCAST)
        return r == 0 ? bench_check_byte(0, 0, i) : 0;
    if (check == BENCH_CHECK_GATHER)
        return b == (size_t)r ? bench_check_byte(r, 0, at) : 0;
    /* the alltoalls: my blocks for each rank, then room for theirs */
    return b < (size_t)ranks ? bench_check_byte(r, (int)b, at) : 0;
}

/* Whether element i of the part of rank r (of `ranks`; the half's rank and
 * size for SUM_HALF) holds what the check's call must leave there, n the
 * row's size in bytes. Only the elements the collective defines are
 * looked at; a reduce's caller checks its root alone. */
BENCH_FN int bench_element_right(int check, int r, int ranks, size_t n, const char *part, size_t i)
{
    const float *f = (const float *)(const void *)part;
    const unsigned char *u = (const unsigned char *)part;
    switch (check) {
    case BENCH_CHECK_SUM:
    case BENCH_CHECK_SUM_HALF:
    case BENCH_CHECK_ROOT_SUM:
        return f[i] == bench_float_sum(ranks, i);
    case BENCH_CHECK_SCATTER: /* block r of the sum, at the start */
        return i >= n / 4 || f[i] == bench_float_sum(ranks, (size_t)r * (n / 4) + i);
    case BENCH_CHECK_RING_SCATTER: { /* chunk r + 1 of the ring's all floats, in place */
        const size_t all = n / 4 * (size_t)ranks, c = (size_t)((r + 1) % ranks);
        const size_t first = all * c / (size_t)ranks, last = all * (c + 1) / (size_t)ranks;
        return i < first || i >= last || f[i] == bench_float_sum(ranks, i);
    }
    case BENCH_CHECK_BROADCAST:
        return u[i] == bench_check_byte(0, 0, i);
    case BENCH_CHECK_GATHER:
        return u[i] == bench_check_byte((int)(i / n), 0, i % n);
    case BENCH_CHECK_ALLTOALL:
    case BENCH_CHECK_ALLTOALL_USER: {
        const size_t b = i / n, from = b - (size_t)ranks;
        if (b < (size_t)ranks || (check == BENCH_CHECK_ALLTOALL_USER && from == (size_t)r))
            return 1;
        return u[i] == bench_check_byte((int)from, r, i % n);
    }
    default:
        return 1;
    }
}

/* Modes whose recorder keeps each timed round's time (bench_args.out):
 * the ping-pongs and gets (their first rank), the host pings and the
 * device's runtime calls (device rank 0), the WORLD modes timed call by
 * call (WORLD rank 0, the slowest rank's time). The bandwidth modes and
 * the WORLD modes timed back to back give one span a run. */
BENCH_FN int bench_records(int mode, int sync)
{
    if (mode == BENCH_BW_ONE || mode == BENCH_BW_ALL || mode == BENCH_PEER_BW || mode == BENCH_IDLE)
        return 0;
    return !bench_world_mode(mode) || sync;
}

/* Modes measured on process 0's device alone (the others' ranks idle). */
BENCH_FN int bench_device_only(int mode)
{
    return mode < BENCH_IDLE || (mode >= BENCH_BARRIER && mode <= BENCH_PUT_FLUSH) ||
           mode == BENCH_GET || mode == BENCH_ATOMIC;
}

/* A peer mode's part in it, by process; HALVES: one process (--loop, for
 * NET_LOOPBACK) whose first `peer` device ranks send and next `peer` answer. */
enum bench_side {
    BENCH_SIDE_SEND = 0,
    BENCH_SIDE_ANSWER = 1,
    BENCH_SIDE_NONE = 2,
    BENCH_SIDE_HALVES = 3
};

typedef struct bench_args {
    int mode;
    int iters;        /* per sender */
    int peer;         /* same device: device rank answering rank 0 in ping-pong;
                    * peer modes: WORLD rank of process 1's first rank;
                    * BENCH_REDUCE: the root */
    int side;         /* peer modes: enum bench_side of this process */
    int senders;      /* peer modes: ranks taking part on each side (ping-pong: 1) */
    int warmup;       /* ping-pongs: untimed rounds before the timed ones */
    size_t size;      /* bytes per put (bandwidth, put-flush, ping-pongs: 0 is 4 bytes
                    * passed as a constant, as code putting one value does) */
    size_t offset;    /* peer ping-pongs: where the puts land in the target's part */
    size_t stride;    /* bytes per rank in src and dst */
    char *src;        /* [ranks * stride] (peer modes: [senders * stride]) */
    char *dst;        /* [ranks * stride] (peer modes: [senders * stride]) */
    int sync;         /* WORLD modes: 1 to time each call alone, every rank meeting the
                    * others in an untimed allreduce of its time after it (a latency);
                    * 0 to run the calls back to back (a rate) */
    int every;        /* the recorder keeps the time of rounds 0, every, 2 * every, ... */
    size_t clock_off; /* WORLD modes: where, in each part, the untimed allreduces work
                       * (dcuda_allreduce_room(ranks, 1, DCUDA_INT64) bytes) */
    long long *out;   /* memory of dcuda_host_alloc: [0] the wrong elements of the run's
                       * check (WORLD rank 0's sum), [1 + k] round k * every's ns */
} bench_args_t;

#endif
