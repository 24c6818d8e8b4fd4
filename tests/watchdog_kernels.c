/*
 * Rank code of the watchdog suite (dcuda_test_watchdog): ranks block in a
 * wait or a barrier that can never complete, so that only the watchdog (with
 * WATCHDOG_CANCEL) ends them. Rank API only, no libc; written once for CPU
 * and GPU ranks.
 */
#include "dcuda/dcuda_rank.h"
#include "watchdog.h"

DCUDA_KERNEL(watchdog, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    wd_data_t *d = 0;
    int rank = -1, size = 0, drank = -1, dsize = 0;
    int64_t setup = 0, call = 0;
    test_note(&setup, dcuda_rank_init(ctx, &st));
    if (dcuda_get_data(&st, (void **)&d) != DCUDA_OK) {
        dcuda_rank_finish(&st);
        return;
    }
    test_note(&setup, dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank));
    test_note(&setup, dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size));
    test_note(&setup, dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank));
    test_note(&setup, dcuda_comm_size(&st, DCUDA_COMM_DEVICE, &dsize));
    if (d->test_case == WD_WAIT) {
        if (rank == 0) {
            if (d->log_marker && dcuda_thread_index() == 0)
                test_note(&setup, dcuda_log(&st, "watchdog-marker %u: rank 0 starts to wait",
                                            (unsigned)d->nonce));
            /* The others block only after rank 0 does, so the watchdog's
             * first report finds rank 0 blocked. */
            for (int r = 1; r < size; r++)
                test_note(&setup, dcuda_notify(&st, r, DCUDA_COMM_WORLD, WD_TAG_GO));
            call = dcuda_wait_notifications(&st, d->tag, 1);
        } else {
            test_note(&setup, dcuda_wait_notifications(&st, WD_TAG_GO, 1));
        }
    } else if (d->test_case == WD_BARRIER) {
        /* The last rank of each device skips: every process blocks. */
        if (drank != dsize - 1)
            call = dcuda_comm_barrier(&st, DCUDA_COMM_DEVICE);
    }
    int64_t fin = dcuda_rank_finish(&st);
    if (dcuda_thread_index() == 0) {
        int64_t *res = d->res + rank * WD_SLOTS;
        res[WD_RES_CALL] = call;
        res[WD_RES_FINISH] = fin;
        res[WD_RES_SETUP] = setup;
    }
}
