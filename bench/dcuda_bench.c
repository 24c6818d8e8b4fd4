/*
 * dcuda_bench: latency and bandwidth of notified RMA between ranks of one
 * device (GPU blocks, or CPU threads without a GPU) and between processes
 * (one device each). Prints one table (bench_report.c: a head with the
 * versions, then rows of avg, min, max, p50, p99 over n samples, and for
 * the collectives algbw, busbw and the wrong elements of their check);
 * its options (bench_options.c, --help) follow the OSU micro-benchmarks
 * (-m, -i, -x, -f, -r) with nccl-tests' spellings beside them (-b, -e,
 * -n, -w); --pairs sets the multi-pair rows' sender counts, --rate adds a
 * rate beside every bandwidth and collective row, --csv FILE also writes
 * the rows as CSV (the head as "# key: value" lines). --loop runs the
 * peer rows in one process, between the halves of its ranks (with
 * DCUDA_NET_LOOPBACK=1 they then take the whole network path: proxies and
 * manager, on one GPU). --dcuda-<name>=<value> arguments go to dcuda; any
 * other option is refused (exit status 2).
 *
 * A latency row's samples are single rounds' times (a ping-pong's round
 * trip / 2, a get, a call), kept by the rank that starts them; a
 * bandwidth or rate row's are one value a run (its device timer span).
 * -m bounds every sweep once given (bench_in_sweep).
 *
 *   latency    ping-pong between device ranks 0 and 1 (one-way = round trip / 2):
 *              4 B notified put and notification with 2 ranks and with every
 *              rank the device holds (the idle ones waiting in a barrier),
 *              and notified puts over the sizes of -m (the 4 B rows pass
 *              the size as a constant, as code putting one value does; the
 *              sweep passes it at run time, which costs a few 0.01 us)
 *   host       round trips from rank 0 to the host runtime through its
 *              command queue (the path remote operations take)
 *   bandwidth  back-to-back notified puts of 8 B .. 4 MiB from rank 0 to 1,
 *              and from every rank r to r+1 at once (bytes copied / time);
 *              rate: the same runs in messages per second (the smallest
 *              size, or every size with --rate)
 *   runtime    (no thesis counterpart) barrier of the device and of WORLD,
 *              window creation + free, put + flush: microseconds a call
 *              (the WORLD ones timed as the collectives, bench_world.c)
 *   get        rank 0's blocking gets of rank 1's bytes over the sizes of
 *              -m (rows `get`: a get is a round trip, and the rows say so)
 *   collective allreduce and reduce (sum of floats; the reduce's root the
 *              last rank) and broadcast over WORLD at 8 B, 1 KiB and 64 KiB,
 *              the allreduces and the broadcast also at 1 MiB, the
 *              broadcast at 4 MiB;
 *              allgather, reduce-scatter and alltoall of 8 B and 1 KiB a
 *              rank (a block); every rank of every process: microseconds
 *              a call, each call done at every rank before the next
 *              (bench_world.c), and rate rows of the same calls back to
 *              back; beside them the collectives a user writes with
 *              dcuda_put_notify; every collective's run checks one call
 *              on known data first: allreduce_ring_user (a ring, as
 *              docs/limitations.md advises for large reductions),
 *              reduce_scatter_ring_user (its first half),
 *              broadcast_flat_user (rank 0 puts to every rank; it returns
 *              once its puts went, so back to back calls overlap: its
 *              rate row), allgather_ring_user
 *              (a ring) and alltoall_direct_user (a put to every rank)
 *   peer       with 2+ processes (several GPUs, mpirun, DCUDA_PROCESSES with
 *              CPU ranks): rows named peer_*, between processes 0 and 1
 *              (see peer_section below), and peer_world_barrier and
 *              peer_<collective> with one rank a process at 8 B, 4 KiB and
 *              256 KiB, the allreduces also at 4 MiB, the broadcast at 4
 *              and 16 MiB (the first three
 *              the sizes dcuda_ref_nvshmem's block-scoped
 *              collectives run at); otherwise one line says why not
 *
 * Like every dcuda program it runs SPMD: each process makes the same host
 * calls and runs the same cases; only process 0 prints. With several
 * processes the same-device rows are measured on process 0's device alone
 * (the other processes run those cases with BENCH_IDLE), so they mean the
 * same as in a single-process run; DCUDA_RANKS counts ranks per device.
 * Each family of cases has its kernel (bench_kernel.c) and its hosts: one
 * of 2 ranks, one of every rank the device holds with that kernel (the
 * rows' rank counts say how many), so a change to one family's code moves
 * no other's rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_host.h"
#include "bench_options.h"
#include "bench_report.h"
#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_rank.h"

DCUDA_KERNEL_DECLARE(bench_latency);
DCUDA_KERNEL_DECLARE(bench_bandwidth);
DCUDA_KERNEL_DECLARE(bench_runtime);
DCUDA_KERNEL_DECLARE(bench_peer);
DCUDA_KERNEL_DECLARE(bench_get);

#define BENCH_ONE_RANK_SPAN ((size_t)256 << 20)
#define BENCH_BW_MAX_SIZE ((size_t)4 << 20) /* the same-device bandwidth sweep's largest */
#define BENCH_MAX_SAMPLES (1 << 18)         /* rounds' times a row keeps (then every k-th) */

static FILE *csv;
static int quiet;  /* not process 0: print no rows */
static int idling; /* not process 0 of several: same-device cases run idle */
static int process;
static int family; /* enum bench_family of the open host's kernel */

static int runs_per_case = 1; /* -r */
static int rate_all;          /* --rate */
static int any_wrong;         /* a check found a wrong element: exit status 1 */

static long long *device_out;                 /* bench_args.out of the open host */
static long long kept[1 + BENCH_MAX_SAMPLES]; /* its copy */
static double samples[BENCH_MAX_SAMPLES + BENCH_MAX_RUNS], spans[BENCH_MAX_RUNS];

int bench_rate_every_size(void) { return rate_all; }

/* The rounds' times a run kept (`a` as it ran) and its check's count, into *r. */
static void collect(dcuda_host_h h, const bench_args_t *a, bench_result_t *r)
{
    const int check = bench_world_mode(a->mode) && bench_check_of(a->mode) != BENCH_CHECK_NONE;
    int n = bench_records(a->mode, a->sync) && a->iters > 0 ? (a->iters - 1) / a->every + 1 : 0;
    if (n > BENCH_MAX_SAMPLES + BENCH_MAX_RUNS - r->n)
        n = BENCH_MAX_SAMPLES + BENCH_MAX_RUNS - r->n;
    if ((!n && !check) ||
        dcuda_host_copy_out(h, kept, device_out, sizeof kept[0] * (size_t)(1 + n)) != DCUDA_OK)
        return;
    for (int i = 0; i < n; i++)
        samples[r->n++] = (double)kept[1 + i];
    if (check && kept[0] > r->wrong)
        r->wrong = kept[0];
}

/* Runs one configuration; returns this device's timer span in ms, or -1. */
static double run_case(dcuda_host_h h, const bench_args_t *args, bench_result_t *r)
{
    const double *t;
    int n = 0;
    bench_args_t a = *args;
    if (bench_family_of(a.mode) != family) {
        fprintf(stderr, "bench: mode %d is not run by kernel family %d\n", a.mode, family);
        return -1;
    }
    if (idling && bench_device_only(a.mode))
        a.mode = BENCH_IDLE;
    /* Every k-th round when the runs' rounds are more than a row keeps. */
    long total = (long)a.iters * runs_per_case;
    a.every = total > BENCH_MAX_SAMPLES ? (int)((total - 1) / BENCH_MAX_SAMPLES + 1) : 1;
    a.out = device_out;
    dcuda_status_t st = dcuda_host_run(h, &a, sizeof a, NULL);
    if (st == DCUDA_OK)
        st = dcuda_host_get_timings(h, &t, &n);
    if (st != DCUDA_OK || n < 1) {
        fprintf(stderr, "bench: process %d: mode %d: run failed: %s %s\n", process, a.mode,
                dcuda_status_string(st), dcuda_host_last_error(h));
        return -1;
    }
    if (!quiet)
        collect(h, &a, r);
    return t[0];
}

int bench_measure(dcuda_host_h h, const bench_args_t *args, bench_result_t *r)
{
    int good = 1;
    *r = (bench_result_t){ samples, 0, spans, 0, -1 };
    for (int i = 0; i < runs_per_case; i++) {
        double ms = run_case(h, args, r);
        good &= ms > 0;
        if (ms > 0)
            spans[r->runs++] = ms;
    }
    return good && r->runs > 0;
}

static void emit(bench_row_t *row, double *v, int n)
{
    if (quiet || bench_stats(v, n, &row->s))
        return;
    bench_row_print(stdout, csv, row);
}

void bench_report_rounds(const char *kind, const char *what, int ranks, size_t bytes,
                         const char *unit, const bench_result_t *r, double scale)
{
    bench_row_t row = { kind, what, ranks, bytes, unit, { 0 }, -1, -1, r->wrong };
    if (!quiet && r->n < 1)
        fprintf(stderr, "bench: %s %zu B: no round was timed\n", what, bytes);
    for (int i = 0; i < r->n; i++)
        r->ns[i] *= scale;
    emit(&row, r->ns, r->n);
}

void bench_report_runs(const char *kind, const char *what, int ranks, size_t bytes,
                       const char *unit, const bench_result_t *r, double k, int per)
{
    double v[BENCH_MAX_RUNS];
    bench_row_t row = { kind, what, ranks, bytes, unit, { 0 }, -1, -1, -1 };
    for (int i = 0; i < r->runs; i++)
        v[i] = per ? k / r->ms[i] : k * r->ms[i];
    emit(&row, v, r->runs);
}

void bench_report_collective(const char *what, int mode, int ranks, size_t bytes,
                             const bench_result_t *r)
{
    bench_row_t row = { "collective", what, ranks, bytes, "latency_us", { 0 }, -1, -1, r->wrong };
    if (quiet)
        return;
    if (r->wrong != 0) {
        any_wrong = 1;
        fprintf(stderr, "bench: %s of %zu B on %d ranks: %lld wrong element(s)%s\n", what, bytes,
                ranks, r->wrong, r->wrong < 0 ? " (no check ran)" : "");
    }
    for (int i = 0; i < r->n; i++)
        r->ns[i] *= 1e-3;
    if (bench_stats(r->ns, r->n, &row.s))
        return;
    double factor = bench_bus_factor(mode, ranks);
    if (factor >= 0 && row.s.avg > 0) { /* bytes / us / 1e3 = GB/s */
        row.algbw = bench_alg_bytes(mode, bytes, ranks) / (row.s.avg * 1e3);
        row.busbw = row.algbw * factor;
    }
    bench_row_print(stdout, csv, &row);
}

/* The kernel of a family of cases (bench_kernel.c). */
static dcuda_kernel_t family_kernel(int f)
{
    switch (f) {
    case BENCH_FAMILY_LATENCY:
        return DCUDA_KERNEL_REF(bench_latency);
    case BENCH_FAMILY_BANDWIDTH:
        return DCUDA_KERNEL_REF(bench_bandwidth);
    case BENCH_FAMILY_RUNTIME:
        return DCUDA_KERNEL_REF(bench_runtime);
    case BENCH_FAMILY_GET:
        return DCUDA_KERNEL_REF(bench_get);
    default:
        return DCUDA_KERNEL_REF(bench_peer);
    }
}

/* Opens a host running family f's kernel on `ranks` ranks a device ("0":
 * as many as it holds with that kernel). */
static dcuda_status_t open_host(int argc, char **argv, const char *ranks, int threads, int f,
                                dcuda_host_h *h, dcuda_rank_info_t *info)
{
    char opt[64];
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args)
        return DCUDA_ERR_NO_MEMORY;
    for (int i = 0; i < argc; i++)
        args[i] = argv[i];
    snprintf(opt, sizeof opt, "--dcuda-ranks=%s", ranks);
    args[argc] = opt; /* after the user's arguments: wins over them */
    dcuda_status_t st = dcuda_host_init(argc + 1, args, family_kernel(f), threads, h);
    free(args);
    if (st == DCUDA_OK)
        st = dcuda_host_get_rank_info(*h, info);
    family = f;
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

/* Timed rounds of a ping-pong of `size`: the asked-for count up to 1 KiB,
 * proportionally fewer above, at least 100. */
static int rounds_for(const sweep_t *w, size_t size)
{
    long it = size <= 1024 ? w->iters : (long)w->iters * 1024 / (long)size;
    return it < 100 ? 100 : (int)it;
}

/* A latency row for each size of -m, a->mode's case (`what`, `unit`):
 * a timed round is `legs` of what a row gives (2: a ping-pong's two
 * one-way trips; 1: a get's round trip). */
static void sweep_sizes(dcuda_host_h h, bench_args_t *a, int ranks, const sweep_t *w,
                        const char *what, const char *unit, int legs)
{
    for (size_t size = w->min; size <= w->max; size *= 2) {
        a->size = size;
        a->iters = rounds_for(w, size);
        a->warmup = w->warmup < a->iters ? w->warmup : a->iters;
        bench_result_t r;
        if (bench_measure(h, a, &r))
            bench_report_rounds("latency", what, ranks, size, unit, &r, 1e-3 / legs);
    }
}

/* The same-device rows over the sizes of -m of `mode` between device
 * ranks 0 and 1 (2 ranks). */
static void device_sweep(dcuda_host_h h, const sweep_t *w, int mode, const char *what,
                         const char *unit, int legs)
{
    bench_args_t a = { 0 };
    if (alloc_buffers(h, &a, 2, w->max > 256 ? w->max : 256))
        return;
    a.mode = mode;
    a.peer = 1;
    sweep_sizes(h, &a, 2, w, what, unit, legs);
    dcuda_host_free(h, a.src);
    dcuda_host_free(h, a.dst);
}

/* Ping-pong latency of notified puts over the sizes of -m (2 ranks). */
static void latency_sweep(dcuda_host_h h, const sweep_t *w)
{
    device_sweep(h, w, BENCH_PINGPONG_PUT, "notified_put", "one_way_us", 2);
}

/* The same-device get rows (2 ranks): rank 0's blocking gets of rank 1;
 * and its fetch-adds on an 8-byte word of rank 1 (one size). */
static void device_gets(dcuda_host_h h, const sweep_t *w)
{
    device_sweep(h, w, BENCH_GET, "get", "round_trip_us", 1);
    sweep_t word = *w;
    word.min = word.max = 8;
    device_sweep(h, &word, BENCH_ATOMIC, "atomic_fetch_add", "round_trip_us", 1);
}

/* Microseconds a barrier, a window creation + free and (2 ranks) a put of
 * 8 B + flush take, with every rank taking part. */
static void runtime_calls(dcuda_host_h h, int ranks, int iters)
{
    bench_args_t a = { 0 };
    if (alloc_buffers(h, &a, ranks, 256))
        return;
    static const struct {
        int mode;
        const char *what;
    } calls[] = { { BENCH_BARRIER, "device_barrier" },
                  { BENCH_WIN_CREATE, "win_create_free" },
                  { BENCH_PUT_FLUSH, "put_8B_flush" } };
    for (int c = 0; c < 3; c++) {
        if (calls[c].mode == BENCH_PUT_FLUSH && ranks != 2)
            continue;
        a.mode = calls[c].mode;
        a.iters = calls[c].mode == BENCH_WIN_CREATE ? iters / 10 + 1 : iters;
        a.size = 8;
        bench_result_t r;
        if (bench_measure(h, &a, &r))
            bench_report_rounds("runtime", calls[c].what, ranks,
                                a.size * (calls[c].mode == BENCH_PUT_FLUSH), "us_per_call", &r,
                                1e-3);
    }
    dcuda_host_free(h, a.src);
    dcuda_host_free(h, a.dst);
}

/* The sizes of the WORLD collectives (bench_world.c): rows of one device
 * and of a whole WORLD; and between the processes, one rank each, at
 * sizes that dcuda_ref_nvshmem measures too. */
static const size_t world_sizes[] = { 8, 1024, 65536, 1048576, 4194304 };
static const size_t peer_sizes[] = { 8, 4096, 262144, 4194304, 16777216 };

static void latency(dcuda_host_h h, int ranks, const sweep_t *w, const char *label)
{
    bench_args_t a = { 0 };
    int iters = w->iters;
    if (alloc_buffers(h, &a, ranks, 256))
        return;
    a.iters = iters;
    a.warmup = w->warmup;
    a.peer = 1;
    a.size = 0; /* 4 bytes, the size a constant in the rank code */
    for (int mode = BENCH_PINGPONG_PUT; mode <= BENCH_PINGPONG_NOTIFY; mode++) {
        a.mode = mode;
        bench_result_t r;
        char what[64];
        snprintf(what, sizeof what, "%s%s",
                 mode == BENCH_PINGPONG_PUT ? "notified_put_4B" : "notify", label);
        if (bench_measure(h, &a, &r))
            bench_report_rounds("latency", what, ranks, mode == BENCH_PINGPONG_PUT ? 4 : 0,
                                "one_way_us", &r, 0.5e-3);
    }
    dcuda_host_free(h, a.src);
    dcuda_host_free(h, a.dst);
}

static void host_round_trip(dcuda_host_h h, int iters)
{
    bench_args_t a = { 0 };
    if (alloc_buffers(h, &a, 2, 256))
        return;
    a.mode = BENCH_HOST_PING;
    a.iters = iters;
    bench_result_t r;
    if (bench_measure(h, &a, &r))
        bench_report_rounds("host", "command_queue_ping", 1, 0, "round_trip_us", &r, 1e-3);
    dcuda_host_free(h, a.src);
    dcuda_host_free(h, a.dst);
}

/* The bandwidth row of one case and, at the sweep's first size or with
 * --rate, its message rate: `msgs` notified puts of `size` bytes from
 * `senders` ranks. */
static void report_bandwidth(const char *what, int senders, size_t size, double msgs,
                             const bench_result_t *r, int first)
{
    bench_report_runs("bandwidth", what, senders, size, "GBps", r, msgs * (double)size / 1e6, 1);
    if (first || rate_all)
        bench_report_runs("rate", what, senders, size, "Mmsg_per_s", r, msgs / 1e3, 1);
}

/* Back-to-back notified puts of 8 B .. 4 MiB (within -m): from rank 0 to
 * 1, or (`all`) from every rank r to r + 1. */
static void bandwidth(dcuda_host_h h, int ranks, int all, double total_bytes, const sweep_t *w)
{
    bench_args_t a = { 0 };
    size_t max = BENCH_BW_MAX_SIZE;
    int first = 1;
    if (all && (double)ranks * (double)max > 8e9)
        max = (size_t)(8e9 / ranks) & ~(size_t)4095;
    /* One sender cycles through 256 MiB (several times the L2). */
    if (alloc_buffers(h, &a, ranks, all ? max : BENCH_ONE_RANK_SPAN))
        return;
    a.mode = all ? BENCH_BW_ALL : BENCH_BW_ONE;
    for (size_t size = 8; size <= max; size *= 2) {
        if (!bench_in_sweep(w, size))
            continue;
        double senders = all ? ranks : 1;
        double it = total_bytes / (senders * (double)size);
        a.iters = it < 20 ? 20 : it > 20000 ? 20000 : (int)it;
        a.size = size;
        bench_result_t r;
        if (bench_measure(h, &a, &r))
            report_bandwidth(all ? "put_all_ranks" : "put_one_rank", all ? ranks : 1, size,
                             senders * a.iters, &r, first);
        first = 0;
    }
    dcuda_host_free(h, a.src);
    dcuda_host_free(h, a.dst);
}

/* ---- peer section: between processes 0 and 1 ------------------------------
 *
 * latency    ping-pong between WORLD rank 0 and the first rank of process 1,
 *            put_notify over the sizes of -m and notify only; one-way =
 *            round trip / 2; with the pair alone (one rank a process, as
 *            the anchors' one block a GPU), and with every rank the
 *            device holds, the others waiting in a barrier (rows
 *            *_busy_device, as the same-device rows); and rank 0's
 *            blocking gets of the other's bytes over the same sizes (rows
 *            peer_get*, round trips)
 * bandwidth  the first K ranks of process 0 put back-to-back to the first K
 *            of process 1 (WORLD rank r -> r + ranks of process 0), K = 1, 32
 *            and all; the receivers acknowledge the last put, so process 0's
 *            span covers the arrival of every byte; GB/s = bytes moved / span
 *
 * Every process runs every case (SPMD: the same host_run calls everywhere);
 * a case that does not fit (K = 32 with fewer pairs, a size above a sender's
 * share of the buffers) runs with no rank active and prints nothing, so the
 * number of runs never depends on what one process knows. Processes 0 and 1
 * must agree on K: with two processes each knows both rank counts; with more,
 * processes 1.. are assumed to hold equal numbers (one GPU model, one
 * DCUDA_RANKS). Processes 2.. only take part in the collectives. */

typedef struct peer_setup {
    int side;      /* enum bench_side of this process */
    int first1;    /* WORLD rank of process 1's first rank (= ranks of process 0) */
    int pairs;     /* ranks that can take part on each side */
    size_t budget; /* bytes of src and of dst per process */
    double total;  /* bytes per bandwidth case */
    int max_iters, max_msgs;
} peer_setup_t;

#define PEER_MAX_SIZE ((size_t)64 << 20)

static peer_setup_t peer_setup(const dcuda_rank_info_t *info, int quick)
{
    peer_setup_t p = { 0 };
    int world = info->rank_count, procs = info->process_count;
    int r0, r1;
    if (procs == 1) { /* --loop: the halves of my ranks */
        p.side = BENCH_SIDE_HALVES;
        r0 = r1 = info->rank_responsible / 2;
    } else if (info->process_index == 0) {
        p.side = BENCH_SIDE_SEND;
        r0 = info->rank_responsible;
        r1 = (world - r0) / (procs - 1);
    } else {
        p.side = info->process_index == 1 ? BENCH_SIDE_ANSWER : BENCH_SIDE_NONE;
        r0 = info->rank_start; /* process 1's first rank; a guess on processes 2.. (unused) */
        r1 = procs == 2 ? info->rank_responsible : (world - r0) / (procs - 1);
        if (p.side == BENCH_SIDE_ANSWER && info->rank_responsible < r1)
            fprintf(stderr, "bench: process 1 holds %d ranks, fewer than process 0 expects (%d)\n",
                    info->rank_responsible, r1);
    }
    p.first1 = r0;
    p.pairs = r0 < r1 ? r0 : r1;
    int gpu = strcmp(info->backend, "cpu") != 0;
    /* GPU: 4 GiB each of src and dst, so one sender walks far beyond L2 and
     * each of ~2000 ranks still gets 1 MiB puts; CPU ranks share a few cores
     * and the memory: 64 MiB. */
    p.budget = gpu ? (size_t)4 << 30 : (size_t)64 << 20;
    p.total = (gpu ? 4e9 : 1e9) / (quick ? 16 : 1);
    p.max_iters = quick ? 2000 : 20000;
    p.max_msgs = quick ? 50000 : 400000; /* per case, over all senders */
    return p;
}

/* Buffer shares a sender needs: 2 when both sides are in this process. */
static int halves(const peer_setup_t *p) { return p->side == BENCH_SIDE_HALVES ? 2 : 1; }

static void peer_latency(dcuda_host_h h, const peer_setup_t *p, int ranks, const sweep_t *w,
                         const char *suffix)
{
    char put_name[64], notify_name[64];
    snprintf(put_name, sizeof put_name, "peer_notified_put%s", suffix);
    snprintf(notify_name, sizeof notify_name, "peer_notify%s", suffix);
    bench_args_t a = { 0 };
    a.peer = p->first1;
    a.side = p->side;
    a.senders = 1;
    a.offset = (size_t)w->offset;
    if (alloc_buffers(h, &a, halves(p), (w->max > 256 ? w->max : 256) + 256))
        return;
    for (size_t size = w->min;; size *= 2) {
        int notify = size > w->max; /* the last case: notify only */
        a.mode = notify ? BENCH_PEER_PINGPONG_NOTIFY : BENCH_PEER_PINGPONG_PUT;
        a.size = notify ? 0 : size;
        a.iters = rounds_for(w, a.size);
        a.warmup = w->warmup < a.iters ? w->warmup : a.iters;
        bench_result_t r;
        if (bench_measure(h, &a, &r))
            bench_report_rounds("latency", notify ? notify_name : put_name, ranks, a.size,
                                "one_way_us", &r, 0.5e-3);
        if (notify)
            break;
    }
    dcuda_host_free(h, a.src);
    dcuda_host_free(h, a.dst);
}

/* The peer get rows: the sending side's first rank gets of the other's;
 * and its fetch-adds of 1 on the other's first 8-byte word (one size). */
static void peer_gets(dcuda_host_h h, const peer_setup_t *p, int ranks, const sweep_t *w,
                      const char *suffix)
{
    char name[64];
    bench_args_t a = { 0 };
    a.peer = p->first1;
    a.side = p->side;
    a.senders = 1;
    if (alloc_buffers(h, &a, halves(p), w->max > 256 ? w->max : 256))
        return;
    a.mode = BENCH_PEER_GET;
    snprintf(name, sizeof name, "peer_get%s", suffix);
    sweep_sizes(h, &a, ranks, w, name, "round_trip_us", 1);
    sweep_t word = *w;
    word.min = word.max = 8;
    a.mode = BENCH_PEER_ATOMIC;
    snprintf(name, sizeof name, "peer_atomic_fetch_add%s", suffix);
    sweep_sizes(h, &a, ranks, &word, name, "round_trip_us", 1);
    dcuda_host_free(h, a.src);
    dcuda_host_free(h, a.dst);
}

/* Rounds of K notified puts of `size`: enough to move p->total bytes, at
 * most max_iters per sender and max_msgs in all, at least 4. */
static int peer_iters(const peer_setup_t *p, int k, size_t size)
{
    double it = p->total / ((double)k * (double)size);
    if (it > p->max_iters)
        it = p->max_iters;
    if (it > (double)p->max_msgs / k)
        it = (double)p->max_msgs / k;
    return it < 4 ? 4 : (int)it;
}

/* The name of the multi-pair rows of k senders a side (k = 0: all). */
static void pair_rows_name(char *out, size_t size, int k)
{
    if (k == BENCH_PAIRS_ALL)
        snprintf(out, size, "peer_put_all_ranks");
    else
        snprintf(out, size, "peer_put_%d_rank%s", k, k == 1 ? "" : "s");
}

/* Multi-pair bandwidth (and message rate): for each count k of --pairs,
 * the first k ranks of each side put back-to-back at once. */
static void peer_bandwidth(dcuda_host_h h, const peer_setup_t *p, const int *pairs, int counts,
                           const sweep_t *w)
{
    bench_args_t a = { 0 };
    a.mode = BENCH_PEER_BW;
    a.peer = p->first1;
    a.side = p->side;
    if (alloc_buffers(h, &a, 1, p->budget))
        return;
    for (int j = 0; j < counts; j++) {
        int k = pairs[j] == BENCH_PAIRS_ALL ? p->pairs : pairs[j];
        int fits = k >= 1 && k <= p->pairs;
        char what[64];
        pair_rows_name(what, sizeof what, pairs[j]);
        /* Each sender has its own share of both buffers, a whole number of 4 KiB. */
        a.stride = fits ? p->budget / (size_t)(k * halves(p)) & ~(size_t)4095 : 0;
        /* 8 B, then powers of 4 from 64 B to 64 MiB (within -m, which every
         * process knows alike). */
        int first = 1;
        for (size_t size = 8; size <= PEER_MAX_SIZE; size = size == 8 ? 64 : size * 4) {
            if (!bench_in_sweep(w, size))
                continue;
            int run = fits && size <= a.stride;
            a.senders = run ? k : 0; /* 0: nobody active, the run only keeps step */
            a.size = size;
            a.iters = run ? peer_iters(p, k, size) : 0;
            bench_result_t r;
            if (bench_measure(h, &a, &r) && run)
                report_bandwidth(what, k, size, (double)k * a.iters, &r, first);
            first = 0;
        }
    }
    dcuda_host_free(h, a.src);
    dcuda_host_free(h, a.dst);
}

static void peer_skipped(void)
{
    if (!quiet)
        printf("# peer rows skipped: 1 process (they need 2+: several GPUs visible, "
               "mpirun -np 2+, or DCUDA_PROCESSES=2+ with CPU ranks)\n");
}

/* The peer latency rows of the pair alone (a host of one rank a process). */
static void peer_pair(dcuda_host_h h, const dcuda_rank_info_t *info, int quick, const sweep_t *w)
{
    peer_setup_t p = peer_setup(info, quick);
    peer_latency(h, &p, info->rank_count, w, "");
}

/* The peer rows of a host of every rank the device holds: latency with the
 * device busy, bandwidth. */
static void peer_section(dcuda_host_h h, const dcuda_rank_info_t *info, const cmdline_t *c)
{
    peer_setup_t p = peer_setup(info, c->quick);
    for (int j = 0; c->with_bandwidth && !quiet && j < c->pair_counts; j++) {
        char what[64];
        pair_rows_name(what, sizeof what, c->pairs[j]);
        if (c->pairs[j] > p.pairs)
            printf("# %s skipped: only %d rank(s) per side\n", what, p.pairs);
    }
    peer_latency(h, &p, info->rank_count, &c->w, "_busy_device");
    if (c->with_bandwidth)
        peer_bandwidth(h, &p, c->pairs, c->pair_counts, &c->w);
}

/* What every host of the run is opened with. */
typedef struct bench_opts {
    int argc;
    char **argv;
    int threads;
    const char *csv_path;
    sweep_t w;
} bench_opts_t;

/* The table's head (process 0; once, after the first host tells what runs). */
static void print_head(const bench_opts_t *o, const dcuda_rank_info_t *info)
{
    char run[320];
    if (quiet)
        return;
    if (o->csv_path && !(csv = fopen(o->csv_path, "w")))
        fprintf(stderr, "bench: cannot write %s\n", o->csv_path); /* go on: the others expect us */
    snprintf(run, sizeof run,
             "%d rounds (%d warm-up) a latency case, sizes %zu..%zu (%s); %d run(s) a case%s",
             o->w.iters, o->w.warmup, o->w.min, o->w.max,
             o->w.bounded ? "-m: every sweep within" : "the latency sweeps; others their own",
             runs_per_case,
             info->process_count > 1 ? "; same-device rows: process 0's device" : "");
    bench_head_print(stdout, csv, info, run);
    bench_columns_print(stdout, csv);
}

/* Opens a host of family f's kernel, with the memory its runs keep their
 * rounds' times in; 0, or -1. The first one starts the processes of a run
 * of several (forked, or under mpirun) and prints the table's head. */
static int open_family(const bench_opts_t *o, const char *ranks, int f, dcuda_host_h *h,
                       dcuda_rank_info_t *info)
{
    static int opened;
    if (open_host(o->argc, o->argv, ranks, o->threads, f, h, info) != DCUDA_OK ||
        dcuda_host_alloc(*h, sizeof kept, (void **)&device_out) != DCUDA_OK)
        return -1;
    if (!opened++) {
        process = info->process_index;
        quiet = info->process_index != 0;
        idling = info->process_index != 0;
        print_head(o, info);
    }
    return 0;
}

static void finish_family(dcuda_host_h h)
{
    dcuda_host_free(h, device_out);
    device_out = NULL;
    dcuda_host_finish(h);
}

/* The peer get rows of a host of the get kernel on `ranks` ranks a device
 * (the pair alone, or every rank the device holds: `suffix`). */
static int peer_get_rows(const bench_opts_t *o, const char *ranks, int quick, const sweep_t *w,
                         const char *suffix)
{
    dcuda_host_h h;
    dcuda_rank_info_t info = { 0 };
    if (open_family(o, ranks, BENCH_FAMILY_GET, &h, &info))
        return 1;
    peer_setup_t p = peer_setup(&info, quick);
    peer_gets(h, &p, info.rank_count, w, suffix);
    finish_family(h);
    return 0;
}

/* The runtime family's rows of every rank the device holds (or --ranks,
 * `all`): the calls of the runtime rows when `calls`, then the WORLD
 * barrier and collectives. *info: the host's. */
static int every_rank_world_rows(const bench_opts_t *o, const char *all, int iters, int calls,
                                 dcuda_rank_info_t *info)
{
    const sweep_t *w = &o->w;
    dcuda_host_h h;
    if (open_family(o, all, BENCH_FAMILY_RUNTIME, &h, info))
        return 1;
    if (calls)
        runtime_calls(h, info->rank_responsible, iters);
    bench_world_barrier(h, info->rank_count, iters, "");
    bench_comm_rows(h, info->rank_count, info->rank_responsible, iters, w, "");
    bench_world_collectives(h, info->rank_count, info->rank_responsible, iters, world_sizes, w, "",
                            0);
    bench_across_rows(h, info->rank_count, info->rank_responsible, iters, w, "");
    finish_family(h);
    return 0;
}

/* The WORLD barrier and collectives of a host of `ranks` ranks a device
 * (one a process: the rows to set beside NVSHMEM's, one block a PE), rows
 * peer_*. */
static int peer_collective_rows(const bench_opts_t *o, const char *ranks, int iters)
{
    dcuda_host_h h;
    dcuda_rank_info_t info = { 0 };
    if (open_family(o, ranks, BENCH_FAMILY_RUNTIME, &h, &info))
        return 1;
    bench_world_barrier(h, info.rank_count, iters, "peer_");
    bench_comm_rows(h, info.rank_count, info.rank_responsible, iters, &o->w, "peer_");
    bench_world_collectives(h, info.rank_count, info.rank_responsible, iters, peer_sizes, &o->w,
                            "peer_", 1);
    finish_family(h);
    return 0;
}

/* The rows of one pair of ranks, then those of every rank a device holds
 * (all: --ranks); 1 if a family could not start. */
static int same_process_rows(const bench_opts_t *o, const cmdline_t *c, const char *all,
                             dcuda_rank_info_t *info)
{
    const sweep_t *w = &c->w;
    int iters = w->iters;
    dcuda_host_h h;
    /* Two ranks: the latency, host and runtime rows of one pair. */
    if (open_family(o, "2", BENCH_FAMILY_LATENCY, &h, info))
        return 1;
    latency(h, 2, w, "");
    latency_sweep(h, w);
    finish_family(h);
    if (open_family(o, "2", BENCH_FAMILY_GET, &h, info))
        return 1;
    device_gets(h, w);
    finish_family(h);
    if (open_family(o, "2", BENCH_FAMILY_RUNTIME, &h, info))
        return 1;
    host_round_trip(h, iters / 10);
    runtime_calls(h, 2, iters / 10);
    bench_world_collectives(h, info->rank_count, info->rank_responsible, iters / 10, world_sizes, w,
                            "", 0);
    finish_family(h);
    if (c->with_bandwidth) {
        if (open_family(o, "2", BENCH_FAMILY_BANDWIDTH, &h, info))
            return 1;
        bandwidth(h, 2, 0, c->quick ? 64e6 : 1e9, w);
        finish_family(h);
    }
    /* Every rank the device holds with each kernel (or --ranks). */
    if (open_family(o, all, BENCH_FAMILY_LATENCY, &h, info))
        return 1;
    latency(h, info->rank_responsible, w, "_busy_device");
    finish_family(h);
    if (every_rank_world_rows(o, all, iters / 100 + 1, 1, info))
        return 1;
    if (c->with_bandwidth) {
        if (open_family(o, all, BENCH_FAMILY_BANDWIDTH, &h, info))
            return 1;
        bandwidth(h, info->rank_responsible, 1, c->quick ? 256e6 : 8e9, w);
        finish_family(h);
    }
    return 0;
}

/* The rows between processes (or through the loopback path); 1 if a
 * family could not start. */
static int peer_rows(const bench_opts_t *o, const cmdline_t *c, dcuda_rank_info_t *info)
{
    const sweep_t *w = &c->w;
    dcuda_host_h h;
    if (open_family(o, c->loop ? "2" : "1", BENCH_FAMILY_PEER, &h, info))
        return 1;
    int several = info->process_count >= 2 || (c->loop && info->process_count == 1);
    if (several)
        peer_pair(h, info, c->quick, w);
    finish_family(h);
    if (several && peer_collective_rows(o, c->loop ? "2" : "1", w->iters / 10))
        return 1;
    if (!several) {
        peer_skipped();
        return 0;
    }
    if (open_family(o, "0", BENCH_FAMILY_PEER, &h, info))
        return 1;
    peer_section(h, info, c);
    finish_family(h);
    return peer_get_rows(o, c->loop ? "2" : "1", c->quick, w, "") ||
           peer_get_rows(o, "0", c->quick, w, "_busy_device");
}

int main(int argc, char **argv)
{
    cmdline_t c;
    int parsed = bench_parse_options(argc, argv, &c);
    if (parsed)
        return parsed == 1 ? 0 : 2;
    if (c.self_test)
        return bench_self_test(stdout) ? 1 : 0;
    runs_per_case = c.runs;
    rate_all = c.rate_all;
    bench_opts_t o = { argc, argv, c.threads, c.csv_path, c.w };
    dcuda_rank_info_t info = { 0 };
    char all[16]; /* ranks a device of the rows of every rank (--ranks; 0: all it holds) */
    snprintf(all, sizeof all, "%d", c.all_ranks);
    if (c.colls_only) {
        if (every_rank_world_rows(&o, all, c.w.iters / 100 + 1, 0, &info))
            return 1;
    } else if (!c.peer_only && same_process_rows(&o, &c, all, &info)) {
        return 1;
    }
    /* The peer rows need a second process; the earlier hosts tell. */
    if (c.colls_only) {
        /* those rows alone */
    } else if (!c.peer_only && !c.loop && info.process_count < 2) {
        peer_skipped();
    } else if (peer_rows(&o, &c, &info)) {
        return 1;
    }
    if (csv)
        fclose(csv);
    return dcuda_host_exit_status(any_wrong);
}
