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
    BENCH_REDUCE_SCATTER_USER = 31
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
    BENCH_FAMILY_GET = 4        /* bench_get: GET, PEER_GET */
};

/* The family whose kernel runs `mode` (BENCH_IDLE runs in any of the
 * same-device ones). */
BENCH_FN int bench_family_of(int mode)
{
    if (mode <= BENCH_PINGPONG_NOTIFY)
        return BENCH_FAMILY_LATENCY;
    if (mode <= BENCH_BW_ALL)
        return BENCH_FAMILY_BANDWIDTH;
    if (mode == BENCH_GET || mode == BENCH_PEER_GET)
        return BENCH_FAMILY_GET;
    if (mode >= BENCH_PEER_PINGPONG_PUT && mode <= BENCH_PEER_BW)
        return BENCH_FAMILY_PEER;
    return BENCH_FAMILY_RUNTIME;
}

/* Modes every rank of every process takes part in (a WORLD collective). */
BENCH_FN int bench_world_mode(int mode)
{
    return (mode >= BENCH_BARRIER_WORLD && mode <= BENCH_ALLTOALL) ||
           (mode >= BENCH_ALLREDUCE_RING && mode <= BENCH_REDUCE_SCATTER_USER);
}

/* The collectives a user writes (checked once before they are timed). */
BENCH_FN int bench_user_mode(int mode)
{
    return mode == BENCH_ALLREDUCE_RING ||
           (mode >= BENCH_BROADCAST_USER && mode <= BENCH_REDUCE_SCATTER_USER);
}

/* The elements a user collective's check fills and looks at from offset
 * 0 of a part: floats for the rings, bytes otherwise (the alltoall: its
 * blocks for every rank, then room for theirs). */
BENCH_FN size_t bench_user_elements(int mode, size_t size, int ranks)
{
    const size_t blocks = (size_t)ranks;
    return mode == BENCH_BROADCAST_USER        ? size
           : mode == BENCH_ALLREDUCE_RING      ? size / 4
           : mode == BENCH_REDUCE_SCATTER_USER ? size / 4 * blocks
           : mode == BENCH_ALLGATHER_USER      ? size * blocks
                                               : 2u * size * blocks;
}

/* Byte i of the data a user collective's check starts from: WORLD rank
 * `from`'s block for rank `to` (the broadcast: from 0 to all, to 0; the
 * allgather: to 0). Never 0, so that a block not written shows. */
BENCH_FN unsigned char bench_user_byte(int from, int to, size_t i)
{
    return (unsigned char)(1u + ((unsigned)from * 31u + (unsigned)to * 7u + (unsigned)i) % 251u);
}

/* Modes measured on process 0's device alone (the others' ranks idle). */
BENCH_FN int bench_device_only(int mode)
{
    return mode < BENCH_IDLE || (mode >= BENCH_BARRIER && mode <= BENCH_PUT_FLUSH) ||
           mode == BENCH_GET;
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
    int iters;     /* per sender */
    int peer;      /* same device: device rank answering rank 0 in ping-pong;
                    * peer modes: WORLD rank of process 1's first rank;
                    * BENCH_REDUCE: the root */
    int side;      /* peer modes: enum bench_side of this process */
    int senders;   /* peer modes: ranks taking part on each side (ping-pong: 1) */
    int warmup;    /* ping-pongs: untimed rounds before the timed ones */
    size_t size;   /* bytes per put (bandwidth, put-flush, ping-pongs: 0 is 4 bytes
                    * passed as a constant, as code putting one value does) */
    size_t offset; /* peer ping-pongs: where the puts land in the target's part */
    size_t stride; /* bytes per rank in src and dst */
    char *src;     /* [ranks * stride] (peer modes: [senders * stride]) */
    char *dst;     /* [ranks * stride] (peer modes: [senders * stride]) */
} bench_args_t;

#endif
