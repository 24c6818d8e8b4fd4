/*
 * The rank engine: every rank call's algorithm, written once over the
 * backend's primitives (impl/cpu/prims.h: a rank is a thread; or
 * impl/cuda/prims.cuh: a rank is a thread block). CPU ranks run exactly this
 * code, so what CI proves about ordering and counting on CPU ranks holds
 * for the GPU's. prims.h and report.h pick the backend's primitives and
 * report wording by the compiler (nvcc or C11).
 *
 * Shape of a collective call: dcu_sync() first (the rank's earlier writes
 * are done, the last call's broadcast has been read), every thread runs the
 * checks (same inputs, same answer; the leader reports), single-thread work
 * runs on the leader, and results reach every thread through st->result.
 *
 * A put or notify is routed by one switch on its path id (dcuda_path):
 * every path built so far reaches the target's memory with stores, and
 * differs only in the scope of the release that notifies.
 */
#ifndef DCUDA_IMPL_ENGINE_H
#define DCUDA_IMPL_ENGINE_H

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
} dcu_block_t;

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
    dcu_waiter_t w = DCU_WAITER_INIT;
    int published = 0;
    uint32_t seen = 0u; /* the counter's value published (leader) */
    dcu_mark(st, DCU_MARK_WAIT);
    /* While the wait is young and no inbox needs looking at: only the
     * counter, in the shortest loop (each poll's length is latency). A
     * notification's waiter polls with every lane; a barrier's counter,
     * which every rank of the device polls at once, with lane 0 alone. */
    if (!st->inbox && d.phase == DCUDA_PHASE_WAITING) {
        int reached = dcu_spin_until(counter, pair, target, sys, &w);
        if (dcu_lanes_all(lanes, reached))
            return DCUDA_OK;
        w.polls = dcu_lanes_bcast(lanes, w.polls); /* the lanes count alike again */
    } else if (!st->inbox) {
        while (dcu_spinning(&w))
            if (dcu_reached(dcu_lanes_bcast(lanes, lead ? dcu_count_now(counter, pair, sys) : 0u),
                            target))
                return DCUDA_OK;
    }
    for (;;) {
        /* A turn: the inbox's next entry and the counter, both read at
         * once (the inbox first: its read of host memory is the longer),
         * no call unless a message is there. */
        uint32_t v = 0u, head[DCUDA_INBOX_WORDS];
        const int look = st->inbox && (d.phase == DCUDA_PHASE_WAITING ||
                                       (w.polls & (DCU_WAIT_INBOX_EVERY - 1u)) == 0);
        const int found = look && dcu_inbox_look(st, lanes, head);
        if (lead)
            v = dcu_count_now(counter, pair, sys);
        v = dcu_lanes_bcast(lanes, v);
        if (dcu_reached(v, target))
            break;
        if (found) {
            dcu_watch_t watch = { counter, 0u };
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
        if (cancel) {
            dcuda_status_t why = dcu_cancelled(st, d, cancel);
            if (lead) {
                dcu_publish_phase(st, DCUDA_PHASE_RUNNING);
                st->ended = cancel == DCUDA_CANCEL_WATCHDOG ? 0 : why; /* a timeout: waits only */
            }
            return why;
        }
    }
    /* A wait that was blocked when the run was cancelled (a deadlock, an
     * abort, a lost peer) reports that, even if the counter reached its
     * target meanwhile: only what ranks did after learning of the end can
     * have moved it, and a barrier must not complete in one process while
     * its ranks end with the cancel in another. (Blocked waits only: one
     * read of host memory after a long wait.) */
    if (published) {
        uint32_t cancel = dcu_lanes_bcast(lanes, lead ? dcu_ended(st->ctx) : 0u);
        if (lead)
            dcu_publish_phase(st, DCUDA_PHASE_RUNNING);
        if (cancel) {
            dcuda_status_t why = dcu_cancelled(st, d, cancel);
            if (lead)
                st->ended = cancel == DCUDA_CANCEL_WATCHDOG ? 0 : why;
            return why;
        }
    }
    if (st->inbox && d.phase == DCUDA_PHASE_BARRIER)
        (void)dcu_inbox_drain(st, lanes, DCUDA_INBOX_ENTRIES);
    dcu_mark(st, DCU_MARK_WOKE);
    return DCUDA_OK;
}

/* ---- commands to the proxy ------------------------------------------------- */

/* Leader: fills and publishes the header of command ticket t (its payload
 * entries, if any, are written). */
DCU_FN void dcu_cmd_header_on(const dcuda_ring_t *ring, int32_t rank, uint32_t t, uint32_t op,
                              uint32_t reply_tag, const uint64_t *args)
{
    dcuda_cmd_t *c = (dcuda_cmd_t *)dcu_ring_entry(ring, t, sizeof(dcuda_cmd_t));
    c->rank = rank;
    c->op = op;
    c->tag = reply_tag;
    for (int i = 0; i < 6; i++)
        c->args[i] = args[i];
    dcu_ring_publish(c, t);
}

DCU_FN void dcu_cmd_header(const dcuda_state_t *st, uint32_t t, uint32_t op, uint32_t reply_tag,
                           const uint64_t *args)
{
    dcu_cmd_header_on(&st->cmd, st->cmd_rank, t, op, reply_tag, args);
}

/* Leader, while it waits for its proxy (room in the command queue, a
 * reply): every `every` polls (a power of two) applies what arrived in its
 * inbox; 1 if it applied anything. A proxy whose next command waits for
 * its target's credit (src/proxy/netbar.h) goes on once the target's ranks
 * applied what they have, and they may be waiting for this rank's proxy in
 * turn. */
DCU_FN_COLD int dcu_apply_while_waiting(dcuda_state_t *st, const dcu_waiter_t *w, uint32_t every)
{
    return st->inbox && (w->polls & (every - 1u)) == 0 &&
           dcu_inbox_drain(st, dcu_one_lane(), DCUDA_INBOX_ENTRIES) > 0;
}

/* Tickets to be consumed before a rank's own from which it sleeps long
 * enough between looks at the queue (dcu_pause_queue) to look into its
 * inbox at every one. */
#define DCU_QUEUE_FAR_TICKETS 1024u

/* Leader: takes n consecutive tickets of the command queue (n <= its
 * capacity) and returns the first once their entries are free
 * (back-pressure: nothing is overwritten). A rank far behind looks at the
 * consumer's count less often (dcu_pause_queue). */
DCU_FN uint32_t dcu_cmd_take_on(dcuda_state_t *st, const dcuda_ring_t *ring, const dcu_u32a_t *tail,
                                uint32_t n, uint32_t *consumed)
{
    uint32_t t = dcu_tickets(ring->head, n);
    dcu_waiter_t w = DCU_WAITER_INIT;
    while (!dcu_cmd_free(ring, tail, t, n, consumed)) {
        uint32_t behind = t + n - ring->capacity - *consumed;
        uint32_t every = behind >= DCU_QUEUE_FAR_TICKETS ? 1u : DCU_WAIT_INBOX_EVERY;
        if (!dcu_apply_while_waiting(st, &w, every)) /* long sleeps: at each look */
            dcu_pause_queue(&w, behind);
    }
    return t;
}

DCU_FN uint32_t dcu_cmd_take(dcuda_state_t *st, uint32_t n)
{
    st->net_unfenced = 1u; /* a barrier of a split fences it (impl/comm.h) */
    return dcu_cmd_take_on(st, &st->cmd, st->cmd_tail, n, &st->cmd_consumed);
}

/* Leader: a command of one entry, no reply awaited. Its publication is a
 * release of everything the rank did before. */
DCU_FN_COLD void dcu_cmd_post(dcuda_state_t *st, uint32_t op, uint64_t a0, uint64_t a1, uint64_t a5)
{
    uint32_t t = dcu_cmd_take(st, 1u);
    uint64_t args[6] = { a0, a1, 0u, 0u, 1u, a5 };
    dcu_cmd_header(st, t, op, 0u, args);
}

/* Leader: post a command (args as its op says) and wait for its reply
 * (both in pinned host memory on a GPU: posted writes out, reads of host
 * memory while waiting). The proxy answers in ticket order after
 * recycling, so the reply shows every ticket up to this one consumed. The
 * reply's value goes to *value when value is not NULL. */
/* Leader: the same command to every proxy lane's ring (a WORLD barrier:
 * each lane completes it), as rank 0 of the lanes not mine. */
DCU_FN_COLD void dcu_cmd_post_lanes(dcuda_state_t *st, uint32_t op, uint64_t a0, uint64_t a1)
{
    const dcuda_context_t *ctx = st->ctx;
    const uint64_t args[6] = { a0, a1, 0u, 0u, 1u, 0u };
    for (uint32_t l = 0; l < ctx->proxy_lanes; l++) {
        const dcuda_ring_t *ring = &ctx->cmd_lanes[l];
        if (ring->head == st->cmd.head) {
            dcu_cmd_header(st, dcu_cmd_take(st, 1u), op, 0u, args);
            continue;
        }
        uint32_t consumed = dcu_ld_acquire(ctx->cmd_lane_tails[l], 1);
        uint32_t t = dcu_cmd_take_on(st, ring, ctx->cmd_lane_tails[l], 1u, &consumed);
        dcu_cmd_header_on(ring, 0, t, op, 0u, args);
    }
}

DCU_FN_COLD dcuda_status_t dcu_command_call(dcuda_state_t *st, uint32_t op, const uint64_t *args,
                                            uint64_t *value)
{
    const dcuda_context_t *ctx = st->ctx;
    uint32_t tag = ++st->cmd_tag;
    uint32_t t = dcu_cmd_take(st, 1u);
    dcu_cmd_header(st, t, op, tag, args);
    const dcuda_cmd_reply_t *r = &ctx->replies[st->device_rank];
    dcu_waiter_t w = DCU_WAITER_INIT;
    int32_t status = 0;
    while (!dcu_reply_take(r, tag, &status, value))
        if (!dcu_apply_while_waiting(st, &w, DCU_WAIT_INBOX_EVERY))
            (void)dcu_pause(&w);
    if ((int32_t)(t + 1u - st->cmd_consumed) > 0)
        st->cmd_consumed = t + 1u;
    return (dcuda_status_t)status;
}

DCU_FN_COLD dcuda_status_t dcu_command_leader(dcuda_state_t *st, uint32_t op)
{
    const uint64_t args[6] = { 0u, 0u, 0u, 0u, 1u, 0u };
    return dcu_command_call(st, op, args, (uint64_t *)0);
}

/* ---- barriers ----------------------------------------------------------- */

/* The device's last rank to reach WORLD barrier `epoch` when WORLD spans
 * the processes of one node (lanes of `lanes`): writes its arrival into
 * every process's barrier slots, in that process's memory (its GPU's, over
 * NVLink; shared memory for CPU ranks), and into the node's slot in shared
 * host memory (which aligns the next run's count); waits until every
 * process's arrival is in its own slots (local reads), releases its
 * device. One system fence for all the stores, where a release store to
 * host memory and reads of it across PCIe took about 7 us between two
 * GPUs. */
DCU_FN_COLD dcuda_status_t dcu_node_barrier(dcuda_state_t *st, uint32_t epoch, const char *call,
                                            dcu_lanes_t lanes)
{
    const dcuda_context_t *ctx = st->ctx;
    uint32_t target = ctx->node_base + epoch;
    const int me = st->process_index;
    dcu_block_t d = { DCUDA_PHASE_BARRIER, 0, 0, DCU_COMM_WORLD, 0, call };
    if (dcu_leader()) {
        dcu_release_begin(); /* also orders the device's arrivals before the stores */
        for (int k = 1; k <= st->process_count; k++) { /* the others first, mine last */
            int p = (me + k) % st->process_count;
            dcu_st_released(&st->peers[p].node_push[me], target);
        }
        dcu_st_released(&ctx->node_slots[me].arrived, target);
    }
    const dcu_u32a_t *mine = st->peers[me].node_push;
    for (int p = 0; p < st->process_count; p++) {
        d.waits = DCUDA_WAITS_ON(DCUDA_WAITS_NODE, p);
        dcuda_status_t s = dcu_block_until(st, &mine[p], 0, target, 1, d, lanes);
        if (s != DCUDA_OK)
            return s;
    }
    /* To the device's ranks: a release at the GPU's scope passes on what
     * the system-scope acquires above saw (causality is transitive). */
    if (dcu_leader())
        dcu_st_release(&ctx->barriers[DCU_COMM_WORLD].released, epoch, 0);
    return DCUDA_OK;
}

/* The device's last rank to reach WORLD barrier `epoch` when some process
 * is on the network path (lanes of `lanes`): the proxies run the barrier
 * (and exchange the parts of the window `slot` it creates); it waits for
 * them, then releases its device. */
DCU_FN_COLD dcuda_status_t dcu_net_barrier(dcuda_state_t *st, uint32_t epoch, uint32_t slot,
                                           const char *call, dcu_lanes_t lanes)
{
    const dcuda_context_t *ctx = st->ctx;
    dcu_block_t d = {
        DCUDA_PHASE_BARRIER, 0, 0, DCU_COMM_WORLD, DCUDA_WAITS_ON(DCUDA_WAITS_NET, 0), call
    };
    if (dcu_leader()) {
        dcu_fence(); /* acquire the device's arrivals (and parts) before releasing them on */
        if (ctx->proxy_lanes > 1)
            dcu_cmd_post_lanes(st, DCUDA_CMD_BARRIER, epoch, slot);
        else
            dcu_cmd_post(st, DCUDA_CMD_BARRIER, epoch, slot, 0u);
    }
    dcuda_status_t s = dcu_block_until(st, ctx->net_barrier, 0, epoch, 1, d, lanes);
    if (s == DCUDA_OK && dcu_leader())
        dcu_st_release(&ctx->barriers[DCU_COMM_WORLD].released, epoch, 1);
    return s;
}

/* A barrier's wait, by the lanes of `lanes` after dcu_sync ordered the
 * rank's accesses: the leader arrives (releasing them), all wait for
 * everyone. Barrier n of a communicator of s ranks waits for n * s
 * arrivals on the device; WORLD over several processes adds a step among
 * the devices' last arrivals (through the node, or the proxies when some
 * process is on the network path; `slot` names the WORLD window the
 * barrier creates, whose parts the proxies then exchange), and the
 * device's ranks wait for its release. */
DCU_FN dcuda_status_t dcu_barrier_lanes(dcuda_state_t *st, int comm, uint32_t slot,
                                        const char *call, dcu_lanes_t lanes)
{
    uint32_t epoch = st->barrier_epoch[comm] + 1u;
    uint32_t target = epoch * (uint32_t)st->device_size;
    dcu_u32a_t *arrived = &st->ctx->barriers[comm].arrived;
    const int sys = st->process_count > 1;
    dcu_block_t d = {
        DCUDA_PHASE_BARRIER, 0, 0, (uint32_t)comm, DCUDA_WAITS_ON(DCUDA_WAITS_ARRIVED, comm), call
    };
    const int on_device = comm != DCU_COMM_WORLD || (st->process_count == 1 && !st->loopback);
    uint32_t last = 0;
    dcu_lanes_sync(lanes);
    if (st->ended) /* the run ended: no arrival of mine may let a member pass */
        return (dcuda_status_t)st->ended;
    if (dcu_leader()) {
        st->barrier_epoch[comm] = epoch;
        if (on_device) /* nobody needs to know who came last: no round trip */
            dcu_red_release(arrived, 1u, sys);
        else
            last = dcu_arrive(arrived) + 1u == target;
    }
    if (on_device) /* the acquire that saw the last arrival orders what follows */
        return dcu_block_until(st, arrived, 0, target, sys, d, lanes);
    dcuda_status_t s = DCUDA_OK;
    if (dcu_lanes_bcast(lanes, last))
        s = st->inbox ? dcu_net_barrier(st, epoch, slot, call, lanes)
                      : dcu_node_barrier(st, epoch, call, lanes);
    d.waits = DCUDA_WAITS_ON(DCUDA_WAITS_RELEASED, comm);
    if (s == DCUDA_OK)
        s = dcu_block_until(st, &st->ctx->barriers[comm].released, 0, epoch, sys, d, lanes);
    dcu_fence();
    return s;
}

/* The barrier of a whole rank: its polling lanes wait, every thread gets
 * the status. */
DCU_FN dcuda_status_t dcu_barrier(dcuda_state_t *st, int comm, const char *call)
{
    dcu_sync();
    if (dcu_in_poll_lanes()) {
        dcuda_status_t s = dcu_barrier_lanes(st, comm, DCUDA_CMD_NO_SLOT, call, dcu_poll_lanes());
        if (dcu_leader())
            st->result = s;
    }
    dcu_sync();
    return (dcuda_status_t)st->result;
}

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

/* ---- windows ------------------------------------------------------------------ */

/* Leader, once WORLD window st->result_win was created (`created`: its
 * status) on a node of several processes without a network path: my
 * device's ranks fill the node-wide table of the window's parts as this
 * process reaches them, a share each, and mark the slot when a part lies
 * where loads cannot reach it (every process judges a part alike:
 * dcu_remote_part tests mine against what the peers map); a barrier of
 * my device then makes the table whole before any of its ranks reads
 * it. Called from dcu_win_create, where a constant communicator other
 * than WORLD leaves it out of the kernel (inside the leader's call it
 * cost the same device's small puts 3%). */
DCU_FN_COLD dcuda_status_t dcu_node_parts_fill(dcuda_state_t *st, dcuda_status_t created,
                                               const char *call)
{
    const dcuda_context_t *ctx = st->ctx;
    const uint32_t win = st->result_win;
    const int slot = dcu_win_slot(win);
    dcuda_win_entry_t *row = ctx->node_parts + (size_t)slot * (size_t)st->world_size;
    for (int j = st->device_rank; j < st->world_size; j += st->device_size) {
        dcuda_win_entry_t part;
        if (dcu_remote_part(st, slot, j, &part) != DCUDA_OK) {
            dcu_st_relaxed(&ctx->node_unreachable[slot], win, 0);
            part.base = 0;
            part.size = 0;
        }
        row[j] = part;
    }
    dcuda_status_t s =
        dcu_barrier_lanes(st, DCU_COMM_DEVICE, DCUDA_CMD_NO_SLOT, call, dcu_one_lane());
    if (s != DCUDA_OK)
        st->result_win = DCUDA_WIN_NONE;
    return s != DCUDA_OK ? s : created;
}

/* Leader, the first step of a window's creation on any communicator:
 * the lowest free slot of comm, or -1 (reported in *arg), and my part
 * published there, empty when the arguments are refused (*arg says why:
 * they still join the collective, so that the other ranks do not hang).
 * st->result_win starts as DCUDA_WIN_NONE. */
DCU_FN_COLD int dcu_win_claim(dcuda_state_t *st, int comm, void *base, size_t size,
                              dcuda_status_t *arg)
{
    static const char call[] = "dcuda_win_create";
    st->result_win = DCUDA_WIN_NONE;
    int slot = dcu_free_slot(st, comm);
    if (slot < 0) {
        *arg = DCU_REPORT(st, DCUDA_ERR_WIN_LIMIT, call, "%d windows already live on %s",
                          dcu_win_room(comm), dcu_comm_name(comm));
        return -1;
    }
    *arg = dcu_checked_win_args(st, base, size, call);
    dcu_win_publish(st, comm, slot, *arg == DCUDA_OK ? (uint64_t)(uintptr_t)base : 0,
                    *arg == DCUDA_OK ? size : 0);
    return slot;
}

/* Leader, on WORLD or DEVICE: the handle is returned for dcuda_win_free
 * with refused arguments too. */
DCU_FN_COLD dcuda_status_t dcu_win_create_leader(dcuda_state_t *st, int comm, void *base,
                                                 size_t size)
{
    static const char call[] = "dcuda_win_create";
    dcuda_status_t arg;
    int slot = dcu_win_claim(st, comm, base, size, &arg);
    if (slot < 0)
        return arg;
    dcuda_status_t s = dcu_barrier_lanes(st, comm, (uint32_t)slot, call, dcu_one_lane());
    if (s != DCUDA_OK)
        return s;
    st->result_win = dcu_win_adopt(st, comm, slot);
    return arg;
}

/* Window creation on WORLD or DEVICE, after dcu_win_create_start
 * (impl/comm.h: on any communicator). */
DCU_FN dcuda_status_t dcu_win_create(dcuda_state_t *st, int comm, void *base, size_t size,
                                     uint32_t *win)
{
    static const char call[] = "dcuda_win_create";
    DCU_ON_LEADER(st, dcu_win_create_leader(st, comm, base, size));
    if (comm == DCU_COMM_WORLD && st->result_win != DCUDA_WIN_NONE && st->ctx->node_parts)
        DCU_ON_LEADER(st, dcu_node_parts_fill(st, (dcuda_status_t)st->result, call));
    *win = st->result_win;
    return (dcuda_status_t)st->result;
}

DCU_FN_COLD dcuda_status_t dcu_win_free_leader(dcuda_state_t *st, uint32_t win)
{
    int comm = dcu_win_comm(win), slot = dcu_win_slot(win);
    dcuda_status_t s =
        dcu_barrier_lanes(st, comm, DCUDA_CMD_NO_SLOT, "dcuda_win_free", dcu_one_lane());
    /* A barrier that did not complete (the run ends) leaves the part
     * published: a rank that has not yet seen the end may still read it.
     * The next run starts with empty tables. */
    dcu_win_forget(st, comm, slot, s == DCUDA_OK);
    return s;
}

/* Window free on WORLD or DEVICE, after dcu_win_call_start (impl/comm.h:
 * on any communicator). */
DCU_FN dcuda_status_t dcu_win_free(dcuda_state_t *st, uint32_t win)
{
    DCU_ON_LEADER(st, dcu_win_free_leader(st, win));
    return (dcuda_status_t)st->result;
}

/* Every path built so far has finished reading a put's source when the put
 * returns (its stores are done), so a flush only checks the window. */
DCU_FN dcuda_status_t dcu_win_flush(dcuda_state_t *st, uint32_t win)
{
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, "dcuda_win_flush");
    return dcu_checked_win(st, win, "dcuda_win_flush");
}

/* ---- notified RMA ---------------------------------------------------------- */

/* Leader, after dcu_sync ordered the rank's accesses: one release add to
 * the target's counter. The release covers the rank's earlier writes and
 * reads, so the target may read the data or reuse a buffer it was told is
 * free (a relaxed add would allow neither). Its scope follows the path:
 * the device for ranks of my device, the system for ranks of other
 * processes of the node (their memory was written over NVLink, or is
 * shared memory); a rank on the network path gets a command instead.
 * world_rank: the target's WORLD rank (used on the network path only). */
DCU_FN void dcu_notify_leader(dcuda_state_t *st, dcuda_notif_counters_t *to, uint32_t path,
                              int world_rank, int tag)
{
    switch (path) {
    case DCUDA_PATH_NET: /* the proxies carry it; posting the command releases */
        dcu_cmd_post(st, DCUDA_CMD_NOTIFY, (uint64_t)world_rank, 0u, (uint64_t)tag + 1u);
        break;
    case DCUDA_PATH_DEVICE:
        dcu_red_release(&to->arrived[tag].ranks, 1u, 0);
        break;
    case DCUDA_PATH_SHM:
    case DCUDA_PATH_P2P:
    default:
        dcu_red_release(&to->arrived[tag].ranks, 1u, 1);
        break;
    }
}

/* ---- the network path ---------------------------------------------------------- */

/* Bytes of payload one put command carries: a quarter of the queue, so the
 * commands of several ranks fit at once, and at most DCUDA_NET_CHUNK_MAX. */
DCU_FN size_t dcu_net_chunk(const dcuda_ring_t *ring)
{
    size_t c = (size_t)(ring->capacity / 4u - 1u) * sizeof(dcuda_cmd_t);
    return c < DCUDA_NET_CHUNK_MAX ? c : DCUDA_NET_CHUNK_MAX;
}

/* All threads: n bytes of src into the payload entries that follow header
 * ticket t (wrapping at the end of the ring). */
DCU_FN void dcu_cmd_payload(const dcuda_ring_t *ring, uint32_t t, const char *src, size_t n)
{
    uint32_t first = (t + 1u) & (ring->capacity - 1u);
    size_t room = (size_t)(ring->capacity - first) * sizeof(dcuda_cmd_t);
    char *entries = (char *)ring->entries;
    size_t a = n < room ? n : room;
    dcu_copy(entries + (size_t)first * sizeof(dcuda_cmd_t), src, a);
    if (n > a)
        dcu_copy(entries, src + a, n - a);
}

/* Leader: a put of at least DCUDA_NET_READ_MIN bytes that the proxy reads
 * from the source itself (copy engine, chunks through pinned buffers, sent
 * as they are read); returns once all of it is read. DCUDA_ERR_UNSUPPORTED
 * when the proxy cannot read the source (not from dcuda_host_alloc). */
DCU_FN_COLD dcuda_status_t dcu_put_read(dcuda_state_t *st, uint32_t win, int rank, size_t offset,
                                        size_t size, const char *src, int notify, int tag)
{
    const uint64_t args[6] = {
        (uint64_t)rank, (uint64_t)dcu_win_slot(win), offset,
        size,           (uint64_t)(uintptr_t)src,    notify ? (uint64_t)tag + 1u : 0u
    };
    return dcu_command_call(st, DCUDA_CMD_PUT_READ, args, (uint64_t *)0);
}

/* Leader: asks the proxy for the part of WORLD rank `rank` (on the network
 * path) in window `win` (its table slot), and keeps its size in the state. */
DCU_FN_COLD dcuda_status_t dcu_net_part_ask(dcuda_state_t *st, uint32_t win, int rank)
{
    const uint64_t args[6] = { (uint64_t)rank, (uint64_t)dcu_win_slot(win), 0u, 0u, 1u, 0u };
    uint64_t size = 0;
    dcuda_status_t s = dcu_command_call(st, DCUDA_CMD_PART, args, &size);
    if (s == DCUDA_OK) {
        st->net_part_win = win;
        st->net_part_rank = rank;
        st->net_part_size = size;
    }
    return s;
}

/* Before a put's full checks (all threads): when its target is a rank on
 * the network path whose part the proxy did not tell this rank last, the
 * leader asks for it (the proxy asks the owner once a window). Calls the
 * checks refuse anyway are left to them. */
DCU_FN_COLD dcuda_status_t dcu_net_part_fetch(dcuda_state_t *st, uint32_t win, int rank)
{
    const int comm = dcu_win_comm(win);
    if (dcu_check_win(st, win) != DCUDA_OK || comm == DCU_COMM_DEVICE || rank < 0 ||
        rank >= dcu_comm_size(st, comm))
        return DCUDA_OK;
    const int world = dcu_comm_world_rank(st, comm, rank);
    if (dcu_device_rank_of(st, DCU_COMM_WORLD, world) >= 0 ||
        (st->net_part_win == win && st->net_part_rank == world))
        return DCUDA_OK;
    int p = dcu_process_of(st, world);
    if (p < 0 || st->peers[p].path != DCUDA_PATH_NET)
        return DCUDA_OK;
    DCU_ON_LEADER(st, dcu_net_part_ask(st, win, world));
    return (dcuda_status_t)st->result;
}

/* A put to a rank on the network path (all threads): a large one the
 * proxy reads, else (or when it cannot) commands that carry the payload,
 * chunk by chunk, the notification with the last. The source has been
 * read when it returns, as on every other path. rank: WORLD (of any
 * window's communicator). */
DCU_FN_COLD dcuda_status_t dcu_put_net(dcuda_state_t *st, uint32_t win, int rank, size_t offset,
                                       size_t size, const char *src, int notify, int tag)
{
    const dcuda_ring_t *ring = &st->cmd;
    size_t chunk = dcu_net_chunk(ring), done = 0;
    if (!size && !notify)
        return DCUDA_OK;
    if (size >= DCUDA_NET_READ_MIN) {
        if (dcu_leader())
            st->result = dcu_put_read(st, win, rank, offset, size, src, notify, tag);
        dcu_sync();
        dcuda_status_t s = (dcuda_status_t)st->result;
        dcu_sync(); /* every thread has read it before the leader writes result again */
        if (s != DCUDA_ERR_UNSUPPORTED)
            return s;
    }
    dcu_mark(st, DCU_MARK_PUT_NET);
    do {
        size_t n = size - done < chunk ? size - done : chunk;
        uint32_t k = 1u + (uint32_t)((n + sizeof(dcuda_cmd_t) - 1u) / sizeof(dcuda_cmd_t));
        int last = done + n == size;
        if (dcu_leader())
            st->result = (int32_t)dcu_cmd_take(st, k);
        dcu_mark(st, DCU_MARK_TICKET);
        dcu_sync();
        uint32_t t = (uint32_t)st->result;
        dcu_cmd_payload(ring, t, src + done, n);
        dcu_sync(); /* the payload is written, and every thread has read t */
        dcu_mark(st, DCU_MARK_PAYLOAD);
        if (dcu_leader()) {
            uint64_t args[6] = { (uint64_t)rank,
                                 (uint64_t)dcu_win_slot(win),
                                 offset + done,
                                 n,
                                 k,
                                 last && notify ? (uint64_t)tag + 1u : 0u };
            dcu_cmd_header(st, t, DCUDA_CMD_PUT, 0u, args);
            dcu_mark(st, DCU_MARK_PUBLISHED);
        }
        done += n;
    } while (done < size);
    return DCUDA_OK;
}

/* The largest put the leader copies alone (whole aligned words). */
#define DCU_TINY_PUT 16u

/* The full checks of a put whose route is not remembered (out of line). */
DCU_FN_COLD dcuda_status_t dcu_put_slow(const dcuda_state_t *st, uint32_t win, int rank,
                                        size_t offset, size_t size, const void *src, dcu_put_t *p,
                                        const char *call)
{
    return dcu_checked_access(st, win, rank, offset, size, src, p, "source", call);
}

/* A put, notified with `tag` when `notify`: checks (a remembered route
 * skips most of them), then the data moves along the target's path. The
 * fast path keeps its target in registers: only a put whose route is new
 * fills the struct the out-of-line checks write (in local memory on a GPU). */
DCU_FN dcuda_status_t dcu_put(dcuda_state_t *st, uint32_t win, int rank, size_t offset, size_t size,
                              const void *src, int notify, int tag, const char *call)
{
    dcu_sync(); /* the rank's writes to src are done */
    if (!st)
        return dcu_report_uninit(st, call);
    dcu_mark(st, DCU_MARK_PUT);
    char *dst;
    dcuda_notif_counters_t *notifs;
    uint32_t path;
    int world; /* the target's WORLD rank */
    dcu_put_t p;
    dcuda_put_route_t route;
    /* Every test at once: the state, the tag and the remembered route. */
    const int fast = dcu_state_fields_ok(st) & ((notify == 0) | dcu_tag_valid(tag)) &
                     dcu_put_fast(st, win, rank, offset, size, src, &dst, &route);
    dcuda_status_t s = DCUDA_OK;
    p.dst = (char *)0; /* set by the checks (dead on the fast path) */
    if (fast) {
        notifs = route.notifs;
        path = route.path;
        world = route.world;
    } else if (!dcu_state_ok(st)) {
        return dcu_report_uninit(st, call);
    } else if (notify && (s = dcu_checked_tag(st, tag, call)) != DCUDA_OK) {
        return s;
    } else if ((s = dcu_net_part_fetch(st, win, rank)) != DCUDA_OK) {
        return s;
    } else if ((s = dcu_put_slow(st, win, rank, offset, size, src, &p, call)) == DCUDA_OK) {
        dst = p.dst;
        notifs = p.to.notifs;
        path = p.to.path;
        world = p.to.world;
    } else {
        return s;
    }
    switch (path) {
    case DCUDA_PATH_NET: { /* commands to the proxies */
        /* A source that is its own target copies nothing, as on the device
         * path (a rank of my device under NET_LOOPBACK: dst is its address). */
        const int same = st->loopback && dcu_world_rank_is_mine(st, world) && dst == src;
        s = dcu_put_net(st, win, world, offset, same ? 0u : size, (const char *)src, notify, tag);
        break;
    }
    case DCUDA_PATH_SHM:
    case DCUDA_PATH_P2P:
    case DCUDA_PATH_DEVICE:
    default:
        /* A few aligned words, notified: the leader copies and notifies, and
         * the rank meets once, after (no barrier between the copy and the
         * release). */
        if (notify && size - 1u < DCU_TINY_PUT &&
            (((uintptr_t)dst | (uintptr_t)src | (uintptr_t)size) & 3u) == 0) {
            if (dcu_leader()) {
                if (dst != (const char *)src)
                    dcu_copy_tiny(dst, (const char *)src, (uint32_t)size);
                dcu_notify_leader(st, notifs, path, world, tag);
            }
            dcu_sync(); /* the source is reusable */
            break;
        }
        /* Stores straight into the target's memory (over NVLink/PCIe for
         * a peer GPU); a source that is its own target copies nothing. */
        if (size && dst != (const char *)src)
            dcu_copy(dst, (const char *)src, size);
        dcu_sync(); /* the copy is done: source reusable, data ready */
        if (dcu_leader() && notify)
            dcu_notify_leader(st, notifs, path, world, tag);
        break;
    }
    if (dcu_leader() && !fast)
        dcu_route_remember(st, win, rank, &p);
    return s;
}

/* A notification through the full checks (out of line): to another
 * process, or one the fast test refused. */
DCU_FN_COLD dcuda_status_t dcu_notify_slow(dcuda_state_t *st, int rank, int comm, int tag)
{
    static const char call[] = "dcuda_notify";
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, call);
    dcu_target_t t = { 0, DCUDA_PATH_NET, -1 };
    dcuda_status_t s = dcu_checked_notify(st, comm, rank, tag, &t, call);
    if (s == DCUDA_OK && dcu_leader())
        dcu_notify_leader(st, t.notifs, t.path, t.world, tag);
    return s;
}

DCU_FN dcuda_status_t dcu_notify(dcuda_state_t *st, int rank, int comm, int tag)
{
    dcu_sync(); /* the rank's earlier accesses are done */
    int sys;
    dcuda_notif_counters_t *to = st ? dcu_fast_target(st, comm, rank, tag, &sys) : 0;
    if (!to)
        return dcu_notify_slow(st, rank, comm, tag);
    if (dcu_leader())
        dcu_red_release(&to->arrived[tag].ranks, 1u, sys);
    return DCUDA_OK;
}

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

#endif /* DCUDA_IMPL_ENGINE_H */
