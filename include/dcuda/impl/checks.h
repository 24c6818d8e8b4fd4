/*
 * Argument checks of the rank API with their error messages, and the
 * put's own tests (its fast path's, then the full checks'), in one place,
 * written once for both backends over the backend's
 *
 *   DCU_REPORT(st, status, call, fmt, ...)
 *                           reports a misuse by the rank of st (GPU: thread
 *                           0 reports), evaluates to status
 *
 * (impl/report.h), so that CPU and GPU ranks reject exactly the same calls with the same
 * words. Formats use only %d, %u, %llu, %p and %s, which both the CPU's
 * vsnprintf and the host-side formatting of GPU log entries understand.
 */
#ifndef DCUDA_IMPL_CHECKS_H
#define DCUDA_IMPL_CHECKS_H

#include "common.h"
#include "report.h"

DCU_FN const char *dcu_comm_name(int comm)
{
    return comm == DCU_COMM_WORLD                          ? "WORLD"
           : comm == DCU_COMM_DEVICE                       ? "DEVICE"
           : comm == DCU_COMM_NODE                         ? "NODE"
           : comm > DCU_COMM_NODE && comm < DCUDA_COMM_IDS ? "a split communicator"
                                                           : "?";
}

/* A live communicator of this rank. */
DCU_FN dcuda_status_t dcu_checked_comm(const dcuda_state_t *st, int comm, const char *call)
{
    if (dcu_comm_live(st, comm))
        return DCUDA_OK;
    return DCU_REPORT(st, DCUDA_ERR_COMM, call,
                      "communicator %d is not DCUDA_COMM_WORLD (0), DCUDA_COMM_DEVICE (1), "
                      "DCUDA_COMM_NODE (2) nor a split of this rank's that is live",
                      comm);
}

DCU_FN dcuda_status_t dcu_checked_tag(const dcuda_state_t *st, int tag, const char *call)
{
    if (dcu_tag_valid(tag))
        return DCUDA_OK;
    return DCU_REPORT(st, DCUDA_ERR_TAG, call, "tag %d not in 0..%d", tag, DCUDA_TAG_COUNT - 1);
}

DCU_FN dcuda_status_t dcu_checked_wait(const dcuda_state_t *st, int tag, int count,
                                       const char *call)
{
    dcuda_status_t s = dcu_checked_tag(st, tag, call);
    if (s == DCUDA_OK && count <= 0)
        s = DCU_REPORT(st, DCUDA_ERR_COUNT, call, "count %d for tag %d", count, tag);
    return s;
}

DCU_FN dcuda_status_t dcu_checked_win(const dcuda_state_t *st, uint32_t win, const char *call)
{
    if (dcu_check_win(st, win) == DCUDA_OK)
        return DCUDA_OK;
    return DCU_REPORT(st, DCUDA_ERR_WIN, call,
                      "window 0x%08x is not a live window of this rank (never created, "
                      "or freed)",
                      (unsigned)win);
}

/* A notification target: its counters as this rank reaches them, and the
 * path there. */
typedef struct dcu_target {
    dcuda_notif_counters_t *notifs;
    uint32_t path; /* dcuda_path */
    int world;     /* its WORLD rank */
} dcu_target_t;

/* Resolves `rank` given in comm, or reports why it cannot. A rank of NODE
 * or of a split is reached as its WORLD rank. */
DCU_FN dcuda_status_t dcu_checked_target(const dcuda_state_t *st, int comm, int rank,
                                         dcu_target_t *t, const char *call)
{
    int size = dcu_comm_size(st, comm);
    if (rank < 0 || rank >= size)
        return DCU_REPORT(st, DCUDA_ERR_RANK, call, "target rank %d not in 0..%d of %s", rank,
                          size - 1, dcu_comm_name(comm));
    t->world = dcu_comm_world_rank(st, comm, rank);
    const int valid = dcu_comm_valid(comm);
    t->notifs =
        dcu_target_notifs(st, valid ? comm : DCU_COMM_WORLD, valid ? rank : t->world, &t->path);
    if (!t->notifs && t->path != DCUDA_PATH_NET)
        return DCU_REPORT(st, DCUDA_ERR_UNREACHABLE, call,
                          "target rank %d of %s (WORLD rank %d) belongs to no process of this "
                          "program",
                          rank, dcu_comm_name(comm), t->world);
    return DCUDA_OK;
}

/* A communicator query: *out gets the size (want_size) or my rank. */
DCU_FN dcuda_status_t dcu_comm_query(const dcuda_state_t *st, int comm, int *out, int want_size,
                                     const char *call)
{
    dcuda_status_t s = dcu_checked_comm(st, comm, call);
    if (s == DCUDA_OK && !out)
        s = DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call, "%s is NULL", want_size ? "size" : "rank");
    if (s == DCUDA_OK)
        *out = want_size ? dcu_comm_size(st, comm) : dcu_comm_rank(st, comm);
    return s;
}

/* A notification's checks (communicator, tag, target). */
DCU_FN dcuda_status_t dcu_checked_notify(const dcuda_state_t *st, int comm, int rank, int tag,
                                         dcu_target_t *t, const char *call)
{
    dcuda_status_t s = dcu_checked_comm(st, comm, call);
    if (s == DCUDA_OK)
        s = dcu_checked_tag(st, tag, call);
    if (s == DCUDA_OK)
        s = dcu_checked_target(st, comm, rank, t, call);
    return s;
}

/* A put or get, checked completely before any memory is touched. */
typedef struct dcu_put {
    char *dst;       /* the target's bytes, as this rank reaches them */
    dcu_target_t to; /* where its notification goes */
    int src_slot;    /* window slot of my part that holds the source (a get's destination) */
    dcuda_win_entry_t target, mine;
} dcu_put_t;

/* The part of target `rank` of comm (WORLD rank t->world) in table slot
 * `slot`, translated when it is in another process; reports a part that
 * process does not export. */
DCU_FN dcuda_status_t dcu_checked_part(const dcuda_state_t *st, int comm, int slot, int rank,
                                       const dcu_target_t *t, dcuda_win_entry_t *part,
                                       const char *call)
{
    if (t->path == DCUDA_PATH_DEVICE) {
        *part = *dcu_win_entry(st, comm, slot, rank);
        return DCUDA_OK;
    }
    if (t->path == DCUDA_PATH_NET) {
        *part = dcu_net_part(st, slot, t->world); /* its size, as its owner's proxy told */
        if (dcu_world_rank_is_mine(st, t->world)) /* NET_LOOPBACK: in my address space */
            part->base = dcu_win_entry(st, comm, slot, rank)->base;
        return DCUDA_OK;
    }
    if (dcu_remote_part(st, slot, t->world, part) == DCUDA_OK)
        return DCUDA_OK;
    return DCU_REPORT(st, DCUDA_ERR_UNREACHABLE, call,
                      "the part of rank %d in window %d (%p..+%llu in its process) is "
                      "not in memory from dcuda_host_alloc, so other processes cannot "
                      "reach it",
                      rank, slot, (void *)(uintptr_t)part->base, (unsigned long long)part->size);
}

/* ---- a put's tests: the fast path's, then the full checks' ------------------ */

DCU_HD int dcu_contains(const dcuda_win_entry_t *e, uint64_t addr, uint64_t size)
{
    return dcu_inside(e->base, e->size, addr, size);
}

/* Does one of comm's live windows hold [addr, addr + size) in my part?
 * Its table slot, or -1. */
DCU_HD int dcu_find_part(const dcuda_state_t *st, int comm, uint64_t addr, uint64_t size)
{
    uint64_t live = dcu_win_mask(st, comm);
    for (int i = 0; live && i < dcu_win_room(comm); i++) {
        int s = dcu_win_first(comm) + i;
        if (((live >> i) & 1u) && dcu_contains(dcu_my_win_entry(st, comm, s), addr, size))
            return s;
    }
    return -1;
}

/* Which of the caller's windows holds [addr, addr + size): DCUDA_OK (and its
 * part in *found, its slot in *slot) if one of comm's, DCUDA_ERR_WIN_COMM if
 * only one of another communicator's, DCUDA_ERR_SOURCE if none. */
DCU_HD_COLD dcuda_status_t dcu_search_source(const dcuda_state_t *st, int comm, uint64_t addr,
                                             uint64_t size, dcuda_win_entry_t *found, int *slot)
{
    int s = dcu_find_part(st, comm, addr, size);
    if (s >= 0) {
        *found = *dcu_my_win_entry(st, comm, s);
        *slot = s;
        return DCUDA_OK;
    }
    for (int c = 0; c < DCUDA_COMM_IDS; c++)
        if (c != comm && dcu_comm_live(st, c) && dcu_find_part(st, c, addr, size) >= 0)
            return DCUDA_ERR_WIN_COMM;
    return DCUDA_ERR_SOURCE;
}

/* Source buffers must lie inside one of the caller's own window parts on the
 * same communicator as the put. *part and *slot come in as the caller's part
 * of the put's own window (tried first) and leave as the part (and its slot)
 * that holds the source. Returns DCUDA_ERR_WIN_COMM if the source lies only
 * in a window of the other communicator, DCUDA_ERR_SOURCE if in none. */
DCU_HD dcuda_status_t dcu_check_source(const dcuda_state_t *st, int comm, dcuda_win_entry_t *part,
                                       int *slot, const void *src, uint64_t size)
{
    uint64_t addr = (uint64_t)(uintptr_t)src;
    if (size == 0)
        return DCUDA_OK;
    if (addr + size < addr)
        return DCUDA_ERR_OVERFLOW;
    if (dcu_contains(part, addr, size))
        return DCUDA_OK;
    return dcu_search_source(st, comm, addr, size, part, slot);
}

/* Do source and destination coincide (nothing to copy) or not overlap?
 * Every test is evaluated (no short-circuit): the put's fast path uses it. */
DCU_HD int dcu_apart(uint64_t dst, uint64_t src, uint64_t size)
{
    return (dst == src) | (size == 0) | (dst >= src + size) | (src >= dst + size);
}

DCU_HD dcuda_status_t dcu_check_overlap(uint64_t dst, uint64_t src, uint64_t size)
{
    return dcu_apart(dst, src, size) ? DCUDA_OK : DCUDA_ERR_OVERLAP;
}

/* A put along a route the rank has checked before: 1 if the remembered
 * parts admit it (source inside the part of mine that held the source last
 * time, target range inside the target's, no partial overlap), with the
 * target address in *dst and the route in *r; 0 if the full checks must
 * decide. The route is read whole first and every test is evaluated (no
 * short-circuit), so the reads of rank-local memory overlap instead of
 * waiting for one another. */
DCU_HD int dcu_put_fast(const dcuda_state_t *st, uint32_t win, int rank, uint64_t offset,
                        uint64_t size, const void *src, char **dst, dcuda_put_route_t *r)
{
    *r = *dcu_route(st, win, rank);
    uint64_t a = (uint64_t)(uintptr_t)src, d = r->target_base + offset;
    /* A route left by a freed window keeps its rank but not its handle:
     * DCUDA_WIN_NONE matches no route. The target range lies inside the
     * target's part (as dcu_check_range), the source inside my part unless
     * there is none, and the two coincide or are apart except on the
     * network path, whose target lives in another address space (and
     * whose notifications need no counters here). */
    int ok = (win != DCUDA_WIN_NONE) & (r->win == win) & (r->rank == rank) &
             (offset + size >= offset) & dcu_inside(0, r->target_size, offset, size);
    ok &= (size == 0) | dcu_inside(r->mine_base, r->mine_size, a, size);
    const int mine = st->loopback & dcu_world_rank_is_mine(st, r->world); /* NET_LOOPBACK */
    ok &=
        ((r->path == DCUDA_PATH_NET) & !mine) | (dcu_apart(d, a, size) & ((r->notifs != 0) | mine));
    *dst = (char *)(uintptr_t)d;
    return ok;
}

/* A put (local: its source) or a get (local: its destination), checked
 * completely before any memory is touched: `local_name` words the
 * refusals of the local buffer ("source", "destination"). */
DCU_FN dcuda_status_t dcu_checked_access(const dcuda_state_t *st, uint32_t win, int rank,
                                         uint64_t offset, uint64_t size, const void *local,
                                         dcu_put_t *p, const char *local_name, const char *call)
{
    dcuda_status_t s = dcu_checked_win(st, win, call);
    if (s != DCUDA_OK)
        return s;
    int comm = dcu_win_comm(win), slot = dcu_win_slot(win);
    if ((s = dcu_checked_target(st, comm, rank, &p->to, call)) != DCUDA_OK ||
        (s = dcu_checked_part(st, comm, slot, rank, &p->to, &p->target, call)) != DCUDA_OK)
        return s;
    if ((s = dcu_check_range(p->target.size, offset, size)) != DCUDA_OK)
        return DCU_REPORT(st, s, call,
                          "offset %llu + size %llu outside the %llu-byte part of rank "
                          "%d in window %d on %s",
                          (unsigned long long)offset, (unsigned long long)size,
                          (unsigned long long)p->target.size, rank, slot, dcu_comm_name(comm));
    p->mine = *dcu_my_win_entry(st, comm, slot);
    p->src_slot = slot;
    if ((s = dcu_check_source(st, comm, &p->mine, &p->src_slot, local, size)) != DCUDA_OK)
        return DCU_REPORT(st, s, call, "%s %p..+%llu is %s", local_name, local,
                          (unsigned long long)size,
                          s == DCUDA_ERR_WIN_COMM ? "only in windows of another communicator"
                                                  : "not inside any window of this rank");
    uint64_t d = p->target.base + offset;
    /* On the network path the target lives in another address space (but
     * for a rank of my device under NET_LOOPBACK). */
    if ((p->to.path != DCUDA_PATH_NET || dcu_world_rank_is_mine(st, p->to.world)) &&
        (s = dcu_check_overlap(d, (uint64_t)(uintptr_t)local, size)) != DCUDA_OK)
        return DCU_REPORT(st, s, call, "%s %p and target %p overlap in %llu bytes", local_name,
                          local, (void *)(uintptr_t)d, (unsigned long long)size);
    p->dst = (char *)(uintptr_t)d;
    return DCUDA_OK;
}

/* After a fully checked put: remember its route for the next ones. */
DCU_FN void dcu_route_remember(dcuda_state_t *st, uint32_t win, int rank, const dcu_put_t *p)
{
    dcuda_put_route_t *r = dcu_route(st, win, rank);
    r->win = win;
    r->rank = rank;
    r->notifs = p->to.notifs;
    r->path = p->to.path;
    r->world = p->to.world;
    r->src_slot = ((uint32_t)dcu_win_comm(win) << 8) | (uint32_t)p->src_slot;
    r->target_base = p->target.base;
    r->target_size = p->target.size;
    r->mine_base = p->mine.base;
    r->mine_size = p->mine.size;
}

/* Checks of window creation's own arguments. */
DCU_FN dcuda_status_t dcu_checked_win_args(const dcuda_state_t *st, void *base, uint64_t size,
                                           const char *call)
{
    uint64_t b = (uint64_t)(uintptr_t)base;
    if (size && !base)
        return DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call, "base is NULL but size is %llu",
                          (unsigned long long)size);
    if (b + size < b)
        return DCU_REPORT(st, DCUDA_ERR_OVERFLOW, call, "base %p + size %llu wraps around", base,
                          (unsigned long long)size);
    return DCUDA_OK;
}

/* Timer call number `step` (start when even): is it in order? */
DCU_FN dcuda_status_t dcu_checked_timer(const dcuda_state_t *st, int stop, const char *call)
{
    uint32_t step = st->timer_next;
    if ((step & 1u) != (uint32_t)stop) {
        if (stop)
            return DCU_REPORT(st, DCUDA_ERR_TIMER, call, "no timer is running (%u started)",
                              step / 2);
        return DCU_REPORT(st, DCUDA_ERR_TIMER, call, "timer %u is still running", step / 2);
    }
    if (step / 2 >= DCUDA_MAX_TIMERS)
        return DCU_REPORT(st, DCUDA_ERR_TIMER, call, "more than %d timers in one run",
                          DCUDA_MAX_TIMERS);
    return DCUDA_OK;
}

#endif /* DCUDA_IMPL_CHECKS_H */
