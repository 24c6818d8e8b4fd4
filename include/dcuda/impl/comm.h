/*
 * Communicators beyond WORLD and DEVICE: NODE (the ranks of my node's
 * processes) and splits of any live communicator by colour and key, as
 * MPI_Comm_split. Such a communicator is a list of WORLD ranks
 * (dcuda_comm_info_t): a call on it translates its target once and takes
 * the WORLD path, so every path (device, node, network) serves it as it
 * is.
 *
 * Its barrier is in impl/comm_barrier.h. Its windows are slots of WORLD's
 * table (DCUDA_COMM_WINDOWS an id, after WORLD's own 64), so the proxies
 * and the wire know them as WORLD's; the collectives take them as they
 * take WORLD's, but for the reads of a device's or a node's parts, which
 * need the members in rank order (impl/coll_local.h).
 *
 * A split exchanges (colour, key, free ids, whether the rank could keep
 * a list) through the window the caller gives: an allgather when the
 * window is the parent's, else along a ring of the
 * parent's ranks: my right's part gets each entry from me in turn, after my
 * right said it is in the split (SPLIT_READY); only my left sends me
 * SPLIT_DATA and only my right SPLIT_READY, so each wait counts one. The
 * id is the lowest one free at every rank of the parent, so the ids of a
 * split's communicators agree wherever their ranks made other splits.
 */
#ifndef DCUDA_IMPL_COMM_H
#define DCUDA_IMPL_COMM_H

#include "coll.h"
#include "comm_barrier.h"

/* A split's entry of one rank of the parent. */
typedef struct dcu_split_entry {
    int32_t colour;
    int32_t key;
    uint32_t free_ids; /* bit per communicator id free at this rank */
    int32_t reserved;
} dcu_split_entry_t;

/* My member list of split id `id`: a slot of the context's (as long as
 * the largest parent allowed, comm_list_cap). */
DCU_FN int32_t *dcu_comm_list(const dcuda_state_t *st, int id)
{
    const dcuda_context_t *ctx = st->ctx;
    size_t slot = (size_t)st->device_rank * (DCUDA_COMM_IDS - DCUDA_COMM_FIRST_SPLIT) +
                  (size_t)(id - DCUDA_COMM_FIRST_SPLIT);
    return ctx->comm_lists + slot * (size_t)ctx->comm_list_cap;
}

/* ---- windows of NODE and of splits --------------------------------------------- */

/* Leader: my offer to a new window of comm (NODE or a split): its slot
 * (the lowest of comm's free: every member has the same windows of comm,
 * made by the same calls), the checked arguments, and my part published;
 * with a network path, my proxy lane reads my part and forgets what it
 * knew of the slot's last windows (DCUDA_CMD_WINDOW) before I join the
 * barrier, so that no member asks for a part or puts into it before it
 * is there. st->result_win: the slot, DCUDA_WIN_NONE when no barrier is
 * to be joined. */
DCU_FN_COLD dcuda_status_t dcu_comm_win_offer(dcuda_state_t *st, int comm, void *base, size_t size)
{
    dcuda_status_t arg;
    const int slot = dcu_win_claim(st, comm, base, size, &arg);
    if (slot < 0)
        return arg;
    if (st->inbox) {
        const uint32_t unfenced = st->net_unfenced; /* the command leaves nothing in flight */
        const uint64_t args[6] = { (uint64_t)slot, 0u, 0u, 0u, 1u, 0u };
        dcuda_status_t s = dcu_command_call(st, DCUDA_CMD_WINDOW, args, (uint64_t *)0);
        st->net_unfenced = unfenced;
        if (s != DCUDA_OK)
            return s;
    }
    st->result_win = (uint32_t)slot;
    return arg;
}

/* A window of NODE or a split (all threads, after the checks): offers,
 * then the communicator's barrier (a rank leaving it finds every member's
 * part published), then the handle. Refused arguments still join with an
 * empty part, as on WORLD, and get a handle for dcuda_win_free. */
DCU_FN_COLD dcuda_status_t dcu_comm_win_create(dcuda_state_t *st, int comm, void *base, size_t size,
                                               uint32_t *win)
{
    static const char call[] = "dcuda_win_create";
    DCU_ON_LEADER(st, dcu_comm_win_offer(st, comm, base, size));
    const dcuda_status_t arg = (dcuda_status_t)st->result;
    const uint32_t slot = st->result_win;
    dcu_sync(); /* every thread has read both before the leader writes them again */
    *win = DCUDA_WIN_NONE;
    if (slot == DCUDA_WIN_NONE)
        return arg;
    dcuda_status_t s = dcu_comm_barrier_any(st, comm, call);
    if (s != DCUDA_OK)
        return s;
    if (dcu_leader())
        st->result_win = dcu_win_adopt(st, comm, (int)slot);
    dcu_sync();
    *win = st->result_win;
    return arg;
}

/* A window on any live communicator. */
DCU_FN dcuda_status_t dcu_win_create_on(dcuda_state_t *st, int comm, void *base, size_t size,
                                        uint32_t *win)
{
    dcuda_status_t s = dcu_win_create_start(st, comm, win, "dcuda_win_create");
    if (s != DCUDA_OK)
        return s;
    return dcu_comm_valid(comm) ? dcu_win_create(st, comm, base, size, win)
                                : dcu_comm_win_create(st, comm, base, size, win);
}

/* Frees a window of any communicator: one of NODE or a split after its
 * communicator's barrier (puts into it before the call are done). */
DCU_FN dcuda_status_t dcu_win_free_on(dcuda_state_t *st, uint32_t win)
{
    static const char call[] = "dcuda_win_free";
    const int comm = dcu_win_comm(win);
    dcuda_status_t s = dcu_win_call_start(st, win, call);
    if (s != DCUDA_OK)
        return s;
    if (dcu_comm_valid(comm))
        return dcu_win_free(st, win);
    s = dcu_comm_barrier_any(st, comm, call);
    /* As on WORLD: a barrier the run's end cut short leaves my part. */
    if (dcu_leader())
        dcu_win_forget(st, comm, dcu_win_slot(win), s == DCUDA_OK);
    dcu_sync();
    return s;
}

/* The rank of the split's window's communicator that is rank `rank` of
 * parent, or -1 when the window cannot reach it (a DEVICE window). */
DCU_FN int dcu_split_target(const dcuda_state_t *st, uint32_t win, int parent, int rank)
{
    int world = dcu_comm_world_rank(st, parent, rank);
    if (dcu_win_comm(win) == DCU_COMM_WORLD)
        return world;
    return dcu_world_rank_is_mine(st, world) ? world - st->world_first : -1;
}

/* The checks of a split (every thread; the leader reports): *room is my
 * part at offset. */
DCU_FN dcuda_status_t dcu_split_checks(dcuda_state_t *st, int parent, int colour, uint32_t win,
                                       size_t offset, const int *comm, char **room,
                                       const char *call)
{
    dcuda_status_t s = dcu_checked_comm(st, parent, call);
    if (s == DCUDA_OK && !comm)
        s = DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call, "comm is NULL");
    if (s == DCUDA_OK && colour < 0 && colour != DCUDA_UNDEFINED)
        s = DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call,
                       "colour %d is negative and not DCUDA_UNDEFINED", colour);
    if (s == DCUDA_OK)
        s = dcu_checked_win(st, win, call);
    if (s == DCUDA_OK && !dcu_comm_valid(dcu_win_comm(win)) && dcu_win_comm(win) != parent)
        s = DCU_REPORT(st, DCUDA_ERR_WIN_COMM, call,
                       "window 0x%08x is of %s (%d), neither WORLD, DEVICE nor the parent: give "
                       "one of those",
                       (unsigned)win, dcu_comm_name(dcu_win_comm(win)), dcu_win_comm(win));
    int size = s == DCUDA_OK ? dcu_comm_size(st, parent) : 0;
    if (s == DCUDA_OK)
        s = dcu_checked_room(st, win, offset, dcuda_comm_split_room(size), room, call);
    if (s == DCUDA_OK && size > st->ctx->comm_list_cap)
        s = DCU_REPORT(st, DCUDA_ERR_NO_MEMORY, call,
                       "%s has %d ranks; a split's parent may have %d (its member lists are kept "
                       "for parents of up to that many)",
                       dcu_comm_name(parent), size, st->ctx->comm_list_cap);
    if (s == DCUDA_OK && (uintptr_t)*room % 4u != 0)
        s = DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call,
                       "offset %llu puts the split's entries at %p, not 4-byte aligned",
                       (unsigned long long)offset, (void *)*room);
    for (int r = 0; s == DCUDA_OK && dcu_win_comm(win) == DCU_COMM_DEVICE && r < size; r++)
        if (dcu_split_target(st, win, parent, r) < 0)
            s = DCU_REPORT(st, DCUDA_ERR_WIN_COMM, call,
                           "window 0x%08x is of DEVICE but rank %d of %s is on another device: "
                           "give a window of WORLD",
                           (unsigned)win, r, dcu_comm_name(parent));
    return s;
}

/* Leader: my entry. */
DCU_FN_COLD dcu_split_entry_t dcu_split_mine(const dcuda_state_t *st, int colour, int key)
{
    dcu_split_entry_t e;
    e.colour = colour;
    e.key = key;
    const uint32_t splits = ((1u << DCUDA_COMM_IDS) - 1u) & ~((1u << DCUDA_COMM_FIRST_SPLIT) - 1u);
    e.free_ids = ~st->live_comms & splits;
    e.reserved = 0;
    return e;
}

/* The ring exchange of the entries (all threads; n >= 2): my right tells
 * me it is in, then n - 1 steps each pass one entry on to my right and
 * wait for the next from my left. */
DCU_FN dcuda_status_t dcu_split_ring(dcuda_state_t *st, int parent, uint32_t win, size_t offset,
                                     const char *room, const char *call)
{
    const int n = dcu_comm_size(st, parent), me = dcu_comm_rank(st, parent);
    const int left = (me + n - 1) % n, right = (me + 1) % n;
    const int data = dcu_comm_tag(parent, DCU_COMM_TAG_SPLIT_DATA);
    const int ready = dcu_comm_tag(parent, DCU_COMM_TAG_SPLIT_READY);
    const int to = dcu_split_target(st, win, parent, right);
    const size_t e = sizeof(dcu_split_entry_t);
    /* My record goes to my left with my word, and my right's comes to me:
     * each compares before it writes into the other's part. */
    dcuda_status_t s = dcu_call_push(st, parent, left, DCUDA_MAILBOX_RIGHT, ready);
    if (s == DCUDA_OK)
        s = dcu_wait_boxes(st, ready, 1, call, dcu_boxes(parent, DCUDA_MAILBOX_RIGHT, 1));
    for (int step = 0; step < n - 1 && s == DCUDA_OK; step++) {
        int b = (me - step + n) % n;
        s = dcu_put(st, win, to, offset + (size_t)b * e, e, room + (size_t)b * e, 1, data, call);
        if (s == DCUDA_OK)
            s = dcu_wait_tag(st, data, 1, call);
    }
    return s;
}

/* Does entry a (parent rank i) come before entry b (parent rank j)? */
DCU_FN int dcu_split_before(const dcu_split_entry_t *a, int i, const dcu_split_entry_t *b, int j)
{
    return a->key < b->key || (a->key == b->key && i < j);
}

/* Sorts the parent ranks in list[0..m) by (key, parent rank): a heap sort,
 * by the leader alone, in place. */
DCU_FN_COLD void dcu_split_sort(int32_t *list, int m, const dcu_split_entry_t *all)
{
    for (int end = m, start = m / 2 - 1;;) {
        int root;
        if (start >= 0) {
            root = start--;
        } else {
            if (--end <= 0)
                break;
            int32_t t = list[0];
            list[0] = list[end];
            list[end] = t;
            root = 0;
        }
        for (int child; (child = 2 * root + 1) < end; root = child) {
            if (child + 1 < end && dcu_split_before(&all[list[child]], list[child],
                                                    &all[list[child + 1]], list[child + 1]))
                child++;
            if (!dcu_split_before(&all[list[root]], list[root], &all[list[child]], list[child]))
                break;
            int32_t t = list[root];
            list[root] = list[child];
            list[child] = t;
        }
    }
}

/* Leader, after the exchange: the new communicator from everyone's
 * entries (or why none). */
DCU_FN_COLD dcuda_status_t dcu_split_adopt(dcuda_state_t *st, int parent, const char *room,
                                           int *comm, const char *call)
{
    const dcu_split_entry_t *all = (const dcu_split_entry_t *)room;
    const int n = dcu_comm_size(st, parent), me = dcu_comm_rank(st, parent);
    const dcu_split_entry_t mine = all[me];
    uint32_t free_ids = ~0u;
    for (int r = 0; r < n; r++)
        free_ids &= all[r].free_ids;
    *comm = DCUDA_COMM_NULL;
    if (!free_ids)
        return DCU_REPORT(st, DCUDA_ERR_COMM_LIMIT, call,
                          "some rank of %s already has %d splits live", dcu_comm_name(parent),
                          DCUDA_COMM_IDS - DCUDA_COMM_FIRST_SPLIT);
    if (mine.colour == DCUDA_UNDEFINED)
        return DCUDA_OK;
    int id = 0, rank = 0, m = 0;
    while (!((free_ids >> id) & 1u))
        id++;
    int32_t *list = dcu_comm_list(st, id);
    for (int r = 0; r < n; r++)
        if (all[r].colour == mine.colour)
            list[m++] = r;
    dcu_split_sort(list, m, all);
    for (int i = 0; i < m; i++) {
        rank = list[i] == me ? i : rank;
        list[i] = dcu_comm_world_rank(st, parent, list[i]);
    }
    dcuda_comm_info_t *c = &st->comms[id - DCU_COMM_NODE];
    c->size = m;
    c->rank = rank;
    c->members = list;
    c->barrier = dcu_comm_same_barrier(st, id, m, list);
    st->call_seq[id] = 0; /* its calls count from the start, at every member */
    for (int i = 0; i < DCUDA_CALL_WORDS; i++)
        dcu_st_u64(&dcu_lib_of(st, st->device_rank)->calls[id].w[i], 0u);
    st->live_comms |= 1u << id;
    *comm = id;
    return DCUDA_OK;
}

DCU_FN dcuda_status_t dcu_comm_split(dcuda_state_t *st, int parent, int colour, int key,
                                     uint32_t win, size_t offset, int *comm)
{
    static const char call[] = "dcuda_comm_split";
    dcu_sync();
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, call);
    char *room = (char *)0; /* every thread checks (the leader reports) */
    dcuda_status_t s = dcu_split_checks(st, parent, colour, win, offset, comm, &room, call);
    if (s != DCUDA_OK)
        return s;
    if (dcu_leader())
        ((dcu_split_entry_t *)room)[dcu_comm_rank(st, parent)] = dcu_split_mine(st, colour, key);
    if (dcu_comm_size(st, parent) > 1) /* the collective where the window is the parent's */
        s = dcu_win_comm(win) == parent ? dcu_allgather(st, win, offset, sizeof(dcu_split_entry_t))
                                        : dcu_split_ring(st, parent, win, offset, room, call);
    int made = DCUDA_COMM_NULL;
    if (s == DCUDA_OK)
        DCU_ON_LEADER(st, dcu_split_adopt(st, parent, room, &made, call));
    dcu_sync();
    if (dcu_leader())
        st->result_win = (uint32_t)made;
    dcu_sync();
    if (s == DCUDA_OK)
        s = (dcuda_status_t)st->result;
    *comm = (int)st->result_win;
    return s;
}

DCU_FN dcuda_status_t dcu_comm_free(dcuda_state_t *st, int comm)
{
    static const char call[] = "dcuda_comm_free";
    dcu_sync();
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, call);
    dcuda_status_t s = dcu_checked_comm(st, comm, call);
    if (s == DCUDA_OK && comm < DCUDA_COMM_FIRST_SPLIT)
        s = DCU_REPORT(st, DCUDA_ERR_COMM, call,
                       "%s is built in; only communicators from dcuda_comm_split are freed",
                       dcu_comm_name(comm));
    if (s == DCUDA_OK && dcu_win_mask(st, comm))
        s = DCU_REPORT(st, DCUDA_ERR_COMM, call,
                       "communicator %d still has windows (mask 0x%x): free them first", comm,
                       (unsigned)dcu_win_mask(st, comm));
    dcu_sync();
    if (s == DCUDA_OK && dcu_leader())
        st->live_comms &= ~(1u << comm);
    dcu_sync();
    return s;
}

DCU_FN dcuda_status_t dcu_comm_world_rank_query(dcuda_state_t *st, int comm, int rank,
                                                int *world_rank)
{
    static const char call[] = "dcuda_comm_world_rank";
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, call);
    dcuda_status_t s = dcu_checked_comm(st, comm, call);
    if (s == DCUDA_OK && !world_rank)
        s = DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call, "world_rank is NULL");
    int size = s == DCUDA_OK ? dcu_comm_size(st, comm) : 0;
    if (s == DCUDA_OK && (rank < 0 || rank >= size))
        s = DCU_REPORT(st, DCUDA_ERR_RANK, call, "rank %d not in 0..%d of %s", rank, size - 1,
                       dcu_comm_name(comm));
    if (s == DCUDA_OK)
        *world_rank = dcu_comm_world_rank(st, comm, rank);
    return s;
}

#endif /* DCUDA_IMPL_COMM_H */
