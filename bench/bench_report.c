/*
 * dcuda_bench's output (bench_report.h): statistics over a row's samples,
 * nccl-tests' algbw and busbw, the rows as text and CSV, the head with the
 * versions a reader needs to place the numbers, and the self-test of the
 * arithmetic.
 */
#include "bench_report.h"

#include <stdlib.h>
#include <string.h>

#if defined(BENCH_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

#include "bench.h"
#include "bench_options.h"
#include "dcuda/dcuda_version.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_percentile(const double *sorted, int n, double p)
{
    /* The rank ceil(p / 100 * n), from 1; the small slack keeps p * n that
     * is a whole number in exact arithmetic (99 / 100 * 100) from rounding
     * up to the next rank. */
    double x = p / 100.0 * n - 1e-9;
    int rank = (int)x;
    rank += rank < x; /* ceil, for x >= 0 */
    rank = rank < 1 ? 1 : rank > n ? n : rank;
    return sorted[rank - 1];
}

int bench_stats(double *v, int n, bench_stats_t *s)
{
    if (n < 1)
        return -1;
    double sum = 0;
    qsort(v, (size_t)n, sizeof v[0], compare_doubles);
    for (int i = 0; i < n; i++)
        sum += v[i];
    s->n = n;
    s->min = v[0];
    s->max = v[n - 1];
    s->avg = sum / n;
    s->p50 = bench_percentile(v, n, 50);
    s->p99 = bench_percentile(v, n, 99);
    return 0;
}

/* The collectives whose buffer is a block a rank (allgather, reduce-scatter,
 * alltoall): nccl-tests count ranks x bytes, and their bus factor is
 * (n - 1) / n. */
static int block_a_rank(int mode)
{
    switch (mode) {
    case BENCH_ALLGATHER:
    case BENCH_ALLGATHER_USER:
    case BENCH_ALLGATHER_ACROSS:
    case BENCH_REDUCE_SCATTER:
    case BENCH_REDUCE_SCATTER_USER:
    case BENCH_ALLTOALL:
    case BENCH_ALLTOALL_USER:
        return 1;
    default:
        return 0;
    }
}

double bench_bus_factor(int mode, int ranks)
{
    const double n = ranks > 0 ? ranks : 1;
    if (block_a_rank(mode))
        return (n - 1) / n;
    switch (mode) {
    case BENCH_ALLREDUCE:
    case BENCH_ALLREDUCE_RING:
    case BENCH_ALLREDUCE_HALF:
    case BENCH_ALLREDUCE_ACROSS:
        return 2.0 * (n - 1) / n;
    case BENCH_BROADCAST:
    case BENCH_BROADCAST_USER:
    case BENCH_BROADCAST_ACROSS:
    case BENCH_REDUCE:
        return 1.0;
    default:
        return -1.0;
    }
}

double bench_alg_bytes(int mode, size_t bytes, int ranks)
{
    return block_a_rank(mode) ? (double)bytes * ranks : (double)bytes;
}

/* ---- rows ------------------------------------------------------------------ */

#define TEXT_HEAD "%-10s %-30s %6s %9s %13s %10s %10s %10s %10s %10s %8s %9s %9s %6s\n"

void bench_columns_print(FILE *text, FILE *csv)
{
    if (text)
        fprintf(text, TEXT_HEAD, "kind", "what", "ranks", "bytes", "unit", "avg", "min", "max",
                "p50", "p99", "n", "algbw", "busbw", "wrong");
    if (csv)
        fprintf(csv, "kind,what,ranks,bytes,unit,value,min,max,p50,p99,n,algbw_GBps,busbw_GBps,"
                     "wrong\n");
}

/* A number of the table: three decimals, or up to nine to show three
 * significant digits below 0.1 (a rate of a few calls a millisecond must
 * not read 0.000), never an exponent; `none` when v < 0. */
static const char *text_number(char *buf, size_t size, double v, const char *none)
{
    int decimals = 3;
    if (v < 0)
        return none;
    for (double x = v; x > 0 && x < 0.1 && decimals < 9; x *= 10)
        decimals++;
    snprintf(buf, size, "%.*f", decimals, v);
    return buf;
}

/* A number of the CSV: six decimals; "" when v < 0. */
static const char *csv_number(char *buf, size_t size, double v)
{
    if (v < 0)
        return "";
    snprintf(buf, size, "%.6f", v);
    return buf;
}

void bench_row_print(FILE *text, FILE *csv, const bench_row_t *r)
{
    char t[7][32], w[32];
    const bench_stats_t *s = &r->s;
    const double v[7] = { s->avg, s->min, s->max, s->p50, s->p99, r->algbw, r->busbw };
    snprintf(w, sizeof w, "%lld", r->wrong);
    if (text) {
        for (int i = 0; i < 7; i++)
            text_number(t[i], sizeof t[i], v[i], "-");
        fprintf(text, "%-10s %-30s %6d %9zu %13s %10s %10s %10s %10s %10s %8d %9s %9s %6s\n",
                r->kind, r->what, r->ranks, r->bytes, r->unit, t[0], t[1], t[2], t[3], t[4], s->n,
                r->algbw < 0 ? "-" : t[5], r->busbw < 0 ? "-" : t[6], r->wrong >= 0 ? w : "-");
        fflush(text);
    }
    if (csv) {
        for (int i = 0; i < 7; i++)
            csv_number(t[i], sizeof t[i], v[i]);
        fprintf(csv, "%s,%s,%d,%zu,%s,%s,%s,%s,%s,%s,%d,%s,%s,%s\n", r->kind, r->what, r->ranks,
                r->bytes, r->unit, t[0], t[1], t[2], t[3], t[4], s->n, r->algbw < 0 ? "" : t[5],
                r->busbw < 0 ? "" : t[6], r->wrong >= 0 ? w : "");
    }
}

/* ---- head ------------------------------------------------------------------ */

/* The NVIDIA kernel module's version ("580.159.04"), from the driver's
 * /proc file, into buf; "unknown" when there is none. The line reads
 * "NVRM version: NVIDIA UNIX [Open ]Kernel Module [for x86_64]  580.159.04
 * ...": the version is the first word after "Kernel Module" that starts
 * with a digit and holds a dot. */
static const char *nvidia_module_version(char *buf, size_t size)
{
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    char line[256], word[64];
    int used;
    snprintf(buf, size, "unknown");
    if (!f)
        return buf;
    if (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, "Kernel Module");
        at = at ? at + strlen("Kernel Module") : NULL;
        while (at && sscanf(at, " %63s%n", word, &used) == 1) {
            if (word[0] >= '0' && word[0] <= '9' && strchr(word, '.')) {
                snprintf(buf, size, "%s", word);
                break;
            }
            at += used;
        }
    }
    fclose(f);
    return buf;
}

/* A CUDA version number (12040) as "12.4". */
static const char *cuda_version_text(char *buf, size_t size, int v)
{
    if (v <= 0)
        snprintf(buf, size, "none");
    else
        snprintf(buf, size, "%d.%d", v / 1000, v % 1000 / 10);
    return buf;
}

static void fact(FILE *text, FILE *csv, const char *key, const char *value)
{
    if (text)
        fprintf(text, "# %s: %s\n", key, value && *value ? value : "unknown");
    if (csv)
        fprintf(csv, "# %s: %s\n", key, value && *value ? value : "unknown");
}

void bench_head_print(FILE *text, FILE *csv, const dcuda_rank_info_t *info, const char *run)
{
    char buf[256], buf2[64], buf3[64];
    const int gpu = strcmp(info->backend, "cpu") != 0;
    fact(text, csv, "program", "dcuda_bench");
    fact(text, csv, "dcuda_version", dcuda_version_string());
    fact(text, csv, "dcuda_commit", dcuda_build_info("commit"));
    snprintf(buf, sizeof buf, "%s, %s, backends %s, managers %s", dcuda_build_info("build_type"),
             dcuda_build_info("compiler"), dcuda_build_info("backends"),
             dcuda_build_info("managers"));
    fact(text, csv, "dcuda_build", buf);
    fact(text, csv, "backend", info->backend);
    fact(text, csv, "device", info->device_name);
    fact(text, csv, "nvidia_driver",
         gpu ? nvidia_module_version(buf, sizeof buf) : "none (CPU ranks)");
#if defined(BENCH_HAVE_CUDA)
    int driver = 0, runtime = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess)
        driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess)
        runtime = 0;
    fact(text, csv, "cuda_driver_api", cuda_version_text(buf2, sizeof buf2, driver));
    fact(text, csv, "cuda_runtime", cuda_version_text(buf3, sizeof buf3, runtime));
#else
    (void)cuda_version_text;
    (void)buf2;
    (void)buf3;
    fact(text, csv, "cuda_driver_api", "none (built without CUDA)");
    fact(text, csv, "cuda_runtime", "none (built without CUDA)");
#endif
    fact(text, csv, "cuda_toolkit_built_with", dcuda_build_info("cuda"));
    fact(text, csv, "mpi_built_with", dcuda_build_info("mpi"));
    fact(text, csv, "ucx_built_with", dcuda_build_info("ucx"));
    snprintf(buf, sizeof buf, "%d process(es), %d node(s), %d thread(s) a rank",
             info->process_count, info->node_count, info->threads_per_rank);
    fact(text, csv, "processes", buf);
    fact(text, csv, "run", run);
    fact(text, csv, "columns",
         "avg (CSV: value), min, max, p50, p99 over n samples: the times of single rounds "
         "(latency rows; p50, p99 by nearest rank) or one value a run (bandwidth and rate "
         "rows); algbw, busbw in GB/s as nccl-tests; wrong: elements of the check that "
         "differ (0 expected)");
}

/* ---- self-test ------------------------------------------------------------- */

static int failures;

static void expect(FILE *out, const char *what, double got, double want)
{
    double diff = got > want ? got - want : want - got, size = want < 0 ? -want : want;
    if (diff > 1e-9 * (size > 1 ? size : 1)) {
        fprintf(out, "self-test: %s: got %.9g, want %.9g\n", what, got, want);
        failures++;
    }
}

/* The statistics of 1 .. n in a shuffled order. */
static void stats_of_range(FILE *out, int n, double p50, double p99)
{
    double *v = malloc(sizeof *v * (size_t)n);
    bench_stats_t s;
    char what[64];
    if (!v) {
        failures++;
        return;
    }
    for (int i = 0; i < n; i++)
        v[i] = (double)((i * 7919 % n) + 1); /* 7919 is prime: a permutation of 1 .. n */
    bench_stats(v, n, &s);
    snprintf(what, sizeof what, "1..%d", n);
    expect(out, what, s.n, n);
    expect(out, what, s.min, 1);
    expect(out, what, s.max, n);
    expect(out, what, s.avg, (n + 1) / 2.0);
    expect(out, what, s.p50, p50);
    expect(out, what, s.p99, p99);
    free(v);
}

/* Elements bench_element_right finds wrong in an allgather's result of
 * `ranks` blocks of n bytes, with byte `spoil` changed (none when past). */
static int gather_wrong(int ranks, size_t n, size_t spoil)
{
    unsigned char part[64];
    int wrong = 0;
    for (size_t i = 0; i < n * (size_t)ranks && i < sizeof part; i++)
        part[i] = bench_check_byte((int)(i / n), 0, i % n) ^ (i == spoil);
    for (size_t i = 0; i < n * (size_t)ranks && i < sizeof part; i++)
        wrong += !bench_element_right(BENCH_CHECK_GATHER, 1, ranks, n, (const char *)part, i);
    return wrong;
}

int bench_self_test(FILE *out)
{
    failures = 0;
    stats_of_range(out, 1, 1, 1);
    stats_of_range(out, 10, 5, 10); /* 10 samples: p99 is the largest */
    stats_of_range(out, 100, 50, 99);
    stats_of_range(out, 1000, 500, 990);
    stats_of_range(out, 1001, 501, 991);
    double v[4] = { 3, 1, 2, 2 };
    bench_stats_t s;
    expect(out, "bench_stats(n = 0)", bench_stats(v, 0, &s), -1);
    bench_stats(v, 4, &s);
    expect(out, "{3,1,2,2} p50", s.p50, 2);
    expect(out, "{3,1,2,2} avg", s.avg, 2);
    expect(out, "{3,1,2,2} p99", s.p99, 3);

    expect(out, "busbw allreduce 8", bench_bus_factor(BENCH_ALLREDUCE, 8), 1.75);
    expect(out, "busbw ring allreduce 2", bench_bus_factor(BENCH_ALLREDUCE_RING, 2), 1.0);
    expect(out, "busbw allgather 4", bench_bus_factor(BENCH_ALLGATHER, 4), 0.75);
    expect(out, "busbw reduce_scatter 2", bench_bus_factor(BENCH_REDUCE_SCATTER, 2), 0.5);
    expect(out, "busbw alltoall 8", bench_bus_factor(BENCH_ALLTOALL_USER, 8), 0.875);
    expect(out, "busbw broadcast 16", bench_bus_factor(BENCH_BROADCAST, 16), 1.0);
    expect(out, "busbw reduce 3", bench_bus_factor(BENCH_REDUCE, 3), 1.0);
    expect(out, "busbw barrier", bench_bus_factor(BENCH_BARRIER_WORLD, 4), -1.0);
    expect(out, "busbw allreduce across 4", bench_bus_factor(BENCH_ALLREDUCE_ACROSS, 4), 1.5);
    expect(out, "busbw allgather across 4", bench_bus_factor(BENCH_ALLGATHER_ACROSS, 4), 0.75);
    expect(out, "busbw broadcast across 2", bench_bus_factor(BENCH_BROADCAST_ACROSS, 2), 1.0);
    expect(out, "algbw bytes allgather", bench_alg_bytes(BENCH_ALLGATHER, 1024, 4), 4096);
    expect(out, "algbw bytes allreduce", bench_alg_bytes(BENCH_ALLREDUCE, 1024, 4), 1024);

    /* The checks' sums in closed form against adding them up. */
    for (int p = 1; p <= 64; p++)
        for (size_t i = 0; i < 9; i++) {
            double sum = 0;
            for (int h = 0; h < p; h++)
                sum += bench_float_in(h, i);
            if (bench_float_sum(p, i) != (float)sum) {
                fprintf(out, "self-test: bench_float_sum(%d, %zu) = %g, added up %g\n", p, i,
                        (double)bench_float_sum(p, i), sum);
                failures++;
            }
        }
    expect(out, "gather check, right", gather_wrong(3, 5, 99), 0);
    expect(out, "gather check, one byte spoiled", gather_wrong(3, 5, 7), 1);

    /* -m given bounds every sweep; not given, none. */
    sweep_t w = { 3, 100, 1, 0, 0, 1 };
    expect(out, "in -m 3:100: 2", bench_in_sweep(&w, 2), 0);
    expect(out, "in -m 3:100: 3", bench_in_sweep(&w, 3), 1);
    expect(out, "in -m 3:100: 101", bench_in_sweep(&w, 101), 0);
    w.bounded = 0;
    expect(out, "no -m: 1 GiB", bench_in_sweep(&w, (size_t)1 << 30), 1);

    if (failures)
        fprintf(out, "self-test: %d failure(s)\n", failures);
    else
        fprintf(out, "self-test: ok\n");
    return failures;
}
