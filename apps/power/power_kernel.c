/*
 * Rank code of the power iteration case study, written once for CPU and
 * GPU ranks: the six steps of the thesis' figures 5.12 and 5.13, each run
 * per rank (power.h has the math and the window, spmv.h the grid). In
 * iteration k, rank l of every device, on its part of the rows:
 *   1. y_k goes down each grid column: rank l forwards its part to rank l
 *      of its children as soon as it arrived; a device barrier then lets
 *      every rank read all of y_k, and publishes fac_k (written by the
 *      device's leader, local rank 0);
 *   2+3. x = fac_k * A_ij y_k for my rows (the normalisation folded in);
 *   4. x summed along the grid row onto the first grid column (rank l adds
 *      what rank l of its children sent, and sends the sum on);
 *   5. on the first grid column, x_i becomes the next y_i: rank l of device
 *      (i, 0) sends its part across to rank l of device (0, i) (device 0
 *      sums its x where its next y goes);
 *   6. the norm: rank l of a first-column device stores the sum of squares
 *      of its part and notifies its leader; the leader sums its ranks' and
 *      sends the device's sum to the leaders of every device; each leader
 *      sums the q device sums (in grid row order: the same fac everywhere)
 *      and stores fac_{k+1} for the next device barrier. On one device
 *      every warp of every rank adds its sum to the device's sum of squares
 *      (atomic adds, as the baseline's blocks do, spread over
 *      SPMV_SCALE_PARTS parts), and after the next device barrier every rank
 *      takes fac from it while its first rows load.
 * No global barrier: ranks wait only for the data they read.
 *
 * Why buffers written in iteration k + 1 are not still read from iteration
 * k (or k - 1, for those kept twice): fac_{k+1} depends on every rank's
 * rows of x_k, so no rank multiplies in iteration k + 1 before every rank of
 * every device has multiplied in iteration k. y, x, the ranks' and the
 * devices' sums and fac are kept twice (by parity) because a device may
 * still read iteration k's while others have moved on to write iteration
 * k + 1's; each is written again only two iterations later, after a
 * dependency on every reader of the last. The device sums carry the
 * parity in their tag: a leader's q notifications are those of one
 * iteration. The one-device sum of squares of x_k has three slots (k % 3):
 * added to in iteration k, read in k + 1, zeroed by local rank 0 in k + 2
 * (after the device barrier that follows every read), added to again in
 * k + 3 (after the barrier that follows the zeroing).
 */
#include <math.h>

#include "dcuda/dcuda_rank.h"
#include "power.h"
#include "spmv_rank.h"

#define POWER_TAG_Y 0        /* my part of y_k arrived (from my column parent, or across) */
#define POWER_TAG_X 1        /* + step: a partial sum arrived at that step of the row */
#define POWER_TAG_NORM 100   /* leader: a rank of my device stored its sum of squares */
#define POWER_TAG_DEVSUM 101 /* + parity, leader: a first-column device's sum arrived */

/* The sum of every thread's s over the rank, in a fixed order; valid in
 * thread 0. */
DCUDA_RANK_FN double power_rank_total(double s)
{
#if defined(__CUDA_ARCH__)
    __shared__ double warp_sums[32];
    int t = dcuda_thread_index(), warps = (dcuda_thread_count() + 31) / 32;
    s = spmv_group_sum(s, 32);
    if (t % 32 == 0)
        warp_sums[t / 32] = s;
    __syncthreads();
    if (t == 0)
        for (int w = 1; w < warps; w++)
            s += warp_sums[w];
    __syncthreads(); /* warp_sums read before the next call writes it */
#endif
    return s;
}

/* This thread's share of the sum of v[first..end) (of its squares when
 * `square`), for power_rank_total. */
DCUDA_RANK_FN double power_thread_sum(const double *v, int first, int end, int square)
{
    double s = 0.0;
    for (int r = first + dcuda_thread_index(); r < end; r += dcuda_thread_count())
        s += square ? v[r] * v[r] : v[r];
    return s;
}

/* Ranks of a device with rows: 0..this - 1 (app_parts.h gives the first
 * n % ranks parts one row more). */
DCUDA_RANK_FN int power_ranks_with_rows(int n, const spmv_part_t *p)
{
    return n < p->ranks ? n : p->ranks;
}

/* Leader of my device, before iteration k + 1 (prev = k % 2): fac_{k+1}
 * from the first grid column's sums of squares of x_k, stored in my
 * device's fac slot for parity 1 - prev. */
DCUDA_RANK_FN void power_leader_fac(dcuda_state_t *st, dcuda_win_t win, const spmv_data_t *d,
                                    const spmv_part_t *p, int prev)
{
    int q = d->q, row = d->device % q, column = d->device / q;
    int parts = power_ranks_with_rows(d->n, p);
    size_t devsum = power_at_devsum(d->n, q, p->ranks, prev);
    if (column == 0) { /* my ranks' sums, then mine to every leader */
        if (parts > 1)
            dcuda_wait_notifications(st, POWER_TAG_NORM, parts - 1);
        const double *partial = d->vec + power_at_partial(d->n, q, p->ranks, prev);
        double s = power_rank_total(power_thread_sum(partial, 0, parts, 0));
        if (dcuda_thread_index() == 0)
            d->vec[devsum + row] = s;
        dcuda_rank_sync(); /* stored before it is sent */
        for (int dev = 0; dev < q * q; dev++)
            if (dev != d->device)
                dcuda_put_notify(st, win, spmv_world_rank(q, p->ranks, 0, dev % q, dev / q),
                                 (devsum + (size_t)row) * sizeof(double), sizeof(double),
                                 d->vec + devsum + row, POWER_TAG_DEVSUM + prev);
    }
    if (q - (column == 0) > 0)
        dcuda_wait_notifications(st, POWER_TAG_DEVSUM + prev, q - (column == 0));
    if (dcuda_thread_index() == 0) {
        double s = 0.0;
        for (int i = 0; i < q; i++)
            s += d->vec[devsum + i];
        d->vec[power_at_fac(d->n, q, p->ranks, 1 - prev)] = 1.0 / sqrt(s);
    }
}

/* One device: this thread's share s of my rank's sum of squares added to
 * the device's, kept in SPMV_SCALE_PARTS parts. A GPU rank's warps each
 * add their sum to a part of their own (atomic adds in GPU memory; no
 * block barrier), a CPU rank (a thread of the process) its own with a
 * compare-and-swap loop. What orders them before the reads is the device
 * barrier that follows. */
DCUDA_RANK_FN void power_add_squares(double *parts, int local, double s)
{
#if defined(__CUDA_ARCH__)
    s = spmv_group_sum(s, 32);
    int warps = (dcuda_thread_count() + 31) / 32, warp = dcuda_thread_index() / 32;
    if (dcuda_thread_index() % 32 == 0)
        atomicAdd(parts + (local * warps + warp) % SPMV_SCALE_PARTS, s);
#else
    double *to = parts + local % SPMV_SCALE_PARTS, old, sum;
    __atomic_load(to, &old, __ATOMIC_RELAXED);
    do
        sum = old + s;
    while (!__atomic_compare_exchange(to, &old, &sum, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
#endif
}

/* One device, thread 0 of local rank 0 after the device barrier of
 * iteration k (norm2: ||y_k||^2's slot, read in k): the slot added to in
 * k + 1 zeroed (its last reads were in k - 1), and in the last iteration
 * fac_k stored for the host. */
DCUDA_RANK_FN void power_norm2_rotate(const spmv_data_t *d, int ranks, int k, const double *norm2)
{
    if (k == d->iters) {
        d->vec[power_at_fac(d->n, 1, ranks, k & 1)] = 1.0 / sqrt(spmv_scale_sum(norm2));
        return;
    }
    double *next = d->vec + power_at_norm2(d->n, 1, ranks, (k + 1) % 3);
    for (int i = 0; i < SPMV_SCALE_PARTS; i++)
        next[i] = 0.0;
}

/* Steps 5 and 6 of a rank of a first-column device with rows in iteration
 * k, x summed: its part across to the first grid row as the next y (device
 * 0 summed it there), and the sum of its squares to my leader, or on one
 * device (where `squares` is this thread's share) to the device's sum. */
DCUDA_RANK_FN void power_transpose_and_norm(dcuda_state_t *st, dcuda_win_t win,
                                            const spmv_data_t *d, const spmv_part_t *p, int k,
                                            const double *x, double squares)
{
    int q = d->q, row = d->device % q, cur = k & 1;
    if (row > 0)
        dcuda_put_notify(st, win, spmv_world_rank(q, p->ranks, p->local, 0, row),
                         (power_at_y(d->n, 1 - cur) + (size_t)p->first) * sizeof(double),
                         (size_t)(p->end - p->first) * sizeof(double), x + p->first, POWER_TAG_Y);
    if (q == 1) {
        power_add_squares(d->vec + power_at_norm2(d->n, 1, p->ranks, k % 3), p->local, squares);
        return;
    }
    /* (the multiplication's squares are those of x before the row's sum) */
    double s = power_rank_total(power_thread_sum(x, p->first, p->end, 1));
    if (dcuda_thread_index() == 0)
        d->vec[power_at_partial(d->n, q, p->ranks, cur) + p->local] = s;
    dcuda_rank_sync(); /* stored before the notification releases it */
    if (p->local > 0)
        dcuda_notify(st, 0, DCUDA_COMM_DEVICE, POWER_TAG_NORM);
}

DCUDA_KERNEL(power, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    spmv_data_t *d;
    dcuda_win_t win;

    dcuda_rank_init(ctx, &st);
    dcuda_get_data(&st, (void **)&d);
    spmv_part_t p = spmv_part_of(&st, d->n);
    size_t bytes = power_window_doubles(d->n, d->q, p.ranks) * sizeof(double);
    dcuda_win_create(&st, DCUDA_COMM_WORLD, d->vec, bytes, &win);
    int lanes = spmv_lanes(d->n ? d->rowptr[d->n] / d->n : 0, dcuda_thread_count());
    dcuda_start_cpu_timer(&st);

    /* (d's fields are read where they are used, as in SpMV: fewer
     * registers.) Iteration iters only collects the last y and fac. */
    for (int k = 0;; k++) {
        int row = d->device % d->q, gets_y = row > 0 ? k < d->iters : d->device > 0 && k > 0;
        if (p.first < p.end && gets_y)
            dcuda_wait_notifications(&st, POWER_TAG_Y, 1);
        if (p.first < p.end && k < d->iters) /* 1: my part of y_k down the column */
            spmv_column_send(&st, win, d->q, d->device, &p, power_at_y(d->n, k & 1),
                             d->vec + power_at_y(d->n, k & 1), POWER_TAG_Y);
        if (p.local == 0 && k > 0 && d->q > 1) /* (after forwarding: the sums may need it) */
            power_leader_fac(&st, win, d, &p, 1 - (k & 1));
        if (k == d->iters && d->q > 1)
            break;
        dcuda_comm_barrier(&st, DCUDA_COMM_DEVICE); /* all of y_k, and fac_k, are here */
        /* fac_k: stored by my leader, or on one device from ||y_k||^2 */
        const double *norm2 =
            d->q == 1 ? d->vec + power_at_norm2(d->n, 1, p.ranks, (k + 2) % 3) : NULL;
        if (norm2 && p.local == 0 && dcuda_thread_index() == 0)
            power_norm2_rotate(d, p.ranks, k, norm2);
        if (k == d->iters)
            break;
        double fac = d->q > 1 ? d->vec[power_at_fac(d->n, d->q, p.ranks, k & 1)] : 1.0;
        /* 2+3: my rows of fac_k * A_ij y_k; device 0 sums x where its next
         * y goes (its transposition is the identity) */
        double *x =
            d->vec + (d->device == 0 ? power_at_y(d->n, 1 - (k & 1)) : power_at_x(d->n, k & 1));
        double squares = spmv_multiply(d->rowptr, d->col, d->val, &p, lanes, fac, norm2, x,
                                       d->vec + power_at_y(d->n, k & 1));
        dcuda_rank_sync(); /* my rows written before they are added or sent */
        /* 4: summed along the row */
        spmv_row_reduce(&st, win, d->q, d->n, d->device, &p, x, d->vec, power_at_recv(d->n),
                        POWER_TAG_X);
        if (d->device < d->q && p.first < p.end) /* 5 and 6, on the first grid column */
            power_transpose_and_norm(&st, win, d, &p, k, x, squares);
    }

    dcuda_stop_cpu_timer(&st);
    /* Every put to me was waited for: none is in flight when the window
     * goes. Errors of any call are reported on the host. */
    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}
