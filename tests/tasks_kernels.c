/*
 * Rank code of the test of tasks (dcuda_test_tasks): tasks need no run of
 * ranks, but a runtime starts with a kernel; this one only initialises
 * and finishes. Written once for CPU and GPU ranks.
 */
#include "dcuda/dcuda_rank.h"

DCUDA_KERNEL(tasks_idle, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dcuda_rank_finish(&st);
}
