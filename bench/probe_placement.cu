/*
 * probe_placement: how much the same-GPU floor moves with where its two
 * counters lie. Two blocks of a plain CUDA kernel ping-pong (a release add
 * to the other's counter, acquire loads of one's own, as the floor of
 * anchors/floors.cu), with the counters `gap` bytes apart in one
 * allocation, polled by one thread or by every lane of warp 0, with parked
 * warps, a cooperative launch and dynamic shared memory as a dcuda kernel
 * has them; polls by relaxed loads with one fence after the one that sees
 * the value (acq_rel, or the acquire-only fence of PTX 8.6) instead of an
 * acquire load a poll; the release as a release fence + relaxed add; and
 * the put's form: a 4 B store (of a constant, or of a word loaded after
 * the acquire; 128 B to 512 KiB from the counter) before the release. Prints the best of three runs of
 * 100,000 round trips a row,
 * one-way microseconds by the GPU's global timer. GPU only; about a second.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "probe_ptx.cuh"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "probe_placement: %s: %s\n", #x, cudaGetErrorString(e_));              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define ITERS 100000

static __device__ __forceinline__ void red_fence_relaxed(unsigned *p, unsigned v)
{
    asm volatile("fence.release.gpu;\n\tred.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v)
                 : "memory");
}

/* How a row acquires, releases and what it stores before the release. */
enum { ACQ_LOAD = 0, ACQ_RELAXED_ACQ_REL = 1, ACQ_RELAXED_ACQUIRE = 2 };
enum { REL_RED = 0, REL_FENCE = 1 };
enum { PUT_NONE = 0, PUT_CONST = 1, PUT_LOADED = 2 };

typedef struct probe_mode {
    int acq, rel, put;
    int data_at; /* a put's target word: bytes after the target's counter (0: 128) */
} probe_mode_t;

/* Thread 0 of block `me`: the put's store, if any, then the release add. */
static __device__ __forceinline__ void release_to(unsigned *out, unsigned *data,
                                                  const unsigned *src, probe_mode_t m, unsigned i)
{
    if (m.put == PUT_CONST)
        *(volatile unsigned *)data = i;
    else if (m.put == PUT_LOADED)
        *(volatile unsigned *)data = *(const volatile unsigned *)src;
    if (m.rel == REL_FENCE)
        red_fence_relaxed(out, 1u);
    else
        red_release_gpu(out, 1u);
}

/* Block b polls the counter at cnt + gap * b; `lanes` threads poll (1 or
 * 32), thread 0 releases; the other threads wait at a barrier when `park`.
 * A put stores to the word m.data_at bytes after the target's counter
 * (128 by default), from a word 64 KiB after its own when loaded. */
__global__ void pingpong(unsigned *cnt, int gap, int lanes, int park, probe_mode_t m,
                         unsigned long long *ns)
{
    int me = blockIdx.x;
    unsigned *in = (unsigned *)((char *)cnt + gap * me);
    unsigned *out = (unsigned *)((char *)cnt + gap * (1 - me));
    unsigned *data = out + (m.data_at ? m.data_at : 128) / 4;
    const unsigned *src = in + 16384;
    if ((int)threadIdx.x >= lanes) {
        if (park)
            __syncthreads();
        return;
    }
    unsigned long long t0 = global_ns();
    for (unsigned i = 1; i <= ITERS; i++) {
        if (me == 0 && threadIdx.x == 0)
            release_to(out, data, src, m, i);
        if (m.acq == ACQ_LOAD) {
            while (ld_acquire_gpu(in) < i) {
            }
        } else {
            while (ld_relaxed_gpu(in) < i) {
            }
            if (m.acq == ACQ_RELAXED_ACQUIRE)
                asm volatile("fence.acquire.gpu;" ::: "memory");
            else
                asm volatile("fence.acq_rel.gpu;" ::: "memory");
        }
        if (me == 1 && threadIdx.x == 0)
            release_to(out, data, src, m, i);
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
        probe_mode_t m;
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
        { 32, 1, 0, 1024, 0, 0, "relaxed polls + fence.acq_rel, 1 KiB apart", { 1, 0, 0 } },
        { 32, 1, 0, 1024, 0, 0, "relaxed polls + fence.acquire, 1 KiB apart", { 2, 0, 0 } },
        { 32, 1, 0, 1024, 0, 0, "release: fence.release + relaxed add", { 0, 1, 0 } },
        { 32, 1, 0, 1024, 0, 0, "put: 4 B store of a constant + release add", { 0, 0, 1 } },
        { 32, 1, 0, 1024, 0, 0, "put: the same, stored 512 B after the counter", { 0, 0, 1, 512 } },
        { 32,
          1,
          0,
          1024,
          0,
          0,
          "put: the same, stored 4 KiB after the counter",
          { 0, 0, 1, 4096 } },
        { 32,
          1,
          0,
          1024,
          0,
          0,
          "put: the same, stored 128 KiB after the counter",
          { 0, 0, 1, 131072 } },
        { 32,
          1,
          0,
          1024,
          0,
          0,
          "put: the same, stored 512 KiB after the counter",
          { 0, 0, 1, 524288 } },
        { 32,
          1,
          0,
          1024,
          0,
          0,
          "put: 4 B loaded after the acquire, stored, release add",
          { 0, 0, 2 } },
        { 32, 1, 0, 1024, 0, 0, "put, loaded: relaxed polls + fence.acquire", { 2, 0, 2 } },
        { 32, 1, 0, 1024, 0, 0, "put, loaded: fence.release + relaxed add", { 0, 1, 2 } },
        { 128, 32, 1, 1024, 1, 49152, "put, loaded, dcuda's launch and polls", { 0, 0, 2 } },
        { 128,
          32,
          1,
          1024,
          1,
          49152,
          "put, loaded, dcuda's launch, relaxed + fence.acquire",
          { 2, 0, 2 } },
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
            probe_mode_t m = rows[r].m;
            void *args[] = { &cnt, &gap, &lanes, &park, &m, &ns };
            unsigned long long h;
            CHECK(cudaMemset(cnt, 0, 1 << 20));
            if (rows[r].coop)
                CHECK(cudaLaunchCooperativeKernel((void *)pingpong, 2, rows[r].threads, args,
                                                  rows[r].smem, 0));
            else
                CHECK(
                    cudaLaunchKernel((void *)pingpong, 2, rows[r].threads, args, rows[r].smem, 0));
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
