/*
 * Rank code of the NVTX test (dcuda_test_nvtx): work for the proxy (a
 * ping, and over NET_LOOPBACK a ring of notifications through it), a
 * misuse that logs a rank's error, or a wait nobody answers (ended by an
 * abort or the deadlock detector). Rank API only.
 */
#include "dcuda/dcuda_rank.h"
#include "nvtx_test.h"

DCUDA_KERNEL(nvtx_ranks, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    nvtx_test_data_t *d;
    int rank = 0, size = 0, drank = 0, good = 1;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dcuda_get_data(&st, (void **)&d);
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank);
    if (d->mode == NVTX_TEST_RING) {
        good &= dcuda_rank_ping_host(&st) == DCUDA_OK;
        good &= dcuda_notify(&st, (rank + 1) % size, DCUDA_COMM_WORLD, NVTX_TEST_TAG) == DCUDA_OK;
        good &= dcuda_wait_notifications(&st, NVTX_TEST_TAG, 1) == DCUDA_OK;
        good &= dcuda_comm_barrier(&st, DCUDA_COMM_WORLD) == DCUDA_OK;
    } else if (d->mode == NVTX_TEST_MISUSE) {
        if (rank == 0)
            good = dcuda_notify(&st, size + 1000, DCUDA_COMM_WORLD, NVTX_TEST_TAG) != DCUDA_OK;
    } else {
        good = dcuda_wait_notifications(&st, NVTX_TEST_TAG, 1) != DCUDA_OK;
    }
    if (dcuda_thread_index() == 0)
        d->res[drank] = good;
    dcuda_rank_finish(&st);
}
