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
