/*
 * dcuda_bench: latency and bandwidth of notified RMA between ranks of one
 * device (GPU blocks, or CPU threads without a GPU). Prints one table;
 * --csv=FILE also writes the rows as CSV.
 *
 *   latency    ping-pong between device ranks 0 and 1 (one-way = round trip / 2),
 *              with 2 ranks and with every rank the device holds (the idle
 *              ones waiting in a barrier)
 *   host       round trips from rank 0 to the host runtime through its
 *              command queue (the path remote operations take)
 *   bandwidth  back-to-back notified puts of 8 B .. 4 MiB from rank 0 to 1,
 *              and from every rank r to r+1 at once (bytes copied / time)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dcuda/dcuda_host.h"

DCUDA_KERNEL_DECLARE(bench);

#define BENCH_MAX_SIZE ((size_t)4 << 20)
#define BENCH_ONE_RANK_SPAN ((size_t)256 << 20)

static FILE *csv;

static void row(const char *kind, const char *what, int ranks, size_t size, const char *unit,
                double value)
{
    printf("%-10s %-28s %6d %9zu %10s %10.3f\n", kind, what, ranks, size, unit, value);
    if (csv)
        fprintf(csv, "%s,%s,%d,%zu,%s,%.6f\n", kind, what, ranks, size, unit, value);
}

/* Runs one configuration; returns the timer span in ms, or -1. */
static double run_case(dcuda_host_h h, bench_args_t *a)
{
    const double *t;
    int n = 0;
    dcuda_status_t st = dcuda_host_run(h, a, sizeof *a, NULL);
    if (st == DCUDA_OK)
        st = dcuda_host_get_timings(h, &t, &n);
    if (st != DCUDA_OK || n < 1) {
        fprintf(stderr, "bench: run failed: %s %s\n", dcuda_status_string(st),
                dcuda_host_last_error(h));
        return -1;
    }
    return t[0];
}

static dcuda_status_t open_host(int argc, char **argv, const char *ranks, dcuda_host_h *h,
                                dcuda_rank_info_t *info)
{
    char opt[64];
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args)
        return DCUDA_ERR_NO_MEMORY;
    for (int i = 0; i < argc; i++)
        args[i] = argv[i];
    snprintf(opt, sizeof opt, "--dcuda-ranks=%s", ranks);
    args[argc] = opt; /* after the user's arguments: wins over them */
    dcuda_status_t st = dcuda_host_init(argc + 1, args, DCUDA_KERNEL_REF(bench), 128, h);
    free(args);
    if (st == DCUDA_OK)
        st = dcuda_host_get_rank_info(*h, info);
    return st;
}

static int alloc_buffers(dcuda_host_h h, bench_args_t *a, int ranks, size_t stride)
{
    a->stride = stride;
    if (dcuda_host_alloc(h, stride * (size_t)ranks, (void **)&a->src) != DCUDA_OK ||
        dcuda_host_alloc(h, stride * (size_t)ranks, (void **)&a->dst) != DCUDA_OK)
        return -1;
    return 0;
}

static void latency(dcuda_host_h h, int ranks, int iters, const char *label)
{
    bench_args_t a = {0};
    if (alloc_buffers(h, &a, ranks, 256))
        return;
    a.iters = iters;
    a.peer = 1;
    for (int mode = BENCH_PINGPONG_PUT; mode <= BENCH_PINGPONG_NOTIFY; mode++) {
        a.mode = mode;
        double ms = run_case(h, &a);
        char what[64];
        snprintf(what, sizeof what, "%s%s", mode == BENCH_PINGPONG_PUT ? "notified_put_4B" : "notify",
                 label);
        if (ms > 0)
            row("latency", what, ranks, mode == BENCH_PINGPONG_PUT ? 4 : 0, "one_way_us",
                ms * 1e3 / iters / 2);
    }
    dcuda_host_free(h, a.src);
    dcuda_host_free(h, a.dst);
}

static void host_round_trip(dcuda_host_h h, int iters)
{
    bench_args_t a = {0};
    if (alloc_buffers(h, &a, 2, 256))
        return;
    a.mode = BENCH_HOST_PING;
    a.iters = iters;
    double ms = run_case(h, &a);
    if (ms > 0)
        row("host", "command_queue_ping", 1, 0, "round_trip_us", ms * 1e3 / iters);
    dcuda_host_free(h, a.src);
    dcuda_host_free(h, a.dst);
}

static void bandwidth(dcuda_host_h h, int ranks, int all, double total_bytes)
{
    bench_args_t a = {0};
    size_t max = BENCH_MAX_SIZE;
    if (all && (double)ranks * (double)max > 8e9)
        max = (size_t)(8e9 / ranks) & ~(size_t)4095;
    /* One sender cycles through 256 MiB (several times the L2). */
    if (alloc_buffers(h, &a, ranks, all ? max : BENCH_ONE_RANK_SPAN))
        return;
    a.mode = all ? BENCH_BW_ALL : BENCH_BW_ONE;
    for (size_t size = 8; size <= max; size *= 2) {
        double senders = all ? ranks : 1;
        double it = total_bytes / (senders * (double)size);
        a.iters = it < 20 ? 20 : it > 20000 ? 20000 : (int)it;
        a.size = size;
        double ms = run_case(h, &a);
        if (ms > 0)
            row("bandwidth", all ? "put_all_ranks" : "put_one_rank", all ? ranks : 1, size,
                "GBps", senders * (double)size * a.iters / (ms * 1e6));
    }
    dcuda_host_free(h, a.src);
    dcuda_host_free(h, a.dst);
}

int main(int argc, char **argv)
{
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strncmp(argv[i], "--csv=", 6) == 0 && !(csv = fopen(argv[i] + 6, "w")))
            return fprintf(stderr, "bench: cannot write %s\n", argv[i] + 6), 1;
    }
    int iters = quick ? 2000 : 100000;
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (open_host(argc, argv, "2", &h, &info) != DCUDA_OK)
        return 1;
    printf("# dcuda_bench: backend %s (%s), %d thread(s) per rank\n", info.backend,
           info.device_name, info.threads_per_rank);
    printf("%-10s %-28s %6s %9s %10s %10s\n", "kind", "what", "ranks", "bytes", "unit", "value");
    if (csv)
        fprintf(csv, "kind,what,ranks,bytes,unit,value\n");
    latency(h, 2, iters, "");
    host_round_trip(h, iters / 10);
    bandwidth(h, 2, 0, quick ? 64e6 : 1e9);
    dcuda_host_finish(h);

    if (open_host(argc, argv, "0", &h, &info) != DCUDA_OK)
        return 1;
    latency(h, info.rank_count, iters, "_busy_device");
    bandwidth(h, info.rank_count, 1, quick ? 256e6 : 8e9);
    dcuda_host_finish(h);
    if (csv)
        fclose(csv);
    return 0;
}
