/*
 * What the host programs of the SpMV case study share (spmv_host.c),
 * callable from C and CUDA C++ alike: their options, the blocks of the
 * matrix in CSR, and the serial reference they are checked against.
 */
#ifndef DCUDA_APPS_SPMV_HOST_H
#define DCUDA_APPS_SPMV_HOST_H

#include "spmv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The options every variant takes (--spmv-<name>=<int>, 1..SPMV_MAX): rows
 * of a block, nonzeros per row (0: 0.3% of the rows, the thesis' density,
 * at least 1), multiplications. */
#define SPMV_MAX 1000000
typedef struct spmv_options {
    int n, nnz, iters;
} spmv_options_t;
#define SPMV_OPTIONS_DEFAULT                                                                       \
    {                                                                                              \
        10816, 0, 100                                                                              \
    }

/* Reads arg into *o if it is one of those options: 1 if it was, 0 if it is
 * none of them, -1 (said on stderr, after `program`) if its value is bad. */
int spmv_option(const char *program, const char *arg, spmv_options_t *o);

/* Resolves the nonzeros per row and checks the options against the device
 * count; 0, or -1 after saying why on stderr. *q gets the grid's side. */
int spmv_check(const char *program, spmv_options_t *o, int devices, int *q);

/* Block (i, j) of the matrix in CSR (spmv.h), in memory from malloc. */
typedef struct spmv_block {
    int *rowptr, *col;
    double *val;
} spmv_block_t;
int spmv_block_build(int i, int j, int n, int k, spmv_block_t *b); /* 0, or -1: no memory */
void spmv_block_free(spmv_block_t *b);

/* Part j of the vector b: n doubles. */
void spmv_b_fill(int j, int n, double *b);

/* x_i of grid row i, computed serially from the definitions (n doubles
 * from malloc; NULL when out of memory); *ms gets its time. */
double *spmv_reference(int i, int q, int n, int k, double *ms);

#ifdef __cplusplus
}
#endif

#endif /* DCUDA_APPS_SPMV_HOST_H */
