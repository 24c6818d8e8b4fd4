/*
 * Rank code of the deadlock suite (dcuda_test_deadlock): each case leaves
 * every rank blocked with nothing in flight, in a different way, or (the
 * slow cases) keeps some rank busy for a while without deadlock. Rank API
 * only; written once for CPU and GPU ranks.
 */
#include "dcuda/dcuda_rank.h"
#include "deadlock.h"

DCUDA_RANK_FN void dl_setup(int64_t *first, int status) { test_note(first, status); }

/* Computes for `steps` steps (a chain of dependent multiply-adds): the
 * rank runs meanwhile, so the others' waits can still be satisfied. */
DCUDA_RANK_FN uint32_t dl_busy(uint64_t steps)
{
    uint32_t x = 12345u;
    for (uint64_t i = 0; i < steps; i++)
        x = x * 1664525u + 1013904223u;
    return x;
}

DCUDA_RANK_FN int dl_case(dcuda_state_t *st, const dl_data_t *d, int rank, int size, int drank,
                          int dsize, int64_t *setup, int64_t *work)
{
    int right = (rank + 1) % size;
    switch (d->test_case) {
    case DL_WRONG_TAG:
        dl_setup(setup, dcuda_notify(st, right, DCUDA_COMM_WORLD, DL_TAG_SENT));
        return dcuda_wait_notifications(st, DL_TAG_WAITED, 1);
    case DL_MISSING_NOTIFY:
        dl_setup(setup, dcuda_notify(st, right, DCUDA_COMM_WORLD, DL_TAG_COUNT));
        return dcuda_wait_notifications(st, DL_TAG_COUNT, 2);
    case DL_MISSING_BARRIER:
        if (rank == 0)
            return dcuda_wait_notifications(st, DL_TAG_NOBODY, 1);
        return dcuda_comm_barrier(st, DCUDA_COMM_WORLD);
    case DL_DEVICE_BARRIER:
        if (drank == dsize - 1)
            return dcuda_wait_notifications(st, DL_TAG_NOBODY, 1);
        return dcuda_comm_barrier(st, DCUDA_COMM_DEVICE);
    case DL_SLOW:
        if (rank == 0) {
            *work = dl_busy(d->work);
            dl_setup(setup, dcuda_notify(st, 1, DCUDA_COMM_WORLD, DL_TAG_SLOW));
        } else if (rank == 1) {
            dl_setup(setup, dcuda_wait_notifications(st, DL_TAG_SLOW, 1));
        }
        return dcuda_comm_barrier(st, DCUDA_COMM_WORLD);
    case DL_SLOW_PROCESS:
        if (rank + dsize >= size) /* my process is the last */
            *work = dl_busy(d->work);
        return dcuda_comm_barrier(st, DCUDA_COMM_WORLD);
    case DL_PROCESS_ENDS:
        if (rank + dsize >= size) /* my process is the last: done at once */
            return DCUDA_OK;
        return dcuda_wait_notifications(st, DL_TAG_NOBODY, 1);
    default:
        return DCUDA_ERR_INVALID_ARG;
    }
}

DCUDA_KERNEL(deadlock, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    dl_data_t *d;
    int64_t setup = 0, work = 0;
    int rank = 0, size = 0, drank = 0, dsize = 0;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dl_setup(&setup, dcuda_get_data(&st, (void **)&d));
    dl_setup(&setup, dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank));
    dl_setup(&setup, dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size));
    dl_setup(&setup, dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank));
    dl_setup(&setup, dcuda_comm_size(&st, DCUDA_COMM_DEVICE, &dsize));
    int call = dl_case(&st, d, rank, size, drank, dsize, &setup, &work);
    int finish = dcuda_rank_finish(&st);
    if (dcuda_thread_index() == 0) {
        int64_t *res = d->res + (int64_t)drank * DL_SLOTS;
        res[DL_RES_CALL] = call;
        res[DL_RES_FINISH] = finish;
        res[DL_RES_SETUP] = setup;
        res[DL_RES_WORK] = work;
    }
}
