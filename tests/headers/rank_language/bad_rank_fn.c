/* docs/rank-code.md: valid C11, refused by nvcc: a helper of rank code
 * without DCUDA_RANK_FN is host code there. */
#include "dcuda/dcuda_rank.h"

static int helper(int v) { return v + 1; }

DCUDA_KERNEL(rank_fn, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    if (dcuda_rank_init(ctx, &st) == DCUDA_OK)
        (void)helper(1);
    (void)dcuda_rank_finish(&st);
}
