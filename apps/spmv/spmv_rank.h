/*
 * Rank code the SpMV and power iteration case studies share (written once
 * for CPU and GPU ranks): the grid's counterparts, the row loop over a
 * rank's rows, and the two binomial trees of a grid column (broadcast from
 * grid row 0) and of a grid row (reduction onto grid column 0), each run by
 * rank l of a device with rank l of the others (spmv.h).
 */
#ifndef DCUDA_APPS_SPMV_RANK_H
#define DCUDA_APPS_SPMV_RANK_H

#include <math.h>

#include "dcuda/dcuda_rank.h"
#include "spmv.h"

/* Rows [first, end) of a device, and the same range of its vectors, are
 * this rank's part. */
typedef struct spmv_part {
    int first, end;
    int local, ranks; /* my rank in my device, and the ranks of a device */
} spmv_part_t;

DCUDA_RANK_FN spmv_part_t spmv_part_of(dcuda_state_t *st, int n)
{
    spmv_part_t p;
    dcuda_comm_rank(st, DCUDA_COMM_DEVICE, &p.local);
    dcuda_comm_size(st, DCUDA_COMM_DEVICE, &p.ranks);
    p.first = app_part_first(n, p.ranks, p.local);
    p.end = app_part_first(n, p.ranks, p.local + 1);
    return p;
}

/* WORLD rank of rank `local` on device (row, column) of a q x q grid. */
DCUDA_RANK_FN int spmv_world_rank(int q, int ranks, int local, int row, int column)
{
    return (column * q + row) * ranks + local;
}

/* The sum of v over the `lanes` threads of a group (a power of two, inside
 * a warp, whose threads all call it), in its first thread. A CPU rank has
 * one thread: v itself. */
DCUDA_RANK_FN double spmv_group_sum(double v, int lanes)
{
#if defined(__CUDA_ARCH__)
    int present = dcuda_thread_count() - (dcuda_thread_index() & ~31);
    unsigned mask = present >= 32 ? 0xffffffffu : (1u << present) - 1u;
    for (int offset = lanes / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(mask, v, offset, lanes);
#else
    (void)lanes;
#endif
    return v;
}

#if defined(__CUDACC__)
#define SPMV_UNROLL _Pragma("unroll")
#else
#define SPMV_UNROLL
#endif

/* v[0] + ... + v[SPMV_SCALE_PARTS - 1], pairwise in a fixed order: the
 * same sum in every thread. */
DCUDA_RANK_FN double spmv_scale_sum(const double *v)
{
    double s[SPMV_SCALE_PARTS];
    SPMV_UNROLL
    for (int i = 0; i < SPMV_SCALE_PARTS; i++)
        s[i] = v[i];
    SPMV_UNROLL
    for (int width = 1; width < SPMV_SCALE_PARTS; width *= 2) {
        SPMV_UNROLL
        for (int i = 0; i + width < SPMV_SCALE_PARTS; i += 2 * width)
            s[i] += s[i + width];
    }
    return s[0];
}

/* x[row] = scale * (A b)[row] for my rows: groups of `lanes` threads a row,
 * each reading the bounds of its next row before it sums the current one.
 * When norm2 is given, scale is 1 / sqrt(the sum of its SPMV_SCALE_PARTS
 * parts) instead, read here so that its loads overlap the first bounds'.
 * Returns the sum of the squares of the rows this thread wrote (0 in
 * threads that wrote none). */
DCUDA_RANK_FN double spmv_multiply(const int *rowptr, const int *col, const double *val,
                                   const spmv_part_t *p, int lanes, double scale,
                                   const double *norm2, double *x, const double *b)
{
    int t = dcuda_thread_index(), groups = dcuda_thread_count() / lanes;
    int lane = t % lanes, row = p->first + t / lanes;
    int next = row < p->end ? rowptr[row] : 0, next_end = row < p->end ? rowptr[row + 1] : 0;
    if (norm2)
        scale = 1.0 / sqrt(spmv_scale_sum(norm2));
    double squares = 0.0;
    for (int base = p->first; base < p->end; base += groups, row += groups) {
        int e = next + lane, end = next_end, ahead = row + groups;
        next = ahead < p->end ? rowptr[ahead] : 0; /* the next row's bounds, early */
        next_end = ahead < p->end ? rowptr[ahead + 1] : 0;
        double sum = spmv_group_sum(spmv_span_share(col, val, b, e, end, lanes), lanes);
        if (row < p->end && lane == 0) {
            x[row] = scale * sum;
            squares += x[row] * x[row];
        }
    }
    return squares;
}

/* Sends my part of the buffer at window offset `at` (doubles; src is it on
 * my device) to my counterparts below me in my grid column's binomial tree,
 * the farthest first (its subtree is the largest), with tag. */
DCUDA_RANK_FN void spmv_column_send(dcuda_state_t *st, dcuda_win_t win, int q, int device,
                                    const spmv_part_t *p, size_t at, const double *src, int tag)
{
    int row = device % q, column = device / q, high = 1;
    while (high * 2 <= row)
        high *= 2;                                      /* the highest bit of row (1 for row 0) */
    int lowest = row > 0 ? high * 2 : 1, step = lowest; /* my children: row + steps */
    while (row + step * 2 < q)
        step *= 2;
    size_t offset = (at + (size_t)p->first) * sizeof(double);
    size_t bytes = (size_t)(p->end - p->first) * sizeof(double);
    for (; step >= lowest; step /= 2)
        if (row + step < q)
            dcuda_put_notify(st, win, spmv_world_rank(q, p->ranks, p->local, row + step, column),
                             offset, bytes, src + p->first, tag);
}

/* My part of x summed along my grid row's binomial tree onto grid column
 * 0: I add what my children send (into the buffers at window offsets
 * recv_at + step * n, tag + step), then send the sum to my parent. */
DCUDA_RANK_FN void spmv_row_reduce(dcuda_state_t *st, dcuda_win_t win, int q, int n, int device,
                                   const spmv_part_t *p, double *x, const double *window,
                                   size_t recv_at, int tag)
{
    int row = device % q, column = device / q;
    size_t bytes = (size_t)(p->end - p->first) * sizeof(double);
    if (p->first == p->end)
        return;
    for (int s = 0, step = 1; step < q; s++, step *= 2) {
        size_t at = recv_at + (size_t)s * (size_t)n;
        if (column % (2 * step) == step) {
            dcuda_put_notify(st, win, spmv_world_rank(q, p->ranks, p->local, row, column - step),
                             (at + (size_t)p->first) * sizeof(double), bytes, x + p->first,
                             tag + s);
            return;
        }
        if (column + step < q) {
            dcuda_wait_notifications(st, tag + s, 1);
            dcuda_rank_sync(); /* the arrival seen by every thread */
            const double *in = window + at;
            for (int r = p->first + dcuda_thread_index(); r < p->end; r += dcuda_thread_count())
                x[r] += in[r];
            dcuda_rank_sync(); /* the sum written before it is sent */
        }
    }
}

#endif /* DCUDA_APPS_SPMV_RANK_H */
