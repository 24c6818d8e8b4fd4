/*
 * dcuda_bench's rows of WORLD (bench_host.h): every rank of every process
 * takes part. Barriers, communicators and collectives are timed call by
 * call: each rank times its own call, and between calls an untimed
 * allreduce of those times holds every rank until the call is done at
 * all of them (as OSU's benchmarks put a barrier between calls); a row's
 * samples are the slowest rank's times. Each collective's run first
 * checks one call on known data (the "wrong" column); beside the latency
 * rows, rate rows time the same calls back to back (calls a second, what
 * the root can issue).
 */
#include <stdio.h>

#include "bench_host.h"
#include "dcuda/dcuda_rank.h"

/* Parts of `data` bytes for this process's `devices` ranks, with the
 * room the untimed allreduces need after them (a->clock_off); 0, or -1. */
static int world_parts(dcuda_host_h h, bench_args_t *a, size_t data, int ranks, int devices)
{
    const size_t clock = dcuda_allreduce_room(ranks, 1, DCUDA_INT64);
    a->clock_off = (data + 63) & ~(size_t)63;
    a->stride = a->clock_off + ((clock + 63) & ~(size_t)63);
    a->sync = 1;
    return dcuda_host_alloc(h, a->stride * (size_t)devices, (void **)&a->dst) == DCUDA_OK ? 0 : -1;
}

/* A barrier of WORLD: every rank of every process (row `prefix`world_barrier). */
void bench_world_barrier(dcuda_host_h h, int ranks, int iters, const char *prefix)
{
    dcuda_rank_info_t info;
    bench_args_t a = { 0 };
    bench_result_t r;
    char what[64];
    if (dcuda_host_get_rank_info(h, &info) != DCUDA_OK ||
        world_parts(h, &a, 0, ranks, info.rank_responsible))
        return;
    a.mode = BENCH_BARRIER_WORLD;
    a.iters = iters;
    snprintf(what, sizeof what, "%sworld_barrier", prefix);
    if (bench_measure(h, &a, &r))
        bench_report_rounds("runtime", what, ranks, 0, "latency_us", &r, 1e-3);
    dcuda_host_free(h, a.dst);
}

/* The sizes of the WORLD collectives of one device and of a whole WORLD;
 * and between the processes, one rank each, at sizes that
 * dcuda_ref_nvshmem measures too (dcuda_bench.c picks). */

/* An allreduce of floats on a window of a half of WORLD (split by
 * parity), at 8 B, 1 KiB and 64 KiB: the collective of a split beside
 * WORLD's rows (`prefix`half_allreduce_sum_float). */
static void half_allreduce_rows(dcuda_host_h h, int ranks, int devices, int iters, const sweep_t *w,
                                const char *prefix)
{
    static const size_t sizes[] = { 8, 1024, 65536 };
    const int half = (ranks + 1) / 2;
    bench_args_t a = { 0 };
    size_t room = dcuda_allreduce_room(half, sizes[2] / 4, DCUDA_FLOAT);
    if (room < dcuda_comm_split_room(ranks))
        room = dcuda_comm_split_room(ranks);
    if (world_parts(h, &a, room, ranks, devices))
        return;
    a.mode = BENCH_ALLREDUCE_HALF;
    for (int k = 0; k < 3; k++) {
        if (!bench_in_sweep(w, sizes[k]))
            continue;
        a.size = sizes[k];
        a.iters = sizes[k] > 4096 ? iters / 10 + 1 : iters;
        a.warmup = a.iters / 10 + 1;
        bench_result_t r;
        char what[64];
        snprintf(what, sizeof what, "%shalf_allreduce_sum_float", prefix);
        if (bench_measure(h, &a, &r))
            bench_report_collective(what, a.mode, half, a.size, &r);
    }
    dcuda_host_free(h, a.dst);
}

/* The communicators beyond WORLD: a barrier of NODE, of a half of WORLD
 * (split by parity, so that each half spans every device), a split of
 * WORLD + its free, and the one-way time of a 4-byte notified put between
 * WORLD ranks 0 and 2 on a WORLD window and on a window of their half
 * (rows `prefix`node_barrier, half_barrier, comm_split_free,
 * pair_put_notify_world, pair_put_notify_half); then the half's
 * allreduce. */
void bench_comm_rows(dcuda_host_h h, int ranks, int devices, int iters, const sweep_t *w,
                     const char *prefix)
{
    static const struct {
        int mode;
        const char *what;
    } rows[] = { { BENCH_BARRIER_NODE, "node_barrier" },
                 { BENCH_BARRIER_HALF, "half_barrier" },
                 { BENCH_SPLIT, "comm_split_free" },
                 { BENCH_PAIR_WORLD, "pair_put_notify_world" },
                 { BENCH_PAIR_HALF, "pair_put_notify_half" } };
    bench_args_t a = { 0 };
    size_t room = dcuda_comm_split_room(ranks) < 128 ? 128 : dcuda_comm_split_room(ranks);
    if (world_parts(h, &a, room, ranks, devices))
        return;
    for (int c = 0; c < (int)(sizeof rows / sizeof rows[0]); c++) {
        const int pair = rows[c].mode == BENCH_PAIR_WORLD || rows[c].mode == BENCH_PAIR_HALF;
        if (pair && ranks < 3)
            continue;
        a.mode = rows[c].mode;
        a.iters = a.mode == BENCH_SPLIT ? iters / 10 + 1 : iters;
        a.warmup = a.iters / 10 + 1;
        bench_result_t r;
        char what[64];
        snprintf(what, sizeof what, "%s%s", prefix, rows[c].what);
        if (bench_measure(h, &a, &r))
            bench_report_rounds("runtime", what, ranks, pair ? 4u : 0u,
                                pair ? "one_way_us" : "latency_us", &r, pair ? 0.5e-3 : 1e-3);
    }
    dcuda_host_free(h, a.dst);
    half_allreduce_rows(h, ranks, devices, iters, w, prefix);
}

/* The WORLD collectives timed, each at the first 2, 3, 4 or 5 of its
 * sizes (the data of a reduction, a broadcast's bytes, a block of the
 * others); the allreduces also at the fourth, where the ring takes over
 * from the tree, and the broadcast at the fourth and fifth, which one
 * device's ranks read, and where across devices (or through the loopback
 * path) the chain takes over. */
typedef struct world_coll {
    int mode;
    const char *name;
    int sizes; /* the first 2 .. 5 */
} world_coll_t;

static const world_coll_t world_colls[] = {
    { BENCH_ALLREDUCE, "allreduce_sum_float", 4 },
    { BENCH_ALLREDUCE_RING, "allreduce_ring_user", 4 },
    { BENCH_BROADCAST, "broadcast", 5 },
    { BENCH_BROADCAST_USER, "broadcast_flat_user", 5 },
    { BENCH_ALLGATHER, "allgather", 2 },
    { BENCH_ALLGATHER_USER, "allgather_ring_user", 2 },
    { BENCH_REDUCE, "reduce_sum_float", 3 },
    { BENCH_REDUCE_SCATTER, "reduce_scatter_sum_float", 2 },
    { BENCH_REDUCE_SCATTER_USER, "reduce_scatter_ring_user", 2 },
    { BENCH_ALLTOALL, "alltoall", 2 },
    { BENCH_ALLTOALL_USER, "alltoall_direct_user", 2 },
};

/* Bytes from offset 0 that mode needs in every part at size. */
static size_t world_coll_room(int mode, int ranks, size_t size)
{
    switch (mode) {
    case BENCH_ALLGATHER:
    case BENCH_ALLGATHER_USER:
        return size * (size_t)ranks;
    case BENCH_ALLTOALL_USER:
    case BENCH_REDUCE_SCATTER_USER: /* the ring's data and its scratch */
        return 2u * size * (size_t)ranks;
    case BENCH_REDUCE_SCATTER:
        return dcuda_reduce_scatter_room(ranks, size / 4, DCUDA_FLOAT);
    case BENCH_ALLTOALL:
        return dcuda_alltoall_room(ranks, size);
    case BENCH_BROADCAST:
    case BENCH_BROADCAST_USER:
        return size;
    case BENCH_ALLREDUCE_RING:
        return 3u * size;
    default:
        return dcuda_allreduce_room(ranks, size / 4, DCUDA_FLOAT);
    }
}

/* Each collective of world_colls, every rank of every process taking
 * part (a reduce's root is the last rank, so its result is handed over),
 * at sizes[] within -m; rows `prefix`<name>: its latency, and its rate
 * back to back at the smallest size run (every size with `rates` or
 * --rate). `devices` ranks of this process. */
void bench_world_collectives(dcuda_host_h h, int ranks, int devices, int iters, const size_t *sizes,
                             const sweep_t *w, const char *prefix, int rates)
{
    const int kinds = (int)(sizeof world_colls / sizeof world_colls[0]);
    bench_args_t a = { 0 };
    size_t room = 0;
    for (int c = 0; c < kinds; c++)
        for (int s = 0; s < world_colls[c].sizes; s++) {
            size_t need = world_coll_room(world_colls[c].mode, ranks, sizes[s]);
            if (bench_in_sweep(w, sizes[s]) && need > room)
                room = need;
        }
    if (world_parts(h, &a, room, ranks, devices))
        return;
    a.peer = ranks - 1;
    for (int c = 0; c < kinds; c++) {
        int first = 1;
        for (int s = 0; s < world_colls[c].sizes; s++) {
            if (!bench_in_sweep(w, sizes[s]))
                continue;
            a.mode = world_colls[c].mode;
            a.size = sizes[s];
            a.iters = sizes[s] > 65536 ? iters / 8 + 1 : iters;
            a.warmup = a.iters / 10 + 1;
            bench_result_t r;
            char what[64];
            snprintf(what, sizeof what, "%s%s", prefix, world_colls[c].name);
            a.sync = 1;
            if (bench_measure(h, &a, &r))
                bench_report_collective(what, a.mode, ranks, a.size, &r);
            if (first || rates || bench_rate_every_size()) {
                a.sync = 0;
                if (bench_measure(h, &a, &r))
                    bench_report_runs("rate", what, ranks, a.size, "Mcalls_per_s", &r,
                                      a.iters / 1e3, 1);
            }
            first = 0;
        }
    }
    dcuda_host_free(h, a.dst);
}

/* A rank's share of `size` bytes a device spread over its `ranks`: whole
 * 64-byte pieces (whole floats). */
static size_t across_share(size_t size, int ranks) { return size / (size_t)ranks / 64u * 64u; }

/* A device's data spread over its ranks, every rank of every device
 * moving its share at once (the form of nccl-tests' rows on GPUs, whose
 * buffer is a GPU's): each rank calls the collective on a window of its
 * group across the devices (WORLD split by device rank: one rank a
 * device). Rows `prefix`across_<name>, at 1, 8 and 64 MiB a device
 * (within -m), with the devices as the ranks: an allreduce's bytes are a
 * device's (its ranks' shares together), an allgather's a device's block,
 * a broadcast's a device's; algbw and busbw over the devices as
 * nccl-tests' over GPUs. Only where every process holds `devices` ranks
 * (the groups alike) and there are several. */
void bench_across_rows(dcuda_host_h h, int ranks, int devices, int iters, const sweep_t *w,
                       const char *prefix)
{
    static const size_t sizes[] = { 1u << 20, 8u << 20, 64u << 20 };
    static const struct {
        int mode;
        const char *name;
    } rows[] = { { BENCH_ALLREDUCE_ACROSS, "across_allreduce_sum_float" },
                 { BENCH_ALLGATHER_ACROSS, "across_allgather" },
                 { BENCH_BROADCAST_ACROSS, "across_broadcast" } };
    const int groups = devices > 0 ? ranks / devices : 0; /* the devices */
    if (groups < 2 || groups * devices != ranks)
        return;
    bench_args_t a = { 0 };
    size_t room = dcuda_comm_split_room(ranks);
    for (int k = 0; k < 3; k++) {
        const size_t share = across_share(sizes[k], devices);
        const size_t need = dcuda_allreduce_room(groups, share / 4, DCUDA_FLOAT);
        if (bench_in_sweep(w, sizes[k]) && need > room)
            room = need;
    }
    if (world_parts(h, &a, room, ranks, devices))
        return;
    for (int c = 0; c < (int)(sizeof rows / sizeof rows[0]); c++)
        for (int k = 0; k < 3; k++) {
            if (!bench_in_sweep(w, sizes[k]))
                continue;
            const size_t share = across_share(sizes[k], devices);
            a.mode = rows[c].mode;
            a.size = a.mode == BENCH_ALLGATHER_ACROSS ? across_share(share, groups) : share;
            if (a.size == 0)
                continue;
            a.iters = iters / (int)(sizes[k] >> 16) + 2; /* 1 MiB: a sixteenth */
            a.warmup = a.iters / 10 + 1;
            bench_result_t r;
            char what[64];
            snprintf(what, sizeof what, "%s%s", prefix, rows[c].name);
            if (bench_measure(h, &a, &r))
                bench_report_collective(what, a.mode, groups, a.size * (size_t)devices, &r);
        }
    dcuda_host_free(h, a.dst);
}
