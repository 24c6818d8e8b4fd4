/*
 * dcuda_bench's output (bench_report.c): the statistics of a row's samples
 * (per-round times, or per-run values where a run gives one span), the
 * bandwidth columns of the collectives as nccl-tests defines them, the
 * rows in the text table and in the CSV, the head of both (what was run,
 * with which library, commit, device, driver and versions), and the
 * self-test of the arithmetic (--self-test).
 */
#ifndef DCUDA_BENCH_REPORT_H
#define DCUDA_BENCH_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "dcuda/dcuda_host.h"

/* The statistics of n samples. */
typedef struct bench_stats {
    int n;
    double min, avg, max, p50, p99;
} bench_stats_t;

/* The p-th percentile (0 < p <= 100) of n >= 1 sorted values: the nearest
 * rank, the smallest value with at least p % of the values at or below
 * it (so with fewer than 100 samples p99 is the maximum: the n column
 * tells). */
double bench_percentile(const double *sorted, int n, double p);

/* Sorts v[0 .. n) and fills *s; 0, or -1 when n < 1. */
int bench_stats(double *v, int n, bench_stats_t *s);

/* nccl-tests' bus bandwidth factor of a collective mode (bench.h) on
 * `ranks` ranks: allreduce 2(n-1)/n; allgather, reduce-scatter and
 * alltoall (n-1)/n; broadcast and reduce 1; -1 for a mode that is no
 * collective of data. */
double bench_bus_factor(int mode, int ranks);

/* The bytes nccl-tests divides by the time for algbw, for a row of `bytes`
 * (the buffer of a reduction or a broadcast; a rank's block of an
 * allgather or alltoall, a rank's share of a reduce-scatter): the buffer
 * itself, or ranks blocks for the allgathers, reduce-scatters and
 * alltoalls (nccl-tests' size is the whole receive buffer, the send
 * buffer for an alltoall). */
double bench_alg_bytes(int mode, size_t bytes, int ranks);

/* One row of the table. */
typedef struct bench_row {
    const char *kind, *what;
    int ranks;
    size_t bytes;
    const char *unit;
    bench_stats_t s;
    double algbw, busbw; /* GB/s; < 0: none */
    long long wrong;     /* wrong elements of the checks; < 0: none */
} bench_row_t;

/* The row in the table (text) and the CSV (either may be NULL). */
void bench_row_print(FILE *text, FILE *csv, const bench_row_t *r);

/* The column names, in the table (text) and the CSV. */
void bench_columns_print(FILE *text, FILE *csv);

/* The head: one line a fact, "# key: value" in the CSV (before its column
 * names) and "# key: value" in the text: the program, dcuda's version,
 * commit and build, the backend, device, driver and CUDA versions, MPI and
 * UCX, processes and ranks, and `run` (what was asked for). */
void bench_head_print(FILE *text, FILE *csv, const dcuda_rank_info_t *info, const char *run);

/* Checks the statistics, the bandwidth factors and the checks' expected
 * sums against values worked out by hand; prints each failure and
 * "self-test: ok" or "self-test: N failure(s)"; returns the failures. */
int bench_self_test(FILE *out);

#endif
