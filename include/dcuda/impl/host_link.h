/*
 * A rank and its host: commands to the host and the ranks' notifications
 * to the host (dcuda_notify_host).
 * Part of the rank engine (engine.h says how it is written).
 */
#ifndef DCUDA_IMPL_HOST_LINK_H
#define DCUDA_IMPL_HOST_LINK_H

#include "wait.h"

/* ---- host commands ----------------------------------------------------------- */

DCU_FN dcuda_status_t dcu_ping_host(dcuda_state_t *st)
{
    dcu_sync();
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, "dcuda_rank_ping_host");
    DCU_ON_LEADER(st, dcu_command_leader(st, DCUDA_CMD_PING));
    return (dcuda_status_t)st->result;
}

/* ---- notifications to the host ------------------------------------------------ */

/* Leader, after dcu_sync ordered the rank's accesses: the next count of
 * tag, from the rank's own copy, stored with a release at system scope
 * where the host reads it. The release covers every write of the rank's
 * threads before the call (its stores, and the bytes of its puts on the
 * memory path, which its threads wrote), so a host that has read the
 * count sees them. The rank is its counts' only writer: no atomic add
 * over the bus, no read of host memory. */
DCU_FN dcuda_status_t dcu_notify_host_leader(dcuda_state_t *st, int tag)
{
    if (tag < 0 || tag >= DCUDA_TAG_COUNT)
        return DCU_REPORT(st, DCUDA_ERR_TAG, "dcuda_notify_host", "tag %d not in 0..%d", tag,
                          DCUDA_TAG_COUNT - 1);
    const dcuda_context_t *ctx = st->ctx;
    uint32_t *sent = ctx->to_host_sent + (size_t)st->device_rank * DCUDA_TAG_COUNT + tag;
    const uint32_t next = *sent + 1u;
    *sent = next;
    dcu_st_release(&ctx->to_host[st->device_rank].count[tag], next, 1);
    return DCUDA_OK;
}

DCU_FN dcuda_status_t dcu_notify_host(dcuda_state_t *st, int tag)
{
    dcu_sync();
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, "dcuda_notify_host");
    DCU_ON_LEADER(st, dcu_notify_host_leader(st, tag));
    return (dcuda_status_t)st->result;
}

#endif /* DCUDA_IMPL_HOST_LINK_H */
