/*
 * The SpMV case study (thesis 5.6), dcuda variant: every process is a
 * device of the q x q grid (spmv.h) and builds its block of the matrix; the
 * first grid row also gets its part of b. The ranks run the
 * multiplications; then every process of the first grid column compares
 * its part of x with the serial reference, exactly (every sum is exact).
 * Prints the time per multiplication (the ranks' timer) and exits 0 only
 * when every element matches.
 *
 * Options (besides the --dcuda-* settings), thesis sizes by default:
 *   --spmv-n=10816 (rows of a block: weak scaling) --spmv-nnz=K (nonzeros
 *   a row; default 0.3% of n) --spmv-iters=100
 */
#include <stdio.h>
#include <stdlib.h>

#include "app_skip.h"
#include "dcuda/dcuda_host.h"
#include "spmv.h"
#include "spmv_host.h"
#include "spmv_mem.h"

DCUDA_KERNEL_DECLARE(spmv);

/* Threads a rank: the build's, which goes with its register cap
 * (CMakeLists.txt). */
#ifndef APP_RANK_THREADS
#error "APP_RANK_THREADS is set by dcuda_app_rank_shape (apps/CMakeLists.txt)"
#endif

/* Reads the --spmv-* options (others are dcuda's); 0 if all are valid. */
static int parse(int argc, char **argv, spmv_options_t *o)
{
    for (int i = 1; i < argc; i++)
        if (spmv_option("spmv", argv[i], o) < 0)
            return 1;
    return 0;
}

/* My block and my window (b_j on the first grid row, zeros elsewhere) in
 * device memory; d points at them. */
static dcuda_status_t mem_fill(dcuda_host_h h, spmv_data_t *d, int k, spmv_mem_t *m)
{
    int n = d->n, row = d->device % d->q, column = d->device / d->q;
    size_t doubles = spmv_window_doubles(n, d->q);
    spmv_block_t b = { NULL, NULL, NULL };
    double *v = calloc(doubles, sizeof(double));
    dcuda_status_t st = DCUDA_ERR_NO_MEMORY;
    if (v && spmv_block_build(row, column, n, k, &b) == 0) {
        if (row == 0)
            spmv_b_fill(column, n, v); /* only the first grid row has b at first */
        st = spmv_mem_fill(h, &b, n, k, v, doubles, m);
    }
    d->rowptr = m->rowptr, d->col = m->col, d->val = m->val, d->vec = m->vec;
    spmv_block_free(&b);
    free(v);
    return st;
}

/* Elements of my part of x that differ from the reference (none to check
 * outside the first grid column); SIZE_MAX when out of memory. */
static size_t compare(dcuda_host_h h, const spmv_data_t *d, int k, double *ref_ms)
{
    if (d->device / d->q != 0)
        return 0;
    double *x = malloc((size_t)d->n * sizeof(double));
    double *ref = spmv_reference(d->device % d->q, d->q, d->n, k, ref_ms);
    size_t bad = SIZE_MAX;
    if (x && ref &&
        dcuda_host_copy_out(h, x, d->vec + spmv_at_x(d->n), (size_t)d->n * sizeof(double)) ==
            DCUDA_OK) {
        bad = 0;
        for (int r = 0; r < d->n; r++)
            bad += x[r] != ref[r];
    }
    free(x);
    free(ref);
    return bad;
}

/* Runs the case once; 0 when every element of this process matches. */
static int run(dcuda_host_h h, const dcuda_rank_info_t *info, spmv_data_t *d, int k)
{
    spmv_mem_t m = { NULL, NULL, NULL, NULL };
    double ms = 0, ref_ms = 0;
    size_t bad = 0;
    dcuda_status_t st = mem_fill(h, d, k, &m);
    if (st == DCUDA_OK)
        st = dcuda_host_run(h, d, sizeof *d, &ms);
    if (st == DCUDA_OK)
        bad = compare(h, d, k, &ref_ms);
    const double *timings = NULL;
    int count = 0;
    dcuda_host_get_timings(h, &timings, &count);
    double us = count > 0 ? timings[0] * 1e3 / d->iters : -1;
    double flops = 2.0 * d->n * (double)k * d->q * d->q;
    printf("spmv: dcuda, %d ranks (%s, %s), process %d of %d (grid %dx%d), blocks %dx%d with %d "
           "nonzeros a row, %d multiplications: %.2f us per multiplication (%.1f GFlop/s), run "
           "%.3f ms; serial %.1f us; %s\n",
           info->rank_count, info->backend, info->device_name, info->process_index,
           info->process_count, d->q, d->q, d->n, d->n, k, d->iters, us,
           us > 0 ? flops / us / 1e3 : 0, ms, ref_ms * 1e3,
           st != DCUDA_OK     ? dcuda_status_name(st)
           : d->device / d->q ? "partial sums only (the first grid column checks x)"
           : bad              ? "MISMATCH"
                              : "MATCH");
    if (bad == SIZE_MAX)
        fprintf(stderr, "spmv: out of memory for the check\n");
    else if (bad)
        printf("spmv: %zu elements of x differ from the serial reference\n", bad);
    spmv_mem_free(h, &m);
    return st != DCUDA_OK || bad;
}

int main(int argc, char **argv)
{
    spmv_options_t o = SPMV_OPTIONS_DEFAULT;
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (parse(argc, argv, &o))
        return 2;
    if (app_backend_missing("spmv"))
        return APP_SKIP;
    dcuda_status_t st = dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(spmv), APP_RANK_THREADS, &h);
    if (st != DCUDA_OK)
        return dcuda_host_exit_status(1);
    dcuda_host_get_rank_info(h, &info);
    spmv_data_t d;
    int failed = 2; /* bad options for this many processes or ranks */
    if (spmv_grid_data("spmv", &o, &info, &d) == 0)
        failed = run(h, &info, &d, o.nnz);
    dcuda_host_finish(h);
    return dcuda_host_exit_status(failed);
}
