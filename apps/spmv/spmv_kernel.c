/*
 * Rank code of the SpMV case study, written once for CPU and GPU ranks.
 * Each multiplication runs the thesis' three phases at the level of ranks,
 * not devices (spmv.h has the decomposition):
 *   1. b_j goes down each grid column along a binomial tree: rank l of a
 *      device forwards its part of b_j to rank l of its children as soon as
 *      its own part arrived; a device barrier then lets every rank read all
 *      of b_j;
 *   2. each rank multiplies its rows of A_ij by b_j;
 *   3. the partial x goes along each grid row to the first grid column,
 *      along a binomial tree: rank l adds what rank l of its children sent
 *      and sends the sum on, while other ranks of its device still multiply.
 * A global barrier ends each multiplication (the thesis' stand-in for a
 * follow-up operation that synchronises every device).
 *
 * Why the buffers can be reused: whatever a rank receives in one
 * multiplication it waited for before the global barrier, and nothing of
 * the next one is sent before it; so every put of one multiplication has
 * been delivered (its source read, its target consumed) before the next
 * one writes the same places.
 */
#include "dcuda/dcuda_rank.h"
#include "spmv.h"

#define SPMV_TAG_B 0 /* my part of b_j arrived from my parent in the column */
#define SPMV_TAG_X 1 /* + step: a partial sum arrived at that step of the row */

/* Rows [first, end) of a device, and of b_j, are this rank's part. */
typedef struct spmv_part {
    int first, end;
    int local, ranks; /* my rank in my device, and the ranks of a device */
} spmv_part_t;

/* WORLD rank of my counterpart on device (row, column) of the grid. */
DCUDA_RANK_FN int counterpart(const spmv_data_t *d, const spmv_part_t *p, int row, int column)
{
    return (column * d->q + row) * p->ranks + p->local;
}

/* The sum of v over the `lanes` threads of a group (a power of two, inside
 * a warp), in its first thread. A CPU rank has one thread: v itself. */
DCUDA_RANK_FN double group_sum(double v, int lanes)
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

/* x[row] = (A_ij b_j)[row] for my rows: groups of `lanes` threads a row. */
DCUDA_RANK_FN void multiply(const spmv_data_t *d, const spmv_part_t *p, int lanes, double *x,
                            const double *b)
{
    int t = dcuda_thread_index(), groups = dcuda_thread_count() / lanes;
    int lane = t % lanes, group = t / lanes;
    for (int base = p->first; base < p->end; base += groups) {
        int row = base + group;
        double sum = row < p->end ? spmv_row_share(d->rowptr, d->col, d->val, b, row, lane, lanes)
                                  : 0.0;
        sum = group_sum(sum, lanes);
        if (row < p->end && lane == 0)
            x[row] = sum;
    }
}

/* Phase 1 for my part: wait for it unless my device is in the first grid
 * row, then send it to my counterparts below me in the column's binomial
 * tree (the farthest first: its subtree is the largest). */
DCUDA_RANK_FN void broadcast(dcuda_state_t *st, dcuda_win_t win, const spmv_data_t *d,
                             const spmv_part_t *p)
{
    int q = d->q, row = d->device % q, column = d->device / q, high = 1;
    if (p->first == p->end)
        return;
    if (row > 0)
        dcuda_wait_notifications(st, SPMV_TAG_B, 1);
    while (high * 2 <= row)
        high *= 2; /* the highest bit of row (1 for row 0) */
    int lowest = row > 0 ? high * 2 : 1, step = lowest; /* my children: row + steps */
    while (row + step * 2 < q)
        step *= 2;
    size_t at = (size_t)p->first * sizeof(double);
    size_t bytes = (size_t)(p->end - p->first) * sizeof(double);
    for (; step >= lowest; step /= 2)
        if (row + step < q)
            dcuda_put_notify(st, win, counterpart(d, p, row + step, column), at, bytes,
                             d->vec + p->first, SPMV_TAG_B);
}

/* Phase 3 for my part: add what my children in the row's binomial tree
 * send, then send the sum to my parent (none in the first grid column). */
DCUDA_RANK_FN void reduce(dcuda_state_t *st, dcuda_win_t win, const spmv_data_t *d,
                          const spmv_part_t *p)
{
    int q = d->q, n = d->n, row = d->device % q, column = d->device / q;
    double *x = d->vec + spmv_at_x(n);
    size_t bytes = (size_t)(p->end - p->first) * sizeof(double);
    if (p->first == p->end)
        return;
    for (int s = 0, step = 1; step < q; s++, step *= 2) {
        if (column % (2 * step) == step) {
            size_t at = (spmv_at_recv(n, s) + (size_t)p->first) * sizeof(double);
            dcuda_put_notify(st, win, counterpart(d, p, row, column - step), at, bytes,
                             x + p->first, SPMV_TAG_X + s);
            return;
        }
        if (column + step < q) {
            dcuda_wait_notifications(st, SPMV_TAG_X + s, 1);
            dcuda_rank_sync(); /* the arrival seen by every thread */
            const double *in = d->vec + spmv_at_recv(n, s);
            for (int r = p->first + dcuda_thread_index(); r < p->end; r += dcuda_thread_count())
                x[r] += in[r];
            dcuda_rank_sync(); /* the sum written before it is sent */
        }
    }
}

DCUDA_KERNEL(spmv, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    spmv_part_t p;
    spmv_data_t *d;
    dcuda_win_t win;

    dcuda_rank_init(ctx, &st);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &p.local);
    dcuda_comm_size(&st, DCUDA_COMM_DEVICE, &p.ranks);
    dcuda_get_data(&st, (void **)&d);
    p.first = spmv_part_first(d->n, p.ranks, p.local);
    p.end = spmv_part_first(d->n, p.ranks, p.local + 1);
    /* Every rank exposes the whole vector memory of its device: window
     * offsets are places in it, and my parts of b and x (the sources of my
     * puts) lie in it. */
    size_t bytes = spmv_window_doubles(d->n, d->q) * sizeof(double);
    dcuda_win_create(&st, DCUDA_COMM_WORLD, d->vec, bytes, &win);
    int lanes = spmv_lanes(d->n ? d->rowptr[d->n] / d->n : 0, dcuda_thread_count());
    dcuda_start_cpu_timer(&st);

    for (int k = 0; k < d->iters; k++) {
        broadcast(&st, win, d, &p);
        if (d->device % d->q > 0)
            dcuda_comm_barrier(&st, DCUDA_COMM_DEVICE); /* all of b_j is here */
        multiply(d, &p, lanes, d->vec + spmv_at_x(d->n), d->vec);
        dcuda_rank_sync(); /* my rows written before they are added or sent */
        reduce(&st, win, d, &p);
        dcuda_comm_barrier(&st, DCUDA_COMM_WORLD);
    }

    dcuda_stop_cpu_timer(&st);
    /* Every put to me was waited for: none is in flight when the window
     * goes. Errors of any call are reported on the host. */
    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}
