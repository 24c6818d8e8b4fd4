/*
 * Commands to the proxy: taking tickets on the command ring, filling and
 * publishing them, and waiting for the proxy's reply.
 * Part of the rank engine (engine.h says how it is written).
 */
#ifndef DCUDA_IMPL_CMD_H
#define DCUDA_IMPL_CMD_H

#include "block.h"

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

#endif /* DCUDA_IMPL_CMD_H */
