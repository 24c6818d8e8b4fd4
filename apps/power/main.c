/*
 * The power iteration case study (thesis 5.7), dcuda variant: every
 * process is a device of the q x q grid (spmv.h) and builds its block of
 * the matrix; the first grid row also gets its part of the starting vector,
 * and every device fac_0. The ranks run the iterations; then every process
 * of the first grid row compares its part of the eigenvector estimate b_K
 * (and the eigenvalue) with the serial reference, within rounding. Prints
 * the time per iteration (the ranks' timer) and exits 0 only when they
 * match.
 *
 * Options (besides the --dcuda-* settings), thesis sizes by default:
 *   --power-n=10816 (rows of a block: weak scaling) --power-nnz=K (nonzeros
 *   a row; default 0.3% of n) --power-iters=100
 */
#include <stdio.h>
#include <stdlib.h>

#include "app_skip.h"
#include "dcuda/dcuda_host.h"
#include "power.h"
#include "power_host.h"
#include "spmv_mem.h"

DCUDA_KERNEL_DECLARE(power);

/* Threads a rank: the build's, which goes with its register cap
 * (CMakeLists.txt). */
#ifndef APP_RANK_THREADS
#error "APP_RANK_THREADS is set by dcuda_app_rank_shape (apps/CMakeLists.txt)"
#endif

/* Reads the --power-* options (others are dcuda's); 0 if all are valid. */
static int parse(int argc, char **argv, spmv_options_t *o)
{
    for (int i = 1; i < argc; i++)
        if (power_option("power", argv[i], o) < 0)
            return 1;
    return 0;
}

/* My block and my window (y_0's part on the first grid row, fac_0 and
 * ||y_0||^2 on every device) in device memory; d points at them. */
static dcuda_status_t mem_fill(dcuda_host_h h, spmv_data_t *d, int k, int ranks, spmv_mem_t *m)
{
    int n = d->n, row = d->device % d->q, column = d->device / d->q;
    size_t doubles = power_window_doubles(n, d->q, ranks);
    spmv_block_t b = { NULL, NULL, NULL };
    double *v = calloc(doubles, sizeof(double));
    dcuda_status_t st = DCUDA_ERR_NO_MEMORY;
    if (v && power_block_build(row, column, n, k, &b) == 0) {
        if (row == 0)
            power_y_fill(column, n, v + power_at_y(n, 0));
        double norm = power_initial_norm(d->q, n);
        v[power_at_fac(n, d->q, ranks, 0)] = 1.0 / norm;
        v[power_at_norm2(n, d->q, ranks, 2)] = norm * norm; /* its part 0 */
        st = spmv_mem_fill(h, &b, n, k, v, doubles, m);
    }
    d->rowptr = m->rowptr, d->col = m->col, d->val = m->val, d->vec = m->vec;
    spmv_block_free(&b);
    free(v);
    return st;
}

/* On the first grid row: elements of my part of b_K (or the eigenvalue)
 * off the reference (SIZE_MAX when out of memory); the eigenvalue, the
 * reference's and its residual in *ref. Elsewhere 0. */
static size_t compare(dcuda_host_h h, const spmv_data_t *d, int k, int ranks, double *lambda,
                      power_result_t *ref)
{
    int n = d->n, parity = d->iters % 2;
    double *y = malloc((size_t)n * sizeof(double)), fac = 0;
    size_t bad = SIZE_MAX;
    if (y && power_reference(d->q, n, k, d->iters, ref) == 0 &&
        dcuda_host_copy_out(h, y, d->vec + power_at_y(n, parity), (size_t)n * sizeof(double)) ==
            DCUDA_OK &&
        dcuda_host_copy_out(h, &fac, d->vec + power_at_fac(n, d->q, ranks, parity), sizeof fac) ==
            DCUDA_OK)
        bad = power_mismatches(ref, d->device / d->q, n, y, fac, lambda);
    free(y);
    return bad;
}

/* Runs the case once; 0 when this process's part matches. */
static int run(dcuda_host_h h, const dcuda_rank_info_t *info, spmv_data_t *d, int k)
{
    spmv_mem_t m = { NULL, NULL, NULL, NULL };
    power_result_t ref = { NULL, 0, 0, 0 };
    double ms = 0, lambda = 0;
    size_t bad = 0;
    int checks = d->device % d->q == 0, ranks = info->rank_responsible;
    dcuda_status_t st = mem_fill(h, d, k, ranks, &m);
    if (st == DCUDA_OK)
        st = dcuda_host_run(h, d, sizeof *d, &ms);
    if (st == DCUDA_OK && checks)
        bad = compare(h, d, k, ranks, &lambda, &ref);
    const double *timings = NULL;
    int count = 0;
    dcuda_host_get_timings(h, &timings, &count);
    double us = count > 0 ? timings[0] * 1e3 / d->iters : -1;
    double flops = 2.0 * d->n * (double)k * d->q * d->q;
    printf("power: dcuda, %d ranks (%s, %s), process %d of %d (grid %dx%d), blocks %dx%d with %d "
           "nonzeros a row, %d iterations: %.2f us per iteration (%.1f GFlop/s), run %.3f ms; ",
           info->rank_count, info->backend, info->device_name, info->process_index,
           info->process_count, d->q, d->q, d->n, d->n, k, d->iters, us,
           us > 0 ? flops / us / 1e3 : 0, ms);
    if (st == DCUDA_OK && checks && bad != SIZE_MAX)
        printf("eigenvalue %.12g (serial %.12g, residual %.2g); serial %.1f ms; ", lambda,
               ref.lambda, ref.residual, ref.ms);
    printf("%s\n", st != DCUDA_OK ? dcuda_status_name(st)
                   : !checks      ? "no part of b here (the first grid row checks it)"
                   : bad          ? "MISMATCH"
                                  : "MATCH");
    if (bad == SIZE_MAX)
        fprintf(stderr, "power: out of memory for the check\n");
    else if (bad)
        printf("power: %zu elements of b differ from the serial reference\n", bad);
    free(ref.b);
    spmv_mem_free(h, &m);
    return st != DCUDA_OK || bad;
}

int main(int argc, char **argv)
{
    spmv_options_t o = POWER_OPTIONS_DEFAULT;
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (parse(argc, argv, &o))
        return 2;
    if (app_backend_missing("power"))
        return APP_SKIP;
    dcuda_status_t st = dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(power), APP_RANK_THREADS, &h);
    if (st != DCUDA_OK)
        return dcuda_host_exit_status(1);
    dcuda_host_get_rank_info(h, &info);
    spmv_data_t d;
    int failed = 2; /* bad options for this many processes or ranks */
    if (spmv_grid_data("power", &o, &info, &d) == 0)
        failed = run(h, &info, &d, o.nnz);
    dcuda_host_finish(h);
    return dcuda_host_exit_status(failed);
}
