/*
 * Rank code of the host command test: every rank sends many pings through
 * the host runtime's command queue at once (the ring wraps many times) and
 * counts the answers that came back DCUDA_OK. Written once for CPU and GPU.
 */
#include "dcuda/dcuda_rank.h"
#include "test_common.h"

#define HOSTCMD_PINGS 100

DCUDA_KERNEL(hostcmd, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    int64_t **user, *ok; /* the user struct is the address of the results */
    int me, good = 0;
    dcuda_rank_init(ctx, &st);
    dcuda_get_data(&st, (void **)&user);
    ok = *user;
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &me);
    for (int i = 0; i < HOSTCMD_PINGS; i++)
        good += dcuda_rank_ping_host(&st) == DCUDA_OK;
    if (dcuda_thread_index() == 0)
        ok[me] = good;
    dcuda_rank_finish(&st);
}
