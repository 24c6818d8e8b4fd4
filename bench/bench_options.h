/*
 * dcuda_bench's command line: the options of the OSU micro-benchmarks
 * (-m, -i, -x, -f, -r) with nccl-tests' spellings beside them (-b, -e,
 * -n, -w), and dcuda_bench's own (--quick, --latency, --peer, --loop,
 * --pairs, --rate, --offset, --ranks, -t, --csv). Parsed once with
 * getopt_long, before any host is opened.
 */
#ifndef DCUDA_BENCH_OPTIONS_H
#define DCUDA_BENCH_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#define BENCH_MAX_SIZE ((size_t)64 << 20) /* largest size -m takes */
#define BENCH_MAX_RUNS 1000               /* -r */
#define BENCH_MAX_PAIR_COUNTS 8           /* --pairs */
#define BENCH_PAIRS_ALL 0                 /* --pairs "all": every rank a side */

/* What -m (-b, -e), -i (-n), -x (-w) and --offset ask for. */
typedef struct sweep {
    size_t min, max; /* the latency sweep: min, 2 min, 4 min, ... <= max */
    int iters, warmup;
    int offset;  /* the peer rows' puts land this many bytes into the target's part */
    int bounded; /* -m, -b or -e given: every sweep keeps to min .. max */
} sweep_t;

/* Whether a size of a sweep is within what -m asked for (any size when
 * -m, -b and -e were not given: each sweep then has its own range). */
int bench_in_sweep(const sweep_t *w, size_t size);

/* What the command line asks for. */
typedef struct cmdline {
    int quick, peer_only, loop, with_bandwidth, threads, runs, full, rate_all;
    int colls_only; /* --collectives: the WORLD collective rows of every rank alone */
    int all_ranks;  /* --ranks: ranks a device of the rows of "every rank" (0: all it holds) */
    int pairs[BENCH_MAX_PAIR_COUNTS]; /* peer bandwidth: senders a side */
    int pair_counts;
    int self_test; /* --self-test: check the statistics' arithmetic, run nothing */
    const char *csv_path;
    sweep_t w;
} cmdline_t;

/* Reads the command line into *c: 0 to run, 1 after --help (printed),
 * 2 after a message on stderr about a bad option. Arguments that start
 * with --dcuda- are left to dcuda. */
int bench_parse_options(int argc, char **argv, cmdline_t *c);

void bench_usage(FILE *out);

#endif
