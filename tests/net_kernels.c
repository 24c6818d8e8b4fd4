/* Rank code of the network-path fault test: every rank waits for a
 * notification that no rank sends, so only a lost peer can end the run. */
#include "dcuda/dcuda_rank.h"

DCUDA_KERNEL(net_wait, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dcuda_wait_notifications(&st, 3, 1);
    dcuda_rank_finish(&st);
}

/* Every rank notifies its counterpart in the next process and waits for
 * its counterpart in the previous one (dcuda_test_net connections). */
DCUDA_KERNEL(net_ring, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    int rank = 0, size = 1, dsize = 1;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size);
    dcuda_comm_size(&st, DCUDA_COMM_DEVICE, &dsize);
    dcuda_notify(&st, (rank + dsize) % size, DCUDA_COMM_WORLD, 5);
    dcuda_wait_notifications(&st, 5, 1);
    dcuda_rank_finish(&st);
}
