/*
 * Rank code of the host-thread suite (dcuda_test_threads): every rank
 * waits for a notification nobody sends (only an abort, or the deadlock
 * detector, ends such a run), or the ranks meet once each process's host
 * released its first rank (a word it copies in during the run), or after
 * the last one has computed for a while (a run that lasts but ends by
 * itself). Rank API only; written once for CPU and GPU ranks.
 */
#include "dcuda/dcuda_rank.h"
#include "threads.h"

DCUDA_KERNEL(threads, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    threads_data_t *d;
    int rank = 0, size = 0, drank = 0;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dcuda_get_data(&st, (void **)&d);
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank);
    int s;
    if (d->wait_forever) {
        s = dcuda_wait_notifications(&st, THREADS_TAG_NOBODY, 1);
    } else if (d->hold) {
        while (drank == 0 && test_poll_word(d->release) == 0) { /* copied in mid-run */
        }
        s = dcuda_comm_barrier(&st, DCUDA_COMM_WORLD);
    } else {
        volatile uint32_t x = 1u; /* computed, not optimised away */
        for (uint64_t i = 0; rank == size - 1 && i < d->work; i++)
            x = x * 1664525u + 1013904223u;
        s = dcuda_comm_barrier(&st, DCUDA_COMM_WORLD);
    }
    if (dcuda_thread_index() == 0)
        d->res[drank] = s;
    dcuda_rank_finish(&st);
}
