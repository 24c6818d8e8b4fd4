/*
 * Rank code of the reduction demo, written once for CPU and GPU ranks (the
 * thesis' Listing 3.2 in C). Each rank sums its values, then the ranks
 * combine their sums along a binomial tree with notified puts; rank 0 ends
 * with the total.
 */
#include "dcuda/dcuda_rank.h"
#include "reduce.h"

DCUDA_KERNEL(reduce, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    int rank, size, local_rank, local_size;
    reduce_data_t *d;
    dcuda_win_t win;

    dcuda_rank_init(ctx, &st);
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &local_rank);
    dcuda_comm_size(&st, DCUDA_COMM_DEVICE, &local_size);
    dcuda_get_data(&st, (void **)&d);

    /* One window over the device's values and a receive slot per WORLD
     * rank; the windows of all ranks of this device coincide. */
    size_t bytes = ((size_t)local_size * REDUCE_VALUES_PER_RANK + (size_t)size) * sizeof(double);
    dcuda_win_create(&st, DCUDA_COMM_WORLD, d->data, bytes, &win);
    dcuda_start_cpu_timer(&st);

    /* Rank-local sum. */
    double *mine = &d->data[local_rank * REDUCE_VALUES_PER_RANK];
    if (dcuda_thread_index() == 0)
        for (int i = 1; i < REDUCE_VALUES_PER_RANK; i++)
            mine[0] += mine[i];
    dcuda_rank_sync();

    /* Binomial tree: in round r, ranks at odd multiples of 2^r send to the
     * rank 2^r below them. The slot for a sender is buffer[sender]. */
    size_t slot = ((size_t)local_size * REDUCE_VALUES_PER_RANK + (size_t)rank) * sizeof(double);
    for (int step = 1, round = 0; step < size; step *= 2, round++) {
        int range = 2 * step;
        if (rank % range == step)
            dcuda_put_notify(&st, win, rank - step, slot, sizeof(double), mine, round % 256);
        if (rank % range == 0 && rank + step < size) {
            dcuda_wait_notifications(&st, round % 256, 1);
            if (dcuda_thread_index() == 0)
                mine[0] += d->buffer[rank + step];
            dcuda_rank_sync();
        }
    }

    dcuda_stop_cpu_timer(&st);
    if (rank == 0 && dcuda_thread_index() == 0) {
        d->result = mine[0];
        dcuda_log(&st, "sum = %.1f", d->result);
    }
    /* Errors of any call above are reported on the host and make
     * dcuda_host_run fail, so the rank code need not check each one. */
    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}
