/*
 * dcuda_bench's host side, shared by its main file (dcuda_bench.c: the
 * runs, the same-device and peer rows) and bench_world.c (the rows of
 * WORLD: barriers, communicators, collectives): a case's measurement over
 * its -r runs, and the rows made of it.
 */
#ifndef DCUDA_BENCH_HOST_H
#define DCUDA_BENCH_HOST_H

#include <stddef.h>

#include "bench.h"
#include "bench_options.h"
#include "dcuda/dcuda_host.h"

/* What the runs of one case gave. */
typedef struct bench_result {
    double *ns;       /* the kept rounds' times (bench_records modes), of every run */
    int n;            /* how many */
    const double *ms; /* each run's device timer span */
    int runs;
    long long wrong; /* the largest count of wrong elements of a run's check (-1: none) */
} bench_result_t;

/* Runs one case -r times (every process alike: SPMD); 1 if every run
 * gave a span. The result lives until the next call. */
int bench_measure(dcuda_host_h h, const bench_args_t *args, bench_result_t *r);

/* A row of the rounds' times, each times `scale` (ns to the unit: 1e-3
 * for microseconds, 0.5e-3 for the one-way half of a round trip). */
void bench_report_rounds(const char *kind, const char *what, int ranks, size_t bytes,
                         const char *unit, const bench_result_t *r, double scale);

/* A row of one value a run: k * ms, or k / ms when `per` (a rate). */
void bench_report_runs(const char *kind, const char *what, int ranks, size_t bytes,
                       const char *unit, const bench_result_t *r, double k, int per);

/* A collective's latency row (microseconds, the slowest rank's call a
 * round) with algbw, busbw and wrong; `mode` gives the bus factor. */
void bench_report_collective(const char *what, int mode, int ranks, size_t bytes,
                             const bench_result_t *r);

/* --rate: a rate row beside every bandwidth and collective row. */
int bench_rate_every_size(void);

/* The WORLD rows (bench_world.c), every rank of every process taking
 * part; `prefix` starts the rows' names ("peer_" for those of one rank a
 * process), `devices` the ranks of this process. */
void bench_world_barrier(dcuda_host_h h, int ranks, int iters, const char *prefix);
void bench_comm_rows(dcuda_host_h h, int ranks, int devices, int iters, const sweep_t *w,
                     const char *prefix);
/* The collectives of a device's data spread over its ranks, across the
 * devices (bench_world.c: rows across_*). */
void bench_across_rows(dcuda_host_h h, int ranks, int devices, int iters, const sweep_t *w,
                       const char *prefix);
/* The collectives at sizes[0 .. 5) (within -m); their rate rows at the
 * smallest size run, or at every size when `rates`. */
void bench_world_collectives(dcuda_host_h h, int ranks, int devices, int iters, const size_t *sizes,
                             const sweep_t *w, const char *prefix, int rates);

#endif
