/*
 * The rank engine's remote atomics (dcuda_atomic, dcuda_atomic_notify): an
 * operation of their own, checked in one place (dcu_checked_atomic), on
 * the target's aligned 32- or 64-bit word.
 *
 * - my device, shared memory, a peer GPU: the leader applies the atomic to
 *   the target's word as it reaches it (a GPU: system-scope, which peer
 *   GPUs' atomics on the same word need, but device-scope where the job
 *   has this GPU alone), fenced on both sides, then notifies as a
 *   notified put does; every thread of the rank gets the word's value
 *   before;
 * - the network path: the leader posts an ATOMIC command and waits for
 *   its reply (applying its own inbox meanwhile); the target's proxy puts
 *   the atomic in the target rank's inbox, in order after what the rank
 *   sent it before, the target rank applies it while it waits or tests
 *   (as it counts notifications), and the word's value before comes back
 *   (shared/ring.h). A word not aligned there is DCUDA_ERR_INVALID_ARG.
 *
 * An atomic is ordered after the rank's earlier puts and notifications to
 * its target (as a notification is) and before the rank's later accesses.
 */
#ifndef DCUDA_IMPL_ATOMIC_H
#define DCUDA_IMPL_ATOMIC_H

#include "../dcuda_types.h"
#include "engine.h"

/* An atomic's own arguments: op, width, operand and compare. */
DCU_FN dcuda_status_t dcu_checked_atomic_args(const dcuda_state_t *st, int op, uint64_t width,
                                              uint64_t operand, uint64_t compare, const char *call)
{
    if (op < DCUDA_ATOMIC_FETCH_ADD || op > DCUDA_ATOMIC_COMPARE_SWAP)
        return DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call,
                          "op %d is not DCUDA_ATOMIC_FETCH_ADD, DCUDA_ATOMIC_SWAP or "
                          "DCUDA_ATOMIC_COMPARE_SWAP",
                          op);
    if (width != 4u && width != 8u)
        return DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call, "width %llu is not 4 or 8 bytes",
                          (unsigned long long)width);
    if (width == 4u && (operand > 0xffffffffull || compare > 0xffffffffull))
        return DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call,
                          "operand %llu or compare %llu does not fit the 4-byte word",
                          (unsigned long long)operand, (unsigned long long)compare);
    return DCUDA_OK;
}

/* Every check of an atomic before the target's word is touched: its
 * arguments, the tag (when notified), the window, the target, its part
 * and the word's place in it (inside, aligned to its width); the word as
 * this rank reaches it in *word, where a notification goes in *to. */
DCU_FN_COLD dcuda_status_t dcu_checked_atomic(const dcuda_state_t *st, int op, uint32_t win,
                                              int rank, uint64_t offset, uint64_t width,
                                              uint64_t operand, uint64_t compare, int notify,
                                              int tag, char **word, dcu_target_t *to,
                                              dcuda_win_entry_t *part, const char *call)
{
    dcuda_status_t s = dcu_checked_atomic_args(st, op, width, operand, compare, call);
    if (s != DCUDA_OK || (notify && (s = dcu_checked_tag(st, tag, call)) != DCUDA_OK) ||
        (s = dcu_checked_win(st, win, call)) != DCUDA_OK)
        return s;
    int comm = dcu_win_comm(win), slot = dcu_win_slot(win);
    if ((s = dcu_checked_target(st, comm, rank, to, call)) != DCUDA_OK)
        return s;
    if ((s = dcu_checked_part(st, comm, slot, rank, to, part, call)) != DCUDA_OK)
        return s;
    if ((s = dcu_check_range(part->size, offset, width)) != DCUDA_OK)
        return DCU_REPORT(st, s, call,
                          "offset %llu + width %llu outside the %llu-byte part of rank %d in "
                          "window %d on %s",
                          (unsigned long long)offset, (unsigned long long)width,
                          (unsigned long long)part->size, rank, slot, dcu_comm_name(comm));
    uint64_t at = part->base + offset;
    if (to->path == DCUDA_PATH_NET && !dcu_world_rank_is_mine(st, to->world))
        return DCUDA_OK; /* the base is the target's: its proxy checks the alignment */
    if (at % width)
        return DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call,
                          "offset %llu of rank %d's part in window %d (at %p) is not aligned to "
                          "its %llu-byte word",
                          (unsigned long long)offset, rank, slot, (void *)(uintptr_t)at,
                          (unsigned long long)width);
    *word = (char *)(uintptr_t)at;
    return DCUDA_OK;
}

/* Leader: a remote atomic on WORLD rank `world` on the network path
 * (ATOMIC command, shared/ring.h); its status, the word's value before in
 * *old. */
DCU_FN_COLD dcuda_status_t dcu_atomic_net(dcuda_state_t *st, int op, uint32_t win, int world,
                                          uint64_t offset, uint64_t width, uint64_t operand,
                                          uint64_t compare, int notify, int tag, uint64_t *old)
{
    const uint64_t args[6] = {
        (uint64_t)world, (uint64_t)dcu_win_slot(win) | (uint64_t)op << 32 | width << 40,
        offset,          operand,
        compare,         notify ? (uint64_t)tag + 1u : 0u
    };
    return dcu_command_call(st, DCUDA_CMD_ATOMIC, args, old);
}

/* A remote atomic on my device, shared memory or a peer GPU (its word as
 * this rank reaches it), then its notification; the leader's *old gets
 * the word's value before. */
DCU_FN void dcu_atomic_here(dcuda_state_t *st, int op, char *word, uint64_t width, uint64_t operand,
                            uint64_t compare, int notify, int tag, const dcu_target_t *to,
                            uint64_t *old)
{
    /* System scope unless the word can be reached from this GPU alone (one
     * process: the only GPU of the job). A device-scope atomic is atomic
     * only with atomics of the same GPU, and a peer GPU's atomics on my
     * memory are system-scope. */
    const int sys = to->path != DCUDA_PATH_DEVICE || st->process_count > 1;
    if (dcu_leader()) {
        *old = dcu_atomic_rmw(word, op, width, operand, compare, sys);
        if (notify)
            dcu_notify_leader(st, to->notifs, to->path, to->world, tag);
    }
}

/* An atomic to the last atomic's target (st->atomic_route): 1 if the route
 * admits it (the same window and rank, reached by stores, the word inside
 * the target's part and aligned to its width, the op, width, operands and
 * tag valid), with the word in *word and where a notification goes in
 * *to; 0 if the full checks must decide. Every test is evaluated at once.
 * The checks of a rank in another process read its process's window table
 * and segments: a fetch-add between two H200 took 9.0 us with them, 1.8
 * along the route (NVSHMEM's: 1.0). */
DCU_FN int dcu_atomic_fast(const dcuda_state_t *st, int op, uint32_t win, int rank, uint64_t offset,
                           uint64_t width, uint64_t operand, uint64_t compare, int notify, int tag,
                           char **word, dcu_target_t *to)
{
    const dcuda_put_route_t r = st->atomic_route;
    const uint64_t at = r.target_base + offset;
    int ok = dcu_state_fields_ok(st) & (win != DCUDA_WIN_NONE) & (r.win == win) & (r.rank == rank) &
             (r.path != DCUDA_PATH_NET) & (offset + width >= offset) &
             dcu_inside(0, r.target_size, offset, width);
    ok &= (op >= DCUDA_ATOMIC_FETCH_ADD) & (op <= DCUDA_ATOMIC_COMPARE_SWAP) &
          ((width == 4u) | (width == 8u)) &
          ((width == 8u) | ((operand | compare) <= 0xffffffffull)) &
          ((notify == 0) | dcu_tag_valid(tag)) & ((at & (width - 1u)) == 0u);
    *word = (char *)(uintptr_t)at;
    to->notifs = r.notifs;
    to->path = r.path;
    to->world = r.world;
    return ok;
}

/* Leader, after an atomic's full checks found a target reached by
 * stores: its route for the next atomics. */
DCU_FN void dcu_atomic_remember(dcuda_state_t *st, uint32_t win, int rank, const dcu_target_t *to,
                                const dcuda_win_entry_t *part)
{
    dcuda_put_route_t *r = &st->atomic_route;
    r->win = win;
    r->rank = rank;
    r->src_slot = 0xffffffffu; /* no source part */
    r->path = to->path;
    r->world = to->world;
    r->notifs = to->notifs;
    r->target_base = part->base;
    r->target_size = part->size;
    r->mine_base = r->mine_size = 0u;
}

/* A remote atomic, notified with `tag` when `notify`; *fetched (when not
 * NULL; memory the rank's threads may share) gets the word's value before,
 * 0 when the call fails. */
DCU_FN dcuda_status_t dcu_atomic(dcuda_state_t *st, int op, uint32_t win, int rank, uint64_t offset,
                                 uint64_t width, uint64_t operand, uint64_t compare,
                                 uint64_t *fetched, int notify, int tag, const char *call)
{
    dcu_sync(); /* the rank's earlier writes are done; the last call's word read */
    if (fetched)
        *fetched = 0u;
    char *word = (char *)0;
    dcu_target_t to = { 0, DCUDA_PATH_NET, -1 };
    dcuda_status_t s = DCUDA_OK;
    dcuda_win_entry_t part = { 0, 0 };
    const int fast = st && dcu_atomic_fast(st, op, win, rank, offset, width, operand, compare,
                                           notify, tag, &word, &to);
    if (!fast) {
        if (!dcu_state_ok(st))
            return dcu_report_uninit(st, call);
        to.notifs = (dcuda_notif_counters_t *)0;
        to.path = DCUDA_PATH_NET;
        to.world = -1;
        s = dcu_net_part_fetch(st, win, rank);
        if (s == DCUDA_OK)
            s = dcu_checked_atomic(st, op, win, rank, offset, width, operand, compare, notify, tag,
                                   &word, &to, &part, call);
        if (s != DCUDA_OK)
            return s;
    }
    uint64_t old = 0u;
    if (to.path == DCUDA_PATH_NET) {
        DCU_ON_LEADER(st, dcu_atomic_net(st, op, win, to.world, offset, width, operand, compare,
                                         notify, tag, &old));
        if ((s = (dcuda_status_t)st->result) == DCUDA_ERR_INVALID_ARG)
            return DCU_REPORT(st, s, call,
                              "offset %llu of rank %d's part in window %d is not aligned to its "
                              "%llu-byte word there",
                              (unsigned long long)offset, rank, dcu_win_slot(win),
                              (unsigned long long)width);
        if (s != DCUDA_OK)
            return s;
    } else {
        dcu_atomic_here(st, op, word, width, operand, compare, notify, tag, &to, &old);
    }
    const uint32_t lo = dcu_leader_word(st, (uint32_t)old);
    const uint32_t hi = dcu_leader_word(st, (uint32_t)(old >> 32));
    if (fetched)
        *fetched = (uint64_t)hi << 32 | lo;
    if (!fast && to.path != DCUDA_PATH_NET && dcu_leader()) /* every thread has read the route */
        dcu_atomic_remember(st, win, rank, &to, &part);
    return DCUDA_OK;
}

#endif /* DCUDA_IMPL_ATOMIC_H */
