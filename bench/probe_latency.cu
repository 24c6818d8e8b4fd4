/*
 * probe_latency: where the time of a same-GPU notification goes. Ping-pong
 * between ranks 0 and 1 of a dcuda kernel, adding one ingredient at a time:
 *   raw_relaxed      thread 0: relaxed add to the peer's counter, acquire poll
 *   raw_sync         + __syncthreads before the add and after the poll
 *   raw_release      + release add instead of relaxed
 *   raw_put_release  + a 4-byte store before the release add
 *   api_notify       dcuda_notify / dcuda_wait_notifications
 *   api_put_notify   dcuda_put_notify (4 B) / dcuda_wait_notifications
 * for 32 and 128 threads per rank. GPU only; prints one-way microseconds.
 */
#include <stdio.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_rank.h"

enum { RAW_RELAXED, RAW_SYNC, RAW_RELEASE, RAW_PUT_RELEASE, RAW_COPY_RELEASE,
       RAW_COPY_RELEASE_SYNC, RAW_CHECKS, RAW_CHECKS_CACHED, API_NOTIFY, API_PUT, API_PUT_SELF, FLOORLIKE,
       FLOORLIKE_SCRATCH, CHECKS_ALONE, CHECKS_ALONE_ACQ, RAW_CHECKS_WARP0, RAW_CHECKS_TWICE,
       VARIANTS };
static const char *names[] = {"raw_relaxed",        "raw_sync",         "raw_release",
                              "raw_put_release",    "raw_copy_release", "raw_copy_rel_sync",
                              "raw_checks",         "raw_checks_cached", "api_notify",       "api_put_notify",
                              "api_put_self",       "floorlike_counters", "floorlike_scratch",
                              "checks_alone(x2)", "checks_acq(x2)",   "raw_checks_warp0",
                              "raw_checks_twice"};

/* The floor's loop inside a dcuda kernel: thread 0 alone, pointers in
 * registers, on the rank's own counters or on a scratch buffer. */
DCUDA_RANK_FN void floorlike(unsigned *in, unsigned *out, int me, int iters)
{
    if (threadIdx.x == 0) {
        unsigned base = *in;
        for (int i = 1; i <= iters; i++) {
            if (me == 1)
                while (dcu_ld_acquire_gpu(in) - base < (unsigned)i) {
                }
            atomicAdd(out, 1u);
            if (me == 0)
                while (dcu_ld_acquire_gpu(in) - base < (unsigned)i) {
                }
        }
    }
    __syncthreads();
}

typedef struct probe_args {
    int variant, iters;
    char *buf;                 /* [2][256] */
    unsigned long long *loop_ns; /* rank 0's loop, by its own clock */
} probe_args_t;

DCUDA_RANK_FN void raw_send(dcuda_state_t *st, int v, int other, char *peer_buf,
                            const char *src, dcuda_win_t win)
{
    int copy = v == RAW_COPY_RELEASE || v == RAW_COPY_RELEASE_SYNC;
    uint32_t *c = &st->notifs[other].arrived[0];
    if (v == RAW_SYNC || v == RAW_RELEASE || v == RAW_COPY_RELEASE_SYNC || v == RAW_CHECKS ||
        v == RAW_CHECKS_CACHED)
        __syncthreads();
    if (v == RAW_CHECKS_WARP0 || v == RAW_CHECKS_TWICE)
        __syncthreads();
    for (int k = 0; k < (v == RAW_CHECKS_TWICE ? 2 : v == RAW_CHECKS_WARP0); k++)
        if (threadIdx.x < 32) {
            dcu_put_t p;
            if (dcu_checked_put(st, win, other, 256 * other, 4, src + k, &p, "probe") ==
                    DCUDA_OK &&
                threadIdx.x == 0)
                dcu_route_remember(st, win, other, &p);
            __syncwarp();
        }
    if (v == RAW_CHECKS || v == RAW_CHECKS_CACHED) {
        dcu_put_t p;
        if (dcu_checked_put(st, win, other, 256 * other, 4, src, &p, "probe") !=
            DCUDA_OK)
            return;
        if (v == RAW_CHECKS_CACHED) {
            __syncthreads();
            if (threadIdx.x == 0)
                dcu_route_remember(st, win, other, &p);
        }
    }
    if (threadIdx.x == 0 && v == RAW_PUT_RELEASE)
        *(volatile int *)peer_buf = 1;
    if (threadIdx.x == 0 && copy)
        *(volatile int *)peer_buf = *(const volatile int *)src;
    if (v == RAW_COPY_RELEASE_SYNC)
        __syncthreads();
    if (threadIdx.x == 0) {
        if (v == RAW_RELAXED || v == RAW_SYNC || v == RAW_CHECKS || v == RAW_CHECKS_CACHED ||
            v == RAW_CHECKS_WARP0 || v == RAW_CHECKS_TWICE)
            atomicAdd(c, 1u);
        else
            dcu_red_release(c, 1u, 0);
    }
}

DCUDA_RANK_FN void raw_wait(dcuda_state_t *st, int v, uint32_t *expect)
{
    if (threadIdx.x == 0) {
        ++*expect;
        while (!dcu_reached(dcu_ld_acquire_gpu(&st->notifs[st->device_rank].arrived[0]),
                                     *expect)) {
        }
    }
    if (v >= RAW_SYNC)
        __syncthreads();
}

DCUDA_KERNEL(probe, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    probe_args_t *user, args, *a = &args; /* private copy: no global loads in the loop */
    int me;
    dcuda_win_t win;
    dcuda_rank_init(ctx, &st);
    dcuda_get_data(&st, (void **)&user);
    args = *user;
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &me);
    /* Ranks 0 and 1 both expose the whole buffer (overlapping windows). */
    dcuda_win_create(&st, DCUDA_COMM_DEVICE, me < 2 ? a->buf : NULL, me < 2 ? 512 : 0, &win);
    uint32_t expect = st.consumed[0];
    int v = a->variant, other = 1 - me;
    dcuda_start_cpu_timer(&st);
    unsigned long long t0 = dcu_now_ns();
    if (me < 2 && v == FLOORLIKE)
        floorlike(&st.notifs[me].arrived[0], &st.notifs[other].arrived[0], me, a->iters);
    if (me < 2 && v == FLOORLIKE_SCRATCH)
        floorlike((unsigned *)(a->buf + 64 + 256 * me), (unsigned *)(a->buf + 64 + 256 * other),
                  me, a->iters);
    if (me == 0 && (v == CHECKS_ALONE || v == CHECKS_ALONE_ACQ)) {
        /* Cost of the put checks alone, no communication: reported like a
         * one-way time, i.e. per 2 checks. */
        int bad = 0;
        for (int i = 0; i < a->iters; i++) {
            __nanosleep(7); /* marks the loop in the disassembly */
            if (v == CHECKS_ALONE_ACQ && threadIdx.x == 0)
                bad += dcu_ld_acquire_gpu(&st.notifs[0].arrived[5]) == 12345u;
            dcu_put_t p;
            bad += dcu_checked_put(&st, win, other, 256 * other, 4,
                                            a->buf + 256 * me + 128 + (i & 1), &p, "probe") !=
                   DCUDA_OK;
            if (threadIdx.x == 0)
                dcu_route_remember(&st, win, other, &p);
            __syncwarp();
        }
        if (bad)
            dcuda_log(&st, "checks failed %d", bad);
    }
    for (int i = 0; me < 2 && (v < FLOORLIKE || v >= RAW_CHECKS_WARP0) && i < a->iters; i++) {
        if (me == 1) {
            if (v == API_NOTIFY || v == API_PUT || v == API_PUT_SELF)
                dcuda_wait_notifications(&st, 0, 1);
            else
                raw_wait(&st, v, &expect);
        }
        if (v == API_NOTIFY)
            dcuda_notify(&st, other, DCUDA_COMM_DEVICE, 0);
        else if (v == API_PUT)
            dcuda_put_notify(&st, win, other, 256 * other, 4, a->buf + 256 * me + 128, 0);
        else if (v == API_PUT_SELF) /* source is the target: no copy */
            dcuda_put_notify(&st, win, other, 256 * other, 4, a->buf + 256 * other, 0);
        else
            raw_send(&st, v, other, a->buf + 256 * other, a->buf + 256 * me + 128, win);
        if (me == 0) {
            if (v == API_NOTIFY || v == API_PUT || v == API_PUT_SELF)
                dcuda_wait_notifications(&st, 0, 1);
            else
                raw_wait(&st, v, &expect);
        }
    }
    if (me == 0 && threadIdx.x == 0)
        *a->loop_ns = dcu_now_ns() - t0;
    dcuda_stop_cpu_timer(&st);
    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}

DCUDA_KERNEL_DECLARE(probe);

/* The floor's own ping-pong outside dcuda, to tell launch and placement
 * effects from library costs: counters `gap` words apart, optionally with
 * the shared memory a dcuda rank state takes. */
/* LANES: 0 = other lanes leave (the floor), 1 = lane 0 polls while the
 * others wait in __syncthreads, 2 = the whole warp polls together. */
template <int LANES>
static __device__ __forceinline__ void floor_poll(unsigned *in, unsigned i)
{
    if (LANES == 2 || threadIdx.x == 0)
        while (dcu_ld_acquire_gpu(in) < i) {
        }
    if (LANES == 1)
        __syncthreads();
}

template <int SMEM, int LANES>
__global__ void floor_pingpong(unsigned *cnt, int gap, int iters, unsigned long long *ns)
{
    __shared__ char pad[SMEM > 0 ? SMEM : 1];
    if (LANES == 0 && threadIdx.x)
        return;
    pad[0] = 0;
    int me = blockIdx.x;
    unsigned *in = &cnt[me * gap], *out = &cnt[(1 - me) * gap];
    unsigned long long t0 = dcu_now_ns();
    for (int i = 1; i <= iters; i++) {
        if (me == 1)
            floor_poll<LANES>(in, (unsigned)i);
        if (threadIdx.x == 0)
            atomicAdd(out, 1u);
        if (me == 0)
            floor_poll<LANES>(in, (unsigned)i);
    }
    if (me == 0 && threadIdx.x == 0)
        ns[0] = dcu_now_ns() - t0 + (pad[0] != 0);
}

template <int SMEM, int LANES = 0> static void floor_case(const char *name, int gap, int coop)
{
    unsigned *cnt;
    unsigned long long *ns, h = 0;
    int iters = 100000;
    cudaMalloc(&cnt, 1 << 16);
    cudaMalloc(&ns, 8);
    cudaMemset(cnt, 0, 1 << 16);
    void *args[] = {&cnt, &gap, &iters, &ns};
    if (coop)
        cudaLaunchCooperativeKernel((const void *)floor_pingpong<SMEM, LANES>, dim3(2), dim3(32), args,
                                    0, 0);
    else
        floor_pingpong<SMEM, LANES><<<2, 32>>>(cnt, gap, iters, ns);
    cudaError_t err = cudaDeviceSynchronize();
    cudaMemcpy(&h, ns, 8, cudaMemcpyDeviceToHost);
    printf("%-18s %8s %12.3f%s\n", name, "32", h / 1e3 / iters / 2,
           err == cudaSuccess ? "" : " (failed)");
    cudaFree(cnt);
    cudaFree(ns);
}

int main(int argc, char **argv)
{
    const char *threads[] = {"32", "128"};
    printf("%-18s %8s %12s\n", "variant", "threads", "one_way_us");
    floor_case<0>("floor_gap256", 64, 0);
    floor_case<0>("floor_gap1k", 256, 0);
    floor_case<0>("floor_coop", 64, 1);
    floor_case<1440>("floor_smem", 64, 0);
    floor_case<1440>("floor_coop_smem1k", 256, 1);
    floor_case<0, 1>("floor_lane0_bar", 64, 0);
    floor_case<0, 2>("floor_warp_polls", 64, 0);
    for (int t = 0; t < 2; t++) {
        char *args[] = {argv[0], (char *)"--dcuda-ranks=2"};
        dcuda_host_h h;
        if (dcuda_host_init(2, args, DCUDA_KERNEL_REF(probe), t ? 128 : 32, &h) != DCUDA_OK)
            return 1;
        probe_args_t a = {0, 100000, NULL, NULL};
        dcuda_host_alloc(h, 512, (void **)&a.buf);
        dcuda_host_alloc(h, 8, (void **)&a.loop_ns);
        for (int v = 0; v < VARIANTS; v++) {
            a.variant = v;
            const double *ms;
            int n = 0;
            if (dcuda_host_run(h, &a, sizeof a, NULL) != DCUDA_OK ||
                dcuda_host_get_timings(h, &ms, &n) != DCUDA_OK || n < 1)
                return 1;
            unsigned long long loop = 0;
            dcuda_host_copy_out(h, &loop, a.loop_ns, 8);
            printf("%-18s %8s %12.3f   (rank 0 clock %.3f)\n", names[v], threads[t],
                   ms[0] * 1e3 / a.iters / 2, loop / 1e3 / a.iters / 2);
        }
        dcuda_host_free(h, a.buf);
        dcuda_host_free(h, a.loop_ns);
        dcuda_host_finish(h);
    }
    (void)argc;
    return 0;
}
