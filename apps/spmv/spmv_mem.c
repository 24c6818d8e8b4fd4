/*
 * Device memory of one process of the case studies built on SpMV's blocks
 * (spmv_mem.h).
 */
#include <stdio.h>
#include <string.h>

#include "spmv_mem.h"

dcuda_status_t spmv_mem_fill(dcuda_host_h h, const spmv_block_t *b, int n, int k,
                             const double *window, size_t doubles, spmv_mem_t *m)
{
    size_t nnz = (size_t)n * (size_t)k, rowptr = ((size_t)n + 1) * sizeof(int);
    dcuda_status_t st;
    if ((st = dcuda_host_alloc(h, rowptr, (void **)&m->rowptr)) != DCUDA_OK ||
        (st = dcuda_host_alloc(h, nnz * sizeof(int), (void **)&m->col)) != DCUDA_OK ||
        (st = dcuda_host_alloc(h, nnz * sizeof(double), (void **)&m->val)) != DCUDA_OK ||
        (st = dcuda_host_alloc(h, doubles * sizeof(double), (void **)&m->vec)) != DCUDA_OK)
        return st;
    if ((st = dcuda_host_copy_in(h, m->rowptr, b->rowptr, rowptr)) != DCUDA_OK ||
        (st = dcuda_host_copy_in(h, m->col, b->col, nnz * sizeof(int))) != DCUDA_OK ||
        (st = dcuda_host_copy_in(h, m->val, b->val, nnz * sizeof(double))) != DCUDA_OK)
        return st;
    return dcuda_host_copy_in(h, m->vec, window, doubles * sizeof(double));
}

void spmv_mem_free(dcuda_host_h h, spmv_mem_t *m)
{
    dcuda_host_free(h, m->rowptr);
    dcuda_host_free(h, m->col);
    dcuda_host_free(h, m->val);
    dcuda_host_free(h, m->vec);
}

int spmv_grid_data(const char *program, spmv_options_t *o, const dcuda_rank_info_t *info,
                   spmv_data_t *d)
{
    int q = 0;
    if (spmv_check(program, o, info->process_count, &q) != 0)
        return -1;
    if (info->rank_count != info->process_count * info->rank_responsible ||
        info->rank_start != info->process_index * info->rank_responsible) {
        fprintf(stderr,
                "%s: every process needs as many ranks as the others (%d here, %d in all)\n",
                program, info->rank_responsible, info->rank_count);
        return -1;
    }
    memset(d, 0, sizeof *d);
    d->n = o->n, d->q = q, d->iters = o->iters, d->device = info->process_index;
    return 0;
}
