/*
 * dcuda_ref_floors: the raw floors dcuda's rows are compared with, measured
 * by plain CUDA on the machine at hand (no dcuda): what a notification or
 * a small put could cost at best, and what the copy engines and SMs move.
 *
 *   latency    flag ping-pong between thread 0 of two blocks of one GPU
 *              (local_*) and, with two GPUs and peer access, between one
 *              block on each (peer_*), one-way = round trip / 2. A side
 *              polls its own flag with acquire loads, then signals the
 *              other's flag: notify_relaxed (a relaxed atomic add, orders
 *              nothing), notify_release (a release add: the form that
 *              orders like a dcuda notification), put_4B_release (a 4-byte
 *              store, then the release add), put_4B_fence (the store, a
 *              fence, a relaxed add). GPU scope on one GPU, system scope
 *              between two.
 *   host       a pinned host flag's round trip: the host writes a flag the
 *              kernel polls, the kernel answers in another pinned flag
 *   bandwidth  a kernel's 16-byte copy of 256 MiB within the GPU over block
 *              counts (ranks column: blocks) and cudaMemcpy device to
 *              device; with two GPUs cudaMemcpyPeer and a kernel pushing to
 *              the peer. GB/s = bytes copied / time.
 *
 * Each value is the median of --runs runs (default 5). Prints a table in
 * dcuda_bench's layout; --csv FILE writes the same rows in dcuda_bench's
 * CSV format, which tools/bench_compare.py reads beside dcuda_bench's.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_rows.h"
#include <time.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "ref_floors: %s: %s\n", #call, cudaGetErrorString(e_));                \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define MAX_RUNS 101
#define COPY_BYTES ((size_t)256 << 20)
#define FLAG_STRIDE 64 /* words between the two sides' flags and data: own lines */

enum signal_kind { NOTIFY_RELAXED, NOTIFY_RELEASE, PUT_RELEASE, PUT_FENCE, SIGNAL_KINDS };
static const char *const signal_names[SIGNAL_KINDS] = { "notify_relaxed", "notify_release",
                                                        "put_4B_release", "put_4B_fence" };

static FILE *csv;
static int runs = 5;

/* ---- device side ---------------------------------------------------------- */

template <bool SYS> __device__ __forceinline__ unsigned load_acquire(const unsigned *p)
{
    unsigned v;
    if (SYS)
        asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    else
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

template <bool SYS> __device__ __forceinline__ void add_release(unsigned *p)
{
    if (SYS)
        asm volatile("red.release.sys.global.add.u32 [%0], 1;" ::"l"(p) : "memory");
    else
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(p) : "memory");
}

template <bool SYS> __device__ __forceinline__ void add_relaxed(unsigned *p)
{
    if (SYS)
        atomicAdd_system(p, 1u);
    else
        atomicAdd(p, 1u);
}

template <bool SYS>
__device__ __forceinline__ void signal(int kind, unsigned *flag, int *data, int v)
{
    if (kind == PUT_RELEASE || kind == PUT_FENCE)
        *(volatile int *)data = v;
    if (kind == PUT_FENCE) {
        if (SYS)
            __threadfence_system();
        else
            __threadfence();
    }
    if (kind == NOTIFY_RELAXED || kind == PUT_FENCE)
        add_relaxed<SYS>(flag);
    else
        add_release<SYS>(flag);
}

/* Waits until *flag reaches `round`; the put forms then read their data. */
template <bool SYS>
__device__ __forceinline__ int await_flag(int kind, const unsigned *flag, const int *data,
                                          unsigned round)
{
    while (load_acquire<SYS>(flag) < round) {
    }
    return kind == PUT_RELEASE || kind == PUT_FENCE ? *(const volatile int *)data : 0;
}

/* One side of `rounds` ping-pongs; the starter signals first and keeps the
 * time. *sink keeps the data reads. */
template <bool SYS>
__device__ void pingpong(bool starter, int kind, unsigned *mine, unsigned *theirs, int *my_data,
                         int *their_data, int rounds, unsigned long long *ns, int *sink)
{
    int seen = 0;
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (int i = 1; i <= rounds; i++) {
        if (!starter)
            seen += await_flag<SYS>(kind, mine, my_data, (unsigned)i);
        signal<SYS>(kind, theirs, their_data, i);
        if (starter)
            seen += await_flag<SYS>(kind, mine, my_data, (unsigned)i);
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    if (starter)
        *ns = t1 - t0;
    *sink = seen;
}

/* Two blocks of one GPU: block 0 starts. */
__global__ void local_pingpong(int kind, unsigned *flags, int *data, int rounds,
                               unsigned long long *ns, int *sink)
{
    if (threadIdx.x != 0)
        return;
    int me = blockIdx.x, other = 1 - me;
    pingpong<false>(me == 0, kind, flags + me * FLAG_STRIDE, flags + other * FLAG_STRIDE,
                    data + me * FLAG_STRIDE, data + other * FLAG_STRIDE, rounds, ns, sink + me);
}

/* One block on each of two GPUs; flags and data in the waiter's memory. */
__global__ void peer_pingpong(bool starter, int kind, unsigned *mine, unsigned *theirs,
                              int *my_data, int *their_data, int rounds, unsigned long long *ns,
                              int *sink)
{
    if (threadIdx.x == 0)
        pingpong<true>(starter, kind, mine, theirs, my_data, their_data, rounds, ns, sink);
}

/* Answers each of the host's `rounds` flags in a second pinned flag (a
 * plain store and a system fence: a release store measured 1 us more a
 * round trip on an H100, and the answer orders nothing here). */
__global__ void host_answer(const unsigned *from_host, unsigned *to_host, int rounds)
{
    if (threadIdx.x != 0)
        return;
    for (int i = 1; i <= rounds; i++) {
        while (load_acquire<true>(from_host) < (unsigned)i) {
        }
        *(volatile unsigned *)to_host = (unsigned)i; /* then pushed out at once */
        __threadfence_system();
    }
}

/* Grid-stride 16-byte copy. */
__global__ void copy16(const int4 *__restrict__ src, int4 *__restrict__ dst, size_t n)
{
    size_t step = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        dst[i] = src[i];
}

/* ---- host side ------------------------------------------------------------ */

static void row(const char *kind, const char *what, int ranks, size_t bytes, const char *unit,
                double value)
{
    ref_row(csv, kind, what, ranks, bytes, unit, value);
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void local_latency(int rounds)
{
    unsigned *flags;
    int *data, *sink;
    unsigned long long *ns, host_ns;
    CHECK(cudaMalloc(&flags, 2 * FLAG_STRIDE * sizeof *flags));
    CHECK(cudaMalloc(&data, 2 * FLAG_STRIDE * sizeof *data));
    CHECK(cudaMalloc(&sink, 2 * sizeof *sink));
    CHECK(cudaMalloc(&ns, sizeof *ns));
    for (int kind = 0; kind < SIGNAL_KINDS; kind++) {
        double us[MAX_RUNS];
        for (int r = 0; r <= runs; r++) { /* run 0 warms up */
            CHECK(cudaMemset(flags, 0, 2 * FLAG_STRIDE * sizeof *flags));
            local_pingpong<<<2, 32>>>(kind, flags, data, rounds, ns, sink);
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(&host_ns, ns, sizeof host_ns, cudaMemcpyDeviceToHost));
            if (r > 0)
                us[r - 1] = host_ns / 1e3 / rounds / 2;
        }
        char what[64];
        snprintf(what, sizeof what, "local_%s", signal_names[kind]);
        row("latency", what, 2, kind >= PUT_RELEASE ? 4 : 0, "one_way_us", ref_median(us, runs));
    }
    CHECK(cudaFree(flags));
    CHECK(cudaFree(data));
    CHECK(cudaFree(sink));
    CHECK(cudaFree(ns));
}

static void host_round_trip(int rounds)
{
    unsigned *from_host, *to_host;
    CHECK(cudaHostAlloc(&from_host, 64, cudaHostAllocMapped));
    CHECK(cudaHostAlloc(&to_host, 64, cudaHostAllocMapped));
    double us[MAX_RUNS];
    for (int r = 0; r <= runs; r++) {
        __atomic_store_n(from_host, 0u, __ATOMIC_SEQ_CST);
        __atomic_store_n(to_host, 0u, __ATOMIC_SEQ_CST);
        host_answer<<<1, 32>>>(from_host, to_host, rounds);
        CHECK(cudaGetLastError());
        double t0 = now_us();
        for (int i = 1; i <= rounds; i++) {
            __atomic_store_n(from_host, (unsigned)i, __ATOMIC_RELEASE);
            while (__atomic_load_n(to_host, __ATOMIC_ACQUIRE) < (unsigned)i) {
            }
        }
        double t1 = now_us();
        CHECK(cudaDeviceSynchronize());
        if (r > 0)
            us[r - 1] = (t1 - t0) / rounds;
    }
    row("host", "pinned_flag", 1, 4, "round_trip_us", ref_median(us, runs));
    CHECK(cudaFreeHost(from_host));
    CHECK(cudaFreeHost(to_host));
}

/* One copy of COPY_BYTES from src to dst: by a kernel of `blocks` blocks of
 * 512 threads on the current device, or (blocks 0) by the copy engine
 * between devices src_dev and dst_dev (cudaMemcpyPeerAsync). */
typedef struct copy_job {
    const void *src;
    void *dst;
    int blocks, src_dev, dst_dev;
} copy_job_t;

static void copy_once(const copy_job_t *j)
{
    if (j->blocks > 0)
        copy16<<<j->blocks, 512>>>((const int4 *)j->src, (int4 *)j->dst, COPY_BYTES / 16);
    else
        CHECK(cudaMemcpyPeerAsync(j->dst, j->dst_dev, j->src, j->src_dev, COPY_BYTES, 0));
    CHECK(cudaGetLastError());
}

/* GB/s of `reps` copies after one untimed, timed by events on the stream. */
static double copy_gbps(const copy_job_t *j, int reps)
{
    cudaEvent_t a, b;
    float ms;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    copy_once(j); /* warm-up */
    CHECK(cudaEventRecord(a));
    for (int i = 0; i < reps; i++)
        copy_once(j);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaEventElapsedTime(&ms, a, b));
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    return (double)COPY_BYTES * reps / (ms / 1e3) / 1e9;
}

static void copy_rows(const char *what, const void *src, void *dst, int sms)
{
    int counts[] = { 1, 8, 32, sms, 2 * sms, 4 * sms };
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        double v[MAX_RUNS];
        copy_job_t j = { src, dst, counts[i], 0, 0 };
        for (int r = 0; r < runs; r++)
            v[r] = copy_gbps(&j, counts[i] < 8 ? 1 : 5);
        row("bandwidth", what, counts[i], COPY_BYTES, "GBps", ref_median(v, runs));
    }
}

static void local_bandwidth(int sms)
{
    void *a, *b;
    CHECK(cudaMalloc(&a, COPY_BYTES));
    CHECK(cudaMalloc(&b, COPY_BYTES));
    CHECK(cudaMemset(a, 1, COPY_BYTES));
    copy_rows("kernel_copy", a, b, sms);
    double v[MAX_RUNS];
    copy_job_t j = { a, b, 0, 0, 0 };
    for (int r = 0; r < runs; r++)
        v[r] = copy_gbps(&j, 5);
    row("bandwidth", "memcpy_d2d", 1, COPY_BYTES, "GBps", ref_median(v, runs));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
}

/* Device d's flags and data, and its kernel's time and sink. */
typedef struct side {
    unsigned *flag;
    int *data, *sink;
    unsigned long long *ns;
} side_t;

static void side_alloc(side_t *s, int dev)
{
    CHECK(cudaSetDevice(dev));
    CHECK(cudaMalloc(&s->flag, FLAG_STRIDE * sizeof *s->flag));
    CHECK(cudaMalloc(&s->data, FLAG_STRIDE * sizeof *s->data));
    CHECK(cudaMalloc(&s->sink, sizeof *s->sink));
    CHECK(cudaMalloc(&s->ns, sizeof *s->ns));
}

static void side_free(side_t *s, int dev)
{
    CHECK(cudaSetDevice(dev));
    CHECK(cudaFree(s->flag));
    CHECK(cudaFree(s->data));
    CHECK(cudaFree(s->sink));
    CHECK(cudaFree(s->ns));
}

static void peer_latency(int rounds)
{
    side_t s[2];
    side_alloc(&s[0], 0);
    side_alloc(&s[1], 1);
    for (int kind = 0; kind < SIGNAL_KINDS; kind++) {
        double us[MAX_RUNS];
        for (int r = 0; r <= runs; r++) {
            for (int d = 0; d < 2; d++) {
                CHECK(cudaSetDevice(d));
                CHECK(cudaMemset(s[d].flag, 0, FLAG_STRIDE * sizeof *s[d].flag));
                CHECK(cudaDeviceSynchronize());
            }
            for (int d = 0; d < 2; d++) {
                CHECK(cudaSetDevice(d));
                peer_pingpong<<<1, 32>>>(d == 0, kind, s[d].flag, s[1 - d].flag, s[d].data,
                                         s[1 - d].data, rounds, s[d].ns, s[d].sink);
                CHECK(cudaGetLastError());
            }
            unsigned long long host_ns;
            for (int d = 0; d < 2; d++) {
                CHECK(cudaSetDevice(d));
                CHECK(cudaDeviceSynchronize());
            }
            CHECK(cudaSetDevice(0));
            CHECK(cudaMemcpy(&host_ns, s[0].ns, sizeof host_ns, cudaMemcpyDeviceToHost));
            if (r > 0)
                us[r - 1] = host_ns / 1e3 / rounds / 2;
        }
        char what[64];
        snprintf(what, sizeof what, "peer_%s", signal_names[kind]);
        row("latency", what, 2, kind >= PUT_RELEASE ? 4 : 0, "one_way_us", ref_median(us, runs));
    }
    side_free(&s[0], 0);
    side_free(&s[1], 1);
}

static void peer_bandwidth(int sms)
{
    void *a, *b;
    CHECK(cudaSetDevice(1));
    CHECK(cudaMalloc(&b, COPY_BYTES));
    CHECK(cudaSetDevice(0));
    CHECK(cudaMalloc(&a, COPY_BYTES));
    CHECK(cudaMemset(a, 1, COPY_BYTES));
    double v[MAX_RUNS];
    copy_job_t j = { a, b, 0, 0, 1 };
    for (int r = 0; r < runs; r++)
        v[r] = copy_gbps(&j, 5);
    row("bandwidth", "memcpy_peer", 1, COPY_BYTES, "GBps", ref_median(v, runs));
    copy_rows("kernel_push", a, b, sms);
    CHECK(cudaFree(a));
    CHECK(cudaSetDevice(1));
    CHECK(cudaFree(b));
    CHECK(cudaSetDevice(0));
}

/* 1 with peer access both ways between devices 0 and 1 (enabled). */
static int enable_peers(int devices)
{
    int ab = 0, ba = 0;
    if (devices < 2)
        return 0;
    CHECK(cudaDeviceCanAccessPeer(&ab, 0, 1));
    CHECK(cudaDeviceCanAccessPeer(&ba, 1, 0));
    if (!ab || !ba)
        return 0;
    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceEnablePeerAccess(1, 0));
    CHECK(cudaSetDevice(1));
    CHECK(cudaDeviceEnablePeerAccess(0, 0));
    CHECK(cudaSetDevice(0));
    return 1;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: dcuda_ref_floors [--quick] [--runs N] [--csv FILE]\n"
                 "  --quick     fewer rounds a latency case (2000 instead of 100000)\n"
                 "  --runs N    runs of each case, the median reported (default 5)\n"
                 "  --csv FILE  also write the rows in dcuda_bench's CSV format\n");
}

int main(int argc, char **argv)
{
    int rounds = 100000;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--quick")) {
            rounds = 2000;
        } else if (!strcmp(argv[i], "--runs") && next && atoi(next) >= 1 && atoi(next) < MAX_RUNS) {
            runs = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--csv") && next) {
            csv_path = argv[++i];
        } else {
            fprintf(stderr, "ref_floors: bad option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
        fprintf(stderr, "ref_floors: no CUDA device: nothing to measure\n");
        return 77;
    }
    if (csv_path && !(csv = fopen(csv_path, "w"))) {
        fprintf(stderr, "ref_floors: cannot write %s\n", csv_path);
        return 1;
    }
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    int peers = enable_peers(devices);
    printf("# dcuda_ref_floors: %s, %d SMs, %d MiB L2, %d device(s)%s; %d rounds a latency "
           "case, median of %d runs\n",
           p.name, p.multiProcessorCount, p.l2CacheSize >> 20, devices,
           devices > 1 && !peers ? " without peer access" : "", rounds, runs);
    ref_head(csv);
    local_latency(rounds);
    host_round_trip(rounds / 10);
    local_bandwidth(p.multiProcessorCount);
    if (peers) {
        peer_latency(rounds);
        peer_bandwidth(p.multiProcessorCount);
    } else {
        printf("# peer rows skipped: %s\n", devices < 2 ? "one GPU" : "no peer access");
    }
    if (csv)
        fclose(csv);
    return 0;
}
