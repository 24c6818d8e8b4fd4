/*
 * Rank code of the host command test: every rank sends many pings through
 * the host runtime's command queue at once (the ring wraps many times) and
 * counts the answers that came back DCUDA_OK; in the laggard case one rank
 * pings only after the others wrapped the ring. Written once for CPU and
 * GPU.
 */
#include "dcuda/dcuda_rank.h"
#include "hostcmd.h"
#include "test_common.h"

TEST_RANK_FN int ping_many(dcuda_state_t *st, int pings)
{
    int good = 0;
    for (int i = 0; i < pings; i++)
        good += dcuda_rank_ping_host(st) == DCUDA_OK;
    return good;
}

DCUDA_KERNEL(hostcmd, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    hostcmd_t *user;
    int me, dev, devs, good = 0;
    dcuda_rank_init(ctx, &st);
    dcuda_get_data(&st, (void **)&user);
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &me);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &dev);
    dcuda_comm_size(&st, DCUDA_COMM_DEVICE, &devs);
    if (!user->laggard) {
        good = ping_many(&st, HOSTCMD_PINGS);
    } else if (dev == 0) {
        good = ping_many(&st, 1);
        if (devs > 1)
            dcuda_wait_notifications(&st, HOSTCMD_DONE_TAG, devs - 1);
        good += ping_many(&st, HOSTCMD_PINGS - 1);
    } else {
        good = ping_many(&st, HOSTCMD_PINGS);
        dcuda_notify(&st, 0, DCUDA_COMM_DEVICE, HOSTCMD_DONE_TAG);
    }
    if (dcuda_thread_index() == 0)
        user->ok[me] = good;
    dcuda_rank_finish(&st);
}
