/*
 * Blocking: what a blocked rank shows the watchdog (host-visible memory,
 * written only when a wait blocks), reading counters, and the waits for
 * notifications and barrier words with their deadlock and abort checks.
 * Part of the rank engine (engine.h says how it is written).
 */
#ifndef DCUDA_IMPL_BLOCK_H
#define DCUDA_IMPL_BLOCK_H

#include "rank_base.h"

/* ---- the watchdog's view (host-visible memory; only when blocking) ------ */

DCU_FN void dcu_publish_phase(const dcuda_state_t *st, uint32_t phase)
{
    dcu_st_release(&st->ctx->rank_status[st->device_rank].phase, phase, 1);
}

/* What a blocked rank shows the watchdog. Passed by value: taken by
 * address, it would be written to local memory before every wait. */
typedef struct dcu_block {
    uint32_t phase;      /* DCUDA_PHASE_WAITING or DCUDA_PHASE_BARRIER */
    uint32_t tag, count; /* WAITING */
    uint32_t comm;       /* BARRIER */
    uint32_t waits;      /* the counter: DCUDA_WAITS_ON(kind, index) */
    const char *call;    /* named if the wait is cancelled */
    uint32_t need;       /* a set (DCUDA_WAITS_SET): how many of its tags; tag, count: its
                          * first tag and its mask */
} dcu_block_t;

/* A set of tags (dcuda_wait_notification_set): how many of the tags
 * first + i, for each bit i of mask, have a notification this rank has
 * not consumed; *which (when not NULL): those tags' bits. The leader's. */
DCU_FN uint32_t dcu_set_ready(const dcuda_state_t *st, uint32_t first, uint32_t mask,
                              uint32_t *which)
{
    const int sys = st->process_count > 1;
    const dcuda_notif_counters_t *mine = &st->notifs[st->device_rank];
    uint32_t n = 0u, bits = 0u;
    for (uint32_t i = 0; i < 32u; i++) {
        if (!(mask >> i & 1u))
            continue;
        uint32_t tag = first + i;
        if (dcu_notifs_ready(dcu_ld_acquire_count(&mine->arrived[tag], sys), st->consumed[tag],
                             1u)) {
            n++;
            bits |= 1u << i;
        }
    }
    if (which)
        *which = bits;
    return n;
}

/* While a published rank stays blocked: the counter shows a new value
 * (not yet the one waited for). */
DCU_FN_COLD void dcu_publish_seen(const dcuda_state_t *st, uint32_t seen)
{
    dcuda_rank_status_t *s = &st->ctx->rank_status[st->device_rank];
    dcu_st_relaxed(&s->seen, seen, 1);
    dcu_st_release(&s->episode, dcu_ld_acquire(&s->episode, 1) + 1u, 1);
}

DCU_FN_COLD void dcu_publish_blocked(const dcuda_state_t *st, dcu_block_t d, uint32_t target,
                                     uint32_t seen)
{
    dcuda_rank_status_t *s = &st->ctx->rank_status[st->device_rank];
    /* What it consumed of every tag, so that the watchdog's "ready" counts
     * are exact (they do not change while the rank stays blocked). */
    dcuda_tag_counts_t *consumed = &st->ctx->consumed_seen[st->device_rank];
    for (int tag = 0; tag < DCUDA_TAG_SLOTS; tag++)
        dcu_st_relaxed(&consumed->count[tag], st->consumed[tag], 1);
    dcu_st_relaxed(&s->tag, d.tag, 1);
    dcu_st_relaxed(&s->count, d.count, 1);
    dcu_st_relaxed(&s->consumed, st->consumed[d.tag % DCUDA_TAG_SLOTS], 1);
    dcu_st_relaxed(&s->comm, d.comm, 1);
    dcu_st_relaxed(&s->target, target, 1);
    dcu_st_relaxed(&s->seen, seen, 1);
    dcu_st_relaxed(&s->waits, d.waits, 1);
    /* The call it is in (its last one: a user's wait names none). */
    const int in_call =
        d.phase == DCUDA_PHASE_BARRIER || (d.tag >= DCUDA_TAG_COUNT && d.tag != DCUDA_TAG_GET);
    dcu_st_relaxed(&s->call,
                   in_call ? (uint32_t)dcu_call_kind_of(st->call) |
                                 (uint32_t)dcu_call_comm_of(st->call) << 8
                           : 0u,
                   1);
    dcu_st_relaxed(&s->call_seq, dcu_call_seq_of(st->call), 1);
    dcu_st_relaxed(&s->phase, d.phase, 1);
    dcu_st_release(&s->episode, dcu_ld_acquire(&s->episode, 1) + 1u, 1);
}

/* A blocked wait that was cancelled: by the watchdog or a dead peer (a
 * report of its own), by an error that ended the run (reported where it
 * happened: this wait only says DCUDA_ERR_ABORTED), or by a deadlock (the
 * host's report lists every blocked rank: DCUDA_ERR_DEADLOCK). */
DCU_FN_COLD dcuda_status_t dcu_cancelled(const dcuda_state_t *st, dcu_block_t d, uint32_t reason)
{
    if (reason == DCUDA_CANCEL_ERROR)
        return DCUDA_ERR_ABORTED;
    if (reason == DCUDA_CANCEL_DEADLOCK) /* the host reported every blocked rank */
        return DCUDA_ERR_DEADLOCK;
    dcuda_status_t why = reason == DCUDA_CANCEL_PEER ? DCUDA_ERR_PEER : DCUDA_ERR_TIMEOUT;
    if (d.phase == DCUDA_PHASE_WAITING && d.tag == DCUDA_TAG_GET)
        return DCU_REPORT(st, why, d.call, "waiting for the data of a get");
    const int kind = dcu_call_kind_of(st->call);
    const unsigned seq = (unsigned)dcu_call_seq_of(st->call);
    const char *on = dcu_comm_name(dcu_call_comm_of(st->call));
    if (d.phase == DCUDA_PHASE_WAITING && (d.waits & 0xffu) == DCUDA_WAITS_SET)
        return DCU_REPORT(st, why, d.call,
                          "waiting for notifications of %u of the tags from %u by mask 0x%x",
                          d.need, d.tag, d.count);
    if (d.phase == DCUDA_PHASE_WAITING && d.tag >= DCUDA_TAG_COUNT && kind != DCUDA_CALL_NONE)
        return DCU_REPORT(st, why, d.call, "waiting in %s, call %u on %s", dcu_call_name(kind), seq,
                          on);
    if (d.phase == DCUDA_PHASE_WAITING && d.tag >= DCUDA_TAG_COUNT)
        return DCU_REPORT(st, why, d.call, "waiting for %u notification(s) of a library tag",
                          d.count);
    if (d.phase == DCUDA_PHASE_WAITING)
        return DCU_REPORT(st, why, d.call, "waiting for %u notification(s) of tag %u", d.count,
                          d.tag);
    if (kind != DCUDA_CALL_NONE)
        return DCU_REPORT(st, why, d.call, "in a barrier on %s (%s, call %u on %s)",
                          dcu_comm_name((int)d.comm), dcu_call_name(kind), seq, on);
    return DCU_REPORT(st, why, d.call, "in a barrier on %s", dcu_comm_name((int)d.comm));
}

/* Why the run ended, once it did (dcuda_cancel_reason; 0: it goes on): the
 * process's cancel flag, or the node's word for a deadlock found (another
 * process of the node may have ended its ranks' waits first). */
DCU_FN_COLD uint32_t dcu_ended(const dcuda_context_t *ctx)
{
    uint32_t cancel = dcu_ld_acquire(ctx->cancel, 1);
    if (!cancel && ctx->node_deadlock && dcu_ld_acquire(ctx->node_deadlock, 1) == ctx->run_mark)
        cancel = DCUDA_CANCEL_DEADLOCK;
    return cancel;
}

/* ---- blocking ----------------------------------------------------------- */

/* A counter read now: a tag's count (`pair`: both its halves, the ranks'
 * and the host's) or a barrier's word. */
DCU_FN uint32_t dcu_count_now(const dcu_u32a_t *counter, int pair, int sys)
{
    return pair ? dcu_ld_acquire_count((const dcuda_notif_count_t *)(const void *)counter, sys)
                : dcu_ld_acquire(counter, sys);
}

/* The first phase of a wait, in every lane of the caller: each polls the
 * counter with its own acquire load (no value passes between lanes in the
 * loop, and the scope is chosen once, outside it) until it reaches target
 * (1) or the spinning phase is over (0). */
DCU_FN int dcu_spin_until(const dcu_u32a_t *counter, int pair, uint32_t target, int sys,
                          dcu_waiter_t *w)
{
    int reached;
    const dcuda_notif_count_t *c = (const dcuda_notif_count_t *)(const void *)counter;
    if (pair && sys)
        while (!(reached = dcu_reached(dcu_ld_acquire_count(c, 1), target)) && dcu_spinning(w)) {
        }
    else if (pair)
        while (!(reached = dcu_reached(dcu_ld_acquire_count(c, 0), target)) && dcu_spinning(w)) {
        }
    else if (sys)
        while (!(reached = dcu_reached(dcu_ld_acquire(counter, 1), target)) && dcu_spinning(w)) {
        }
    else
        while (!(reached = dcu_reached(dcu_ld_acquire(counter, 0), target)) && dcu_spinning(w)) {
        }
    return reached;
}

/* While a wait is young and no inbox needs looking at: only the counter,
 * in the shortest loop (each poll's length is latency). A notification's
 * waiter polls with every lane; a barrier's counter, which every rank of
 * the device polls at once, with lane 0 alone. 1: it reached target. */
DCU_FN int dcu_block_young(const dcu_u32a_t *counter, int pair, uint32_t target, int sys,
                           uint32_t phase, dcu_lanes_t lanes, dcu_waiter_t *w)
{
    if (phase == DCUDA_PHASE_WAITING) {
        int reached = dcu_spin_until(counter, pair, target, sys, w);
        if (dcu_lanes_all(lanes, reached))
            return 1;
        w->polls = dcu_lanes_bcast(lanes, w->polls); /* the lanes count alike again */
        return 0;
    }
    while (dcu_spinning(w))
        if (dcu_reached(
                dcu_lanes_bcast(lanes, dcu_leader() ? dcu_count_now(counter, pair, sys) : 0u),
                target))
            return 1;
    return 0;
}

/* A blocked wait the run's end (cancel) cut short: the rank shows itself
 * running again and keeps why for its later waits (a timeout ends only
 * this wait). */
DCU_FN_COLD dcuda_status_t dcu_block_cancelled(dcuda_state_t *st, dcu_block_t d, uint32_t cancel)
{
    dcuda_status_t why = dcu_cancelled(st, d, cancel);
    if (dcu_leader()) {
        dcu_publish_phase(st, DCUDA_PHASE_RUNNING);
        st->ended = cancel == DCUDA_CANCEL_WATCHDOG ? 0 : why;
    }
    return why;
}

/* Waits until *counter reaches target (mod 2^32); called by the lanes of
 * `lanes`, which see the leader's loads (a notification's waiter: each its
 * own at first). A rank with an inbox applies what arrives in it meanwhile
 * (in a barrier only now and then: it only makes room there, and hundreds
 * of ranks polling host memory would slow every rank's access to it), and
 * once more after a barrier (what the proxy left before the barrier's
 * release). After a while the rank shows itself
 * blocked to the watchdog, and from then on checks now and then whether
 * the host cancelled its waits. */
DCU_FN dcuda_status_t dcu_block_until(dcuda_state_t *st, const dcu_u32a_t *counter, int pair,
                                      uint32_t target, int sys, dcu_block_t d, dcu_lanes_t lanes)
{
    const int lead = dcu_leader();
    const int set = (d.waits & 0xffu) == DCUDA_WAITS_SET; /* no one counter: its tags' */
    dcu_waiter_t w = DCU_WAITER_INIT;
    int published = 0;
    uint32_t seen = 0u; /* the counter's value published (leader) */
    dcu_mark(st, DCU_MARK_WAIT);
    if (!st->inbox && !set && dcu_block_young(counter, pair, target, sys, d.phase, lanes, &w))
        return DCUDA_OK;
    for (;;) {
        /* A turn: the inbox's next entry and the counter, both read at
         * once (the inbox first: its read of host memory is the longer),
         * no call unless a message is there. */
        uint32_t v = 0u, head[DCUDA_INBOX_WORDS];
        const int look = st->inbox && (d.phase == DCUDA_PHASE_WAITING ||
                                       (w.polls & (DCU_WAIT_INBOX_EVERY - 1u)) == 0);
        const int found = look && dcu_inbox_look(st, lanes, head);
        if (lead)
            v = set ? dcu_set_ready(st, d.tag, d.count, 0) : dcu_count_now(counter, pair, sys);
        v = dcu_lanes_bcast(lanes, v);
        if (dcu_reached(v, target))
            break;
        if (found) {
            dcu_watch_t watch = { set ? 0 : counter, 0u };
            uint32_t most = d.phase == DCUDA_PHASE_WAITING ? 1u : DCUDA_INBOX_ENTRIES;
            (void)dcu_inbox_apply(st, lanes, head, most, &watch);
            dcu_mark(st, DCU_MARK_APPLIED);
            dcu_mark_polls(st, w.polls + 1u);
            if (dcu_reached(v + dcu_lanes_bcast(lanes, watch.counted), target))
                break; /* reached: v and what the messages counted on it */
            continue;  /* look again at once */
        }
        if (dcu_pause(&w)) /* still spinning: nothing else to look at yet */
            continue;
        if (!published && w.polls == DCU_WAIT_BLOCKED_POLLS) {
            if (lead)
                dcu_publish_blocked(st, d, target, seen = v);
            published = 1;
        } else if (published && lead && v != seen) {
            dcu_publish_seen(st, seen = v);
        }
        uint32_t cancel = 0;
        if (published && lead && (w.polls & (DCU_WAIT_CANCEL_EVERY - 1u)) == 0)
            cancel = dcu_ld_acquire(st->ctx->cancel, 1);
        cancel = dcu_lanes_bcast(lanes, cancel);
        if (cancel)
            return dcu_block_cancelled(st, d, cancel);
    }
    /* A wait that was blocked when the run was cancelled (a deadlock, an
     * abort, a lost peer) reports that, even if the counter reached its
     * target meanwhile: only what ranks did after learning of the end can
     * have moved it, and a barrier must not complete in one process while
     * its ranks end with the cancel in another. (Blocked waits only: one
     * read of host memory after a long wait.) */
    if (published) {
        uint32_t cancel = dcu_lanes_bcast(lanes, lead ? dcu_ended(st->ctx) : 0u);
        if (cancel)
            return dcu_block_cancelled(st, d, cancel);
        if (lead)
            dcu_publish_phase(st, DCUDA_PHASE_RUNNING);
    }
    if (st->inbox && d.phase == DCUDA_PHASE_BARRIER)
        (void)dcu_inbox_drain(st, lanes, DCUDA_INBOX_ENTRIES);
    dcu_mark(st, DCU_MARK_WOKE);
    return DCUDA_OK;
}

#endif /* DCUDA_IMPL_BLOCK_H */
