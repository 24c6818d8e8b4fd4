/*
 * dcuda_bench's command line (bench_options.h), read with getopt_long:
 * each option's reader checks its value and names the rule it breaks;
 * nothing runs after a bad option (exit status 2).
 */
#include "bench_options.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

void bench_usage(FILE *out)
{
    fprintf(out,
            "usage: dcuda_bench [options] [--dcuda-<name>=<value> ...]\n"
            "  --quick          shorter cases (2000 rounds a latency case, less data)\n"
            "  --latency        leave out the bandwidth rows\n"
            "  --peer           the rows between processes 0 and 1 alone\n"
            "  --loop           the peer rows in one process, between the halves of its ranks\n"
            "  --collectives    the WORLD barrier and collective rows of every rank alone\n"
            "  -m MIN:MAX       sizes: the latency and get sweeps take MIN, 2*MIN, 4*MIN, ...\n"
            "                   up to MAX, doubling from MIN as OSU's do (-m 3:100: 3, 6, 12,\n"
            "                   24, 48, 96); -m MAX: MIN 4, or MAX when smaller; default\n"
            "                   4:65536. Given, -m also bounds every other sweep to MIN..MAX:\n"
            "                   the bandwidth rows (8 B to 4 MiB doubling; between processes\n"
            "                   8 B, then 64 B to 64 MiB by 4) and the collectives' fixed\n"
            "                   sizes. Sizes take K, M, G: 1K = 1024; at most 64M\n"
            "  -b MIN, -e MAX   the same bounds, as nccl-tests spells them\n"
            "  -i N, -n N       timed rounds of a latency case (default 100000, --quick 2000)\n"
            "  -x N, -w N       untimed warm-up rounds (default i / 10)\n"
            "  -r N             runs of each case (default 1); a row's statistics take the\n"
            "                   rounds of all its runs\n"
            "  -f               OSU's full statistics: accepted, always printed now\n"
            "                   (nccl-tests' step factor is not offered: sizes double)\n"
            "  --pairs LIST     sender counts of the multi-pair peer bandwidth rows, comma\n"
            "                   separated, 'all' for every rank (default 1,32,all)\n"
            "  --rate           a rate row beside every bandwidth row (Mmsg_per_s) and every\n"
            "                   collective row (Mcalls_per_s, calls back to back); default:\n"
            "                   at the smallest size of each (the peer collectives: all)\n"
            "  --ranks N        the rows of every rank a device holds run on N ranks a\n"
            "                   device instead (from 2; at most what the device holds)\n"
            "  --offset N       the peer latency rows' puts land N bytes into the target's\n"
            "                   part (0 to 255, default 0): the destination's alignment\n"
            "  -t N             threads a rank (default 128)\n"
            "  --csv FILE       also write the rows as CSV (or --csv=FILE)\n"
            "  -h, --help       this text\n"
            "Columns: avg, min, max, p50, p99 over n samples: single rounds' times for the\n"
            "latency rows (a collective's: the slowest rank's call, the ranks meeting in an\n"
            "untimed allreduce between calls), one value a run for the bandwidth and rate\n"
            "rows; p50 and p99 by nearest rank (p99 of fewer than 100 samples is their\n"
            "maximum). GBps: bytes moved / time. algbw and busbw as nccl-tests: algbw = S /\n"
            "time (S: the buffer; for allgather, reduce-scatter and alltoall ranks x bytes),\n"
            "busbw = algbw x 2(n-1)/n (allreduce), (n-1)/n (allgather, reduce-scatter,\n"
            "alltoall), 1 (broadcast, reduce). wrong: elements of the collective's check\n"
            "that differ from their expected value (0 expected; any other makes the exit\n"
            "status 1).\n"
            "Settings of dcuda (DCUDA_RANKS, DCUDA_NET_LOOPBACK, ...): dcuda_info lists them.\n");
}

int bench_in_sweep(const sweep_t *w, size_t size)
{
    return !w->bounded || (size >= w->min && size <= w->max);
}

/* A whole number from lo to hi into *out: 0, or -1 after a message
 * naming `flag`. */
static int count_option(const char *flag, const char *value, long lo, long hi, const char *what,
                        int *out)
{
    char *end;
    long v = value && *value ? strtol(value, &end, 10) : -1;
    if (!value || !*value || *end || v < lo || v > hi) {
        fprintf(stderr, "bench: %s %s: %s from %ld to %ld\n", flag, value ? value : "", what, lo,
                hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* A size with an optional K, M or G (binary); 0 when it does not parse.
 * *rest is left after the size (at ':' in MIN:MAX). */
static size_t size_value(const char *text, const char **rest)
{
    char *end;
    if (!text || *text < '0' || *text > '9')
        return 0;
    unsigned long long v = strtoull(text, &end, 10);
    int shift = *end == 'K' || *end == 'k'   ? 10
                : *end == 'M' || *end == 'm' ? 20
                : *end == 'G' || *end == 'g' ? 30
                                             : 0;
    if (shift)
        end++;
    if (v > (unsigned long long)BENCH_MAX_SIZE)
        v = (unsigned long long)BENCH_MAX_SIZE + 1; /* out of range, whatever the suffix */
    *rest = end;
    return (size_t)v << shift;
}

/* -m MIN:MAX or -m MAX (MIN 4, or MAX when smaller); -b MIN; -e MAX. */
static int size_option(const char *flag, const char *value, sweep_t *w)
{
    const char *rest = "";
    size_t lo = w->min, hi = w->max;
    if (!strcmp(flag, "-b")) {
        lo = size_value(value, &rest);
    } else if (!strcmp(flag, "-e")) {
        hi = size_value(value, &rest);
    } else {
        hi = lo = size_value(value, &rest);
        if (*rest == ':' && lo)
            hi = size_value(rest + 1, &rest);
        else if (lo)
            lo = 4 < hi ? 4 : hi;
    }
    if (!value || *rest || lo < 1 || hi < 1 || hi > BENCH_MAX_SIZE) {
        fprintf(stderr, "bench: %s %s: sizes 1 <= MIN <= MAX <= %zu (K, M, G allowed)\n", flag,
                value ? value : "", (size_t)BENCH_MAX_SIZE);
        return -1;
    }
    w->min = lo, w->max = hi;
    return 0;
}

/* One count of --pairs: from 1, or "all"; -1 when it is neither. */
static long pair_count(const char *item, size_t n)
{
    char text[16], *end;
    if (n == 0 || n >= sizeof text)
        return -1;
    memcpy(text, item, n);
    text[n] = 0;
    if (!strcmp(text, "all"))
        return BENCH_PAIRS_ALL;
    long v = strtol(text, &end, 10);
    return *end || v < 1 || v > 1000000 ? -1 : v;
}

/* --pairs LIST: up to BENCH_MAX_PAIR_COUNTS counts, comma separated. */
static int pairs_option(const char *value, cmdline_t *c)
{
    int n = 0, good = value && *value;
    for (const char *p = value; good;) {
        size_t len = strcspn(p, ",");
        long v = pair_count(p, len);
        good = v >= 0 && n < BENCH_MAX_PAIR_COUNTS;
        if (good)
            c->pairs[n++] = (int)v;
        if (!p[len])
            break;
        p += len + 1; /* past the comma: an empty item after it is refused */
    }
    if (!good) {
        fprintf(stderr, "bench: --pairs %s: up to %d counts from 1 or 'all', comma separated\n",
                value ? value : "", BENCH_MAX_PAIR_COUNTS);
        return -1;
    }
    c->pair_counts = n;
    return 0;
}

enum {
    OPT_QUICK = 256,
    OPT_LATENCY,
    OPT_PEER,
    OPT_LOOP,
    OPT_COLLECTIVES,
    OPT_PAIRS,
    OPT_RATE,
    OPT_RANKS,
    OPT_OFFSET,
    OPT_CSV,
    OPT_SELF_TEST
};

static const struct option long_options[] = { { "help", no_argument, NULL, 'h' },
                                              { "quick", no_argument, NULL, OPT_QUICK },
                                              { "latency", no_argument, NULL, OPT_LATENCY },
                                              { "peer", no_argument, NULL, OPT_PEER },
                                              { "loop", no_argument, NULL, OPT_LOOP },
                                              { "collectives", no_argument, NULL, OPT_COLLECTIVES },
                                              { "pairs", required_argument, NULL, OPT_PAIRS },
                                              { "rate", no_argument, NULL, OPT_RATE },
                                              { "ranks", required_argument, NULL, OPT_RANKS },
                                              { "offset", required_argument, NULL, OPT_OFFSET },
                                              { "csv", required_argument, NULL, OPT_CSV },
                                              { "self-test", no_argument, NULL,
                                                OPT_SELF_TEST }, /* not in --help: for the tests */
                                              { NULL, 0, NULL, 0 } };

/* One option getopt_long found (value: its argument); 0, or -1 after a
 * message. */
static int take_option(int opt, const char *value, cmdline_t *c, int *warmup_set)
{
    char flag[3] = { '-', (char)opt, 0 };
    switch (opt) {
    case OPT_QUICK:
        c->quick = 1;
        return 0;
    case OPT_LATENCY:
        c->with_bandwidth = 0;
        return 0;
    case OPT_PEER:
        c->peer_only = 1;
        return 0;
    case OPT_LOOP:
        c->loop = 1;
        return 0;
    case OPT_COLLECTIVES:
        c->colls_only = 1;
        return 0;
    case OPT_RATE:
        c->rate_all = 1;
        return 0;
    case OPT_SELF_TEST:
        c->self_test = 1;
        return 0;
    case 'f':
        c->full = 1;
        return 0;
    case OPT_CSV:
        if (!value || !*value || *value == '-') {
            fprintf(stderr, "bench: --csv needs a file name\n");
            return -1;
        }
        c->csv_path = value;
        return 0;
    case OPT_PAIRS:
        return pairs_option(value, c);
    case OPT_RANKS:
        return count_option("--ranks", value, 2, 1 << 20, "ranks a device", &c->all_ranks);
    case OPT_OFFSET:
        return count_option("--offset", value, 0, 255, "bytes into the target's part",
                            &c->w.offset);
    case 't':
        return count_option(flag, value, 1, 1024, "threads a rank", &c->threads);
    case 'r':
        return count_option(flag, value, 1, BENCH_MAX_RUNS, "runs of a case", &c->runs);
    case 'i':
    case 'n':
        return count_option(flag, value, 1, 100000000, "timed rounds", &c->w.iters);
    case 'x':
    case 'w':
        *warmup_set = 1;
        return count_option(flag, value, 0, 100000000, "warm-up rounds", &c->w.warmup);
    case 'm':
    case 'b':
    case 'e':
        c->w.bounded = 1;
        return size_option(flag, value, &c->w);
    default:
        return -1;
    }
}

/* The arguments that are not dcuda's (--dcuda-*), argv[0] first: a copy
 * getopt_long may reorder. */
static char **own_arguments(int argc, char **argv, int *n)
{
    char **own = calloc((size_t)argc + 1, sizeof *own);
    *n = 0;
    for (int i = 0; own && i < argc; i++)
        if (i == 0 || strncmp(argv[i], "--dcuda-", 8) != 0)
            own[(*n)++] = argv[i];
    return own;
}

/* The message for what getopt_long refused: `opt` '?' (unknown) or ':'
 * (no value), the argument at argv[optind - 1]. */
static void refused(int opt, char **argv, int optind_now)
{
    const char *arg = optind_now > 0 ? argv[optind_now - 1] : "";
    char shortopt[3] = { '-', (char)optopt, 0 };
    const char *name = optopt > 0 && optopt < 128 ? shortopt : arg; /* a long option: its text */
    if (opt == ':')
        fprintf(stderr, "bench: %s needs a value\n", name);
    else
        fprintf(stderr, "bench: unknown option '%s'\n", name);
}

static int parse(int argc, char **argv, cmdline_t *c, int *warmup_set)
{
    int opt;
    opterr = 0; /* our own messages */
    optind = 1;
    while ((opt = getopt_long(argc, argv, ":hm:b:e:i:n:x:w:r:ft:", long_options, NULL)) != -1) {
        if (opt == 'h') {
            bench_usage(stdout);
            return 1;
        }
        if (opt == '?' || opt == ':') {
            refused(opt, argv, optind);
            return 2;
        }
        if (take_option(opt, optarg, c, warmup_set))
            return 2;
    }
    if (optind < argc) {
        fprintf(stderr, "bench: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (c->w.min > c->w.max) {
        fprintf(stderr, "bench: sizes %zu:%zu: sizes 1 <= MIN <= MAX <= %zu\n", c->w.min, c->w.max,
                (size_t)BENCH_MAX_SIZE);
        return 2;
    }
    return 0;
}

int bench_parse_options(int argc, char **argv, cmdline_t *c)
{
    int warmup_set = 0, n;
    *c = (cmdline_t){ .with_bandwidth = 1, .threads = 128, .w = { 4, 65536, 0, 0, 0, 0 } };
    c->pairs[0] = 1, c->pairs[1] = 32, c->pairs[2] = BENCH_PAIRS_ALL, c->pair_counts = 3;
    char **own = own_arguments(argc, argv, &n);
    if (!own) {
        fprintf(stderr, "bench: no memory for the arguments\n");
        return 2;
    }
    int r = parse(n, own, c, &warmup_set);
    free(own);
    if (r == 2)
        fprintf(stderr, "bench: dcuda_bench --help lists the options\n");
    if (r)
        return r;
    if (!c->w.iters)
        c->w.iters = c->quick ? 2000 : 100000;
    if (!warmup_set)
        c->w.warmup = c->w.iters / 10;
    if (!c->runs)
        c->runs = 1;
    return 0;
}
