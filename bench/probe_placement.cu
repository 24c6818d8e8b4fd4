/*
 * probe_placement: how much the same-GPU floor moves with where its two
 * counters lie. Two blocks of a plain CUDA kernel ping-pong (a release add
 * to the other's counter, acquire loads of one's own, as the floor of
 * anchors/floors.cu), with the counters `gap` bytes apart in one
 * allocation, polled by one thread or by every lane of warp 0, with parked
 * warps, a cooperative launch and dynamic shared memory as a dcuda kernel
 * has them; and polls by relaxed loads with one acquire fence after the
 * one that sees the value (instead of an acquire load a poll). Prints the
 * best of three runs of 100,000 round trips a row,
 * one-way microseconds by the GPU's global timer. GPU only; about a second.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "probe_placement: %s: %s\n", #x, cudaGetErrorString(e_));              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define ITERS 100000

static __device__ __forceinline__ unsigned ld_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ unsigned ld_relaxed(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ void red_release(unsigned *p, unsigned v)
{
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

static __device__ __forceinline__ unsigned long long global_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Block b polls the counter at cnt + gap * b; `lanes` threads poll (1 or
 * 32), thread 0 adds; the other threads wait at a barrier when `park`.
 * relaxed: the polls are relaxed loads, and a fence after the one that
 * sees the value makes it an acquire (else every poll is an acquire). */
__global__ void pingpong(unsigned *cnt, int gap, int lanes, int park, int relaxed,
                         unsigned long long *ns)
{
    int me = blockIdx.x;
    unsigned *in = (unsigned *)((char *)cnt + gap * me);
    unsigned *out = (unsigned *)((char *)cnt + gap * (1 - me));
    if ((int)threadIdx.x >= lanes) {
        if (park)
            __syncthreads();
        return;
    }
    unsigned long long t0 = global_ns();
    for (unsigned i = 1; i <= ITERS; i++) {
        if (me == 0 && threadIdx.x == 0)
            red_release(out, 1u);
        if (relaxed) {
            while (ld_relaxed(in) < i) {
            }
            asm volatile("fence.acq_rel.gpu;" ::: "memory");
        } else {
            while (ld_acquire(in) < i) {
            }
        }
        if (me == 1 && threadIdx.x == 0)
            red_release(out, 1u);
    }
    if (me == 0 && threadIdx.x == 0)
        *ns = global_ns() - t0;
    if (park)
        __syncthreads();
}

int main(void)
{
    static const struct {
        int threads, lanes, park, gap, coop, smem;
        const char *what;
        int relaxed;
    } rows[] = {
        { 32, 1, 0, 256, 0, 0, "floor's loop (thread 0 polls), 256 B apart" },
        { 32, 1, 0, 1024, 0, 0, "floor's loop, 1 KiB apart (dcuda's ranks 0 and 1, tag 0)" },
        { 32, 1, 0, 2048, 0, 0, "floor's loop, 2 KiB apart" },
        { 32, 1, 0, 4096, 0, 0, "floor's loop, 4 KiB apart" },
        { 32, 1, 0, 65536, 0, 0, "floor's loop, 64 KiB apart" },
        { 32, 32, 0, 1024, 0, 0, "every lane of warp 0 polls, 1 KiB apart" },
        { 128, 32, 1, 1024, 0, 0, "+ 128 threads, warps 1-3 parked at a barrier" },
        { 128, 32, 1, 1024, 1, 0, "+ cooperative launch" },
        { 128, 32, 1, 1024, 1, 49152, "+ 48 KiB dynamic shared memory" },
        { 32, 1, 0, 256, 0, 0, "relaxed polls + one fence, 256 B apart", 1 },
        { 32, 1, 0, 1024, 0, 0, "relaxed polls + one fence, 1 KiB apart", 1 },
        { 32, 1, 0, 4096, 0, 0, "relaxed polls + one fence, 4 KiB apart", 1 },
        { 128, 32, 1, 1024, 1, 49152, "relaxed polls + one fence, every lane, dcuda's launch", 1 },
    };
    unsigned *cnt;
    unsigned long long *ns;
    if (cudaMalloc((void **)&cnt, 1 << 20) != cudaSuccess) {
        fprintf(stderr, "probe_placement: no GPU here\n");
        return 1;
    }
    CHECK(cudaMalloc((void **)&ns, sizeof *ns));
    CHECK(cudaFuncSetAttribute(pingpong, cudaFuncAttributeMaxDynamicSharedMemorySize, 49152));
    printf("%10s  %s\n", "one_way_us", "ping-pong");
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            int gap = rows[r].gap, lanes = rows[r].lanes, park = rows[r].park;
            int relaxed = rows[r].relaxed;
            void *args[] = { &cnt, &gap, &lanes, &park, &relaxed, &ns };
            unsigned long long h;
            CHECK(cudaMemset(cnt, 0, 1 << 20));
            if (rows[r].coop)
                CHECK(cudaLaunchCooperativeKernel((void *)pingpong, 2, rows[r].threads, args,
                                                  rows[r].smem, 0));
            else
                CHECK(cudaLaunchKernel((void *)pingpong, 2, rows[r].threads, args, rows[r].smem, 0));
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(&h, ns, sizeof h, cudaMemcpyDeviceToHost));
            double us = h / 1e3 / ITERS / 2;
            best = us < best ? us : best;
        }
        printf("%10.3f  %s\n", best, rows[r].what);
    }
    cudaFree(cnt);
    cudaFree(ns);
    return 0;
}
