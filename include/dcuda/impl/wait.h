/*
 * Waiting for and testing notifications: the checks of test and wait, the
 * inbox and counters they read, and the blocking wait's loop.
 * Part of the rank engine (engine.h says how it is written).
 */
#ifndef DCUDA_IMPL_WAIT_H
#define DCUDA_IMPL_WAIT_H

#include "rma.h"

/* The full checks of test and wait, which word the report (out of line). */
DCU_FN_COLD dcuda_status_t dcu_wait_checks(dcuda_state_t *st, int tag, int count, const char *call)
{
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, call);
    return dcu_checked_wait(st, tag, count, call);
}

/* Entry of test and wait: sync, state and argument checks (every test
 * evaluated at once; the full checks only word the report). */
DCU_FN dcuda_status_t dcu_wait_entry(dcuda_state_t *st, int tag, int count, const char *call)
{
    dcu_sync();
    if (st && (dcu_state_fields_ok(st) & dcu_tag_valid(tag) & (count > 0)))
        return DCUDA_OK;
    return dcu_wait_checks(st, tag, count, call);
}

DCU_FN int dcu_test_notifications(dcuda_state_t *st, int tag, int count)
{
    dcuda_status_t s = dcu_wait_entry(st, tag, count, "dcuda_test_notifications");
    if (s != DCUDA_OK)
        return s;
    if (st->inbox) {
        if (dcu_in_poll_lanes())
            (void)dcu_inbox_drain(st, dcu_poll_lanes(), DCUDA_INBOX_ENTRIES);
        dcu_sync(); /* what it wrote is the block's */
    }
    if (dcu_leader()) {
        int ready = dcu_notifs_ready(dcu_arrived_now(st, tag), st->consumed[tag], (uint32_t)count);
        if (ready)
            st->consumed[tag] += (uint32_t)count;
        st->result = ready;
    }
    dcu_sync();
    return st->result;
}

/* Waits for count notifications of tag (a library tag too), then consumes
 * them; `call` is named if the wait is cancelled. When `boxes` names
 * mailboxes (impl/agree.h: dcu_boxes), the records that came with the
 * notifications are checked against the rank's call before it returns. */
DCU_FN dcuda_status_t dcu_wait_boxes(dcuda_state_t *st, int tag, int count, const char *call,
                                     uint32_t boxes)
{
    dcuda_status_t s = dcu_wait_entry(st, tag, count, call);
    if (s != DCUDA_OK)
        return s;
    if (dcu_in_poll_lanes()) {
        dcu_lanes_t lanes = dcu_poll_lanes();
        uint32_t target = st->consumed[tag] + (uint32_t)count;
        dcu_block_t d = { DCUDA_PHASE_WAITING,
                          (uint32_t)tag,
                          (uint32_t)count,
                          0,
                          DCUDA_WAITS_ON(DCUDA_WAITS_NOTIF, 0),
                          call,
                          0u };
        s = dcu_block_until(st, dcu_my_counter(st, tag), 1, target, st->process_count > 1, d,
                            lanes);
        DCU_TRACE_MARK(st, DCU_TRACE_SPIN);
        dcu_lanes_sync(lanes); /* every lane read consumed[tag] before the leader updates it */
        if (dcu_leader() && s == DCUDA_OK)
            st->consumed[tag] = target;
        if (dcu_leader() && s == DCUDA_OK && boxes)
            s = dcu_call_check_boxes(st, boxes, call);
        if (dcu_leader())
            st->result = s;
    }
    dcu_sync();
    return (dcuda_status_t)st->result;
}

DCU_FN dcuda_status_t dcu_wait_tag(dcuda_state_t *st, int tag, int count, const char *call)
{
    return dcu_wait_boxes(st, tag, count, call, 0u);
}

DCU_FN dcuda_status_t dcu_wait_notifications(dcuda_state_t *st, int tag, int count)
{
    return dcu_wait_tag(st, tag, count, "dcuda_wait_notifications");
}

/* ---- sets of tags ------------------------------------------------------------ */

/* A set of tags: first + i for each bit i of mask. Its highest tag, and
 * how many tags it holds. */
DCU_HD uint32_t dcu_set_last(int first, uint32_t mask)
{
    uint32_t last = 0u;
    for (uint32_t i = 0; i < 32u; i++)
        if (mask >> i & 1u)
            last = i;
    return (uint32_t)first + last;
}

DCU_HD int dcu_set_size(uint32_t mask)
{
    int n = 0;
    for (; mask; mask &= mask - 1u)
        n++;
    return n;
}

/* How many of its tags a set's call needs: `need`, or DCUDA_SET_ALL's all. */
DCU_HD uint32_t dcu_set_need(uint32_t mask, int need)
{
    return need == DCUDA_SET_ALL ? (uint32_t)dcu_set_size(mask) : (uint32_t)need;
}

/* Every test of a set's arguments at once (no short-circuit). */
DCU_HD int dcu_set_valid(int first, uint32_t mask, int need)
{
    return dcu_user_tag(first) & (mask != 0u) & (dcu_set_last(first, mask) < DCUDA_TAG_COUNT) &
           ((need == DCUDA_SET_ALL) | ((need >= 1) & (need <= dcu_set_size(mask))));
}

/* The full checks of a set's call, which word the report (out of line). */
DCU_FN_COLD dcuda_status_t dcu_set_checks(dcuda_state_t *st, int first, uint32_t mask, int need,
                                          const char *call)
{
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, call);
    if (!dcu_user_tag(first))
        return DCU_REPORT(st, DCUDA_ERR_TAG, call, "first tag %d not in 0..%d", first,
                          DCUDA_TAG_COUNT - 1);
    if (!mask)
        return DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call, "mask is 0: a set of no tag");
    if (dcu_set_last(first, mask) >= DCUDA_TAG_COUNT)
        return DCU_REPORT(st, DCUDA_ERR_TAG, call,
                          "mask 0x%x from tag %d names tag %u, not in 0..%d", mask, first,
                          dcu_set_last(first, mask), DCUDA_TAG_COUNT - 1);
    return DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call,
                      "need %d: neither 1..%d (the set's tags) nor DCUDA_SET_ALL", need,
                      dcu_set_size(mask));
}

/* Entry of a set's test and wait (all threads): the rank's earlier
 * accesses done (and every thread's read of the last call's answers),
 * then *taken cleared (it may be memory the rank's threads share), state
 * and arguments checked. */
DCU_FN dcuda_status_t dcu_set_entry(dcuda_state_t *st, int first, uint32_t mask, int need,
                                    uint32_t *taken, const char *call)
{
    dcu_sync();
    if (taken)
        *taken = 0u;
    if (st && (dcu_state_fields_ok(st) & dcu_set_valid(first, mask, need)))
        return DCUDA_OK;
    return dcu_set_checks(st, first, mask, need, call);
}

/* Leader: consumes one notification of each tag of the set in `which`. */
DCU_FN void dcu_set_take(dcuda_state_t *st, uint32_t first, uint32_t which)
{
    for (uint32_t i = 0; i < 32u; i++)
        if (which >> i & 1u)
            st->consumed[first + i] += 1u;
}

/* The leader's word v, to every thread (after a sync the caller made). */
DCU_FN uint32_t dcu_leader_word(dcuda_state_t *st, uint32_t v)
{
    if (dcu_leader())
        st->result = (int32_t)v;
    dcu_sync();
    v = (uint32_t)st->result;
    dcu_sync(); /* every thread read it before the next call's leader writes */
    return v;
}

/* A rank with an inbox applies what is in it (the network path's
 * arrivals) before a call that does not block reads its counts. */
DCU_FN void dcu_apply_inbox_now(dcuda_state_t *st)
{
    if (st->inbox) {
        if (dcu_in_poll_lanes())
            (void)dcu_inbox_drain(st, dcu_poll_lanes(), DCUDA_INBOX_ENTRIES);
        dcu_sync(); /* what it wrote is the block's */
    }
}

/* Leader: which tags of the set it takes now: every one that has a
 * notification, if at least `want` do; else none. */
DCU_FN uint32_t dcu_set_take_ready(dcuda_state_t *st, int first, uint32_t mask, uint32_t want)
{
    uint32_t which = 0u;
    if (dcu_set_ready(st, (uint32_t)first, mask, &which) < want)
        return 0u;
    dcu_set_take(st, (uint32_t)first, which);
    return which;
}

DCU_FN int dcu_test_notification_set(dcuda_state_t *st, int first, uint32_t mask, int need,
                                     uint32_t *taken)
{
    dcuda_status_t s = dcu_set_entry(st, first, mask, need, taken, "dcuda_test_notification_set");
    if (s != DCUDA_OK)
        return s;
    dcu_apply_inbox_now(st);
    uint32_t which = 0u;
    if (dcu_leader())
        which = dcu_set_take_ready(st, first, mask, dcu_set_need(mask, need));
    which = dcu_leader_word(st, which);
    if (taken)
        *taken = which;
    return which != 0u;
}

/* Blocks until `need` tags of the set have a notification each (the
 * watchdog's view: DCUDA_WAITS_SET), then takes one of each that has. */
DCU_FN dcuda_status_t dcu_wait_notification_set(dcuda_state_t *st, int first, uint32_t mask,
                                                int need, uint32_t *taken)
{
    const char *call = "dcuda_wait_notification_set";
    dcuda_status_t s = dcu_set_entry(st, first, mask, need, taken, call);
    if (s != DCUDA_OK)
        return s;
    const uint32_t want = dcu_set_need(mask, need);
    if (dcu_in_poll_lanes()) {
        dcu_lanes_t lanes = dcu_poll_lanes();
        dcu_block_t d = { DCUDA_PHASE_WAITING,
                          (uint32_t)first,
                          mask,
                          0,
                          DCUDA_WAITS_ON(DCUDA_WAITS_SET, 0),
                          call,
                          want };
        s = dcu_block_until(st, dcu_my_counter(st, first), 1, want, st->process_count > 1, d,
                            lanes);
        dcu_lanes_sync(lanes); /* every lane read the counts before the leader takes */
        if (dcu_leader())
            st->result = s;
    }
    dcu_sync();
    s = (dcuda_status_t)st->result;
    dcu_sync(); /* every thread read the status before the leader writes the set */
    if (s != DCUDA_OK)
        return s;
    uint32_t which = 0u;
    if (dcu_leader())
        which = dcu_set_take_ready(st, first, mask, want);
    which = dcu_leader_word(st, which);
    if (taken)
        *taken = which;
    return DCUDA_OK;
}

/* Takes every notification of tag that has arrived: *taken (when not
 * NULL) says how many; those arriving after it stay for the next call. */
DCU_FN dcuda_status_t dcu_take_notifications(dcuda_state_t *st, int tag, uint32_t *taken)
{
    const char *call = "dcuda_take_notifications";
    dcu_sync();
    if (taken)
        *taken = 0u;
    if (!st || !(dcu_state_fields_ok(st) & dcu_user_tag(tag))) {
        if (!dcu_state_ok(st))
            return dcu_report_uninit(st, call);
        return DCU_REPORT(st, DCUDA_ERR_TAG, call, "tag %d not in 0..%d", tag, DCUDA_TAG_COUNT - 1);
    }
    dcu_apply_inbox_now(st);
    uint32_t n = 0u;
    if (dcu_leader()) {
        n = dcu_arrived_now(st, tag) - st->consumed[tag];
        n = (int32_t)n > 0 ? n : 0u;
        st->consumed[tag] += n;
    }
    n = dcu_leader_word(st, n);
    if (taken)
        *taken = n;
    return DCUDA_OK;
}

#endif /* DCUDA_IMPL_WAIT_H */
