/*
 * Notified RMA: put and notify by stores on the memory paths (one release
 * that notifies), and the network path's rank side: put commands, reads
 * of large puts, parts' sizes and the route cache.
 * Part of the rank engine (engine.h says how it is written).
 */
#ifndef DCUDA_IMPL_RMA_H
#define DCUDA_IMPL_RMA_H

#include "win.h"

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

#endif /* DCUDA_IMPL_RMA_H */
