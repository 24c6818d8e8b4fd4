/*
 * Rank code of the rank-to-host notification test (dcuda_test_tohost):
 * in the model, each rank passes a put of a planned size to its right
 * neighbour every step, takes its left neighbour's, checks it, records
 * the step in its part and notifies its host (and at planned steps the
 * shared tag too); at the steps where the host answers it waits for the
 * host. Credits from the right neighbour keep a put from overwriting what
 * the host has not checked yet. The other cases misuse the channel or get
 * stuck on purpose. Written once for CPU and GPU ranks.
 */
#include "dcuda/dcuda_rank.h"
#include "tohost.h"

/* Fills [0, size) of the source area with this step's pattern. */
TEST_RANK_FN void th_fill(unsigned char *src, int me, int step, uint32_t size)
{
    for (uint32_t i = (uint32_t)dcuda_thread_index(); i < size; i += (uint32_t)dcuda_thread_count())
        src[i] = test_byte((uint32_t)me, (uint32_t)step, i);
    dcuda_rank_sync();
}

/* Thread 0: whether what the left neighbour put matches its pattern. */
TEST_RANK_FN int th_received_ok(const unsigned char *recv, int left, int step, uint32_t size)
{
    for (uint32_t i = 0; i < size; i++)
        if (recv[i] != test_byte((uint32_t)left, (uint32_t)step, i))
            return 0;
    return 1;
}

TEST_RANK_FN void th_model(dcuda_state_t *st, const tohost_data_t *d, unsigned char *part,
                           int64_t *words, int64_t *err, int me, int size, int drank)
{
    int right = (me + 1) % size, left = (me + size - 1) % size;
    dcuda_win_t win;
    test_note(err, dcuda_win_create(st, DCUDA_COMM_WORLD, part, TH_PART, &win));
    if (dcuda_thread_index() == 0)
        test_store_word((int64_t *)part + TH_WIN_WORD, (int64_t)win);
    for (int step = 1; step <= d->steps; step++) {
        uint32_t out = th_size(d->seed, me, step), in = th_size(d->seed, left, step);
        if (step > 1) /* the right neighbour checked (and its host saw) my last put */
            test_note(err, dcuda_wait_notifications(st, TH_CREDIT_TAG, 1));
        th_fill(part + TH_SRC, me, step, out);
        test_note(err, dcuda_put_notify(st, win, right, TH_RECV, out, part + TH_SRC, TH_PUT_TAG));
        test_note(err, dcuda_wait_notifications(st, TH_PUT_TAG, 1));
        if (dcuda_thread_index() == 0) {
            if (!th_received_ok(part + TH_RECV, left, step, in) && words[TH_BAD_STEP] == 0)
                words[TH_BAD_STEP] = step;
            test_store_word((int64_t *)part + TH_STEP_WORD, step);
        }
        if (th_shared(d->seed, me, step))
            test_note(err, dcuda_notify_host(st, TH_SHARED_TAG));
        test_note(err, dcuda_notify_host(st, th_own_tag(drank)));
        if (th_sync(d->seed, step, d->steps))
            test_note(err, dcuda_wait_notifications(st, TH_ACK_TAG, 1));
        test_note(err, dcuda_notify(st, left, DCUDA_COMM_WORLD, TH_CREDIT_TAG));
    }
    test_note(err, dcuda_wait_notifications(st, TH_CREDIT_TAG, 1));
    test_note(err, dcuda_win_free(st, win));
}

/* The cases that misuse or block: what their calls returned, in call[]. */
TEST_RANK_FN void th_other(dcuda_state_t *st, const tohost_data_t *d, int64_t *call, int64_t *err,
                           int me)
{
    switch (d->test_case) {
    case TH_WRONG_TAG:
        call[0] = dcuda_notify_host(st, 7);
        call[1] = dcuda_wait_notifications(st, TH_ACK_TAG, 1);
        break;
    case TH_RETURNED:
        call[0] = dcuda_notify_host(st, 3);
        break;
    case TH_ABORT:
        call[0] = dcuda_wait_notifications(st, TH_ACK_TAG, 1);
        break;
    case TH_BARRIER_FREE: /* WORLD rank 0 never comes */
        if (me != 0)
            call[0] = dcuda_comm_barrier(st, DCUDA_COMM_WORLD);
        break;
    case TH_LATE_ACK:
        call[0] = dcuda_notify_host(st, 4);
        call[1] = dcuda_wait_notifications(st, TH_ACK_TAG, 1);
        break;
    case TH_MISUSE:
        call[0] = dcuda_notify_host(st, 256);
        call[1] = dcuda_notify_host(st, -1);
        test_note(err, dcuda_notify_host(st, 5));
        break;
    case TH_THREAD:
        for (int i = 0; i < TH_THREAD_NOTES; i++)
            test_note(err, dcuda_notify_host(st, 6));
        call[0] = dcuda_wait_notifications(st, TH_ACK_TAG, 1);
        break;
    default:
        *err = DCUDA_ERR_INVALID_ARG;
        break;
    }
}

DCUDA_KERNEL(tohost, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    tohost_data_t *d;
    int me = 0, size = 0, drank = 0;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dcuda_get_data(&st, (void **)&d);
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &me);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank);
    int64_t *words = d->words + (int64_t)drank * TH_WORDS;
    int64_t err = 0, call[2] = { 0, 0 };
    if (d->test_case == TH_MODEL)
        th_model(&st, d, d->parts + (uint64_t)drank * TH_PART, words, &err, me, size, drank);
    else
        th_other(&st, d, call, &err, me);
    dcuda_rank_finish(&st);
    if (dcuda_thread_index() == 0) {
        words[TH_FIRST_ERROR] = err;
        words[TH_CALL_A] = call[0];
        words[TH_CALL_B] = call[1];
    }
}
