/*
 * Rank code of the faults suite (dcuda_test_faults): a rank that joins a
 * barrier late (the others stay blocked for a while), notifications left
 * unconsumed at dcuda_rank_finish, a ring of puts into memory from the
 * last of many allocations, errors that end the run (or repeat on every
 * rank), notifications the watchdog must count exactly, and ranks that
 * leave the kernel early. Written once for CPU and GPU ranks; only the
 * delay reads a clock of its own compiler, and only CPU ranks have a
 * thread to end.
 */
#if !defined(__CUDACC__)
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <time.h>
#endif

#include "dcuda/dcuda_rank.h"
#include "faults.h"

/* Blocks the calling rank for about `ms` milliseconds. */
TEST_RANK_FN void fault_delay_ms(int ms)
{
#if defined(__CUDACC__)
    uint64_t start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(100000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < (uint64_t)ms * 1000000u);
    dcuda_rank_sync();
#else
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
#endif
}

/* Rank 0 notifies the last rank `count` times; the last rank consumes one. */
TEST_RANK_FN int64_t fault_leftover(dcuda_state_t *st, const fault_data_t *d, int rank, int size)
{
    int64_t first = 0;
    if (rank == 0)
        for (int i = 0; i < d->count; i++)
            test_note(&first, dcuda_notify(st, size - 1, DCUDA_COMM_WORLD, d->tag));
    if (rank == size - 1)
        test_note(&first, dcuda_wait_notifications(st, d->tag, 1));
    return first;
}

/* Each rank sends FAULT_RING_VALUE(rank) into word 1 of its right
 * neighbour's part; *value gets what arrived from the left. */
TEST_RANK_FN int64_t fault_ring_put(dcuda_state_t *st, const fault_data_t *d, int rank, int size,
                                    int drank, int64_t *value)
{
    int64_t first = 0;
    int64_t *mine = d->parts + (size_t)drank * FAULT_PART_WORDS;
    dcuda_win_t win;
    if (dcuda_thread_index() == 0) {
        mine[0] = FAULT_RING_VALUE(rank);
        mine[1] = 0;
    }
    test_note(&first, dcuda_win_create(st, DCUDA_COMM_WORLD, mine,
                                       FAULT_PART_WORDS * sizeof(int64_t), &win));
    test_note(&first, dcuda_put_notify(st, win, (rank + 1) % size, sizeof(int64_t), sizeof(int64_t),
                                       &mine[0], FAULT_RING_TAG));
    test_note(&first, dcuda_wait_notifications(st, FAULT_RING_TAG, 1));
    *value = mine[1];
    test_note(&first, dcuda_win_free(st, win));
    return first;
}

/* The culprit notifies with a bad tag (its status in *faulty); then every
 * rank waits for a notification nobody sends: only the end of the run
 * (ON_ERROR=abort) releases it. */
TEST_RANK_FN int64_t fault_first_error(dcuda_state_t *st, const fault_data_t *d, int rank,
                                       int64_t *faulty)
{
    if (rank == d->culprit)
        *faulty = dcuda_notify(st, 0, DCUDA_COMM_WORLD, FAULT_BAD_TAG);
    return dcuda_wait_notifications(st, FAULT_NEVER_TAG, 1);
}

/* The last rank consumes `count` notifications of tag 0, leaves one of tag
 * 2 pending, and waits for tag 1, which never comes. The barrier lets every
 * notification arrive first, so that the rank blocks only on tag 1. */
TEST_RANK_FN int64_t fault_watch_counts(dcuda_state_t *st, const fault_data_t *d, int rank,
                                        int size)
{
    int64_t first = 0;
    if (rank == 0) {
        for (int i = 0; i < d->count; i++)
            test_note(&first, dcuda_notify(st, size - 1, DCUDA_COMM_WORLD, 0));
        test_note(&first, dcuda_notify(st, size - 1, DCUDA_COMM_WORLD, 2));
    }
    test_note(&first, dcuda_comm_barrier(st, DCUDA_COMM_WORLD));
    if (rank == size - 1) {
        test_note(&first, dcuda_wait_notifications(st, 0, d->count));
        return dcuda_wait_notifications(st, 1, 1);
    }
    return first;
}

/* `count` rounds: each rank puts its round's value into word 1 of its
 * right neighbour's part, waits for its left neighbour's, checks it, tells
 * the left one its word is free again, and waits for the same from the
 * right before the next round; every round sleeps delay_ms. Returns the
 * first failing status; *good counts the rounds that arrived right. */
TEST_RANK_FN int64_t fault_long_ring(dcuda_state_t *st, const fault_data_t *d, int rank, int size,
                                     int drank, int64_t *good)
{
    int64_t first = 0;
    int64_t *mine = d->parts + (size_t)drank * FAULT_PART_WORDS;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    dcuda_win_t win;
    test_note(&first, dcuda_win_create(st, DCUDA_COMM_WORLD, mine,
                                       FAULT_PART_WORDS * sizeof(int64_t), &win));
    for (int i = 1; i <= d->count && first == 0; i++) {
        if (dcuda_thread_index() == 0)
            mine[0] = FAULT_ROUND_VALUE(rank, i);
        test_note(&first, dcuda_put_notify(st, win, right, sizeof(int64_t), sizeof(int64_t),
                                           &mine[0], FAULT_RING_TAG));
        test_note(&first, dcuda_wait_notifications(st, FAULT_RING_TAG, 1));
        *good += mine[1] == FAULT_ROUND_VALUE(left, i);
        dcuda_rank_sync(); /* every thread read mine[1] before it is handed back */
        test_note(&first, dcuda_notify(st, left, DCUDA_COMM_WORLD, FAULT_ACK_TAG));
        test_note(&first, dcuda_wait_notifications(st, FAULT_ACK_TAG, 1));
        fault_delay_ms(d->delay_ms);
    }
    test_note(&first, dcuda_win_free(st, win));
    return first;
}

/* Result slots of rank `rank`, written by thread 0. */
TEST_RANK_FN void fault_result(const fault_data_t *d, int rank, int64_t call, int64_t value,
                               int64_t setup)
{
    if (dcuda_thread_index() == 0 && d->res && rank >= 0) {
        int64_t *res = d->res + (size_t)rank * FAULT_SLOTS;
        res[FAULT_RES_CALL] = call;
        res[FAULT_RES_VALUE] = value;
        res[FAULT_RES_SETUP] = setup;
    }
}

/* The culprit of FAULT_EARLY_RETURN and FAULT_THREAD_EXIT leaves here:
 * 1 if the kernel must return now. */
TEST_RANK_FN int fault_leave_early(const fault_data_t *d, int rank, int64_t setup)
{
    if (rank != d->culprit ||
        (d->test_case != FAULT_EARLY_RETURN && d->test_case != FAULT_THREAD_EXIT))
        return 0;
    fault_result(d, rank, 0, 0, setup);
    if (d->test_case == FAULT_EARLY_RETURN)
        return 1;
#if !defined(__CUDACC__)
    if (d->test_case == FAULT_THREAD_EXIT)
        pthread_exit(NULL);
#endif
    return 0;
}

DCUDA_KERNEL(faults, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    fault_data_t *d = 0;
    int rank = -1, size = 0, drank = -1;
    int64_t setup = 0, call = 0, value = 0;
    int init = dcuda_rank_init(ctx, &st);
    test_note(&setup, init);
    if (dcuda_get_data(&st, (void **)&d) != DCUDA_OK) {
        dcuda_rank_finish(&st);
        return;
    }
    if (init != DCUDA_OK && d->test_case == FAULT_MISUSE_AFTER) /* its report is a log entry */
        (void)dcuda_put(&st, DCUDA_WIN_NONE, 0, 0, sizeof value, &value);
    test_note(&setup, dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank));
    test_note(&setup, dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size));
    test_note(&setup, dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank));
    if (d->test_case == FAULT_LATE) {
        if (rank == size - 1)
            fault_delay_ms(d->delay_ms);
        call = dcuda_comm_barrier(&st, DCUDA_COMM_WORLD);
    } else if (d->test_case == FAULT_LEFTOVER) {
        call = fault_leftover(&st, d, rank, size);
    } else if (d->test_case == FAULT_RING_PUT) {
        call = fault_ring_put(&st, d, rank, size, drank, &value);
    } else if (d->test_case == FAULT_FIRST_ERROR) {
        call = fault_first_error(&st, d, rank, &value);
    } else if (d->test_case == FAULT_EVERY_ERROR) {
        value = dcuda_notify(&st, (rank + 1) % size, DCUDA_COMM_WORLD, FAULT_BAD_TAG);
        call = dcuda_comm_barrier(&st, DCUDA_COMM_WORLD);
    } else if (d->test_case == FAULT_WATCH_COUNTS) {
        call = fault_watch_counts(&st, d, rank, size);
    } else if (d->test_case == FAULT_LONG_RING) {
        call = fault_long_ring(&st, d, rank, size, drank, &value);
    } else if (fault_leave_early(d, rank, setup)) {
        return;
    }
    /* The end of an aborted run is the case's result, not a setup failure. */
    int64_t finish = dcuda_rank_finish(&st);
    if (finish != DCUDA_ERR_ABORTED && finish != DCUDA_ERR_TIMEOUT)
        test_note(&setup, finish);
    else if (call == 0)
        call = finish;
    fault_result(d, rank, call, value, setup);
}
