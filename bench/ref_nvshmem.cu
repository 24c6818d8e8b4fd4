/*
 * dcuda_ref_nvshmem: NVSHMEM's figures on the machine at hand, for
 * tools/bench_compare.py to set beside dcuda_bench's peer rows. Run under
 * mpirun with two or more processes (one PE each, PE i on GPU i % GPUs;
 * MPI only hands NVSHMEM its unique id). Latency and bandwidth are
 * measured between PE 0 and PE 1, the collectives over every PE:
 *
 *   latency     ping-pong, one-way = round trip / 2, thread 0 of one block
 *               a PE: put_signal_4B (nvshmem_int_put_signal of one int,
 *               signal set), signal_op (nvshmemx_signal_op alone: relaxed,
 *               orders nothing), fence_signal_op (nvshmem_fence, then the
 *               signal: ordered like a dcuda notification), and
 *               put_signal_block128_4B (the block-scoped put_signal called
 *               by all 128 threads, as dcuda's block-collective calls are);
 *               and atomic_fetch_add_8B, PE 0's nvshmem_ulonglong_atomic_
 *               fetch_add on PE 1's word, one thread (a round trip each)
 *   bandwidth   putmem_block of 256 MiB from PE 0 to PE 1 over block
 *               counts (ranks column: blocks), then nvshmem_quiet; GB/s =
 *               bytes moved / time
 *   collective  the block-scoped collectives on NVSHMEM_TEAM_WORLD, one
 *               block a PE, microseconds a call over sizes: barrier_all,
 *               char broadcast (root 0), float sum reduce (every PE gets the
 *               sum), fcollectmem, alltoallmem (bytes: each PE's part)
 *
 * Each value is the median of --runs runs (default 3). Prints a table in
 * dcuda_bench's layout on PE 0; --csv FILE writes the rows in its CSV
 * format. Kernels that synchronize PEs are started with
 * nvshmemx_collective_launch.
 */
#include <cuda_runtime.h>
#include <mpi.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_rows.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "ref_nvshmem: %s: %s\n", #call, cudaGetErrorString(e_));               \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

#define MAX_RUNS 101
#define BW_BYTES ((size_t)256 << 20)
#define COLL_MAX ((size_t)1 << 20) /* largest collective part, bytes */

enum ping { PUT_SIGNAL, SIGNAL_OP, FENCE_SIGNAL_OP, PUT_SIGNAL_BLOCK, PINGS };
static const char *const ping_names[PINGS] = { "put_signal_4B", "signal_op", "fence_signal_op",
                                               "put_signal_block128_4B" };
enum coll { COLL_BARRIER, COLL_BROADCAST, COLL_REDUCE, COLL_FCOLLECT, COLL_ALLTOALL, COLLS };
static const char *const coll_names[COLLS] = { "barrier_all_block", "char_broadcast_block",
                                               "float_sum_reduce_block", "fcollectmem_block",
                                               "alltoallmem_block" };

static int me, pes, runs = 3;
static FILE *csv;

__device__ __forceinline__ unsigned long long device_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Thread 0's signal to `peer` in round i (the block form: every thread). */
__device__ void ping_send(int kind, int *buf, uint64_t *sig, int i, int peer)
{
    if (kind == PUT_SIGNAL_BLOCK) {
        nvshmemx_int_put_signal_block(buf, buf + 32, 1, sig, (uint64_t)i, NVSHMEM_SIGNAL_SET, peer);
    } else if (threadIdx.x == 0) {
        if (kind == PUT_SIGNAL) {
            nvshmem_int_put_signal(buf, buf + 32, 1, sig, (uint64_t)i, NVSHMEM_SIGNAL_SET, peer);
        } else {
            if (kind == FENCE_SIGNAL_OP)
                nvshmem_fence();
            nvshmemx_signal_op(sig, (uint64_t)i, NVSHMEM_SIGNAL_SET, peer);
        }
    }
}

__device__ void ping_wait(uint64_t *sig, int i)
{
    if (threadIdx.x == 0)
        nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, (uint64_t)i);
    __syncthreads();
}

__global__ void pingpong(int kind, int *buf, uint64_t *sig, int rounds, int pe,
                         unsigned long long *ns)
{
    int peer = 1 - pe;
    unsigned long long t0 = device_ns();
    for (int i = 1; i <= rounds; i++) {
        if (pe == 1)
            ping_wait(sig, i);
        ping_send(kind, buf, sig, i, peer);
        if (pe == 0)
            ping_wait(sig, i);
    }
    if (threadIdx.x == 0)
        *ns = device_ns() - t0;
}

/* PE 0's fetch-adds of 1 on PE 1's word, one after another (one thread:
 * each returns the old value, so each is a round trip). */
__global__ void fetch_adds(unsigned long long *word, int rounds, unsigned long long *ns)
{
    unsigned long long t0 = device_ns(), sum = 0;
    for (int i = 0; i < rounds; i++)
        sum += nvshmem_ulonglong_atomic_fetch_add(word, 1ull, 1);
    *ns = device_ns() - t0;
    if (sum == 1ull) /* never: keeps the fetched values live */
        *ns = 0;
}

__global__ void put_blocks(char *dst, const char *src, size_t bytes, int peer)
{
    size_t share = bytes / gridDim.x;
    nvshmemx_putmem_block(dst + blockIdx.x * share, src + blockIdx.x * share, share, peer);
}

/* `rounds` calls of collective `kind` with parts of `bytes`; one block a PE. */
__global__ void collective(int kind, char *dst, char *src, size_t bytes, int rounds,
                           unsigned long long *ns)
{
    nvshmem_team_t world = NVSHMEM_TEAM_WORLD;
    nvshmemx_barrier_all_block();
    unsigned long long t0 = device_ns();
    for (int i = 0; i < rounds; i++) {
        switch (kind) {
        case COLL_BARRIER:
            nvshmemx_barrier_all_block();
            break;
        case COLL_BROADCAST:
            nvshmemx_char_broadcast_block(world, dst, src, bytes, 0);
            break;
        case COLL_REDUCE:
            nvshmemx_float_sum_reduce_block(world, (float *)dst, (const float *)src, bytes / 4);
            break;
        case COLL_FCOLLECT:
            nvshmemx_fcollectmem_block(world, dst, src, bytes);
            break;
        default:
            nvshmemx_alltoallmem_block(world, dst, src, bytes);
        }
    }
    if (threadIdx.x == 0)
        *ns = device_ns() - t0;
}

/* A row, printed and written by PE 0 alone. */
static void row(const char *kind, const char *what, int ranks, size_t bytes, const char *unit,
                double value)
{
    if (me == 0)
        ref_row(csv, kind, what, ranks, bytes, unit, value);
}

static double span_us(const unsigned long long *ns)
{
    unsigned long long h;
    CHECK(cudaMemcpy(&h, ns, sizeof h, cudaMemcpyDeviceToHost));
    return h / 1e3;
}

static void latency(int rounds, unsigned long long *ns)
{
    int *buf = (int *)nvshmem_malloc(4096);
    uint64_t *sig = (uint64_t *)nvshmem_malloc(64);
    for (int kind = 0; kind < PINGS; kind++) {
        double us[MAX_RUNS];
        for (int r = 0; r <= runs; r++) { /* run 0 warms up */
            CHECK(cudaMemset(sig, 0, 64));
            CHECK(cudaDeviceSynchronize());
            nvshmem_barrier_all();
            int threads = kind == PUT_SIGNAL_BLOCK ? 128 : 32;
            if (me < 2)
                pingpong<<<1, threads>>>(kind, buf, sig, rounds, me, ns);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            nvshmem_barrier_all();
            if (r > 0)
                us[r - 1] = span_us(ns) / rounds / 2;
        }
        row("latency", ping_names[kind], 2, kind == SIGNAL_OP || kind == FENCE_SIGNAL_OP ? 0 : 4,
            "one_way_us", ref_median(us, runs));
    }
    nvshmem_free(buf);
    nvshmem_free(sig);
}

/* The fetch-add's round trip from PE 0 to PE 1 (dcuda_bench's
 * peer_atomic_fetch_add). */
static void atomics(int rounds, unsigned long long *ns)
{
    unsigned long long *word = (unsigned long long *)nvshmem_malloc(64);
    double us[MAX_RUNS];
    for (int r = 0; r <= runs; r++) { /* run 0 warms up */
        nvshmem_barrier_all();
        if (me == 0)
            fetch_adds<<<1, 1>>>(word, rounds, ns);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        nvshmem_barrier_all();
        if (r > 0)
            us[r - 1] = span_us(ns) / rounds;
    }
    row("latency", "atomic_fetch_add_8B", 2, 8, "round_trip_us", ref_median(us, runs));
    nvshmem_free(word);
}

static void bandwidth(int sms)
{
    char *dst = (char *)nvshmem_malloc(BW_BYTES), *src = (char *)nvshmem_malloc(BW_BYTES);
    int counts[] = { 1, 8, 32, sms, 2 * sms };
    CHECK(cudaMemset(src, 1, BW_BYTES));
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        double v[MAX_RUNS];
        for (int r = 0; r < runs && me == 0; r++) {
            float ms;
            put_blocks<<<counts[c], 512>>>(dst, src, BW_BYTES, 1); /* warm-up */
            CHECK(cudaEventRecord(a));
            for (int i = 0; i < 5; i++)
                put_blocks<<<counts[c], 512>>>(dst, src, BW_BYTES, 1);
            nvshmemx_quiet_on_stream(0);
            CHECK(cudaEventRecord(b));
            CHECK(cudaEventSynchronize(b));
            CHECK(cudaEventElapsedTime(&ms, a, b));
            v[r] = (double)BW_BYTES * 5 / (ms / 1e3) / 1e9;
        }
        if (me == 0)
            row("bandwidth", "putmem_block", counts[c], BW_BYTES, "GBps", ref_median(v, runs));
        nvshmem_barrier_all();
    }
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    nvshmem_free(dst);
    nvshmem_free(src);
}

/* Microseconds a call of collective `kind` with parts of `bytes`. */
static double collective_us(int kind, char *dst, char *src, size_t bytes, int rounds,
                            unsigned long long *ns)
{
    double us[MAX_RUNS];
    void *args[] = { &kind, &dst, &src, &bytes, &rounds, &ns };
    for (int r = 0; r <= runs; r++) {
        nvshmem_barrier_all();
        if (nvshmemx_collective_launch((const void *)collective, 1, 128, args, 0, 0) != 0) {
            fprintf(stderr, "ref_nvshmem: nvshmemx_collective_launch failed (%s)\n",
                    coll_names[kind]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        CHECK(cudaDeviceSynchronize());
        if (r > 0)
            us[r - 1] = span_us(ns) / rounds;
    }
    return ref_median(us, runs);
}

static void collectives(int quick, unsigned long long *ns)
{
    /* dst holds every PE's part (fcollect, alltoall); src every part too. */
    size_t room = COLL_MAX * (size_t)pes;
    char *dst = (char *)nvshmem_malloc(room), *src = (char *)nvshmem_malloc(room);
    CHECK(cudaMemset(src, 0, room));
    CHECK(cudaDeviceSynchronize());
    for (int kind = 0; kind < COLLS; kind++) {
        for (size_t bytes = kind == COLL_BARRIER ? 0 : 8; bytes <= COLL_MAX; bytes *= 8) {
            int rounds = (quick ? 200 : 2000) / (bytes > 4096 ? (int)(bytes / 4096) : 1);
            rounds = rounds < 10 ? 10 : rounds;
            row("collective", coll_names[kind], pes, bytes, "us_per_call",
                collective_us(kind, dst, src, bytes, rounds, ns));
            if (kind == COLL_BARRIER)
                break;
        }
    }
    nvshmem_free(dst);
    nvshmem_free(src);
}

static void start_nvshmem(int rank, int size)
{
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    if (rank == 0)
        nvshmemx_get_uniqueid(&id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    nvshmemx_set_attr_uniqueid_args(rank, size, &id, &attr);
    if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0) {
        fprintf(stderr, "ref_nvshmem: NVSHMEM did not start\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    int rank, size, devices = 0, quick = 0;
    const char *csv_path = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--quick")) {
            quick = 1;
        } else if (!strcmp(argv[i], "--runs") && next && atoi(next) >= 1 && atoi(next) < MAX_RUNS) {
            runs = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--csv") && next) {
            csv_path = argv[++i];
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: mpirun -np N dcuda_ref_nvshmem [--quick] [--runs N] "
                                "[--csv FILE]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (size < 2 || cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
        if (rank == 0)
            fprintf(stderr,
                    "ref_nvshmem: needs 2 processes and a GPU (%d process(es), %d GPU(s))\n", size,
                    devices);
        MPI_Finalize();
        return 77;
    }
    CHECK(cudaSetDevice(rank % devices));
    start_nvshmem(rank, size);
    me = nvshmem_my_pe();
    pes = nvshmem_n_pes();
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, rank % devices));
    if (me == 0 && csv_path && !(csv = fopen(csv_path, "w")))
        fprintf(stderr, "ref_nvshmem: cannot write %s\n", csv_path);
    if (me == 0) {
        printf(
            "# dcuda_ref_nvshmem: NVSHMEM %d.%d, %d PEs on %d GPU(s) (%s)%s; median of %d runs\n",
            NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION, pes, devices, p.name,
            devices < pes ? ", PEs sharing a GPU" : "", runs);
        ref_head(csv);
    }
    unsigned long long *ns;
    CHECK(cudaMalloc(&ns, sizeof *ns));
    latency(quick ? 2000 : 100000, ns);
    atomics(quick ? 2000 : 100000, ns);
    bandwidth(p.multiProcessorCount);
    collectives(quick, ns);
    CHECK(cudaFree(ns));
    if (csv)
        fclose(csv);
    nvshmem_finalize();
    MPI_Finalize();
    return 0;
}
