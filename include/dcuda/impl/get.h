/*
 * The rank engine's get (dcuda_get, dcuda_get_notify): an operation of its
 * own, so that the put path pays nothing for it. It shares the put's
 * checks and routes (a get's destination plays a put's source: it lies in
 * one of my parts of the window's communicator) and moves data the other
 * way:
 *
 * - my device, shared memory, a peer GPU: the rank copies the target's
 *   bytes itself (loads from the L2 that holds them, over NVLink for a
 *   peer GPU, never from its own L1), then, for dcuda_get_notify, adds one
 *   to its own counter;
 * - the network path: the leader posts a GET command; the target's proxy
 *   reads the bytes once every message sent to that rank before the get
 *   is applied (src/proxy/inbox.h), and sends them back as a put into my
 *   part, notified with the get's tag: the caller's, or for dcuda_get the
 *   library's DCUDA_TAG_GET, which it waits for before it returns.
 *
 * Either way a get is ordered after this rank's earlier puts and
 * notifications to its target: it reads what they wrote.
 */
#ifndef DCUDA_IMPL_GET_H
#define DCUDA_IMPL_GET_H

#include "engine.h"

/* Leader: a GET command for `size` bytes at `offset` of WORLD rank
 * `rank`'s part of `win`, into my part of window slot `dst_slot` at
 * `dst_offset`, notified with `tag` when the data is there. */
DCU_FN_COLD void dcu_get_post(dcuda_state_t *st, uint32_t win, int rank, uint64_t offset,
                              uint64_t size, uint32_t dst_slot, uint64_t dst_offset, int tag)
{
    uint32_t t = dcu_cmd_take(st, 1u);
    const uint64_t args[6] = {
        (uint64_t)rank, (uint64_t)dcu_win_slot(win) | (uint64_t)dst_slot << 32,
        offset,         size,
        dst_offset,     (uint64_t)tag + 1u
    };
    dcu_cmd_header(st, t, DCUDA_CMD_GET, 0u, args);
}

/* A get from a rank on the network path (all threads): the command, then
 * for a blocking get the wait for its data's notification. */
DCU_FN_COLD dcuda_status_t dcu_get_net(dcuda_state_t *st, uint32_t win, int rank, uint64_t offset,
                                       uint64_t size, uint32_t dst_slot, uint64_t dst_offset,
                                       int notify, int tag, const char *call)
{
    if (dcu_leader())
        dcu_get_post(st, win, rank, offset, size, dst_slot, size ? dst_offset : 0u,
                     notify ? tag : DCUDA_TAG_GET);
    if (notify) {
        dcu_sync();
        return DCUDA_OK;
    }
    return dcu_wait_tag(st, DCUDA_TAG_GET, 1, call);
}

/* A get, notified with `tag` when `notify`, else complete on return:
 * checks (a remembered route skips most of them), then the data moves
 * along the target's path. */
DCU_FN dcuda_status_t dcu_get(dcuda_state_t *st, uint32_t win, int rank, size_t offset, size_t size,
                              void *dst, int notify, int tag, const char *call)
{
    dcu_sync(); /* the rank is done with dst */
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, call);
    char *src;
    uint32_t path, dst_slot;
    int world; /* the target's WORLD rank */
    uint64_t mine_base;
    dcu_put_t p;
    dcuda_put_route_t route;
    dcuda_status_t s = DCUDA_OK;
    p.dst = (char *)0; /* set by the checks (dead on the fast path) */
    const int fast = ((notify == 0) | dcu_tag_valid(tag)) &
                     dcu_put_fast(st, win, rank, offset, size, dst, &src, &route);
    if (fast) {
        path = route.path;
        mine_base = route.mine_base;
        dst_slot = route.src_slot & 0xffu;
        world = route.world;
    } else if (notify && (s = dcu_checked_tag(st, tag, call)) != DCUDA_OK) {
        return s;
    } else if ((s = dcu_net_part_fetch(st, win, rank)) != DCUDA_OK) {
        return s;
    } else if ((s = dcu_checked_access(st, win, rank, offset, size, dst, &p, "destination",
                                       call)) == DCUDA_OK) {
        src = p.dst;
        path = p.to.path;
        mine_base = p.mine.base;
        dst_slot = (uint32_t)p.src_slot;
        world = p.to.world;
        if (dcu_leader())
            dcu_route_remember(st, win, rank, &p);
    } else {
        return s;
    }
    if (path == DCUDA_PATH_NET)
        return dcu_get_net(st, win, world, offset, size, dst_slot,
                           (uint64_t)(uintptr_t)dst - mine_base, notify, tag, call);
    /* Loads from the target's memory where it is held (not a line this
     * SM's L1 kept: a get reads what is there now); a destination that is
     * the source itself copies nothing. */
    if (size && src != (const char *)dst)
        dcu_copy_fresh((char *)dst, src, size);
    dcu_sync(); /* the data is in dst */
    if (dcu_leader() && notify)
        dcu_red_release(dcu_my_counter(st, tag), 1u, 0);
    return DCUDA_OK;
}

#endif /* DCUDA_IMPL_GET_H */
