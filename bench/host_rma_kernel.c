/*
 * Rank code of dcuda_host_rma: device rank 0 of every process exposes a
 * large part of a WORLD window (the others an empty one), hands the
 * handle to its host and waits at the host's gate while the host times
 * its puts and gets; the other ranks wait in a WORLD barrier meanwhile.
 */
#include "dcuda/dcuda_rank.h"
#include "host_rma.h"

DCUDA_RANK_FN void publish(int64_t *p, int64_t v)
{
#if defined(__CUDACC__)
    __threadfence_system();
    *(volatile int64_t *)p = v;
    __threadfence_system();
#else
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

DCUDA_RANK_FN int64_t poll(const int64_t *p)
{
#if defined(__CUDACC__)
    return *(const volatile int64_t *)p;
#else
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

/* Device rank 0: counts the host's notifications into its part, echoes
 * the host's flag, until its gate opens (process 0) or the host of
 * process 0 says stop. */
DCUDA_RANK_FN void answer_host(dcuda_state_t *st, host_rma_bench_t *d, int first)
{
    DCUDA_SHARED int64_t stop;
    int64_t notes = 0, echoed = 0;
    int64_t *count = (int64_t *)(void *)(d->part + HRB_COUNT);
    int64_t *echo = (int64_t *)(void *)(d->part + HRB_ECHO);
    const int64_t *ping = (const int64_t *)(const void *)(d->part + HRB_PING);
    for (;;) {
        int note = dcuda_test_notifications(st, HRB_TAG, 1);
        int stopped = first ? 0 : dcuda_test_notifications(st, HRB_STOP, 1);
        if (dcuda_thread_index() == 0) {
            int64_t flag = poll(ping);
            if (note == 1)
                publish(count, ++notes);
            if (flag != echoed)
                publish(echo, echoed = flag);
            stop = first ? poll(&d->words[HRB_GATE]) : stopped == 1;
        }
        dcuda_rank_sync();
        if (stop)
            break;
        dcuda_rank_sync();
    }
}

DCUDA_KERNEL(host_rma_bench, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    host_rma_bench_t *d = 0;
    int drank = 0;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK || dcuda_get_data(&st, (void **)&d) != DCUDA_OK)
        return;
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank);
    dcuda_win_t win = DCUDA_WIN_NONE;
    dcuda_status_t s =
        dcuda_win_create(&st, DCUDA_COMM_WORLD, d->part, drank == 0 ? d->part_bytes : 0, &win);
    dcuda_comm_barrier(&st, DCUDA_COMM_WORLD);
    if (drank == 0) {
        if (dcuda_thread_index() == 0) {
            d->words[HRB_HANDLE] = s == DCUDA_OK ? (int64_t)win : -1;
            publish(&d->words[HRB_READY], 1);
        }
        int wrank = 0;
        dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &wrank);
        answer_host(&st, d, wrank == 0);
    }
    dcuda_rank_sync();
    dcuda_comm_barrier(&st, DCUDA_COMM_WORLD); /* every host is done */
    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}
