/*
 * dcuda_host_rma: the host's puts and gets (dcuda_host_put, dcuda_host_get)
 * into a window part while the ranks run, beside the copies a program
 * makes without dcuda (cudaMemcpy on a GPU, memcpy on CPU ranks) of the
 * same bytes between the same memories.
 *
 *   dcuda_host_rma [--quick] [--max BYTES] [--dcuda-<name>=<value> ...]
 *
 * Rows, for sizes from 8 B by 8x, and --max (default 64 MiB) last:
 *   own      the part of this process's device rank 0
 *   peer     the part of process 1's device rank 0 (2+ processes: GPU
 *            peer memory or shared memory on a node, the proxies on the
 *            network path, as DCUDA_NET_FORCE makes it)
 * each from pageable host memory and, on a GPU, from pinned memory
 * (cudaHostRegister). Columns: one blocking put and one blocking get
 * (microseconds a call and GB/s), 8 puts in flight completed by waitall
 * (GB/s), and the reference copies host to device and back (own rows;
 * GB/s). Only process 0 measures and prints; every process takes part.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(BENCH_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

#include "dcuda/dcuda_host.h"
#include "host_rma.h"

DCUDA_KERNEL_DECLARE(host_rma_bench);

#define IN_FLIGHT 8

typedef struct bench {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    host_rma_bench_t d;
    int gpu, quick;
    uint64_t max;
    unsigned char *buf; /* IN_FLIGHT * max bytes of host memory */
} bench_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t word(bench_t *b, int i)
{
    int64_t v = 0;
    if (b->gpu)
        dcuda_host_copy_out(b->h, &v, &b->d.words[i], sizeof v);
    else
        v = __atomic_load_n(&b->d.words[i], __ATOMIC_ACQUIRE);
    return v;
}

static void open_gate(bench_t *b)
{
    int64_t one = 1;
    if (b->gpu)
        dcuda_host_copy_in(b->h, &b->d.words[HRB_GATE], &one, sizeof one);
    else
        __atomic_store_n(&b->d.words[HRB_GATE], one, __ATOMIC_RELEASE);
}

static int iterations(const bench_t *b, uint64_t size)
{
    uint64_t budget = b->quick ? (16u << 20) : (128u << 20), n = budget / size;
    return n < 5 ? 5 : n > 500 ? 500 : (int)n;
}

/* Seconds a call of one blocking put (put) or get. */
static double time_one(bench_t *b, dcuda_gptr_t g, uint64_t size, int put)
{
    int n = iterations(b, size);
    double t0 = 0;
    for (int i = -2; i < n; i++) { /* two warm-up calls */
        if (i == 0)
            t0 = now_s();
        dcuda_status_t st = put ? dcuda_host_put(b->h, g, b->buf, size, NULL)
                                : dcuda_host_get(b->h, b->buf, g, size, NULL);
        if (st != DCUDA_OK)
            return -1;
    }
    return (now_s() - t0) / n;
}

/* Seconds a put with IN_FLIGHT of them in flight (each from its own buffer). */
static double time_in_flight(bench_t *b, dcuda_gptr_t g, uint64_t size)
{
    int n = iterations(b, size);
    n = (n + IN_FLIGHT - 1) / IN_FLIGHT;
    dcuda_host_req_t reqs[IN_FLIGHT];
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < IN_FLIGHT; k++)
            if (dcuda_host_put(b->h, g, b->buf + (size_t)k * b->max, size, &reqs[k]) != DCUDA_OK) {
                dcuda_host_req_waitall(b->h, reqs, (size_t)k); /* those started */
                return -1;
            }
        if (dcuda_host_req_waitall(b->h, reqs, IN_FLIGHT) != DCUDA_OK)
            return -1;
    }
    return (now_s() - t0) / ((double)n * IN_FLIGHT);
}

/* Seconds a reference copy to (to_part) or from the own part, without dcuda. */
static double time_reference(bench_t *b, uint64_t size, int to_part)
{
    int n = iterations(b, size);
#if defined(BENCH_HAVE_CUDA)
    cudaStream_t s;
    if (b->gpu && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
        return -1;
#endif
    double t0 = 0;
    for (int i = -2; i < n; i++) {
        if (i == 0)
            t0 = now_s();
        void *dst = to_part ? (void *)b->d.part : (void *)b->buf;
        const void *src = to_part ? (const void *)b->buf : (const void *)b->d.part;
#if defined(BENCH_HAVE_CUDA)
        if (b->gpu) {
            if (cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault, s) != cudaSuccess ||
                cudaStreamSynchronize(s) != cudaSuccess)
                return -1;
            continue;
        }
#endif
        memcpy(dst, src, size); /* CPU ranks wait at the gate: no one reads it */
    }
    double t = (now_s() - t0) / n;
#if defined(BENCH_HAVE_CUDA)
    if (b->gpu)
        cudaStreamDestroy(s);
#endif
    return t;
}

static void cell(double seconds, uint64_t size, int with_us)
{
    if (seconds < 0) {
        printf(with_us ? " %9s %8s" : " %8s", "-", "-");
        return;
    }
    if (with_us)
        printf(" %9.2f", seconds * 1e6);
    printf(" %8.2f", (double)size / seconds * 1e-9);
}

static void rows(bench_t *b, const char *target, const char *memory, dcuda_gptr_t g, int own)
{
    for (uint64_t size = 8; size <= b->max;
         size = size * 8 > b->max && size < b->max ? b->max : size * 8) {
        printf("%-6s %-9s %10llu", target, memory, (unsigned long long)size);
        cell(time_one(b, g, size, 1), size, 1);
        cell(time_one(b, g, size, 0), size, 1);
        cell(time_in_flight(b, g, size), size, 0);
        cell(own ? time_reference(b, size, 1) : -1, size, 0);
        cell(own ? time_reference(b, size, 0) : -1, size, 0);
        printf("\n");
        fflush(stdout);
    }
}

/* ---- notifications ------------------------------------------------------------------ */

/* The word at `at` of rank's part, read by a host get. */
static int64_t part_word(bench_t *b, uint32_t win, int rank, uint64_t at)
{
    int64_t v = -1;
    if (dcuda_host_get(b->h, &v, dcuda_gptr(win, rank, at), sizeof v, NULL) != DCUDA_OK)
        return -1;
    return v;
}

/* Round trips: the host sends (a flag put, a notification alone, or a
 * notified put of 8 bytes) and polls the rank's answer in its part with
 * host gets; seconds each. notes: what the rank counted so far. */
enum { ROUND_FLAG, ROUND_NOTIFY, ROUND_PUT_NOTIFY };

static double time_round(bench_t *b, uint32_t win, int rank, int kind, int64_t *notes)
{
    int n = b->quick ? 40 : 200;
    int64_t ping = part_word(b, win, rank, HRB_ECHO);
    double t0 = 0;
    for (int i = -2; i < n; i++) {
        if (i == 0)
            t0 = now_s();
        int64_t want = kind == ROUND_FLAG ? ++ping : ++*notes;
        dcuda_status_t st =
            kind == ROUND_FLAG
                ? dcuda_host_put(b->h, dcuda_gptr(win, rank, HRB_PING), &want, sizeof want, NULL)
            : kind == ROUND_NOTIFY
                ? dcuda_host_notify(b->h, rank, HRB_TAG, NULL)
                : dcuda_host_put_notify(b->h, dcuda_gptr(win, rank, HRB_NOTE_BYTES), b->buf, 8,
                                        HRB_TAG, NULL);
        if (st != DCUDA_OK)
            return -1;
        uint64_t at = kind == ROUND_FLAG ? HRB_ECHO : HRB_COUNT;
        for (int64_t v = part_word(b, win, rank, at); v != want; v = part_word(b, win, rank, at))
            if (v < 0)
                return -1;
    }
    return (now_s() - t0) / n;
}

/* NOTES notifications alone in flight, waited for together, then the
 * rank's count polled: seconds each. */
#define NOTES 64
static double time_note_stream(bench_t *b, uint32_t win, int rank, int64_t *notes)
{
    int rounds = b->quick ? 4 : 16;
    dcuda_host_req_t reqs[NOTES];
    double t0 = now_s();
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < NOTES; k++)
            if (dcuda_host_notify(b->h, rank, HRB_TAG, &reqs[k]) != DCUDA_OK) {
                dcuda_host_req_waitall(b->h, reqs, (size_t)k);
                return -1;
            }
        if (dcuda_host_req_waitall(b->h, reqs, NOTES) != DCUDA_OK)
            return -1;
        *notes += NOTES;
        for (int64_t v = part_word(b, win, rank, HRB_COUNT); v != *notes;
             v = part_word(b, win, rank, HRB_COUNT))
            if (v < 0)
                return -1;
    }
    return (now_s() - t0) / ((double)rounds * NOTES);
}

static void note_rows(bench_t *b, uint32_t win, const char *target, int rank)
{
    static const char *kinds[] = { "flag put", "notify", "put_notify 8 B" };
    int64_t notes = 0;
    for (int k = 0; k < 3; k++) {
        double s = time_round(b, win, rank, k, &notes);
        printf("%-6s %-16s %10.1f\n", target, kinds[k], s < 0 ? -1.0 : s * 1e6);
    }
    double s = time_note_stream(b, win, rank, &notes);
    printf("%-6s %-16s %10.2f\n", target, "notify x64", s < 0 ? -1.0 : s * 1e6);
    fflush(stdout);
}

/* Process 0's host tells every other process's rank 0 to stop answering. */
static void stop_peers(bench_t *b)
{
    int per = b->info.rank_count / b->info.process_count;
    for (int p = 1; p < b->info.process_count; p++)
        (void)dcuda_host_notify(b->h, p * per, HRB_STOP, NULL);
}

static void measure_notes(bench_t *b, uint32_t win)
{
    int peers = b->info.process_count > 1;
    printf("# host notifications: a round trip to device rank 0 and back, polled with 8-byte "
           "host gets of its part (us): \"flag put\" is the reference (a host put of a word "
           "the rank polls, no notification); \"notify x64\": 64 notifications alone in flight, "
           "us each\n");
    printf("%-6s %-16s %10s\n", "target", "kind", "round_us");
    note_rows(b, win, "own", b->info.rank_start);
    if (peers)
        note_rows(b, win, "peer", b->info.rank_start + b->info.rank_responsible);
}

static void measure(bench_t *b, uint32_t win)
{
    int peers = b->info.process_count > 1;
    int peer_rank = peers ? b->info.rank_start + b->info.rank_responsible : -1;
    printf("# dcuda_host_rma: backend %s (%s), %d process(es); put/get: one blocking call "
           "(us, GB/s); put x%d: %d in flight, waitall (GB/s); ref: %s host->part and "
           "part->host (GB/s)\n",
           b->info.backend, b->info.device_name, b->info.process_count, IN_FLIGHT, IN_FLIGHT,
           b->gpu ? "cudaMemcpyAsync + synchronize" : "memcpy");
    printf("%-6s %-9s %10s %9s %8s %9s %8s %8s %8s %8s\n", "target", "memory", "bytes", "put_us",
           "put_GBs", "get_us", "get_GBs", "putx8", "ref_h2p", "ref_p2h");
    const char *memories[] = { "pageable", "pinned" };
    for (int m = 0; m < (b->gpu ? 2 : 1); m++) {
#if defined(BENCH_HAVE_CUDA)
        if (m == 1 && cudaHostRegister(b->buf, (size_t)IN_FLIGHT * b->max, 0) != cudaSuccess) {
            printf("# pinned rows skipped: cudaHostRegister failed\n");
            break;
        }
#endif
        rows(b, "own", memories[m], dcuda_gptr(win, b->info.rank_start, HRB_PUTS), 1);
        if (peers &&
            dcuda_host_put(b->h, dcuda_gptr(win, peer_rank, 0), b->buf, 0, NULL) == DCUDA_OK)
            rows(b, "peer", memories[m], dcuda_gptr(win, peer_rank, HRB_PUTS), 0);
        else if (peers && m == 0)
            printf("# peer rows skipped: process 1's part is not reached\n");
    }
}

int main(int argc, char **argv)
{
    bench_t b;
    memset(&b, 0, sizeof b);
    b.max = 64u << 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            b.quick = 1;
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            b.max = strtoull(argv[++i], NULL, 0);
        else if (strncmp(argv[i], "--dcuda-", 8) != 0) {
            fprintf(stderr, "usage: dcuda_host_rma [--quick] [--max BYTES] [--dcuda-...]\n");
            return 2;
        }
    }
    if (b.max < 8)
        b.max = 8;
    dcuda_status_t st = dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(host_rma_bench), 128, &b.h);
    if (st != DCUDA_OK)
        return dcuda_host_exit_status(1);
    dcuda_host_get_rank_info(b.h, &b.info);
    b.gpu = strcmp(b.info.backend, "cuda") == 0;
    b.d.part_bytes = b.max + HRB_PUTS;
    b.buf = malloc((size_t)IN_FLIGHT * b.max);
    if (!b.buf || dcuda_host_alloc(b.h, b.d.part_bytes, (void **)&b.d.part) != DCUDA_OK ||
        dcuda_host_alloc(b.h, HRB_WORDS * sizeof(int64_t), (void **)&b.d.words) != DCUDA_OK)
        return dcuda_host_exit_status(1);
    memset(b.buf, 0x5a, (size_t)IN_FLIGHT * b.max);
    st = dcuda_host_run_start(b.h, &b.d, sizeof b.d, NULL);
    int ok = st == DCUDA_OK;
    while (ok && !word(&b, HRB_READY)) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    int64_t win = ok ? word(&b, HRB_HANDLE) : -1;
    if (ok && win >= 0 && b.info.process_index == 0) {
        measure(&b, (uint32_t)win);
        measure_notes(&b, (uint32_t)win);
        stop_peers(&b);
    }
    if (ok)
        open_gate(&b);
    if (ok)
        st = dcuda_host_run_wait(b.h, NULL);
#if defined(BENCH_HAVE_CUDA)
    if (b.gpu) /* after the run: an unregistration may wait for the device's work */
        cudaHostUnregister(b.buf);
#endif
    if (st != DCUDA_OK || win < 0)
        fprintf(stderr, "dcuda_host_rma: %s %s\n", dcuda_status_name(st),
                dcuda_host_last_error(b.h));
    dcuda_host_free(b.h, b.d.part);
    dcuda_host_free(b.h, b.d.words);
    dcuda_host_finish(b.h);
    free(b.buf);
    return dcuda_host_exit_status(st == DCUDA_OK && win >= 0 ? 0 : 1);
}
