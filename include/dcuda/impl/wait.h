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
                          call };
        s = dcu_block_until(st, dcu_my_counter(st, tag), 1, target, st->process_count > 1, d,
                            lanes);
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

#endif /* DCUDA_IMPL_WAIT_H */
