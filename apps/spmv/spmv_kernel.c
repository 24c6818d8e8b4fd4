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
#include "spmv_rank.h"

#define SPMV_TAG_B 0 /* my part of b_j arrived from my parent in the column */
#define SPMV_TAG_X 1 /* + step: a partial sum arrived at that step of the row */

DCUDA_KERNEL(spmv, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    spmv_data_t *d;
    dcuda_win_t win;

    dcuda_rank_init(ctx, &st);
    dcuda_get_data(&st, (void **)&d);
    spmv_part_t p = spmv_part_of(&st, d->n);
    /* Every rank exposes the whole vector memory of its device: window
     * offsets are places in it, and my parts of b and x (the sources of my
     * puts) lie in it. */
    size_t bytes = spmv_window_doubles(d->n, d->q) * sizeof(double);
    dcuda_win_create(&st, DCUDA_COMM_WORLD, d->vec, bytes, &win);
    int lanes = spmv_lanes(d->n ? d->rowptr[d->n] / d->n : 0, dcuda_thread_count());
    dcuda_start_cpu_timer(&st);

    /* (d's fields are read where they are used: held in locals across the
     * loop, they cost the kernel 64 registers a thread, a third of its
     * ranks.) */
    for (int k = 0; k < d->iters; k++) {
        if (p.first < p.end) { /* 1: my part of b_j, on and down the column */
            if (d->device % d->q > 0)
                dcuda_wait_notifications(&st, SPMV_TAG_B, 1);
            spmv_column_send(&st, win, d->q, d->device, &p, 0, d->vec, SPMV_TAG_B);
        }
        if (d->device % d->q > 0)
            dcuda_comm_barrier(&st, DCUDA_COMM_DEVICE); /* all of b_j is here */
        /* 2: my rows of A_ij b_j */
        spmv_multiply(d->rowptr, d->col, d->val, &p, lanes, 1.0, NULL, d->vec + spmv_at_x(d->n),
                      d->vec);
        dcuda_rank_sync(); /* my rows written before they are added or sent */
        /* 3: summed along the row */
        spmv_row_reduce(&st, win, d->q, d->n, d->device, &p, d->vec + spmv_at_x(d->n), d->vec,
                        spmv_at_recv(d->n, 0), SPMV_TAG_X);
        dcuda_comm_barrier(&st, DCUDA_COMM_WORLD);
    }

    dcuda_stop_cpu_timer(&st);
    /* Every put to me was waited for: none is in flight when the window
     * goes. Errors of any call are reported on the host. */
    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}
