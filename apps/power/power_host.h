/*
 * What the host programs of the power iteration case study share
 * (power_host.c), callable from C and CUDA C++ alike: their options, the
 * blocks of its matrix, the starting vector, and the serial reference
 * they are checked against.
 */
#ifndef DCUDA_APPS_POWER_HOST_H
#define DCUDA_APPS_POWER_HOST_H

#include "power.h"
#include "spmv_host.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options --power-n= (rows of a block), --power-nnz= (nonzeros a row; 0:
 * 0.3% of the rows), --power-iters=; thesis sizes by default. As
 * spmv_option: 1 if arg was one, 0 if none, -1 (said) if its value is bad. */
#define POWER_OPTIONS_DEFAULT SPMV_OPTIONS_DEFAULT
int power_option(const char *program, const char *arg, spmv_options_t *o);

/* Block (i, j) of the matrix in CSR: SpMV's with absolute values. */
int power_block_build(int i, int j, int n, int k, spmv_block_t *b); /* 0, or -1: no memory */

/* Part j of the starting vector y_0 (n doubles); ||y_0|| of all q * n. */
void power_y_fill(int j, int n, double *y);
double power_initial_norm(int q, int n);

/* The serial reference, from the definitions in power.h (its own rows of
 * the global matrix, no blocks): b_K after K = iters iterations (q * n
 * doubles from malloc; NULL when out of memory), the eigenvalue estimate
 * 1 / fac_K, and the residual ||A b_K - lambda b_K||_inf / lambda (how far
 * from converged). *ms gets its time. */
typedef struct power_result {
    double *b;
    double lambda, residual, ms;
} power_result_t;
int power_reference(int q, int n, int k, int iters, power_result_t *r); /* 0, or -1: no memory */

/* Elements of b_K's part j (from y_K's part and fac_K) further from the
 * reference than it allows (rounding: a relative 1e-11 of its largest
 * element), or 1 when lambda = 1 / fac_K is; *lambda gets it. */
size_t power_mismatches(const power_result_t *ref, int j, int n, const double *y, double fac,
                        double *lambda);

#ifdef __cplusplus
}
#endif

#endif /* DCUDA_APPS_POWER_HOST_H */
