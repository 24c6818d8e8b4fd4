/*
 * Timers and the checks of dcuda_log's lines.
 * Part of the rank engine (engine.h says how it is written).
 */
#ifndef DCUDA_IMPL_TIMERS_H
#define DCUDA_IMPL_TIMERS_H

#include "host_link.h"

/* ---- timers ------------------------------------------------------------------- */

DCU_FN_COLD dcuda_status_t dcu_timer_leader(dcuda_state_t *st, int stop, const char *call)
{
    dcuda_status_t s = dcu_checked_timer(st, stop, call);
    if (s != DCUDA_OK)
        return s;
    dcuda_timer_slot_t *t = &st->ctx->timers[st->timer_next / 2];
    uint64_t now = dcu_now_ns();
    if (!stop) {
        dcu_min_u64(&t->start_ns, now);
        dcu_add_u32(&t->starts, 1u);
    } else {
        dcu_max_u64(&t->stop_ns, now);
        dcu_add_u32(&t->stops, 1u);
    }
    st->timer_next++;
    return DCUDA_OK;
}

DCU_FN dcuda_status_t dcu_timer(dcuda_state_t *st, int stop, const char *call)
{
    dcu_sync();
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, call);
    DCU_ON_LEADER(st, dcu_timer_leader(st, stop, call));
    return (dcuda_status_t)st->result;
}

/* ---- log lines ----------------------------------------------------------------- */

/* What dcuda_log checks before the backend words the line. */
DCU_FN dcuda_status_t dcu_log_check(const dcuda_state_t *st, const char *fmt)
{
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, "dcuda_log");
    if (!fmt)
        return DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, "dcuda_log", "format is NULL");
    return DCUDA_OK;
}

#endif /* DCUDA_IMPL_TIMERS_H */
