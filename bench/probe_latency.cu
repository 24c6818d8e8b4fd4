/*
 * probe_latency: where the time of a same-GPU notification and notified put
 * goes. Ping-pong between device ranks 0 and 1 of a dcuda kernel (128
 * threads per rank), built from one wait and one send each:
 *
 *   waits  t0       every lane of warp 0 polls the rank's counter itself (the
 *                   floor's loop, without lanes parked apart from lane 0)
 *          warp     warp 0 polls (lane 0 loads, a shuffle shares the value)
 *          warpbar  warp 0 polls, then the whole block meets (__syncthreads)
 *          block    the engine's blocking wait (dcu_block_until), then the block
 *                   meets: dcuda_wait_notifications less its entry and checks
 *          api      dcuda_wait_notifications
 *          ref      dcuda_ref_floors' notify_release loop itself, out of line
 *                   (its registers its own: nothing on the stack), thread 0
 *                   of each rank alone, on flags `gap` bytes apart in the
 *                   scratch buffer: the floor inside a dcuda kernel, so that
 *                   a gap between this row and the floors' is the kernel's
 *                   surroundings (the runtime's host threads, its launch),
 *                   and a gap between this row and t0/t0rel is the code
 *                   around the loop (spilled values after each acquire)
 *   sends  t0rel    thread 0: release add (the floor's notify)
 *          barrel   __syncthreads, then thread 0's release add
 *          api      dcuda_notify
 *          t0put    thread 0: 4-byte load + store + release add (the floor's put)
 *          blkput   __syncthreads, block copy, __syncthreads, release add
 *          leadput  __syncthreads, thread 0 copies and adds, __syncthreads
 *          apiput   dcuda_put_notify (4 B; 0 B, which copies nothing; and
 *                   larger sizes: rank r's source at 16 KiB + size r, its
 *                   target at size r)
 *
 * A raw wait may idle `delay` cycles between polls (does a slower poll
 * leave the counter's L2 slice freer for the add that ends it?).
 *
 * Each row is the best of three runs of PROBE_ITERS round trips, one-way
 * microseconds by rank 0's clock. Bounded: about a second in all. GPU only.
 * With an argument K, runs case K alone, once (for a profiler).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_rank.h"

#define PROBE_ITERS 20000
#define PROBE_REPS 3

enum { W_T0, W_WARP, W_WARPBAR, W_BLOCK, W_API, W_REF };
enum { S_T0REL, S_BARREL, S_API, S_T0PUT, S_BLKPUT, S_LEADPUT, S_APIPUT };

/* gap: 0 = the ranks' own counters; else counters `gap` bytes apart in a
 * scratch buffer (where the L2 keeps them). */
static const struct {
    int wait, send, gap, size, delay;
} cases[] = {
    { W_WARPBAR, S_BARREL, 0, 0, 64 },
    { W_WARPBAR, S_BARREL, 0, 0, 128 },
    { W_WARPBAR, S_BARREL, 0, 0, 256 },
    { W_WARPBAR, S_BARREL, 0, 0, 512 },
    { W_REF, S_T0REL, 256 },
    { W_REF, S_T0REL, 4096 },
    { W_T0, S_T0REL, 0 },
    { W_T0, S_T0REL, 256 },
    { W_T0, S_T0REL, 1024 },
    { W_T0, S_T0REL, 4096 },
    { W_WARP, S_T0REL, 0 },
    { W_WARPBAR, S_BARREL, 0 },
    { W_BLOCK, S_BARREL, 0 },
    { W_API, S_BARREL, 0 },
    { W_WARPBAR, S_API, 0 },
    { W_API, S_API, 0 },
    { W_T0, S_T0PUT, 0 },
    { W_WARPBAR, S_BLKPUT, 0 },
    { W_WARPBAR, S_LEADPUT, 0 },
    { W_API, S_LEADPUT, 0 },
    { W_API, S_BLKPUT, 0 },
    { W_API, S_APIPUT, 0, -1 },
    { W_API, S_APIPUT, 0 },
    { W_API, S_APIPUT, 0, 64 },
    { W_API, S_APIPUT, 0, 256 },
    { W_API, S_APIPUT, 0, 512 },
    { W_API, S_APIPUT, 0, 1024 },
    { W_API, S_APIPUT, 0, 4096 },
};
static const char *wait_names[] = { "t0", "warp", "warpbar", "block", "api", "ref" };
static const char *send_names[] = {
    "t0rel", "barrel", "api", "t0put", "blkput", "leadput", "apiput"
};
#define CASES ((int)(sizeof cases / sizeof *cases))

typedef struct probe_args {
    int wait, send, gap, size, delay, iters;
    char *buf;                   /* [2][256]: rank r's target bytes at 256 r; then scratch */
    unsigned long long *loop_ns; /* rank 0's loop, by its own clock */
} probe_args_t;

/* The raw waits: my counter c reaches *expect + 1. */
DCUDA_RANK_FN void raw_wait(dcuda_state_t *st, int kind, const uint32_t *c, uint32_t *expect,
                            int delay)
{
    uint32_t want = ++*expect;
    if (kind == W_BLOCK) {
        if (threadIdx.x < 32) {
            dcu_block_t d = {
                DCUDA_PHASE_WAITING, 0u, 1u, 0u, DCUDA_WAITS_ON(DCUDA_WAITS_NOTIF, 0), "probe"
            };
            (void)dcu_block_until(st, c, 0, want, 0, d, dcu_poll_lanes());
            __syncwarp();
        }
        __syncthreads();
        return;
    }
    if (kind == W_T0) {
        if (threadIdx.x < 32)
            while (!dcu_reached(dcu_ld_acquire_gpu(c), want)) {
            }
        return;
    }
    if (threadIdx.x < 32) {
        for (;;) {
            uint32_t v = threadIdx.x == 0 ? dcu_ld_acquire_gpu(c) : 0u;
            if (dcu_reached(__shfl_sync(0xffffffffu, v, 0), want))
                break;
            for (long long t = clock64(); delay && clock64() - t < delay;) {
            }
        }
        __syncwarp();
    }
    if (kind == W_WARPBAR)
        __syncthreads();
}

DCUDA_RANK_FN void raw_send(int kind, uint32_t *c, char *dst, const char *src)
{
    switch (kind) {
    case S_T0REL:
        if (threadIdx.x == 0)
            dcu_red_release(c, 1u, 0);
        break;
    case S_BARREL:
        __syncthreads();
        if (threadIdx.x == 0)
            dcu_red_release(c, 1u, 0);
        break;
    case S_T0PUT:
        if (threadIdx.x == 0) {
            *(volatile int *)dst = *(const volatile int *)src;
            dcu_red_release(c, 1u, 0);
        }
        break;
    case S_BLKPUT:
        __syncthreads();
        dcu_copy(dst, src, 4);
        __syncthreads();
        if (threadIdx.x == 0)
            dcu_red_release(c, 1u, 0);
        break;
    case S_LEADPUT:
        __syncthreads();
        if (threadIdx.x == 0) {
            *(volatile int *)dst = *(const volatile int *)src;
            dcu_red_release(c, 1u, 0);
        }
        __syncthreads();
        break;
    }
}

/* The floor's loop (bench/ref_floors.cu: notify_release), thread 0 of a
 * rank: `rounds` ping-pongs on my flag and the other's; the starter keeps
 * the time. Out of line, so that nothing of it lives on the stack. */
__device__ __noinline__ void ref_loop(bool starter, const uint32_t *mine, uint32_t *theirs,
                                      uint32_t base, int rounds, unsigned long long *ns)
{
    unsigned long long t0 = dcu_now_ns();
    for (int i = 1; i <= rounds; i++) {
        if (!starter)
            while (dcu_ld_acquire_gpu(mine) - base < (uint32_t)i) {
            }
        dcu_red_release(theirs, 1u, 0);
        if (starter)
            while (dcu_ld_acquire_gpu(mine) - base < (uint32_t)i) {
            }
    }
    if (starter)
        *ns = dcu_now_ns() - t0;
}

DCUDA_KERNEL(probe, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    probe_args_t *user, a; /* a private copy: no global loads in the loop */
    int me;
    dcuda_win_t win;
    dcuda_rank_init(ctx, &st);
    dcuda_get_data(&st, (void **)&user);
    a = *user;
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &me);
    /* Ranks 0 and 1 both expose the whole buffer (overlapping windows). */
    dcuda_win_create(&st, DCUDA_COMM_DEVICE, me < 2 ? a.buf : NULL, me < 2 ? 32768 : 0, &win);
    int other = 1 - me;
    uint32_t *mine = &st.notifs[st.device_rank].arrived[0].ranks,
             *theirs = &st.notifs[other].arrived[0].ranks;
    if (a.gap) {
        mine = (uint32_t *)(a.buf + 512 + a.gap * (me & 1));
        theirs = (uint32_t *)(a.buf + 512 + a.gap * (other & 1));
    }
    uint32_t expect = a.gap ? dcu_ld_acquire_gpu(mine) : st.consumed[0];
    dcuda_comm_barrier(&st, DCUDA_COMM_DEVICE); /* both read their start before either sends */
    char *dst = a.buf + 256 * other;
    const char *src = a.size > 4 ? a.buf + 16384 + a.size * me : a.buf + 256 * me + 128;
    __syncthreads();
    if (a.wait == W_REF) { /* both read their flag's start before the barrier */
        if (me < 2 && threadIdx.x == 0)
            ref_loop(me == 0, mine, theirs, expect, a.iters, a.loop_ns);
        __syncthreads();
        dcuda_win_free(&st, win);
        dcuda_rank_finish(&st);
        return;
    }
    unsigned long long t0 = dcu_now_ns();
    for (int i = 0; me < 2 && i < a.iters; i++) {
        if (me == 1) {
            if (a.wait == W_API)
                dcuda_wait_notifications(&st, 0, 1);
            else
                raw_wait(&st, a.wait, mine, &expect, a.delay);
        }
        if (a.send == S_API)
            dcuda_notify(&st, other, DCUDA_COMM_DEVICE, 0);
        else if (a.send == S_APIPUT)
            dcuda_put_notify(&st, win, other, (a.size > 4 ? a.size : 256) * other, a.size, src, 0);
        else
            raw_send(a.send, theirs, dst, src);
        if (me == 0) {
            if (a.wait == W_API)
                dcuda_wait_notifications(&st, 0, 1);
            else
                raw_wait(&st, a.wait, mine, &expect, a.delay);
        }
    }
    if (me == 0 && threadIdx.x == 0)
        *a.loop_ns = dcu_now_ns() - t0;
    __syncthreads();
    if (a.wait != W_API && !a.gap && me < 2 && threadIdx.x == 0)
        st.consumed[0] = expect; /* the raw waits consumed them */
    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}

DCUDA_KERNEL_DECLARE(probe);

int main(int argc, char **argv)
{
    char *args[] = { argv[0], (char *)"--dcuda-ranks=2" };
    dcuda_host_h h;
    if (dcuda_host_init(2, args, DCUDA_KERNEL_REF(probe), 128, &h) != DCUDA_OK) {
        fprintf(stderr, "probe_latency: no GPU ranks here\n");
        return 1;
    }
    probe_args_t a = { 0, 0, 0, 4, 0, PROBE_ITERS, NULL, NULL };
    if (dcuda_host_alloc(h, 32768, (void **)&a.buf) != DCUDA_OK ||
        dcuda_host_alloc(h, 8, (void **)&a.loop_ns) != DCUDA_OK)
        return 1;
    printf("%-8s %-8s %6s %6s %6s %12s\n", "wait", "send", "gap", "bytes", "delay", "one_way_us");
    int only = argc > 1 ? atoi(argv[1]) : -1; /* one case, once */
    int first = only < 0 ? 0 : only, end = only < 0 ? CASES : only + 1;
    for (int c = first; c < end && c < CASES; c++) {
        double best = 1e30;
        a.wait = cases[c].wait;
        a.send = cases[c].send;
        a.gap = cases[c].gap;
        a.delay = cases[c].delay;
        a.size = cases[c].size ? (cases[c].size < 0 ? 0 : cases[c].size) : 4;
        for (int r = 0; r < (only < 0 ? PROBE_REPS : 1); r++) {
            unsigned long long loop = 0;
            if (dcuda_host_run(h, &a, sizeof a, NULL) != DCUDA_OK) {
                fprintf(stderr, "probe_latency: run failed: %s\n", dcuda_host_last_error(h));
                return 1;
            }
            dcuda_host_copy_out(h, &loop, a.loop_ns, 8);
            double us = loop / 1e3 / a.iters / 2;
            best = us < best ? us : best;
        }
        printf("%-8s %-8s %6d %6d %6d %12.3f\n", wait_names[a.wait], send_names[a.send], a.gap,
               a.send >= S_T0PUT ? a.size : 0, a.delay, best);
    }
    dcuda_host_free(h, a.buf);
    dcuda_host_free(h, a.loop_ns);
    dcuda_host_finish(h);
    return 0;
}
