/*
 * What the host programs of the SpMV case study share (the dcuda variant
 * and the bulk-synchronous baseline): their options, the matrix blocks in
 * CSR, and the serial reference, which sums each row of the global matrix
 * straight from the definitions in spmv.h (no CSR of its own).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "app_options.h"
#include "spmv_host.h"

int spmv_option(const char *program, const char *arg, spmv_options_t *o)
{
    static const char *const names[] = { "--spmv-n=", "--spmv-nnz=", "--spmv-iters=" };
    int *const fields[] = { &o->n, &o->nnz, &o->iters };
    return app_int_option(program, names, fields, 3, SPMV_MAX, arg);
}

int spmv_check(const char *program, spmv_options_t *o, int devices, int *q)
{
    int side = 1;
    while (side * side < devices)
        side++;
    if (side * side != devices) {
        fprintf(stderr,
                "%s: %d processes: the devices form a square grid (1, 4, 9, ... processes; one "
                "per visible GPU unless DCUDA_PROCESSES or mpirun -np says how many)\n",
                program, devices);
        return -1;
    }
    int density = (int)(o->n * 0.003 + 0.5); /* the thesis' 0.3% of the row, rounded */
    if (!o->nnz)
        o->nnz = density > 0 ? density : 1;
    if (o->nnz > o->n || (double)o->nnz * o->n > 2147483647.0) {
        fprintf(stderr, "%s: %d nonzeros per row of %d: at most one per column, 2^31 a block\n",
                program, o->nnz, o->n);
        return -1;
    }
    *q = side;
    return 0;
}

int spmv_block_build(int i, int j, int n, int k, spmv_block_t *b)
{
    size_t nnz = (size_t)n * (size_t)k;
    b->rowptr = malloc(((size_t)n + 1) * sizeof(int));
    b->col = malloc(nnz * sizeof(int));
    b->val = malloc(nnz * sizeof(double));
    if (!b->rowptr || !b->col || !b->val) {
        spmv_block_free(b);
        return -1;
    }
    for (int r = 0; r <= n; r++)
        b->rowptr[r] = r * k;
    for (int r = 0; r < n; r++)
        for (int e = 0; e < k; e++) {
            b->col[(size_t)r * k + e] = spmv_entry_col(i, j, r, e, n, k);
            b->val[(size_t)r * k + e] = spmv_entry_val(i, j, r, e);
        }
    return 0;
}

void spmv_block_free(spmv_block_t *b)
{
    free(b->rowptr);
    free(b->col);
    free(b->val);
    b->rowptr = b->col = NULL;
    b->val = NULL;
}

void spmv_b_fill(int j, int n, double *b)
{
    for (int c = 0; c < n; c++)
        b[c] = spmv_initial_b(j * n + c);
}

double *spmv_reference(int i, int q, int n, int k, double *ms)
{
    double *x = calloc((size_t)n, sizeof(double));
    if (!x)
        return NULL;
    struct timespec t0, t1;
    timespec_get(&t0, TIME_UTC);
    for (int r = 0; r < n; r++)
        for (int j = 0; j < q; j++)
            for (int e = 0; e < k; e++)
                x[r] += spmv_entry_val(i, j, r, e) *
                        spmv_initial_b(j * n + spmv_entry_col(i, j, r, e, n, k));
    timespec_get(&t1, TIME_UTC);
    *ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    return x;
}
