/*
 * Device memory of one process of the case studies built on SpMV's blocks
 * (SpMV and power iteration): its block of the matrix in CSR and its
 * vector window, from dcuda_host_alloc, filled from the host; and the
 * check of the run's shape both make.
 */
#ifndef DCUDA_APPS_SPMV_MEM_H
#define DCUDA_APPS_SPMV_MEM_H

#include "dcuda/dcuda_host.h"
#include "spmv_host.h"

typedef struct spmv_mem {
    int *rowptr, *col;
    double *val, *vec;
} spmv_mem_t;

/* Allocates the block (n rows, k nonzeros each) and a window of `doubles`,
 * and copies b and window into them. On failure, what was allocated stays
 * in *m for spmv_mem_free (start from a zeroed *m). */
dcuda_status_t spmv_mem_fill(dcuda_host_h h, const spmv_block_t *b, int n, int k,
                             const double *window, size_t doubles, spmv_mem_t *m);
void spmv_mem_free(dcuda_host_h h, spmv_mem_t *m);

/* Checks the options against this run (a square count of processes, the
 * same rank count in each) and fills the user struct of the rank code (its
 * memory not yet: mem_fill); 0, or -1 after saying why on stderr. */
int spmv_grid_data(const char *program, spmv_options_t *o, const dcuda_rank_info_t *info,
                   spmv_data_t *d);

#endif /* DCUDA_APPS_SPMV_MEM_H */
