/*
 * Rank code of the Python tests (test_host.py): each rank makes a window
 * of its part, leaves its handle for the host and tells it (tag 1); once
 * the host put its values (tag 2) it doubles them and adds its rank, tells
 * the host (tag 3), and waits until the host has read them (tag 4). With
 * bad set, rank 0 puts to a rank that does not exist (DCUDA_ERR_RANK).
 */
#include <stdint.h>

#include "dcuda/dcuda_rank.h"

typedef struct rma_data {
    double *parts;    /* [device ranks][n] */
    int64_t *handles; /* [device ranks] */
    int n, bad;
} rma_data_t;

DCUDA_KERNEL(rma, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    rma_data_t *d;
    int rank = 0, size = 0, drank = 0;
    dcuda_win_t win;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dcuda_get_data(&st, (void **)&d);
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank);
    double *part = d->parts + (size_t)drank * (size_t)d->n;
    dcuda_win_create(&st, DCUDA_COMM_WORLD, part, (size_t)d->n * sizeof(double), &win);
    if (d->bad) {
        if (rank == 0)
            dcuda_put(&st, win, size, 0, sizeof(double), part);
    } else {
        if (dcuda_thread_index() == 0)
            d->handles[drank] = (int64_t)win;
        dcuda_notify_host(&st, 1);
        dcuda_wait_notifications(&st, 2, 1);
        for (int i = dcuda_thread_index(); i < d->n; i += dcuda_thread_count())
            part[i] = part[i] * 2.0 + rank;
        dcuda_rank_sync();
        dcuda_notify_host(&st, 3);
        dcuda_wait_notifications(&st, 4, 1);
    }
    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}
