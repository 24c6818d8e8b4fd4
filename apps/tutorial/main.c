/*
 * Host side of the tutorial (docs/tutorial.md): runs the 1D heat diffusion
 * on the ranks, computes the same steps serially, and compares every cell
 * of this process's ranks bit for bit, and the hottest cell each of them
 * learnt with dcuda_allreduce. Exits 0 when all of them match.
 *
 * Options (besides the --dcuda-* settings): --halo-cells=N (cells per
 * rank, default 64), --halo-iters=N (steps, default 50),
 * --halo-scheme=parity|ack, --halo-mistake=source|tag (step 6 of the
 * tutorial: a deliberate mistake of rank 0) and --halo-watch=N (step 7:
 * the host reads and checks the cells every N steps while the ranks run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_skip.h"
#include "dcuda/dcuda_host.h"
#include "halo.h"

DCUDA_KERNEL_DECLARE(halo);

#define HALO_MAX_OPTION 65536

/* Reads the value of --halo-<name>=N into *value; 1 if arg is that option. */
static int int_option(const char *arg, const char *name, int *value, int *bad)
{
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0)
        return 0;
    char *end;
    long v = strtol(arg + len, &end, 10);
    if (end == arg + len || *end || v < 1 || v > HALO_MAX_OPTION)
        *bad = 1;
    else
        *value = (int)v;
    return 1;
}

/* Reads --halo-<name>=<word> into *value, the index of word in words. */
static int word_option(const char *arg, const char *name, const char *const *words, int count,
                       int *value, int *bad)
{
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0)
        return 0;
    for (int i = 0; i < count; i++)
        if (strcmp(arg + len, words[i]) == 0) {
            *value = i;
            return 1;
        }
    *bad = 1;
    return 1;
}

/* The tutorial's options into d; 0 if all are valid. */
static int parse_options(int argc, char **argv, halo_data_t *d)
{
    static const char *const schemes[] = { "parity", "ack" };
    static const char *const mistakes[] = { "none", "source", "tag" };
    d->cells = 64;
    d->iters = 50;
    for (int i = 1; i < argc; i++) {
        int bad = 0;
        if (!int_option(argv[i], "--halo-cells=", &d->cells, &bad) &&
            !int_option(argv[i], "--halo-iters=", &d->iters, &bad) &&
            !int_option(argv[i], "--halo-watch=", &d->watch, &bad) &&
            !word_option(argv[i], "--halo-scheme=", schemes, 2, &d->scheme, &bad))
            word_option(argv[i], "--halo-mistake=", mistakes, 3, &d->mistake, &bad);
        if (bad) {
            fprintf(stderr,
                    "halo: bad option %s (cells, iterations and watch 1..%d, scheme "
                    "parity or ack, mistake none, source or tag)\n",
                    argv[i], HALO_MAX_OPTION);
            return 1;
        }
    }
    return 0;
}

/* The serial reference: the whole line of n cells between the boundary
 * values, the same steps with the same halo_update. Cell g ends in
 * [g + 1] of the array returned (NULL when out of memory). */
static double *reference(size_t n, int iters)
{
    double *a = malloc((n + 2) * sizeof(double)), *b = malloc((n + 2) * sizeof(double));
    if (!a || !b) {
        free(a);
        free(b);
        return NULL;
    }
    a[0] = b[0] = HALO_BOUNDARY_LEFT;
    a[n + 1] = b[n + 1] = HALO_BOUNDARY_RIGHT;
    for (size_t g = 0; g < n; g++)
        a[g + 1] = halo_initial(g);
    for (int k = 0; k < iters; k++) {
        for (size_t i = 1; i <= n; i++)
            b[i] = halo_update(a[i - 1], a[i], a[i + 1]);
        double *t = a;
        a = b;
        b = t;
    }
    free(b);
    return a;
}

/* The hottest of the reference's n cells. */
static double reference_hottest(const double *ref, size_t n)
{
    double hottest = ref[1];
    for (size_t g = 1; g < n; g++)
        hottest = ref[g + 1] > hottest ? ref[g + 1] : hottest;
    return hottest;
}

/* Cells of this process's ranks (slabs copied out) that differ from the
 * reference, and ranks whose hottest cell (peaks copied out) is not the
 * reference's `hottest`. */
static size_t compare(const double *slabs, const double *peaks, const double *ref, double hottest,
                      const halo_data_t *d, const dcuda_rank_info_t *info)
{
    size_t bad = 0;
    for (int r = 0; r < info->rank_responsible; r++) {
        bad += !(peaks[(size_t)r * HALO_PEAK_DOUBLES] == hottest);
        const double *slab = slabs + (size_t)r * halo_slab_doubles(d->cells);
        const double *got = slab + halo_cells_index(d->cells, d->iters % 2);
        size_t first = (size_t)(info->rank_start + r) * (size_t)d->cells;
        for (int i = 0; i < d->cells; i++)
            bad += !(got[i] == ref[first + (size_t)i + 1]);
    }
    return bad;
}

/* Step 7: cells of this process's ranks after k steps that differ from
 * the reference `ref` (k steps of the whole line). Each rank left its
 * window's handle in d->handles; the host reads its cells of copy k % 2
 * with a host get, through a global pointer (handle, WORLD rank, offset). */
static size_t watch_compare(dcuda_host_h h, const halo_data_t *d, const dcuda_rank_info_t *info,
                            const int64_t *handles, const double *ref, int k, dcuda_status_t *st)
{
    size_t bad = 0, bytes = (size_t)d->cells * sizeof(double);
    uint64_t offset = halo_cells_index(d->cells, k % 2) * sizeof(double);
    double *cells = malloc(bytes);
    if (!cells)
        *st = DCUDA_ERR_NO_MEMORY;
    for (int r = 0; r < info->rank_responsible && *st == DCUDA_OK; r++) {
        int rank = info->rank_start + r;
        *st = dcuda_host_get(h, cells, dcuda_gptr((uint32_t)handles[r], rank, offset), bytes, NULL);
        size_t first = (size_t)rank * (size_t)d->cells;
        for (int i = 0; i < d->cells && *st == DCUDA_OK; i++)
            bad += !(cells[i] == ref[first + (size_t)i + 1]);
    }
    free(cells);
    return bad;
}

/* Step 7: the host watches the run. Every d->watch steps it waits until
 * each of its ranks has told it that its cells are ready, checks them
 * against the serial reference at that step, and lets the ranks go on.
 * Returns the cells that differed; a failed call's status in *st. */
static size_t watch(dcuda_host_h h, const halo_data_t *d, const dcuda_rank_info_t *info,
                    dcuda_status_t *st)
{
    size_t bad = 0, n = (size_t)info->rank_count * (size_t)d->cells;
    size_t handle_bytes = (size_t)info->rank_responsible * sizeof(int64_t);
    int64_t *handles = malloc(handle_bytes);
    *st = handles ? DCUDA_OK : DCUDA_ERR_NO_MEMORY;
    for (int k = d->watch; k < d->iters && *st == DCUDA_OK; k += d->watch) {
        double *ref = reference(n, k);
        *st = dcuda_host_wait_notifications(h, HALO_TAG_CELLS_READY, info->rank_responsible);
        if (*st == DCUDA_OK)
            *st = dcuda_host_copy_out(h, handles, d->handles, handle_bytes);
        size_t step_bad =
            *st == DCUDA_OK && ref ? watch_compare(h, d, info, handles, ref, k, st) : 0;
        for (int r = 0; r < info->rank_responsible && *st == DCUDA_OK; r++)
            *st = dcuda_host_notify(h, info->rank_start + r, HALO_TAG_HOST_READ, NULL);
        if (*st == DCUDA_OK && !ref)
            *st = DCUDA_ERR_NO_MEMORY;
        if (*st == DCUDA_OK)
            printf("halo: process %d, step %d: %s\n", info->process_index, k,
                   step_bad ? "cells differ from the serial reference" : "cells match");
        bad += step_bad;
        free(ref);
    }
    free(handles);
    return bad;
}

/* Step 7: the run started without blocking, watched, then waited for. */
static dcuda_status_t run_watched(dcuda_host_h h, halo_data_t *d, const dcuda_rank_info_t *info,
                                  size_t *bad, double *ms)
{
    dcuda_status_t st = dcuda_host_run_start(h, d, sizeof *d, NULL), watched;
    if (st != DCUDA_OK)
        return st;
    *bad = watch(h, d, info, &watched);
    st = dcuda_host_run_wait(h, ms); /* *d copied back */
    return st != DCUDA_OK ? st : watched;
}

/* One line for this process: what ran, and how it compared. */
static void report(dcuda_host_h h, const dcuda_rank_info_t *info, const halo_data_t *d,
                   dcuda_status_t st, size_t bad, double hottest, double ms)
{
    const double *timings;
    int ntimings = 0;
    dcuda_host_get_timings(h, &timings, &ntimings);
    printf("halo: ranks %d..%d of %d (%s, process %d of %d), %d cells each, %d steps, %s "
           "scheme: ",
           info->rank_start, info->rank_start + info->rank_responsible - 1, info->rank_count,
           info->backend, info->process_index, info->process_count, d->cells, d->iters,
           d->scheme == HALO_SCHEME_ACK ? "ack" : "parity");
    if (st != DCUDA_OK)
        printf("run failed: %s (%s)\n", dcuda_status_name(st), dcuda_host_last_error(h));
    else if (bad)
        printf("%zu cells or hottest cells differ from the serial reference\n", bad);
    else
        printf("match the serial reference, hottest cell %.4f on every rank; steps %.3f ms, "
               "kernel %.3f ms\n",
               hottest, ntimings > 0 ? timings[0] : -1.0, ms);
}

/* Runs the kernel on the slabs and checks the result; 0 if it matches. */
static int run(dcuda_host_h h, halo_data_t *d)
{
    dcuda_rank_info_t info;
    dcuda_host_get_rank_info(h, &info);
    size_t slab_bytes = halo_slab_doubles(d->cells) * sizeof(double);
    size_t bytes = (size_t)info.rank_responsible * slab_bytes;
    size_t peak_bytes = (size_t)info.rank_responsible * HALO_PEAK_DOUBLES * sizeof(double);
    double *host = malloc(bytes), *peaks = malloc(peak_bytes);
    size_t n = (size_t)info.rank_count * (size_t)d->cells;
    double *ref = reference(n, d->iters);
    double hottest = ref ? reference_hottest(ref, n) : 0.0;
    dcuda_status_t st = DCUDA_ERR_NO_MEMORY;
    double ms = 0;
    size_t bad = 0;
    d->slabs = d->peaks = NULL;
    d->handles = NULL;
    if (host && peaks && ref && dcuda_host_alloc(h, bytes, (void **)&d->slabs) == DCUDA_OK &&
        dcuda_host_alloc(h, peak_bytes, (void **)&d->peaks) == DCUDA_OK &&
        (!d->watch || dcuda_host_alloc(h, (size_t)info.rank_responsible * sizeof(int64_t),
                                       (void **)&d->handles) == DCUDA_OK)) {
        st = d->watch ? run_watched(h, d, &info, &bad, &ms)
                      : dcuda_host_run(h, d, sizeof *d, &ms); /* *d copied in and back out */
        if (st == DCUDA_OK)
            st = dcuda_host_copy_out(h, host, d->slabs, bytes);
        if (st == DCUDA_OK)
            st = dcuda_host_copy_out(h, peaks, d->peaks, peak_bytes);
        if (st == DCUDA_OK)
            bad += compare(host, peaks, ref, hottest, d, &info);
    }
    if (d->handles)
        dcuda_host_free(h, d->handles);
    if (d->slabs)
        dcuda_host_free(h, d->slabs);
    if (d->peaks)
        dcuda_host_free(h, d->peaks);
    report(h, &info, d, st, bad, hottest, ms);
    free(host);
    free(peaks);
    free(ref);
    return st == DCUDA_OK && bad == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    halo_data_t d = { 0 };
    dcuda_host_h h;
    if (parse_options(argc, argv, &d) != 0)
        return 2;
    int skip = app_backend_missing("halo");
    if (skip)
        return skip;
    if (dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(halo), 128, &h) != DCUDA_OK)
        return dcuda_host_exit_status(1);
    int rc = run(h, &d);
    dcuda_host_finish(h);
    return dcuda_host_exit_status(rc); /* in a forked group: every process's outcome */
}
