/*
 * probe_launch: what a plain CUDA ping-pong of release adds pays for each
 * thing a dcuda kernel has that the floor's kernel has not. Two blocks of
 * one GPU (or block 0 and block b of a larger grid) ping-pong on two
 * counters 256 bytes apart: the sender's thread 0 adds with
 * red.release.gpu, the receiver polls with ld.acquire.gpu. One thing
 * changes a row:
 *
 *   threads       128 threads a block, thread 0 alone working
 *   cooperative   cudaLaunchCooperativeKernel, as dcuda launches its ranks
 *   shared        100 KiB of dynamic shared memory a block
 *   host polls    the host spinning on cudaStreamQuery while it runs
 *   local         one local-memory access after each acquire (a value the
 *                 compiler keeps in the stack frame: the acquire's L1
 *                 invalidation sends it to L2)
 *   relaxed       relaxed polls, then fence.acq_rel.gpu once
 *   warp          every lane of warp 0 polls with its own acquire
 *   parked        + 3 warps parked at __syncthreads; the block meets
 *                 before each send and after each receive
 *   shfl          the same, lane 0 polling and a shuffle sharing what it
 *                 saw (dcuda's wait and notify)
 *   dcuda-like    shfl, cooperative, 64 KiB shared, the host polling
 *   pairs         block 0 against block b, b = 1..16, of b + 1 blocks;
 *                 and of 264 blocks (cooperative), b = 1..8
 *
 * Each row: 20,000 round trips a run, one-way us by the first block's
 * clock, min and median of 5 runs after one warm-up, and the SMs the two
 * blocks ran on. Bounded: a second or two in all. GPU only.
 */
#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "probe_launch: %s: %s\n", #x, cudaGetErrorString(e_));                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define ROUNDS 20000
#define RUNS 5

enum { M_LANE0, M_WARP, M_PARK, M_LOCAL, M_RELAXED, M_SHFL };

struct probe_args {
    unsigned *flags;
    int mode, a, b; /* the blocks that ping-pong: a starts */
    unsigned long long *ns;
    int *smid;
};

__device__ __forceinline__ unsigned ld_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned ld_relaxed(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void add_release(unsigned *p)
{
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(p) : "memory");
}

/* Thread 0 of the warp polls `in` until it reaches `round`, as `mode` says. */
__device__ __forceinline__ void receive(int mode, const unsigned *in, unsigned round,
                                        volatile unsigned *local)
{
    const bool lane0 = threadIdx.x == 0;
    if (mode == M_SHFL) {
        for (;;) {
            unsigned v = lane0 ? ld_acquire(in) : 0u;
            if (__shfl_sync(0xffffffffu, v, 0) >= round)
                break;
        }
    } else if (mode == M_RELAXED) {
        while (ld_relaxed(in) < round) {
        }
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
    } else {
        while (ld_acquire(in) < round) {
        }
        if (mode == M_LOCAL)
            local[round & 7u] += 1u;
    }
}

__global__ void pingpong(probe_args x)
{
    const int me = blockIdx.x == x.a ? 0 : blockIdx.x == x.b ? 1 : -1;
    if (threadIdx.x == 0 && me >= 0) {
        int sm;
        asm("mov.u32 %0, %%smid;" : "=r"(sm));
        x.smid[me] = sm;
    }
    const bool lane0 = threadIdx.x == 0;
    const bool alone = x.mode == M_LANE0 || x.mode == M_LOCAL || x.mode == M_RELAXED;
    if (me < 0 || (alone && !lane0))
        return;
    const bool meets = x.mode == M_PARK || x.mode == M_SHFL;
    unsigned *in = x.flags + me * 64, *out = x.flags + (1 - me) * 64;
    volatile unsigned local[8];
    local[threadIdx.x & 7u] = 0u;
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (unsigned i = 1; i <= ROUNDS; i++) {
        for (int step = 0; step < 2; step++) {
            if ((step == 0) == (me == 0)) { /* my turn to send */
                if (meets)
                    __syncthreads();
                if (lane0)
                    add_release(out);
                continue;
            }
            if (threadIdx.x < 32)
                receive(x.mode, in, i, local);
            if (meets)
                __syncthreads();
        }
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    if (me == 0 && lane0)
        x.ns[0] = t1 - t0 + (local[0] & 0u);
}

struct probe_row {
    const char *what;
    int blocks, threads, mode, a, b, cooperative;
    size_t shared;
    int host_polls;
};

static void run(const probe_row &r, unsigned *flags, unsigned long long *ns, int *smid)
{
    probe_args x = { flags, r.mode, r.a, r.b, ns, smid };
    double us[RUNS];
    int sm[2] = { -1, -1 };
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(
        cudaFuncSetAttribute(pingpong, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)r.shared));
    for (int run = 0; run <= RUNS; run++) { /* run 0 warms up */
        CHECK(cudaMemset(flags, 0, 4096));
        void *args[] = { &x };
        if (r.cooperative)
            CHECK(cudaLaunchCooperativeKernel((void *)pingpong, dim3(r.blocks), dim3(r.threads),
                                              args, r.shared, s));
        else
            CHECK(cudaLaunchKernel((void *)pingpong, dim3(r.blocks), dim3(r.threads), args,
                                   r.shared, s));
        while (r.host_polls && cudaStreamQuery(s) == cudaErrorNotReady) {
        }
        CHECK(cudaStreamSynchronize(s));
        unsigned long long t;
        CHECK(cudaMemcpy(&t, ns, sizeof t, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(sm, smid, sizeof sm, cudaMemcpyDeviceToHost));
        if (run > 0)
            us[run - 1] = t / 1e3 / ROUNDS / 2;
    }
    for (int i = 0; i < RUNS; i++) /* sorted: min first, median in the middle */
        for (int j = i + 1; j < RUNS; j++)
            if (us[j] < us[i]) {
                double t = us[i];
                us[i] = us[j];
                us[j] = t;
            }
    printf("%-36s %6d %7d %4d %4d %8.3f %8.3f\n", r.what, r.blocks, r.threads, sm[0], sm[1], us[0],
           us[RUNS / 2]);
    CHECK(cudaStreamDestroy(s));
}

int main()
{
    unsigned *flags;
    unsigned long long *ns;
    int *smid;
    CHECK(cudaMalloc(&flags, 4096));
    CHECK(cudaMalloc(&ns, sizeof *ns));
    CHECK(cudaMalloc(&smid, 2 * sizeof *smid));
    static const probe_row rows[] = {
        { "floor: thread 0 of 2 blocks", 2, 32, M_LANE0, 0, 1, 0, 0, 0 },
        { "threads: 128 a block", 2, 128, M_LANE0, 0, 1, 0, 0, 0 },
        { "cooperative launch", 2, 32, M_LANE0, 0, 1, 1, 0, 0 },
        { "shared: 100 KiB dynamic", 2, 32, M_LANE0, 0, 1, 0, 100 << 10, 0 },
        { "host polls cudaStreamQuery", 2, 32, M_LANE0, 0, 1, 0, 0, 1 },
        { "local: a stack access after acquire", 2, 32, M_LOCAL, 0, 1, 0, 0, 0 },
        { "relaxed polls, then one fence", 2, 32, M_RELAXED, 0, 1, 0, 0, 0 },
        { "warp: 32 lanes acquire", 2, 32, M_WARP, 0, 1, 0, 0, 0 },
        { "parked: + 3 warps at a barrier", 2, 128, M_PARK, 0, 1, 0, 0, 0 },
        { "shfl: lane 0 polls, block meets", 2, 128, M_SHFL, 0, 1, 0, 0, 0 },
        { "dcuda-like: shfl, coop, 64 KiB, host", 2, 128, M_SHFL, 0, 1, 1, 64 << 10, 1 },
    };
    printf("%-36s %6s %7s %4s %4s %8s %8s\n", "row", "blocks", "threads", "sm_a", "sm_b", "min_us",
           "med_us");
    for (const probe_row &r : rows)
        run(r, flags, ns, smid);
    for (int b = 1; b <= 16; b++)
        run({ "pairs: block 0 <-> block b", b + 1, 32, M_LANE0, 0, b, 0, 0, 0 }, flags, ns, smid);
    for (int b = 1; b <= 8; b++)
        run({ "pairs: of 264 blocks, 0 <-> b", 264, 32, M_LANE0, 0, b, 1, 0, 0 }, flags, ns, smid);
    CHECK(cudaFree(flags));
    CHECK(cudaFree(ns));
    CHECK(cudaFree(smid));
    return 0;
}
