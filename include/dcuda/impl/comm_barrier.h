/*
 * The barrier of a communicator beyond WORLD and DEVICE (NODE, a split),
 * and the library's tags of such communicators (impl/comm.h). Its barrier
 * is WORLD's or DEVICE's when it has their ranks (NODE of a one-node job
 * or of a one-process node), else a tree of notifications
 * (DCU_COMM_FANOUT children a rank): a rank waits for its children, tells
 * its parent and waits for its word, then tells its children.
 * Notifications over stores are releases, and a chain of them is
 * cumulative: what a rank stored before it arrived is seen by whoever its
 * arrival's chain reaches. A put or a notification that went through the
 * proxies is not part of that chain, so a rank that gave its proxy
 * anything since its last fence first waits until every message its
 * proxy sent before is acknowledged by its receiver (DCUDA_CMD_FENCE):
 * then it is in its target's inbox, which the target applies before it
 * leaves the barrier. The collectives (impl/coll.h) take it too.
 */
#ifndef DCUDA_IMPL_COMM_BARRIER_H
#define DCUDA_IMPL_COMM_BARRIER_H

#include "coll_base.h"

/* The library's tags of communicator id comm, after the collectives'. */
enum {
    DCU_COMM_TAG_BARRIER = 0,     /* a child arrived, or my parent released me */
    DCU_COMM_TAG_SPLIT_DATA = 1,  /* a split's entry from my left */
    DCU_COMM_TAG_SPLIT_READY = 2, /* my right is in the split: its part is free */
    DCU_COMM_TAG_KINDS = DCUDA_TAG_COMM_KINDS
};
#define DCU_COMM_TAG_FIRST DCUDA_TAG_COMM_FIRST
DCUDA_STATIC_ASSERT(DCU_COMM_TAG_FIRST == DCUDA_TAG_COUNT + DCUDA_COMM_IDS * DCU_COLL_KINDS,
                    "communicator tags after the collectives'");
DCUDA_STATIC_ASSERT(DCU_COMM_TAG_FIRST + DCUDA_COMM_IDS * DCU_COMM_TAG_KINDS <= DCUDA_TAG_GET,
                    "communicator tags before the get's");

/* Children of a rank in a barrier's tree. */
#define DCU_COMM_FANOUT 4

DCU_FN int dcu_comm_tag(int comm, int kind)
{
    return DCU_COMM_TAG_FIRST + comm * DCU_COMM_TAG_KINDS + kind;
}

/* Leader: waits until every message this rank's proxy lane sent before
 * now was acknowledged (nothing to wait for when the rank gave its proxy
 * nothing since its last fence, or has no network path). */
DCU_FN_COLD dcuda_status_t dcu_net_fence_leader(dcuda_state_t *st)
{
    if (!st->inbox || !st->net_unfenced)
        return DCUDA_OK;
    const uint64_t args[6] = { 0u, 0u, 0u, 0u, 1u, 0u };
    dcuda_status_t s = dcu_command_call(st, DCUDA_CMD_FENCE, args, (uint64_t *)0);
    if (s == DCUDA_OK)
        st->net_unfenced = 0;
    return s;
}

/* The barrier of comm (NODE or a split; all threads). */
DCU_FN_COLD dcuda_status_t dcu_comm_barrier_tree(dcuda_state_t *st, int comm, const char *call)
{
    const dcuda_comm_info_t *c = &st->comms[comm - DCU_COMM_NODE];
    const int tag = dcu_comm_tag(comm, DCU_COMM_TAG_BARRIER), me = c->rank;
    const int first = me * DCU_COMM_FANOUT + 1;
    int children = c->size - first;
    children = children < 0 ? 0 : children > DCU_COMM_FANOUT ? DCU_COMM_FANOUT : children;
    DCU_ON_LEADER(st, st->ended ? (dcuda_status_t)st->ended : dcu_net_fence_leader(st));
    dcuda_status_t s = (dcuda_status_t)st->result;
    if (s == DCUDA_OK && children)
        s = dcu_wait_tag(st, tag, children, call);
    if (s == DCUDA_OK && me > 0) {
        s = dcu_notify(st, c->members[(me - 1) / DCU_COMM_FANOUT], DCU_COMM_WORLD, tag);
        if (s == DCUDA_OK)
            s = dcu_wait_tag(st, tag, 1, call);
    }
    for (int i = 0; i < children && s == DCUDA_OK; i++)
        s = dcu_notify(st, c->members[first + i], DCU_COMM_WORLD, tag);
    if (s == DCUDA_OK && st->inbox) {
        /* What the members' fences waited for is in my inbox (the
         * proxies acknowledge what they took in there), but a release
         * over stores leaves it unapplied: apply it now. */
        if (dcu_in_poll_lanes())
            (void)dcu_inbox_drain(st, dcu_poll_lanes(), DCUDA_INBOX_ENTRIES);
        dcu_sync();
    }
    return s;
}

/* The barrier of any live communicator (all threads, after the checks):
 * WORLD's or DEVICE's where it has their ranks, else its tree. */
DCU_FN dcuda_status_t dcu_comm_barrier_any(dcuda_state_t *st, int comm, const char *call)
{
    int by = dcu_comm_valid(comm) ? comm : st->comms[comm - DCU_COMM_NODE].barrier;
    return dcu_comm_valid(by) ? dcu_barrier(st, by, call) : dcu_comm_barrier_tree(st, comm, call);
}

#endif /* DCUDA_IMPL_COMM_BARRIER_H */
