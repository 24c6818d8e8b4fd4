/*
 * Barriers of WORLD and of communicators: on one device by counters, across
 * the processes of a node by arrivals, over the network path by the proxy.
 * Part of the rank engine (engine.h says how it is written).
 */
#ifndef DCUDA_IMPL_BARRIER_H
#define DCUDA_IMPL_BARRIER_H

#include "cmd.h"

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
    dcu_block_t d = { DCUDA_PHASE_BARRIER, 0, 0, DCU_COMM_WORLD, 0, call, 0 };
    if (dcu_leader()) {
        dcu_release_begin(); /* also orders the device's arrivals before the stores */
        for (int k = 1; k <= st->process_count; k++) { /* the others first, mine last */
            int p = (me + k) % st->process_count;
            dcu_st_released(&st->peers[p].node_push[me], target);
        }
        dcu_st_released(&ctx->node_slots[me].arrived, target);
    }
    DCU_TRACE_MARK(st, DCU_TRACE_SEND);
    const dcu_u32a_t *mine = st->peers[me].node_push;
    for (int p = 0; p < st->process_count; p++) {
        d.waits = DCUDA_WAITS_ON(DCUDA_WAITS_NODE, p);
        dcuda_status_t s = dcu_block_until(st, &mine[p], 0, target, 1, d, lanes);
        if (s != DCUDA_OK)
            return s;
    }
    DCU_TRACE_MARK(st, DCU_TRACE_SPIN);
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
        DCUDA_PHASE_BARRIER, 0, 0, DCU_COMM_WORLD, DCUDA_WAITS_ON(DCUDA_WAITS_NET, 0), call, 0
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
    dcu_block_t d = { DCUDA_PHASE_BARRIER,
                      0,
                      0,
                      (uint32_t)comm,
                      DCUDA_WAITS_ON(DCUDA_WAITS_ARRIVED, comm),
                      call,
                      0 };
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
    DCU_TRACE_MARK(st, DCU_TRACE_CHECKS);
    if (on_device) /* the acquire that saw the last arrival orders what follows */
        return dcu_block_until(st, arrived, 0, target, sys, d, lanes);
    dcuda_status_t s = DCUDA_OK;
    if (dcu_lanes_bcast(lanes, last))
        s = st->inbox ? dcu_net_barrier(st, epoch, slot, call, lanes)
                      : dcu_node_barrier(st, epoch, call, lanes);
    d.waits = DCUDA_WAITS_ON(DCUDA_WAITS_RELEASED, comm);
    if (s == DCUDA_OK)
        s = dcu_block_until(st, &st->ctx->barriers[comm].released, 0, epoch, sys, d, lanes);
    DCU_TRACE_MARK(st, DCU_TRACE_AGREE);
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

#endif /* DCUDA_IMPL_BARRIER_H */
