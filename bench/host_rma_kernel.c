/*
 * Rank code of dcuda_host_rma: device rank 0 of every process exposes a
 * large part of a WORLD window (the others an empty one), hands the
 * handle to its host and waits at the host's gate while the host times
 * its puts and gets; the other ranks wait in a WORLD barrier meanwhile.
 */
#include "dcuda/dcuda_rank.h"
#include "host_rma.h"

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
#if defined(__CUDACC__)
            __threadfence_system();
            *(volatile int64_t *)&d->words[HRB_READY] = 1;
#else
            __atomic_store_n(&d->words[HRB_READY], 1, __ATOMIC_RELEASE);
#endif
        }
#if defined(__CUDACC__)
        while (*(volatile int64_t *)&d->words[HRB_GATE] == 0) {
        }
#else
        while (__atomic_load_n(&d->words[HRB_GATE], __ATOMIC_ACQUIRE) == 0) {
        }
#endif
    }
    dcuda_rank_sync();
    dcuda_comm_barrier(&st, DCUDA_COMM_WORLD); /* every host is done */
    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}
