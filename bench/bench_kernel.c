/*
 * Rank code of the benchmark (CPU and GPU ranks alike): one kernel for each
 * family of cases, the user struct's mode picking the case within it.
 *
 *   bench_latency    same device: ping-pong latency of notified puts (any
 *                    size) and notifications
 *   bench_bandwidth  same device: put bandwidth from one or from all ranks
 *   bench_runtime    same device: host command round trips, barriers,
 *                    window creation, put + flush; and WORLD barriers
 *   bench_peer       between processes: ping-pong between WORLD rank 0 and
 *                    the first rank of process 1, and bandwidth from the
 *                    first K ranks of process 0 to the first K of process 1
 *                    (WORLD windows; parts lie in dcuda_host_alloc memory of
 *                    each process)
 *   bench_get        gets: rank 0 of rank 1 on the device (DEVICE windows),
 *                    and WORLD rank 0 of process 1's first rank (the peer
 *                    cases' windows); the other rank takes no part
 *
 * A kernel holds only its family's code, so that a change to the code one
 * family runs leaves the registers and the code layout of the others as
 * they were (one kernel of every case moved unrelated rows by several
 * percent with any change to the inlined engine). Every rank brackets the
 * measured phase with the device timer; the host reads the span from the
 * earliest start to the latest stop of its device (the bandwidth and rate
 * rows). The latency rows' recorder also keeps each round's time (the
 * GPU's global timer, or CLOCK_MONOTONIC on CPU ranks) in bench_args.out,
 * for their statistics over rounds.
 */
#if !defined(__CUDACC__)
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <time.h>
#endif

#include "bench.h"
#include "dcuda/dcuda_rank.h"

#if defined(DCUDA_RANK_TRACE) && defined(__CUDACC__)
#include <stdio.h>
/* A trace build (cmake -DDCUDA_PROXY_TRACE=ON, which compiles this with
 * DCUDA_RANK_TRACE): the phases of the first ranks' timed WORLD calls, a
 * line a rank, in microseconds a call (impl/marks.h). */
DCUDA_RANK_FN void bench_trace_print(const dcuda_state_t *st, const bench_args_t *a)
{
    const dcu_trace_row_t *row = dcu_trace_row(st);
    if (!row || !row->calls || dcuda_thread_index() != 0 || st->world_rank >= 4)
        return;
    const double n = 1000.0 * (double)row->calls;
    printf("trace mode %d size %llu rank %d calls %llu us: record %.3f takes %.3f started %.3f "
           "checks %.3f put_data %.3f send %.3f spin %.3f agree %.3f result %.3f return %.3f\n",
           a->mode, (unsigned long long)a->size, st->world_rank, (unsigned long long)row->calls,
           row->sum[DCU_TRACE_RECORD] / n, row->sum[DCU_TRACE_TAKES] / n,
           row->sum[DCU_TRACE_STARTED] / n, row->sum[DCU_TRACE_CHECKS] / n,
           row->sum[DCU_TRACE_PUT_DATA] / n, row->sum[DCU_TRACE_SEND] / n,
           row->sum[DCU_TRACE_SPIN] / n, row->sum[DCU_TRACE_AGREE] / n,
           row->sum[DCU_TRACE_RESULT] / n, row->sum[DCU_TRACE_RETURN] / n);
}
#define BENCH_TRACE(call) call
#else
#define BENCH_TRACE(call) ((void)0)
#endif

/* Nanoseconds of a clock every rank of the device reads alike. */
#if defined(__CUDACC__)
static __device__ __forceinline__ long long bench_now(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return (long long)t;
}
#else
static inline long long bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + (long long)ts.tv_nsec;
}
#endif

/* Keeps the time `ns` of timed round i when it is one the host reads
 * (rounds 0, every, 2 * every, ...; out NULL: not the recorder, or an
 * untimed round). */
DCUDA_RANK_FN void bench_store(long long *out, int every, int i, long long ns)
{
    if (out && dcuda_thread_index() == 0 && i % every == 0)
        out[1 + i / every] = ns;
}

/* The same for a round that started at t0. */
DCUDA_RANK_FN void bench_keep(long long *out, int every, int i, long long t0)
{
    if (out)
        bench_store(out, every, i, bench_now() - t0);
}

/* Ping-pong of notified puts of a size known only at run time: on a GPU
 * a function of its own, called once, so that the kernel's registers (and
 * with them the ranks a GPU holds) stay those of the constant-size rows;
 * the loop is inside it, so that the rows hold no call a put. */
#if defined(__CUDACC__)
static __device__ __noinline__
#else
DCUDA_RANK_FN
#endif
    void
    pingpong_put_sized(dcuda_state_t *st, dcuda_win_t dst, int other, int first, size_t size,
                       const char *src, int rounds, long long *out, int every)
{
    for (int i = 0; i < rounds; i++) {
        long long t0 = out ? bench_now() : 0;
        if (!first)
            dcuda_wait_notifications(st, 0, 1);
        dcuda_put_notify(st, dst, other, 0, size, src, 0);
        if (first)
            dcuda_wait_notifications(st, 0, 1);
        bench_keep(out, every, i, t0);
    }
}

/* `rounds` round trips; rank 0 keeps their times in `out` (NULL: none). */
DCUDA_RANK_FN void bench_pingpong(dcuda_state_t *st, const bench_args_t *a, dcuda_win_t dst, int me,
                                  const char *src, int rounds, long long *out)
{
    int put = a->mode == BENCH_PINGPONG_PUT, constant4 = a->size == 0;
    int other = me == 0 ? a->peer : 0;
    out = me == 0 ? out : NULL;
    if (put && !constant4) {
        pingpong_put_sized(st, dst, other, me == 0, a->size, src, rounds, out, a->every);
        return;
    }
    for (int i = 0; i < rounds; i++) {
        long long t0 = out ? bench_now() : 0;
        if (me != 0)
            dcuda_wait_notifications(st, 0, 1);
        if (put) /* a size known when compiled, as one value's */
            dcuda_put_notify(st, dst, other, 0, 4, src, 0);
        else
            dcuda_notify(st, other, DCUDA_COMM_DEVICE, 0);
        if (me == 0)
            dcuda_wait_notifications(st, 0, 1);
        bench_keep(out, a->every, i, t0);
    }
}

DCUDA_RANK_FN void bench_bandwidth(dcuda_state_t *st, const bench_args_t *a, dcuda_win_t dst,
                                   int me, int ranks, const char *src)
{
    int all = a->mode == BENCH_BW_ALL;
    if (all || me == 0) {
        int target = all ? (me + 1) % ranks : 1;
        /* One sender walks through its whole buffer, so the data comes from
         * and goes to memory rather than staying in L2. */
        for (int i = 0; i < a->iters; i++) {
            size_t off = all ? 0 : ((size_t)i * a->size) % a->stride;
            dcuda_put_notify(st, dst, target, off, a->size, src + off, 1);
        }
    }
    if (all || me == 1)
        dcuda_wait_notifications(st, 1, a->iters);
}

/* Barriers, window creation or put + flush, a->iters times (no thesis
 * counterpart); rank 0 keeps each call's time. */
DCUDA_RANK_FN void bench_runtime_call(dcuda_state_t *st, const bench_args_t *a, dcuda_win_t dst,
                                      int me, char *src)
{
    long long *out = me == 0 ? a->out : NULL;
    for (int i = 0; i < a->iters; i++) {
        long long t0 = out ? bench_now() : 0;
        if (a->mode == BENCH_BARRIER) {
            dcuda_comm_barrier(st, DCUDA_COMM_DEVICE);
        } else if (a->mode == BENCH_WIN_CREATE) {
            dcuda_win_t w;
            dcuda_win_create(st, DCUDA_COMM_DEVICE, src, 256, &w);
            dcuda_win_free(st, w);
        } else if (me == 0) {
            dcuda_put(st, dst, 1, 0, a->size, src);
            dcuda_win_flush(st, dst);
        }
        bench_keep(out, a->every, i, t0);
    }
}

/* Inlined into each kernel, so that a family's constant prunes the others'
 * code. */
#if defined(__CUDACC__)
#define BENCH_INLINE static __device__ __forceinline__
#else
#define BENCH_INLINE static inline
#endif

/* Same-device cases of one family. In a run of several processes only
 * process 0 measures; the others get BENCH_IDLE and their ranks just pass
 * the collectives. */
BENCH_INLINE void bench_device(dcuda_state_t *st, const bench_args_t *a, const int family)
{
    int me, ranks;
    dcuda_win_t src_win, dst_win;
    dcuda_comm_rank(st, DCUDA_COMM_DEVICE, &me);
    dcuda_comm_size(st, DCUDA_COMM_DEVICE, &ranks);
    char *src = a->src + (size_t)me * a->stride;
    dcuda_win_create(st, DCUDA_COMM_DEVICE, src, a->stride, &src_win);
    dcuda_win_create(st, DCUDA_COMM_DEVICE, a->dst + (size_t)me * a->stride, a->stride, &dst_win);
    int active = a->mode != BENCH_IDLE && (a->mode == BENCH_BW_ALL || me == 0 ||
                                           me == (a->mode <= BENCH_PINGPONG_NOTIFY ? a->peer : 1));
    if (family == BENCH_FAMILY_LATENCY && active)
        bench_pingpong(st, a, dst_win, me, src, a->warmup, NULL);

    dcuda_start_cpu_timer(st);
    if (family == BENCH_FAMILY_LATENCY && active)
        bench_pingpong(st, a, dst_win, me, src, a->iters, a->out);
    else if (family == BENCH_FAMILY_BANDWIDTH && active)
        bench_bandwidth(st, a, dst_win, me, ranks, src);
    else if (family == BENCH_FAMILY_RUNTIME && a->mode == BENCH_HOST_PING)
        for (int i = 0; me == 0 && i < a->iters; i++) {
            long long t0 = bench_now();
            dcuda_rank_ping_host(st);
            bench_keep(a->out, a->every, i, t0);
        }
    else if (family == BENCH_FAMILY_RUNTIME && a->mode != BENCH_IDLE)
        bench_runtime_call(st, a, dst_win, me, src);
    dcuda_stop_cpu_timer(st);

    dcuda_win_free(st, dst_win);
    dcuda_win_free(st, src_win);
}

/* WORLD rank 0 <-> WORLD rank a->peer (process 1's first rank); the
 * starter keeps the round trips' times in `out` (NULL: none). */
DCUDA_RANK_FN void peer_pingpong(dcuda_state_t *st, const bench_args_t *a, dcuda_win_t dst,
                                 int starter, const char *src, int rounds, long long *out)
{
    int put = a->mode == BENCH_PEER_PINGPONG_PUT;
    int other = starter ? a->peer : 0;
    out = starter ? out : NULL;
    for (int i = 0; i < rounds; i++) {
        long long t0 = out ? bench_now() : 0;
        if (!starter)
            dcuda_wait_notifications(st, 0, 1);
        if (put)
            dcuda_put_notify(st, dst, other, a->offset, a->size, src, 0);
        else
            dcuda_notify(st, other, DCUDA_COMM_WORLD, 0);
        if (starter)
            dcuda_wait_notifications(st, 0, 1);
        bench_keep(out, a->every, i, t0);
    }
}

/* Sender: back-to-back notified puts walking through its part of src and of
 * the target's dst, then waits for the receiver's acknowledgement, so the
 * sender's device timer covers the arrival of the last byte. */
DCUDA_RANK_FN void peer_bandwidth(dcuda_state_t *st, const bench_args_t *a, dcuda_win_t dst,
                                  int world, const char *src, int side)
{
    if (side == BENCH_SIDE_SEND) {
        size_t off = 0;
        for (int i = 0; i < a->iters; i++) {
            dcuda_put_notify(st, dst, world + a->peer, off, a->size, src + off, 1);
            off += a->size;
            if (off + a->size > a->stride)
                off = 0;
        }
        dcuda_wait_notifications(st, 2, 1);
    } else {
        dcuda_wait_notifications(st, 1, a->iters);
        dcuda_notify(st, world - a->peer, DCUDA_COMM_WORLD, 2);
    }
}

/* Where a rank stands in a peer case: the first a->senders device ranks
 * of processes 0 and 1 (of each half of one process: BENCH_SIDE_HALVES,
 * the answering half's parts after the sending half's) take part (parts
 * of a->stride bytes from *off), every other rank has empty parts. */
BENCH_INLINE int peer_place(dcuda_state_t *st, const bench_args_t *a, int *side_out, size_t *off)
{
    int me;
    dcuda_comm_rank(st, DCUDA_COMM_DEVICE, &me);
    int side = a->side, idx = me, first = 0;
    if (side == BENCH_SIDE_HALVES) {
        int answer = me >= a->peer;
        side = me >= 2 * a->peer ? BENCH_SIDE_NONE : answer ? BENCH_SIDE_ANSWER : BENCH_SIDE_SEND;
        idx = answer ? me - a->peer : me;
        first = answer ? a->senders : 0;
    }
    int active = side != BENCH_SIDE_NONE && idx < a->senders;
    *side_out = side;
    *off = active ? (size_t)(first + idx) * a->stride : 0;
    return active;
}

/* Peer cases (peer_place); the ranks that take no part wait in the
 * window-free barrier. */
DCUDA_RANK_FN void bench_peer(dcuda_state_t *st, const bench_args_t *a)
{
    int world, side;
    size_t off;
    dcuda_win_t src_win, dst_win;
    dcuda_comm_rank(st, DCUDA_COMM_WORLD, &world);
    int active = peer_place(st, a, &side, &off);
    size_t part = active ? a->stride : 0;
    char *src = a->src + off;
    dcuda_win_create(st, DCUDA_COMM_WORLD, src, part, &src_win);
    dcuda_win_create(st, DCUDA_COMM_WORLD, a->dst + off, part, &dst_win);
    if (active && a->mode != BENCH_PEER_BW)
        peer_pingpong(st, a, dst_win, side == BENCH_SIDE_SEND, src, a->warmup, NULL);
    dcuda_comm_barrier(st,
                       DCUDA_COMM_WORLD); /* every process's ranks run before the clock starts */

    dcuda_start_cpu_timer(st);
    if (active && a->mode == BENCH_PEER_BW)
        peer_bandwidth(st, a, dst_win, world, src, side);
    else if (active)
        peer_pingpong(st, a, dst_win, side == BENCH_SIDE_SEND, src, a->iters, a->out);
    dcuda_stop_cpu_timer(st);

    dcuda_win_free(st, dst_win);
    dcuda_win_free(st, src_win);
}

/* Gets of a->size bytes at the start of `other`'s part of dst into src
 * (in my part of the other window), one after another; their times kept
 * in `out` (NULL: none). */
DCUDA_RANK_FN void get_loop(dcuda_state_t *st, dcuda_win_t dst, int other, char *src, size_t size,
                            int rounds, long long *out, int every)
{
    for (int i = 0; i < rounds; i++) {
        long long t0 = out ? bench_now() : 0;
        dcuda_get(st, dst, other, 0, size, src);
        bench_keep(out, every, i, t0);
    }
}

/* Fetch-adds of 1 to the first 8-byte word of `other`'s part of dst, one
 * after another; their times kept in `out` (NULL: none). */
DCUDA_RANK_FN void atomic_loop(dcuda_state_t *st, dcuda_win_t dst, int other, int rounds,
                               long long *out, int every)
{
    uint64_t old = 0u;
    for (int i = 0; i < rounds; i++) {
        long long t0 = out ? bench_now() : 0;
        dcuda_atomic(st, DCUDA_ATOMIC_FETCH_ADD, dst, other, 0, 8, 1, 0, &old);
        bench_keep(out, every, i, t0);
    }
}

/* Gets: on the device (BENCH_GET, rank 0 of rank 1, DEVICE windows) or
 * between processes (BENCH_PEER_GET, the peer cases' ranks and windows:
 * the sending side gets of the answering one, which takes no part); and
 * fetch-adds on the other's word, on the device (BENCH_ATOMIC, rank 0 on
 * rank 1's) or between processes (BENCH_PEER_ATOMIC). */
DCUDA_RANK_FN void bench_gets(dcuda_state_t *st, const bench_args_t *a)
{
    int me, side = BENCH_SIDE_NONE;
    const int peer = a->mode == BENCH_PEER_GET || a->mode == BENCH_PEER_ATOMIC;
    int comm = peer ? DCUDA_COMM_WORLD : DCUDA_COMM_DEVICE;
    size_t off, part = a->stride;
    dcuda_win_t src_win, dst_win;
    dcuda_comm_rank(st, DCUDA_COMM_DEVICE, &me);
    if (peer && !peer_place(st, a, &side, &off))
        part = 0;
    if (!peer) {
        off = (size_t)me * a->stride;
        side = me == 0 && a->mode != BENCH_IDLE ? BENCH_SIDE_SEND : BENCH_SIDE_NONE;
    }
    char *src = a->src + off;
    dcuda_win_create(st, comm, src, part, &src_win);
    dcuda_win_create(st, comm, a->dst + off, part, &dst_win);
    int other = peer ? a->peer : 1, getter = side == BENCH_SIDE_SEND && part > 0;
    const int atomic = a->mode == BENCH_ATOMIC || a->mode == BENCH_PEER_ATOMIC;
    if (getter && atomic)
        atomic_loop(st, dst_win, other, a->warmup, NULL, 1);
    else if (getter)
        get_loop(st, dst_win, other, src, a->size, a->warmup, NULL, 1);
    dcuda_comm_barrier(st, comm);
    dcuda_start_cpu_timer(st);
    if (getter && atomic)
        atomic_loop(st, dst_win, other, a->iters, a->out, a->every);
    else if (getter)
        get_loop(st, dst_win, other, src, a->size, a->iters, a->out, a->every);
    dcuda_stop_cpu_timer(st);
    dcuda_win_free(st, dst_win);
    dcuda_win_free(st, src_win);
}

/* Chunk c of n floats cut in p: its first element and its length. */
DCUDA_RANK_FN size_t ring_start(size_t n, int p, int c) { return n * (size_t)c / (size_t)p; }
DCUDA_RANK_FN size_t ring_len(size_t n, int p, int c)
{
    return ring_start(n, p, c + 1) - ring_start(n, p, c);
}

/* dst[i] += src[i], the rank's threads sharing the elements. */
DCUDA_RANK_FN void ring_add(float *dst, const float *src, size_t len)
{
    for (size_t i = (size_t)dcuda_thread_index(); i < len; i += (size_t)dcuda_thread_count())
        dst[i] += src[i];
    dcuda_rank_sync();
}

/* A ring's closing handshake: I tell my left neighbour that this call is
 * done here (tag 6) and wait for my right one's word, so that my next
 * call's puts into its part never meet its reads of this call's (without
 * it a rank may run a call ahead of its right neighbour). */
DCUDA_RANK_FN void ring_done(dcuda_state_t *st, int p, int r)
{
    if (p < 2)
        return;
    dcuda_notify(st, (r - 1 + p) % p, DCUDA_COMM_WORLD, 6);
    dcuda_wait_notifications(st, 6, 1);
}

/* The allreduce a user writes with notified puts, as docs/limitations.md
 * advises for large reductions: a ring over WORLD. n floats at `data`
 * (offset 0 of my part of win), two scratch copies of them after: chunk c
 * of the reduce-scatter arrives at n + start(c), of the allgather at
 * 2n + start(c). In p - 1 steps each rank puts a chunk to its right
 * neighbour and adds the one from its left (tag 1); in p - 1 more it
 * passes the reduced chunks on (tag 2). Only a rank writes its own data;
 * a chunk's scratch is not reused before its reader is done, since a rank
 * finishes a call only once every chunk went all the way round. Without
 * `gather`, the reduce-scatter alone: chunk r + 1 ends reduced at rank r
 * (a user's reduce-scatter, its blocks named that way), and the ring's
 * closing handshake stands for the allgather's order. */
DCUDA_RANK_FN void ring_allreduce(dcuda_state_t *st, dcuda_win_t win, float *data, size_t n,
                                  int gather)
{
    int p, r;
    dcuda_comm_size(st, DCUDA_COMM_WORLD, &p);
    dcuda_comm_rank(st, DCUDA_COMM_WORLD, &r);
    int right = (r + 1) % p;
    for (int s = 0; s < p - 1; s++) { /* reduce-scatter */
        int c = (r - s + p) % p, in = (r - s - 1 + 2 * p) % p;
        dcuda_put_notify(st, win, right, (n + ring_start(n, p, c)) * sizeof(float),
                         ring_len(n, p, c) * sizeof(float), data + ring_start(n, p, c), 1);
        dcuda_wait_notifications(st, 1, 1);
        ring_add(data + ring_start(n, p, in), data + n + ring_start(n, p, in), ring_len(n, p, in));
    }
    for (int s = 0; gather && s < p - 1; s++) { /* allgather: chunk r + 1 is reduced here */
        int c = (r + 1 - s + p) % p, in = (r - s + p) % p;
        dcuda_put_notify(st, win, right, (2 * n + ring_start(n, p, c)) * sizeof(float),
                         ring_len(n, p, c) * sizeof(float), data + ring_start(n, p, c), 2);
        dcuda_wait_notifications(st, 2, 1);
        float *to = data + ring_start(n, p, in);
        const float *from = data + 2 * n + ring_start(n, p, in);
        for (size_t i = (size_t)dcuda_thread_index(); i < ring_len(n, p, in);
             i += (size_t)dcuda_thread_count())
            to[i] = from[i];
        dcuda_rank_sync();
    }
    if (!gather)
        ring_done(st, p, r);
}

/* The broadcast a user writes with notified puts: rank 0 puts its `size`
 * bytes (offset 0 of its part) to every other rank's part (tag 3), each
 * of which waits for them. */
DCUDA_RANK_FN void user_broadcast(dcuda_state_t *st, dcuda_win_t win, char *part, size_t size)
{
    int p, r;
    dcuda_comm_size(st, DCUDA_COMM_WORLD, &p);
    dcuda_comm_rank(st, DCUDA_COMM_WORLD, &r);
    if (r != 0) {
        dcuda_wait_notifications(st, 3, 1);
        return;
    }
    for (int t = 1; t < p; t++)
        dcuda_put_notify(st, win, t, 0, size, part, 3);
}

/* The allgather a user writes: a ring. Rank c's block of `size` bytes
 * lies at c * size of every part; in p - 1 steps each rank passes the
 * block it has newest (its own first) to its right neighbour (tag 4) and
 * waits for the one from its left; then the closing handshake. */
DCUDA_RANK_FN void user_allgather(dcuda_state_t *st, dcuda_win_t win, char *part, size_t size)
{
    int p, r;
    dcuda_comm_size(st, DCUDA_COMM_WORLD, &p);
    dcuda_comm_rank(st, DCUDA_COMM_WORLD, &r);
    for (int s = 0; s < p - 1; s++) {
        size_t c = (size_t)((r - s + p) % p);
        dcuda_put_notify(st, win, (r + 1) % p, c * size, size, part + c * size, 4);
        dcuda_wait_notifications(st, 4, 1);
    }
    ring_done(st, p, r);
}

/* The alltoall a user writes: direct. My block for rank t lies at
 * t * size of my part, and lands at (p + me) * size of t's (tag 5); each
 * rank waits for the p - 1 blocks of the others (its own stays). Every
 * block has one writer and no reader here, so calls may overlap, as the
 * flat broadcast's. */
DCUDA_RANK_FN void user_alltoall(dcuda_state_t *st, dcuda_win_t win, char *part, size_t size)
{
    int p, r;
    dcuda_comm_size(st, DCUDA_COMM_WORLD, &p);
    dcuda_comm_rank(st, DCUDA_COMM_WORLD, &r);
    for (int k = 1; k < p; k++) {
        int t = (r + k) % p;
        dcuda_put_notify(st, win, t, (size_t)(p + r) * size, size, part + (size_t)t * size, 5);
    }
    if (p > 1)
        dcuda_wait_notifications(st, 5, p - 1);
}

/* The data a collective's check starts from (bench.h): for the
 * reductions floats bench_float_in of my rank (h, in the half for
 * SUM_HALF), the bytes of bench_fill_byte otherwise. */
DCUDA_RANK_FN void bench_fill(const bench_args_t *a, int check, int h, int p, char *part)
{
    const size_t all = bench_check_elements(check, a->size, p);
    for (size_t i = (size_t)dcuda_thread_index(); i < all; i += (size_t)dcuda_thread_count()) {
        if (bench_check_floats(check))
            ((float *)(void *)part)[i] = bench_float_in(h, i);
        else
            part[i] = (char)bench_fill_byte(check, h, p, a->size, i);
    }
    dcuda_rank_sync();
}

/* The word at `off` of my part of win (WORLD) replaced by its op over
 * every rank of WORLD, returned to every thread. */
DCUDA_RANK_FN long long bench_world_op(dcuda_state_t *st, dcuda_win_t win, char *part, size_t off,
                                       long long mine, dcuda_op_t op)
{
    volatile long long *slot = (volatile long long *)(void *)(part + off);
    if (dcuda_thread_index() == 0)
        *slot = mine;
    dcuda_rank_sync();
    dcuda_allreduce(st, win, off, 1, DCUDA_INT64, op);
    long long all = *slot;
    dcuda_rank_sync(); /* every thread read it before thread 0 writes the next */
    return all;
}

/* Adds n to the rank's count at *slot (its threads count at once). */
DCUDA_RANK_FN void bench_count(long long *slot, long long n)
{
#if defined(__CUDACC__)
    if (n)
        atomicAdd((unsigned long long *)slot, (unsigned long long)n);
#else
    *slot += n;
#endif
}

/* One round trip of a 4-byte notified put between the pair's first and
 * second (me 0, 1; `other`: the other's rank in win's communicator), from
 * byte 64 of my part to byte 0 of the other's; other ranks (me < 0) pass. */
DCUDA_RANK_FN void bench_pair_round(dcuda_state_t *st, dcuda_win_t win, int me, int other,
                                    char *part)
{
    if (me < 0)
        return;
    if (me == 1)
        dcuda_wait_notifications(st, 0, 1);
    dcuda_put_notify(st, win, other, 0, 4, part + 64, 0);
    if (me == 0)
        dcuda_wait_notifications(st, 0, 1);
}

/* My rank in a pair mode's pair (-1: not in it). */
DCUDA_RANK_FN int bench_pair_rank(dcuda_state_t *st)
{
    int r;
    dcuda_comm_rank(st, DCUDA_COMM_WORLD, &r);
    return r == 0 ? 0 : r == 2 ? 1 : -1;
}

/* One call of a WORLD mode, on window win (my part at `part`); `half`:
 * my group of WORLD (BENCH_BARRIER_HALF, and bench_group_mode's modes,
 * whose win is a window of it). */
DCUDA_RANK_FN void bench_world_call(dcuda_state_t *st, const bench_args_t *a, dcuda_win_t win,
                                    char *part, int half)
{
    int r, made;
    if (a->mode == BENCH_BARRIER_NODE) {
        dcuda_comm_barrier(st, DCUDA_COMM_NODE);
    } else if (a->mode == BENCH_BARRIER_HALF) {
        dcuda_comm_barrier(st, half);
    } else if (a->mode == BENCH_SPLIT) {
        dcuda_comm_rank(st, DCUDA_COMM_WORLD, &r);
        dcuda_comm_split(st, DCUDA_COMM_WORLD, r % 2, r, win, 0, &made);
        dcuda_comm_free(st, made);
    } else if (a->mode == BENCH_PAIR_WORLD || a->mode == BENCH_PAIR_HALF) {
        const int me = bench_pair_rank(st); /* on the half: its ranks 0 and 1 */
        bench_pair_round(st, win, me, a->mode == BENCH_PAIR_HALF ? 1 - me : 2 - 2 * me, part);
    } else if (a->mode == BENCH_ALLREDUCE_RING)
        ring_allreduce(st, win, (float *)(void *)part, a->size / 4, 1);
    else if (a->mode == BENCH_REDUCE_SCATTER_USER) {
        dcuda_comm_size(st, DCUDA_COMM_WORLD, &r);
        ring_allreduce(st, win, (float *)(void *)part, a->size / 4 * (size_t)r, 0);
    } else if (a->mode == BENCH_BROADCAST_USER)
        user_broadcast(st, win, part, a->size);
    else if (a->mode == BENCH_ALLGATHER_USER)
        user_allgather(st, win, part, a->size);
    else if (a->mode == BENCH_ALLTOALL_USER)
        user_alltoall(st, win, part, a->size);
    else if (a->mode == BENCH_BARRIER_WORLD)
        dcuda_comm_barrier(st, DCUDA_COMM_WORLD);
    else if (a->mode == BENCH_ALLREDUCE || a->mode == BENCH_ALLREDUCE_HALF ||
             a->mode == BENCH_ALLREDUCE_ACROSS)
        dcuda_allreduce(st, win, 0, a->size / 4, DCUDA_FLOAT, DCUDA_SUM);
    else if (a->mode == BENCH_ALLGATHER || a->mode == BENCH_ALLGATHER_ACROSS)
        dcuda_allgather(st, win, 0, a->size);
    else if (a->mode == BENCH_REDUCE)
        dcuda_reduce(st, win, 0, a->size / 4, DCUDA_FLOAT, DCUDA_SUM, a->peer);
    else if (a->mode == BENCH_REDUCE_SCATTER)
        dcuda_reduce_scatter(st, win, 0, a->size / 4, DCUDA_FLOAT, DCUDA_SUM);
    else if (a->mode == BENCH_ALLTOALL)
        dcuda_alltoall(st, win, 0, a->size);
    else
        dcuda_broadcast(st, win, 0, a->size, 0);
}

/* The check of a WORLD collective (bench.h): fill, one call on `on`,
 * then each rank counts the elements of its part that differ from what
 * bench_element_right computes; WORLD rank 0 keeps the sum over WORLD in
 * out[0]. The barrier after the call lets the calls that return before
 * the others' data came (the flat broadcast's root) not run ahead of the
 * check; the sum's allreduce holds every rank until all have checked. */
DCUDA_RANK_FN void bench_world_check(dcuda_state_t *st, const bench_args_t *a, dcuda_win_t win,
                                     dcuda_win_t on, char *part, int half)
{
    const int check = bench_check_of(a->mode);
    int p, r;
    dcuda_comm_size(st, DCUDA_COMM_WORLD, &p);
    dcuda_comm_rank(st, DCUDA_COMM_WORLD, &r);
    int h = r, ph = p; /* my rank and the ranks the data is over */
    if (bench_group_mode(a->mode)) {
        dcuda_comm_rank(st, half, &h);
        dcuda_comm_size(st, half, &ph);
    }
    bench_fill(a, check, h, ph, part);
    dcuda_comm_barrier(st, DCUDA_COMM_WORLD);
    bench_world_call(st, a, on, part, half);
    dcuda_comm_barrier(st, DCUDA_COMM_WORLD);
    long long *slot = (long long *)(void *)(part + a->clock_off);
    if (dcuda_thread_index() == 0)
        *slot = 0;
    dcuda_rank_sync();
    long long wrong = 0;
    const size_t all = bench_check_elements(check, a->size, ph);
    const int looked = check != BENCH_CHECK_ROOT_SUM || r == a->peer; /* the reduce: its root */
    for (size_t i = (size_t)dcuda_thread_index(); looked && i < all;
         i += (size_t)dcuda_thread_count())
        wrong += !bench_element_right(check, h, ph, a->size, part, i);
    bench_count(slot, wrong);
    dcuda_rank_sync();
    wrong = bench_world_op(st, win, part, a->clock_off, *(volatile long long *)slot, DCUDA_SUM);
    if (r == 0 && a->out && dcuda_thread_index() == 0)
        a->out[0] = wrong;
}

/* A WORLD mode, a->iters times after a->warmup untimed ones, on a WORLD
 * window over the rank's a->stride bytes of dst (a collective checked
 * first). Timed call by call (a->sync): each rank times its own call, and
 * an untimed allreduce of those times (max) holds every rank until the
 * call is done at all of them; WORLD rank 0 keeps the slowest rank's
 * time. Otherwise back to back, for the device timer's span alone. */
DCUDA_RANK_FN void bench_world(dcuda_state_t *st, const bench_args_t *a)
{
    int me, r;
    dcuda_win_t win;
    dcuda_comm_rank(st, DCUDA_COMM_DEVICE, &me);
    dcuda_comm_rank(st, DCUDA_COMM_WORLD, &r);
    char *part = a->dst + (size_t)me * a->stride;
    dcuda_win_create(st, DCUDA_COMM_WORLD, part, a->stride, &win);
    int half = DCUDA_COMM_NULL;
    dcuda_win_t on = win; /* the window the calls take */
    const int on_half = bench_group_mode(a->mode);
    if (a->mode == BENCH_BARRIER_HALF || on_half)
        dcuda_comm_split(st, DCUDA_COMM_WORLD, bench_across_mode(a->mode) ? me : r % 2, r, win, 0,
                         &half);
    if (on_half)
        dcuda_win_create(st, half, part, a->stride, &on);
    if (bench_check_of(a->mode) != BENCH_CHECK_NONE)
        bench_world_check(st, a, win, on, part, half);
    for (int i = 0; i < a->warmup; i++)
        bench_world_call(st, a, on, part, half);
    dcuda_comm_barrier(st, DCUDA_COMM_WORLD);
    long long *out = r == 0 ? a->out : NULL;
    dcuda_start_cpu_timer(st);
    for (int i = 0; i < a->iters; i++) {
        if (!a->sync) {
            bench_world_call(st, a, on, part, half);
            continue;
        }
        long long t0 = bench_now();
        BENCH_TRACE(dcu_trace_on(st));
        bench_world_call(st, a, on, part, half);
        BENCH_TRACE(dcu_trace_off(st));
        long long mine = bench_now() - t0;
        bench_store(out, a->every, i, bench_world_op(st, win, part, a->clock_off, mine, DCUDA_MAX));
    }
    dcuda_stop_cpu_timer(st);
    BENCH_TRACE(bench_trace_print(st, a));
    BENCH_TRACE(dcu_trace_clear(st));
    if (on != win)
        dcuda_win_free(st, on);
    if (half != DCUDA_COMM_NULL)
        dcuda_comm_free(st, half);
    dcuda_win_free(st, win);
}

/* A rank of family f's kernel: its state, a private copy of the user
 * struct (no global loads in the loops), the family's cases. */
BENCH_INLINE void bench_rank(dcuda_context_h ctx, dcuda_state_t *st, const int family)
{
    bench_args_t *user, args;
    dcuda_rank_init(ctx, st);
    dcuda_get_data(st, (void **)&user);
    args = *user;
    if (family == BENCH_FAMILY_PEER) {
        bench_peer(st, &args);
    } else if (family == BENCH_FAMILY_GET) {
        bench_gets(st, &args);
    } else if (family == BENCH_FAMILY_RUNTIME && bench_world_mode(args.mode)) {
        bench_world(st, &args);
    } else {
        bench_device(st, &args, family);
    }
    dcuda_rank_finish(st);
}

DCUDA_KERNEL(bench_latency, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    bench_rank(ctx, &st, BENCH_FAMILY_LATENCY);
}

DCUDA_KERNEL(bench_bandwidth, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    bench_rank(ctx, &st, BENCH_FAMILY_BANDWIDTH);
}

DCUDA_KERNEL(bench_runtime, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    bench_rank(ctx, &st, BENCH_FAMILY_RUNTIME);
}

DCUDA_KERNEL(bench_peer, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    bench_rank(ctx, &st, BENCH_FAMILY_PEER);
}

DCUDA_KERNEL(bench_get, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    bench_rank(ctx, &st, BENCH_FAMILY_GET);
}
