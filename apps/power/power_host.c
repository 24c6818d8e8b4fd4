/*
 * What the host programs of the power iteration case study share (the
 * dcuda variant and the bulk-synchronous baseline): options, blocks, the
 * starting vector and the serial reference. The reference runs the
 * iteration on the global matrix, row by row from power.h's definitions,
 * in one thread: no grid, no blocks, no trees.
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "app_options.h"
#include "power_host.h"

#define POWER_TOLERANCE 1e-11

int power_option(const char *program, const char *arg, spmv_options_t *o)
{
    static const char *const names[] = { "--power-n=", "--power-nnz=", "--power-iters=" };
    int *const fields[] = { &o->n, &o->nnz, &o->iters };
    return app_int_option(program, names, fields, 3, SPMV_MAX, arg);
}

int power_block_build(int i, int j, int n, int k, spmv_block_t *b)
{
    if (spmv_block_build(i, j, n, k, b) != 0)
        return -1;
    for (size_t e = 0; e < (size_t)n * (size_t)k; e++)
        b->val[e] = fabs(b->val[e]);
    return 0;
}

void power_y_fill(int j, int n, double *y)
{
    for (int c = 0; c < n; c++)
        y[c] = power_initial_y(j * n + c);
}

double power_initial_norm(int q, int n)
{
    double s = 0.0;
    for (int c = 0; c < q * n; c++)
        s += power_initial_y(c) * power_initial_y(c);
    return sqrt(s);
}

/* The global matrix, k * q nonzeros a row: columns and values. */
typedef struct global_rows {
    int *col;
    double *val;
    int width; /* nonzeros a row */
} global_rows_t;

static int rows_build(int q, int n, int k, global_rows_t *g)
{
    size_t rows = (size_t)q * (size_t)n, width = (size_t)q * (size_t)k;
    g->width = (int)width;
    g->col = malloc(rows * width * sizeof(int));
    g->val = malloc(rows * width * sizeof(double));
    if (!g->col || !g->val)
        return -1;
    for (int i = 0; i < q; i++)
        for (int r = 0; r < n; r++)
            for (int j = 0; j < q; j++)
                for (int e = 0; e < k; e++) {
                    size_t at = ((size_t)i * n + r) * width + (size_t)j * k + e;
                    g->col[at] = j * n + spmv_entry_col(i, j, r, e, n, k);
                    g->val[at] = power_entry_val(i, j, r, e);
                }
    return 0;
}

/* x = scale * A y over all rows. */
static void rows_multiply(const global_rows_t *g, size_t rows, double scale, const double *y,
                          double *x)
{
    for (size_t r = 0; r < rows; r++) {
        double s = 0.0;
        for (int e = 0; e < g->width; e++)
            s += g->val[r * g->width + e] * y[g->col[r * g->width + e]];
        x[r] = scale * s;
    }
}

static double norm(const double *v, size_t count)
{
    double s = 0.0;
    for (size_t c = 0; c < count; c++)
        s += v[c] * v[c];
    return sqrt(s);
}

int power_reference(int q, int n, int k, int iters, power_result_t *r)
{
    size_t rows = (size_t)q * (size_t)n;
    global_rows_t g = { NULL, NULL, 0 };
    double *y = malloc(rows * sizeof(double)), *x = malloc(rows * sizeof(double));
    r->b = NULL;
    if (!y || !x || rows_build(q, n, k, &g) != 0) {
        free(y), free(x), free(g.col), free(g.val);
        return -1;
    }
    struct timespec t0, t1;
    timespec_get(&t0, TIME_UTC);
    for (size_t c = 0; c < rows; c++)
        y[c] = power_initial_y((int)c);
    double fac = 1.0 / norm(y, rows);
    for (int it = 0; it < iters; it++) {
        rows_multiply(&g, rows, fac, y, x); /* x = A b_k, b_k = fac * y */
        double *t = y;
        y = x, x = t;
        fac = 1.0 / norm(y, rows);
    }
    timespec_get(&t1, TIME_UTC);
    for (size_t c = 0; c < rows; c++)
        y[c] *= fac; /* b_K */
    r->lambda = 1.0 / fac;
    rows_multiply(&g, rows, 1.0, y, x);
    double worst = 0.0;
    for (size_t c = 0; c < rows; c++)
        worst = fmax(worst, fabs(x[c] - r->lambda * y[c]));
    r->residual = worst / r->lambda;
    r->ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    r->b = y;
    free(x), free(g.col), free(g.val);
    return 0;
}

size_t power_mismatches(const power_result_t *ref, int j, int n, const double *y, double fac,
                        double *lambda)
{
    double largest = 0.0;
    for (int c = 0; c < n; c++)
        largest = fmax(largest, fabs(ref->b[(size_t)j * n + c]));
    size_t bad = 0;
    for (int c = 0; c < n; c++)
        bad += !(fabs(fac * y[c] - ref->b[(size_t)j * n + c]) <= POWER_TOLERANCE * largest);
    *lambda = 1.0 / fac;
    return bad ? bad : !(fabs(*lambda - ref->lambda) <= POWER_TOLERANCE * ref->lambda);
}
