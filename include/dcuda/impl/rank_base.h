/*
 * The rank engine's base: running a step on the leader (DCU_ON_LEADER),
 * the state's and the context's checks, the common case of a
 * notification's target, and the starts of window calls.
 * Part of the rank engine (engine.h says how it is written).
 */
#ifndef DCUDA_IMPL_RANK_BASE_H
#define DCUDA_IMPL_RANK_BASE_H

#include "agree.h"
#include "arrivals.h"
#include "checks.h"
#include "marks.h"
#include "prims.h"
#include "report.h"
#include "ring.h"

/* Runs expr on the leader between two syncs; all threads read its status
 * from st->result afterwards. */
#define DCU_ON_LEADER(st, expr)                                                                    \
    do {                                                                                           \
        dcu_sync();                                                                                \
        if (dcu_leader())                                                                          \
            (st)->result = (int32_t)(expr);                                                        \
        dcu_sync();                                                                                \
    } while (0)

/* The state's own test, without short-circuit (its fields are read at
 * once; st is not NULL). */
DCU_FN int dcu_state_fields_ok(const dcuda_state_t *st)
{
    return (st->magic == DCUDA_STATE_MAGIC) & (st->ctx != 0);
}

DCU_FN int dcu_state_ok(const dcuda_state_t *st) { return st && dcu_state_fields_ok(st); }

/* The counters of a notification's target when every argument is valid and
 * its process is reached by stores (my device, or another process of the
 * node), else NULL (the full checks decide, or the network path). *sys: a
 * system-scope release is needed (another process). Every test of the
 * common case is evaluated at once, so the state's fields are read at once;
 * only a rank outside my device looks its process up. */
DCU_FN dcuda_notif_counters_t *dcu_fast_target(const dcuda_state_t *st, int comm, int rank, int tag,
                                               int *sys)
{
    int d = dcu_device_rank_of(st, comm, rank);
    int ok = dcu_state_fields_ok(st) & ((comm == DCU_COMM_DEVICE) | (comm == DCU_COMM_WORLD)) &
             dcu_tag_valid(tag);
    *sys = 0;
    if (ok & ((unsigned)d < (unsigned)st->device_size))
        return &st->notifs[d];
    if (!ok || comm != DCU_COMM_WORLD || (unsigned)rank >= (unsigned)st->world_size)
        return 0;
    uint32_t path; /* another process: NULL when it is on the network path */
    *sys = 1;
    return dcu_target_notifs(st, comm, rank, &path);
}

/* Is ctx the context this kernel was started with, built for this code? */
DCU_FN int dcu_context_ok(const dcuda_context_t *ctx)
{
    return ctx && ctx == dcu_kernel_ctx() && ctx->magic == DCUDA_CONTEXT_MAGIC &&
           ctx->version == DCUDA_LAYOUT_VERSION && ctx->log.version == DCUDA_LOG_RING_VERSION &&
           ctx->log.entry_size == sizeof(dcuda_log_entry_t) &&
           ctx->cmd.version == DCUDA_CMD_RING_VERSION && ctx->cmd.entry_size == sizeof(dcuda_cmd_t);
}

/* A report by a rank whose state cannot be trusted: the kernel's context. */
#define DCU_REPORT_NOCTX(status, call, ...)                                                        \
    dcu_report_at(dcu_kernel_ctx(),                                                                \
                  dcu_kernel_ctx() ? dcu_kernel_ctx()->world_first + dcu_rank_index()              \
                                   : dcu_rank_index(),                                             \
                  status, call, __VA_ARGS__)

DCU_FN_COLD dcuda_status_t dcu_report_uninit(const dcuda_state_t *st, const char *call)
{
    return DCU_REPORT_NOCTX(DCUDA_ERR_NOT_INITIALIZED, call, "state %p used before dcuda_rank_init",
                            (const void *)st);
}

/* The start of a call on window win (all threads): the rank's earlier
 * accesses done, its state and the window checked. */
DCU_FN dcuda_status_t dcu_win_call_start(dcuda_state_t *st, uint32_t win, const char *call)
{
    dcu_sync();
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, call);
    DCU_TRACE_MARK(st, DCU_TRACE_STARTED);
    return dcu_checked_win(st, win, call);
}

/* The start of a window's creation on comm (all threads): the rank's
 * earlier accesses done, its state, comm and win checked. */
DCU_FN dcuda_status_t dcu_win_create_start(dcuda_state_t *st, int comm, const uint32_t *win,
                                           const char *call)
{
    dcu_sync();
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, call);
    dcuda_status_t s = dcu_checked_comm(st, comm, call);
    if (s == DCUDA_OK && !win)
        s = DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call, "win is NULL");
    return s;
}

#endif /* DCUDA_IMPL_RANK_BASE_H */
