/*
 * dcuda_scale: what one process holds and how long the collective steps
 * take, as the job grows. Run under mpirun, one process a node (with CPU
 * ranks on one host, DCUDA_NET_FORCE=1 makes every process a node of its
 * own); tools/scale.sh runs it over process counts and prints the table.
 *
 *   mpirun -np P dcuda_scale [-b BARRIERS] [-w WINDOWS] [-n MESSAGES] [-f FLOOD_MIB]
 *                            [--header]
 *
 * Prints one CSV row (process 0), the maximum over the processes unless
 * said: processes, ranks in WORLD, ranks a process, dcuda_host_init ms,
 * resident memory after init MiB (max and mean; the network engine's own
 * included), the growth of resident memory across the run MiB, WORLD
 * barrier us, WORLD window create + free us, notifications a process
 * sends per second through its proxy (mean), the bytes of the window
 * tables (WORLD's and DEVICE's, of the process's own ranks) a process
 * holds by the layout's rule, which GPU ranks keep in GPU memory, and the
 * flood: its time ms, and the peak of resident memory during the run
 * above that after init MiB (what a receiver held while its ranks sent
 * FLOOD_MIB each to the next process's ranks before consuming any). The
 * parts of other processes' ranks a proxy asked for are host memory,
 * within the resident memory.
 *
 * Last, resident memory at the end of the run split in two (MiB, max):
 * the network engine's (what MPI_Init added, and the engine's shared
 * memory segments mapped since: MPI's per-peer segments, any of UCX's),
 * and the rest above the program's start (dcuda's own, the program's, and
 * what an engine allocates inside dcuda_host_init: the UCX manager's
 * context, worker and endpoints).
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/shared/layout.h"
#include "scale.h"

DCUDA_KERNEL_DECLARE(scale);

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* A field of /proc/self/status in MiB ("VmRSS:"), or -1. */
static double status_mib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kib = -1.0;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0)
            kib = strtod(line + n, NULL);
    if (f)
        fclose(f);
    return kib < 0 ? -1.0 : kib / 1024.0;
}

/* Resident MiB of the shared mappings of files that are not dcuda's own
 * (its segments are memfds named dcuda-*): the engines' shared memory. */
static double engine_shared_mib(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512], perms[8];
    int shared = 0;
    double kib = 0.0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        int at = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &at) == 3 && at > 0) {
            const char *path = line + at;
            shared = perms[3] == 's' && path[0] == '/' && strncmp(path, "/memfd:dcuda", 12) != 0;
        } else if (shared && strncmp(line, "Rss:", 4) == 0) {
            kib += strtod(line + 4, NULL);
        }
    }
    if (f)
        fclose(f);
    return kib / 1024.0;
}

/* The peak of resident memory starts again from now (Linux 4.0 on; where
 * it cannot, the peak since the start is reported). */
static void reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

static int parse_count(const char *opt, const char *text, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < 0 || v > 1000000) {
        fprintf(stderr, "dcuda_scale: %s %s: expected a count 0..1000000\n", opt, text);
        return 0;
    }
    *out = (int)v;
    return 1;
}

typedef struct scale_opts {
    int barriers, windows, messages, flood_mib, header;
} scale_opts_t;

/* 1 on success; 0 after a message (bad option), 2 for --help. dcuda's own
 * --dcuda-* options are left for dcuda_host_init. */
static int parse_args(int argc, char **argv, scale_opts_t *o)
{
    *o = (scale_opts_t){ 200, 50, 2000, 0, 0 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int *target = !strcmp(a, "-b")   ? &o->barriers
                      : !strcmp(a, "-w") ? &o->windows
                      : !strcmp(a, "-n") ? &o->messages
                      : !strcmp(a, "-f") ? &o->flood_mib
                                         : NULL;
        if (target && i + 1 < argc) {
            if (!parse_count(a, argv[++i], target))
                return 0;
        } else if (!strcmp(a, "--header")) {
            o->header = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            return 2;
        } else if (strncmp(a, "--dcuda-", 8) != 0) {
            fprintf(stderr, "dcuda_scale: unknown option %s (try --help)\n", a);
            return 0;
        }
    }
    return 1;
}

static void usage(void)
{
    printf("usage: mpirun -np P dcuda_scale [-b BARRIERS] [-w WINDOWS] [-n MESSAGES] "
           "[-f FLOOD_MIB] [--header]\n"
           "  -b  WORLD barriers timed (200)\n"
           "  -w  WORLD window creations + frees timed (50)\n"
           "  -n  notifications each rank sends to the next process, in batches of %d each\n"
           "      waited for (2000)\n"
           "  -f  MiB of 4 KiB notified puts each rank sends to the next process before it\n"
           "      waits for any (0)\n"
           "  --header  print the CSV header line first\n",
           SCALE_BATCH);
}

static void print_row(const scale_opts_t *o, const dcuda_rank_info_t *info, const double *mx,
                      const double *sum)
{
    int p = info->process_count;
    /* The window tables: WORLD's (DCUDA_WIN_TABLE_SLOTS: its windows, then
     * NODE's and the splits') and DEVICE's (DCUDA_MAX_WINDOWS), x my ranks. */
    double tables = (double)(DCUDA_WIN_TABLE_SLOTS + DCUDA_MAX_WINDOWS) *
                    (double)info->rank_responsible * sizeof(dcuda_win_entry_t);
    double msgs = o->messages > 0 && mx[5] > 0 ? sum[6] / p : 0.0;
    if (o->header)
        printf("processes,world_ranks,ranks_per_process,init_ms,rss_mib_max,rss_mib_mean,"
               "run_growth_mib,barrier_us,window_us,msgs_per_s_per_process,window_tables_bytes,"
               "flood_ms,run_peak_mib,engine_mib,own_mib\n");
    printf("%d,%d,%d,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%.0f,%.0f,%.2f,%.2f,%.2f,%.2f\n", p,
           info->rank_count, info->rank_responsible, mx[0], mx[1], sum[1] / p, mx[2],
           o->barriers ? mx[3] * 1e3 / o->barriers : 0.0,
           o->windows ? mx[4] * 1e3 / o->windows : 0.0, msgs, tables, mx[7], mx[8], mx[9], mx[10]);
}

int main(int argc, char **argv)
{
    scale_opts_t o;
    int parsed = parse_args(argc, argv, &o), provided, me;
    if (parsed != 1) {
        if (parsed == 2)
            usage();
        return parsed == 2 ? 0 : 2;
    }
    double rss_start = status_mib("VmRSS:");
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    /* What MPI_Init added, its shared segments apart (counted at the end). */
    double engine_init = status_mib("VmRSS:") - rss_start - engine_shared_mib();
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    dcuda_host_h h;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_ms();
    if (dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(scale), 32, &h) != DCUDA_OK) {
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    double init_ms = now_ms() - t0;
    double rss_init = status_mib("VmRSS:");
    reset_peak();
    dcuda_rank_info_t info;
    dcuda_host_get_rank_info(h, &info);
    int uneven = info.rank_count != info.rank_responsible * info.process_count, any_uneven = 0;
    MPI_Allreduce(&uneven, &any_uneven, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_uneven) {
        if (me == 0)
            fprintf(stderr, "dcuda_scale: processes hold different rank counts: set DCUDA_RANKS\n");
        dcuda_host_finish(h);
        MPI_Finalize();
        return 2;
    }
    int flood = (int)((long)o.flood_mib * 1024 * 1024 / SCALE_FLOOD_PUT);
    scale_args_t a = { o.barriers, o.windows, o.messages, flood, NULL };
    size_t bytes = (size_t)info.rank_responsible * SCALE_PART;
    dcuda_status_t st = dcuda_host_alloc(h, bytes, (void **)&a.part);
    if (st == DCUDA_OK)
        st = dcuda_host_run(h, &a, sizeof a, NULL);
    const double *t = NULL;
    int count = 0;
    if (st == DCUDA_OK)
        st = dcuda_host_get_timings(h, &t, &count);
    if (st != DCUDA_OK || count != SCALE_TIMERS) {
        fprintf(stderr, "dcuda_scale: process %d: the run failed: %s\n", me, dcuda_status_name(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    double rss_end = status_mib("VmRSS:"), engine = engine_init + engine_shared_mib();
    double mine[11] = { init_ms,
                        rss_init,
                        rss_end - rss_init,
                        t[SCALE_T_BARRIER],
                        t[SCALE_T_WINDOW],
                        t[SCALE_T_MESSAGES],
                        0.0,
                        t[SCALE_T_FLOOD],
                        status_mib("VmHWM:") - rss_init,
                        engine,
                        rss_end - rss_start - engine };
    /* Notifications this process's ranks sent, per second of its span. */
    mine[6] = t[SCALE_T_MESSAGES] > 0
                  ? (double)o.messages * info.rank_responsible / (t[SCALE_T_MESSAGES] * 1e-3)
                  : 0.0;
    double mx[11], sum[11];
    MPI_Reduce(mine, mx, 11, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine, sum, 11, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        print_row(&o, &info, mx, sum);
    dcuda_host_free(h, a.part);
    dcuda_host_finish(h);
    MPI_Finalize();
    return 0;
}
