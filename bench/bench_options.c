/*
 * dcuda_bench's command line (bench_options.h): each option's reader
 * checks its value and names the rule it breaks; nothing runs after a bad
 * option (exit status 2).
 */
#include "bench_options.h"

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
            "  -m MIN:MAX       latency sweep sizes, powers of 2 (or -m MAX; default 4:65536;\n"
            "                   sizes take K, M, G: 1K = 1024)\n"
            "  -b MIN, -e MAX   the same bounds, as nccl-tests spells them\n"
            "  -i N, -n N       timed rounds of a latency case (default 100000, --quick 2000)\n"
            "  -x N, -w N       untimed warm-up rounds (default i / 10)\n"
            "  -r N             runs of each case (default 1; 10 with -f)\n"
            "  -f               each row's min, max, p50 and p99 over its runs beside the average\n"
            "                   (OSU's -f; nccl-tests' step factor is not offered: sizes double)\n"
            "  --pairs LIST     sender counts of the multi-pair peer bandwidth rows, comma\n"
            "                   separated, 'all' for every rank (default 1,32,all)\n"
            "  --rate           a message-rate row (Mmsg_per_s) beside every bandwidth row\n"
            "                   (default: at 8 B only)\n"
            "  --ranks N        the rows of every rank a device holds run on N ranks a\n"
            "                   device instead (from 2; at most what the device holds)\n"
            "  --offset N       the peer latency rows' puts land N bytes into the target's\n"
            "                   part (0 to 255, default 0): the destination's alignment\n"
            "  -t N             threads a rank (default 128)\n"
            "  --csv FILE       also write the rows as CSV (or --csv=FILE)\n"
            "  -h, --help       this text\n"
            "GBps is bytes moved / time: nccl-tests' algbw, and its busbw too for a put\n"
            "between two ranks (bus factor 1).\n"
            "Settings of dcuda (DCUDA_RANKS, DCUDA_NET_LOOPBACK, ...): dcuda_info lists them.\n");
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

/* A flag without a value; 1 if it is one. */
static int flag_option(const char *a, cmdline_t *c)
{
    int *which = !strcmp(a, "--quick")  ? &c->quick
                 : !strcmp(a, "--peer") ? &c->peer_only
                 : !strcmp(a, "--loop") ? &c->loop
                 : !strcmp(a, "-f")     ? &c->full
                 : !strcmp(a, "--rate") ? &c->rate_all
                 : !strcmp(a, "--collectives") ? &c->colls_only
                                        : NULL;
    if (which)
        *which = 1;
    else if (!strcmp(a, "--latency"))
        c->with_bandwidth = 0;
    return which || !strcmp(a, "--latency");
}

/* An option with a value (next, consumed by the caller); 0 done, -1 bad,
 * 1 not such an option. */
static int value_option(const char *a, const char *next, cmdline_t *c, int *warmup_set)
{
    if (!strcmp(a, "--csv")) {
        if (!next || !*next) {
            fprintf(stderr, "bench: --csv needs a file name\n");
            return -1;
        }
        c->csv_path = next;
        return 0;
    }
    if (!strcmp(a, "-t"))
        return count_option(a, next, 1, 1024, "threads a rank", &c->threads);
    if (!strcmp(a, "-r"))
        return count_option(a, next, 1, BENCH_MAX_RUNS, "runs of a case", &c->runs);
    if (!strcmp(a, "-i") || !strcmp(a, "-n"))
        return count_option(a, next, 1, 100000000, "timed rounds", &c->w.iters);
    if (!strcmp(a, "-x") || !strcmp(a, "-w")) {
        *warmup_set = 1;
        return count_option(a, next, 0, 100000000, "warm-up rounds", &c->w.warmup);
    }
    if (!strcmp(a, "-m") || !strcmp(a, "-b") || !strcmp(a, "-e"))
        return size_option(a, next, &c->w);
    if (!strcmp(a, "--pairs"))
        return pairs_option(next, c);
    if (!strcmp(a, "--ranks"))
        return count_option(a, next, 2, 1 << 20, "ranks a device", &c->all_ranks);
    if (!strcmp(a, "--offset"))
        return count_option(a, next, 0, 255, "bytes into the target's part", &c->w.offset);
    return 1;
}

int bench_parse_options(int argc, char **argv, cmdline_t *c)
{
    int warmup_set = 0;
    *c = (cmdline_t){ .with_bandwidth = 1, .threads = 128, .w = { 4, 65536, 0, 0 } };
    c->pairs[0] = 1, c->pairs[1] = 32, c->pairs[2] = BENCH_PAIRS_ALL, c->pair_counts = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            bench_usage(stdout);
            return 1;
        } else if (!strncmp(a, "--csv=", 6) && a[6]) {
            c->csv_path = a + 6;
        } else if (!strncmp(a, "--pairs=", 8)) {
            bad = pairs_option(a + 8, c) != 0;
        } else if (!flag_option(a, c) && strncmp(a, "--dcuda-", 8) != 0) {
            int r = value_option(a, next, c, &warmup_set);
            if (r == 1)
                fprintf(stderr, "bench: unknown option '%s'\n", a);
            bad = r != 0, i++;
        }
        if (bad) {
            fprintf(stderr, "bench: dcuda_bench --help lists the options\n");
            return 2;
        }
    }
    if (c->w.min > c->w.max) {
        fprintf(stderr, "bench: sizes %zu:%zu: sizes 1 <= MIN <= MAX <= %zu\n", c->w.min, c->w.max,
                (size_t)BENCH_MAX_SIZE);
        fprintf(stderr, "bench: dcuda_bench --help lists the options\n");
        return 2;
    }
    if (!c->w.iters)
        c->w.iters = c->quick ? 2000 : 100000;
    if (!warmup_set)
        c->w.warmup = c->w.iters / 10;
    if (!c->runs)
        c->runs = c->full ? 10 : 1;
    return 0;
}
