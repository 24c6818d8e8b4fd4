/*
 * Rank code of the bootstrap test: a ring around WORLD (each rank notifies
 * its right neighbour, waits for its left one's) and a WORLD barrier, so
 * that a group started any way also moves notifications between its
 * processes, across hosts where they are. Written once for CPU and GPU.
 */
#include "dcuda/dcuda_rank.h"

DCUDA_KERNEL(boot_ring, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    int me = 0, size = 0, drank = 0;
    int64_t **data, *ok;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dcuda_get_data(&st, (void **)&data); /* the user struct: the findings' address */
    ok = *data;
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &me);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank);
    int good = dcuda_notify(&st, (me + 1) % size, DCUDA_COMM_WORLD, 9) == DCUDA_OK;
    good &= dcuda_wait_notifications(&st, 9, 1) == DCUDA_OK;
    good &= dcuda_comm_barrier(&st, DCUDA_COMM_WORLD) == DCUDA_OK;
    dcuda_rank_finish(&st);
    if (dcuda_thread_index() == 0)
        ok[drank] = good;
}

/* Every rank waits for a notification nobody sends: only a lost process
 * ends the run. */
DCUDA_KERNEL(boot_wait, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dcuda_wait_notifications(&st, 5, 1);
    dcuda_rank_finish(&st);
}
