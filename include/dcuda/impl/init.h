/*
 * A rank's init and finish: checking the context, filling the rank's state,
 * and the closing barrier and checks of dcuda_rank_finish.
 * Part of the rank engine (engine.h says how it is written).
 */
#ifndef DCUDA_IMPL_INIT_H
#define DCUDA_IMPL_INIT_H

#include "barrier.h"

/* ---- init ------------------------------------------------------------------ */

DCU_FN_COLD dcuda_status_t dcu_init_leader(const dcuda_context_t *ctx, dcuda_state_t *st)
{
    if (!dcu_context_ok(ctx))
        return DCU_REPORT_NOCTX(DCUDA_ERR_INVALID_ARG, "dcuda_rank_init",
                                "context %p is not the handle passed to this kernel",
                                (const void *)ctx);
    dcu_state_bind(st, ctx, dcu_rank_index());
    /* Inbox positions go on from run to run: the proxy consumed what the
     * last run left. */
    st->inbox_pos = st->inbox ? dcu_ld_acquire(&ctx->inbox_tail[st->device_rank], 1) : 0u;
    st->magic = DCUDA_STATE_MAGIC;
    dcu_call_reset(st);
    dcu_publish_phase(st, DCUDA_PHASE_RUNNING);
    return DCUDA_OK;
}

DCU_FN dcuda_status_t dcu_rank_init(const dcuda_context_t *ctx, dcuda_state_t *st)
{
    if (!st)
        return DCU_REPORT_NOCTX(DCUDA_ERR_INVALID_ARG, "dcuda_rank_init", "state is NULL");
    /* Counters and generations are per-slot arrays: all threads fill them. */
    uint32_t start = dcu_context_ok(ctx) ? ctx->notif_start : 0u;
    for (int i = dcu_thread(); i < DCUDA_TAG_SLOTS; i += dcu_threads())
        st->consumed[i] = start;
    for (int i = dcu_thread(); i < DCUDA_COMM_COUNT * DCUDA_MAX_WINDOWS; i += dcu_threads())
        st->win_gen[i / DCUDA_MAX_WINDOWS][i % DCUDA_MAX_WINDOWS] = 0;
    for (int i = dcu_thread(); i < (DCUDA_COMM_IDS - DCU_COMM_NODE) * DCUDA_COMM_WINDOWS;
         i += dcu_threads())
        st->comms[i / DCUDA_COMM_WINDOWS].win_gen[i % DCUDA_COMM_WINDOWS] = 0;
    DCU_ON_LEADER(st, dcu_init_leader(ctx, st));
    if (st->result != DCUDA_OK)
        return (dcuda_status_t)st->result;
    return dcu_barrier(st, DCU_COMM_WORLD, "dcuda_rank_init");
}

/* My count of a tag: other processes' ranks write it at system scope. */
DCU_FN dcuda_notif_count_t *dcu_my_count(const dcuda_state_t *st, int tag)
{
    return &st->notifs[st->device_rank].arrived[tag];
}

/* Its ranks' half: what ranks add to. */
DCU_FN dcu_u32a_t *dcu_my_counter(const dcuda_state_t *st, int tag)
{
    return &dcu_my_count(st, tag)->ranks;
}

/* What arrived of a tag, from ranks and the host. */
DCU_FN uint32_t dcu_arrived_now(const dcuda_state_t *st, int tag)
{
    return dcu_ld_acquire_count(dcu_my_count(st, tag), st->process_count > 1);
}

/* Leader, after the finish barrier (every notification sent to this
 * rank has arrived, and what came through its inbox is applied):
 * notifications it never consumed are a warning naming the first such
 * user tag and its count, and how many there are of other tags; those
 * of the library's tags (a collective some rank did not finish) are
 * counted apart, by no number. */
DCU_FN_COLD void dcu_warn_unconsumed(const dcuda_state_t *st)
{
    uint32_t tags = 0, others = 0, first_tag = 0, first_count = 0, library = 0;
    for (int tag = 0; tag < DCUDA_TAG_SLOTS; tag++) {
        uint32_t left = dcu_arrived_now(st, tag) - st->consumed[tag];
        if ((int32_t)left <= 0)
            continue;
        if (tag >= DCUDA_TAG_COUNT) {
            library += left;
        } else if (tags++ == 0) {
            first_tag = (uint32_t)tag;
            first_count = left;
        } else {
            others += left;
        }
    }
    if (tags == 1)
        DCU_WARN(st, "dcuda_rank_finish",
                 "%u notification(s) of tag %u arrived but were never consumed", first_count,
                 first_tag);
    else if (tags > 1)
        DCU_WARN(st, "dcuda_rank_finish",
                 "%u notification(s) of tag %u arrived but were never consumed, and %u of %u "
                 "other tag(s)",
                 first_count, first_tag, others, tags - 1);
    if (library)
        DCU_WARN(st, "dcuda_rank_finish",
                 "%u notification(s) of the library's collectives arrived but were never "
                 "consumed (a collective or split that some rank did not finish)",
                 library);
}

DCU_FN dcuda_status_t dcu_rank_finish(dcuda_state_t *st)
{
    dcu_sync();
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, "dcuda_rank_finish");
    if (dcu_leader())
        dcu_call_record(st, DCUDA_CALL_FINISH, DCU_COMM_WORLD, DCUDA_CALL_NO_SLOT, 0, 0, 0, 0u, 0u);
    dcuda_status_t s = dcu_barrier(st, DCU_COMM_WORLD, "dcuda_rank_finish");
    dcu_marks_print(st);
    dcu_sync();
    if (dcu_leader()) {
        if (s == DCUDA_OK)
            dcu_warn_unconsumed(st);
        st->magic = 0;
        dcu_publish_phase(st, DCUDA_PHASE_DONE);
    }
    dcu_sync();
    return s;
}

/* Leader: the rank's code returned without dcuda_rank_finish (phase
 * RUNNING), or without dcuda_rank_init when nothing failed before (IDLE):
 * the other ranks would wait for it forever, so the run ends. */
DCU_FN_COLD void dcu_rank_left(const dcuda_context_t *ctx, uint32_t phase)
{
    int rank = ctx->world_first + dcu_rank_index();
    if (phase != DCUDA_PHASE_IDLE)
        (void)dcu_report_at(ctx, rank, DCUDA_ERR_RANK_LEFT, "kernel",
                            "rank %d returned from the kernel without calling dcuda_rank_finish",
                            rank);
    else if (dcu_ld_acquire(&ctx->error->count, 0) == 0u)
        (void)dcu_report_at(ctx, rank, DCUDA_ERR_RANK_LEFT, "kernel",
                            "rank %d returned from the kernel without calling dcuda_rank_init",
                            rank);
    dcu_error_end_run(ctx, 1);
}

/* After the rank's code returned: tell the watchdog; a rank that did not
 * finish ends the run. */
DCU_FN void dcu_kernel_exit(const dcuda_context_t *ctx)
{
    dcu_sync();
    if (!dcu_leader() || !ctx || ctx->magic != DCUDA_CONTEXT_MAGIC)
        return;
    dcu_u32a_t *phase = &ctx->rank_status[dcu_rank_index()].phase;
    uint32_t was = dcu_ld_acquire(phase, 1);
    if (was != DCUDA_PHASE_DONE)
        dcu_rank_left(ctx, was);
    dcu_st_release(phase, DCUDA_PHASE_FINISHED, 1);
}

#endif /* DCUDA_IMPL_INIT_H */
