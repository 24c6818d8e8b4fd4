/* Rank code of the process-fault tests: every rank waits for a notification
 * that no rank sends, so only the death of a peer process can end the run. */
#include "dcuda/dcuda_rank.h"

DCUDA_KERNEL(procs_wait, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dcuda_wait_notifications(&st, 5, 1);
    dcuda_rank_finish(&st);
}
