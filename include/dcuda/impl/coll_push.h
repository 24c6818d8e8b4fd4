/*
 * The pushed collectives: on WORLD, DEVICE or NODE of 2 to
 * DCUDA_PUSH_MAX_RANKS ranks (one rank a GPU of a node, a few CPU ranks),
 * with at most DCUDA_PUSH_BYTES for any one member, every member puts,
 * in one step, what each other member needs of it (its data, its block
 * for that member, or nothing but its record) into that member's push
 * slot for it, with its call record in front and a notification after
 * (impl/coll_base.h: dcu_lib_put). Each then waits for the other P - 1,
 * compares their records with its own, and makes its result from its
 * slots where they lie: one one-way step on every path, where the trees
 * take 2 log P and the reads of parts two barriers.
 *
 * A slot is a member's and a parity's: the pushed calls of a
 * communicator are counted (st->push_seq), and a member pushes into the
 * slots of the count's parity, and notifies on the parity's tag. Every
 * pushed call has every member push to every other, so a member that
 * pushes call m has had every member's push of call m - 1: each had left
 * call m - 2, and has read what it was sent then and counted its
 * notifications. Nothing is written twice before it is read, and no
 * notification of call m + 1 (which a member that finished m may send
 * while I wait in m) is counted as one of m, whatever other calls come
 * between.
 *
 * A reduction combines the P members' elements in rank order at every
 * member (the same bits everywhere). Nobody reads or writes another's
 * window part: a member's part is its own again when the call returns.
 */
#ifndef DCUDA_IMPL_COLL_PUSH_H
#define DCUDA_IMPL_COLL_PUSH_H

#include "coll_base.h"
#include "coll_local.h"

/* Does a collective on win (of WORLD, DEVICE or NODE: dcu_push_try
 * sent the others away) whose largest share for one member is `bytes`
 * take the pushed form? Every member answers alike for the same
 * arguments (a member with others is reported by the records, or waits
 * in another form). Before the call's checks, within dcu_push_try's one
 * call out of line. */
DCU_FN int dcu_push_takes(const dcuda_state_t *st, uint32_t win, uint64_t bytes)
{
    if (!st || !dcu_state_fields_ok(st) || dcu_check_win(st, win) != DCUDA_OK ||
        bytes > DCUDA_PUSH_BYTES)
        return 0;
    const int comm = dcu_win_comm(win);
    const int ranks = dcu_comm_size(st, comm);
    return ranks >= 2 && ranks <= DCUDA_PUSH_MAX_RANKS;
}

/* Byte where member j's slot of parity `parity` lies in a library part. */
DCU_FN size_t dcu_push_slot_at(const dcuda_state_t *st, int comm, int j, uint32_t parity)
{
    return (size_t)dcu_push_at(comm, st->world_size, dcu_node_size(st)) +
           ((size_t)j * 2u + parity) * (size_t)DCUDA_PUSH_SLOT;
}

/* ---- the calls ------------------------------------------------------------------------- */

/* What a pushed call is: its kind (DCU_LOCAL_*), datatype, op, root, and
 * its data at `data` of my part: n elements (a reduction; a
 * reduce-scatter's block) or bytes (a broadcast; a gather's block), of
 * `bytes` bytes. */
typedef struct dcu_push {
    int kind, type, op, root, comm, me, P;
    uint32_t parity;
    char *data;
    uint64_t bytes;
} dcu_push_t;

/* What a pushed call keeps in registers from its start to its result:
 * my slots of its communicator and parity (member j's at j * 2 slots),
 * my counter of its tag and the count the wait reaches. Found once: the
 * send, the wait, the records' check and the result look nothing up
 * again (each lookup was instructions on the leader's warp while the
 * others waited at a barrier). My record's words stay in the state,
 * which the leader wrote as the call began (the others read them only
 * after a barrier). */
typedef struct dcu_push_way {
    const char *slots;
    dcu_u32a_t *counter;
    uint32_t target;
    int tag, sys;
} dcu_push_way_t;

DCUDA_STATIC_ASSERT(DCUDA_CALL_WORDS == 4, "a pushed call's record is four words");

/* The way of call c, from the state (all threads, before the send: what
 * it reads changed last before a barrier of an earlier call). */
DCU_FN dcu_push_way_t dcu_push_way(const dcuda_state_t *st, const dcu_push_t *c)
{
    dcu_push_way_t w;
    w.slots =
        (const char *)dcu_lib_of(st, st->device_rank) + dcu_push_slot_at(st, c->comm, 0, c->parity);
    w.tag = dcu_coll_tag(c->comm, DCU_COLL_PUSH + (int)c->parity);
    w.counter = dcu_my_counter(st, w.tag);
    w.target = st->consumed[w.tag] + (uint32_t)(c->P - 1);
    w.sys = st->process_count > 1;
    return w;
}

/* Member j's slot for me, of the call's parity. */
DCU_FN const char *dcu_push_slot(const dcu_push_way_t *w, int j)
{
    return w->slots + (size_t)j * 2u * (size_t)DCUDA_PUSH_SLOT;
}

/* What member t gets of mine: *len bytes at the returned address. */
DCU_FN const char *dcu_push_share(const dcu_push_t *c, int t, size_t *len)
{
    const size_t b = (size_t)c->bytes;
    *len = 0;
    switch (c->kind) {
    case DCU_LOCAL_BROADCAST:
        *len = c->me == c->root ? b : 0u;
        return c->data;
    case DCU_LOCAL_REDUCE:
        *len = t == c->root ? b : 0u;
        return c->data;
    case DCU_LOCAL_ALLREDUCE:
        *len = b;
        return c->data;
    case DCU_LOCAL_ALLGATHER:
        *len = b;
        return c->data + (size_t)c->me * b;
    default: /* an alltoall's, a reduce-scatter's block for t */
        *len = b;
        return c->data + (size_t)t * b;
    }
}

/* Leader: how this rank reaches each other member of comm (I am `me` of
 * P), kept in the state for the run's pushed calls: looking members up
 * took about a microsecond each on a GPU (a search of the process table,
 * then its entry), every call. */
DCU_FN_COLD void dcu_push_plan(dcuda_state_t *st, int comm, int me, int P)
{
    uint32_t sys = 0u;
    for (int k = 1; k < P; k++) {
        const dcu_lib_target_t t = dcu_lib_target(st, comm, (me + k) % P);
        st->push_to[comm][k].part = t.part;
        st->push_to[comm][k].notifs = t.notifs;
        sys |= (uint32_t)(t.part && t.sys) << k;
    }
    st->push_sys[comm] = sys;
    st->push_planned |= 1u << comm;
}

/* Shares up to this many bytes a member are copied by the leader alone,
 * which then releases them with no barrier of the rank's threads between
 * (a barrier and a second look at the state cost more than the copy). */
#define DCU_PUSH_TINY 64u

/* All threads: every other member's share into its slot for me, the
 * next first. The members reached by stores get theirs (from every
 * thread, or the leader's alone where every share is tiny), then their
 * records from the leader, and one fence releases all of them before a
 * relaxed add counts the notification at each (a release of its own
 * each had waited for every earlier store to land again: P - 1 system
 * round trips where one will do). Members on the network path get a put
 * through the proxy each. */
DCU_FN dcuda_status_t dcu_push_send(dcuda_state_t *st, const dcu_push_t *c, const dcu_push_way_t *w)
{
    const size_t at = dcu_push_slot_at(st, c->comm, c->me, c->parity);
    const size_t rec = sizeof(dcuda_call_words_t);
    if (dcu_leader() && !((st->push_planned >> c->comm) & 1u))
        dcu_push_plan(st, c->comm, c->me, c->P);
    dcu_sync();    /* the rank's earlier accesses are done; the plan is every thread's */
    if (st->ended) /* the run ended: no member may go on on my word */
        return (dcuda_status_t)st->ended;
    const dcuda_push_member_t *to = st->push_to[c->comm];
    const uint32_t sys = st->push_sys[c->comm];
    const int tiny = c->bytes <= DCU_PUSH_TINY;
    int net = 0;
    for (int k = 1; k < c->P; k++) {
        size_t len;
        const char *share = dcu_push_share(c, (c->me + k) % c->P, &len);
        if (to[k].part && len && !tiny)
            dcu_copy(to[k].part + at + rec, share, len);
        else if (to[k].part && len && dcu_leader())
            dcu_copy_by(to[k].part + at + rec, share, len, 0, 1);
        net |= !to[k].part;
    }
    if (!tiny)
        dcu_sync(); /* the shares are written and read */
    DCU_TRACE_MARK(st, DCU_TRACE_PUT_DATA);
    if (dcu_leader()) {
        for (int k = 1; k < c->P; k++) {
            dcuda_call_words_t *r = (dcuda_call_words_t *)(void *)(to[k].part + at);
            if (!to[k].part)
                continue;
            for (int i = 0; i < DCUDA_CALL_WORDS; i++)
                dcu_st_u64(&r->w[i], st->call[i]);
        }
        dcu_release_begin_at(sys != 0u);
        for (int k = 1; k < c->P; k++)
            if (to[k].part)
                dcu_red_released(&to[k].notifs->arrived[w->tag].ranks, 1u, (int)((sys >> k) & 1u));
    }
    dcuda_status_t s = DCUDA_OK;
    for (int k = 1; net && k < c->P && s == DCUDA_OK; k++)
        if (!to[k].part) {
            const int t = (c->me + k) % c->P;
            size_t len;
            const char *share = dcu_push_share(c, t, &len);
            s = dcu_lib_put_net(st, dcu_comm_world_rank(st, c->comm, t), at, share, len, w->tag);
        }
    return s;
}

/* Do the records the other members pushed with this call differ from
 * mine? Every thread compares some of their words at once (a word a
 * thread on a GPU: one round trip to L2 for all of them). */
DCU_FN int dcu_push_records_differ(const dcuda_state_t *st, const dcu_push_t *c,
                                   const dcu_push_way_t *w)
{
    int differ = 0;
    for (int t = dcu_thread(); t < 4 * c->P; t += dcu_threads()) {
        const int j = t >> 2, k = t & 3;
        if (j == c->me)
            continue;
        const dcuda_call_words_t *r = (const dcuda_call_words_t *)(const void *)dcu_push_slot(w, j);
        const uint64_t theirs = dcu_ld_u64(&r->w[k]);
        const uint64_t mine = st->call[k];
        const uint64_t mask = k == 0 ? ~((uint64_t)0xffu << DCUDA_CALL_PREV_SHIFT) : ~(uint64_t)0;
        differ |= ((theirs ^ mine) & mask) != 0u;
    }
    return differ;
}

/* A pushed call's wait that failed (status s of the leader), or whose
 * records differ (s DCUDA_OK: the full check words the report); all
 * threads, the status of every thread returned. */
DCU_FN_COLD dcuda_status_t dcu_push_failed(dcuda_state_t *st, const dcu_push_t *c, dcuda_status_t s,
                                           const char *call)
{
    if (dcu_leader())
        st->result =
            s != DCUDA_OK ? s : dcu_call_check_boxes(st, dcu_push_boxes(c->comm, c->parity), call);
    dcu_sync();
    return (dcuda_status_t)st->result;
}

/* All threads: waits for the other P - 1 members' pushes (the poll
 * lanes), then compares their records with mine; every thread gets the
 * status, from the barriers where all went well. */
DCU_FN dcuda_status_t dcu_push_wait(dcuda_state_t *st, const dcu_push_t *c, const dcu_push_way_t *w,
                                    const char *call)
{
    dcuda_status_t s = DCUDA_OK;
    if (dcu_in_poll_lanes()) {
        const dcu_lanes_t lanes = dcu_poll_lanes();
        const dcu_block_t d = { DCUDA_PHASE_WAITING,
                                (uint32_t)w->tag,
                                (uint32_t)(c->P - 1),
                                0,
                                DCUDA_WAITS_ON(DCUDA_WAITS_NOTIF, 0),
                                call,
                                0u };
        s = dcu_block_until(st, w->counter, 1, w->target, w->sys, d, lanes);
        DCU_TRACE_MARK(st, DCU_TRACE_SPIN);
        dcu_lanes_sync(lanes); /* every lane is past its loads of the counter */
        if (dcu_leader() && s == DCUDA_OK)
            st->consumed[w->tag] = w->target;
    }
    if (dcu_sync_any(dcu_leader() && s != DCUDA_OK))
        return dcu_push_failed(st, c, dcu_leader() ? s : DCUDA_OK, call);
    if (dcu_sync_any(dcu_push_records_differ(st, c, w)))
        return dcu_push_failed(st, c, DCUDA_OK, call);
    return DCUDA_OK;
}

/* My result, from the slots (all threads). Only a reduction gathers
 * its sources' addresses in an array (local memory on a GPU, which the
 * wait's acquire sent back to L2: the other forms look nothing up there). */
DCU_FN void dcu_push_result(const dcu_push_t *c, const dcu_push_way_t *w, size_t count)
{
    const size_t b = (size_t)c->bytes;
    const size_t rec = sizeof(dcuda_call_words_t);
    switch (c->kind) {
    case DCU_LOCAL_BROADCAST:
        if (c->me != c->root && b)
            dcu_copy_fresh(c->data, dcu_push_slot(w, c->root) + rec, b);
        break;
    case DCU_LOCAL_ALLGATHER:
    case DCU_LOCAL_ALLTOALL: { /* block j of mine: a gather's place j, the receive area's j */
        char *to = c->kind == DCU_LOCAL_ALLGATHER ? c->data : c->data + (size_t)c->P * b;
        for (int j = 0; j < c->P; j++)
            if (j != c->me)
                dcu_copy_fresh(to + (size_t)j * b, dcu_push_slot(w, j) + rec, b);
            else if (c->kind == DCU_LOCAL_ALLTOALL)
                dcu_copy(to + (size_t)j * b, c->data + (size_t)j * b, b);
        break;
    }
    default: { /* the reductions: mine in its place among the sources */
        if (c->kind == DCU_LOCAL_REDUCE && c->me != c->root)
            break;
        const char *src[DCUDA_PUSH_MAX_RANKS];
        for (int j = 0; j < c->P; j++)
            src[j] = dcu_push_slot(w, j) + rec;
        src[c->me] = c->kind == DCU_LOCAL_REDUCE_SCATTER ? c->data + (size_t)c->me * b : c->data;
        dcu_combine_from_here(c->data, src, c->P, count, c->type, c->op);
        break;
    }
    }
    dcu_sync();
}

/* The call's own checks, as its other forms make them: *data and *bytes
 * (a reduction's elements, a reduce-scatter's block, a broadcast's or a
 * gather's block's bytes) for what follows. */
DCU_FN dcuda_status_t dcu_push_checks(dcuda_state_t *st, uint32_t win, size_t offset, size_t n,
                                      int kind, int type, int op, int root, char **data,
                                      uint64_t *bytes, const char *call)
{
    dcu_tree_t t = { 0, 1, -1, 0, 0 };
    dcuda_status_t s;
    *bytes = (uint64_t)n;
    switch (kind) {
    case DCU_LOCAL_BROADCAST:
        return dcu_broadcast_start(st, win, offset, n, root, data, call);
    case DCU_LOCAL_ALLREDUCE:
    case DCU_LOCAL_REDUCE:
        return dcu_reduction_start(st, win, offset, n, type, op, kind == DCU_LOCAL_REDUCE, root, &t,
                                   data, bytes, call);
    case DCU_LOCAL_REDUCE_SCATTER:
        s = dcu_reduce_scatter_start(st, win, offset, n, type, op, data, bytes, call);
        *bytes /= (uint64_t)dcu_comm_size(st, dcu_win_comm(win));
        return s;
    case DCU_LOCAL_ALLGATHER:
        return dcu_blocks_start(st, win, offset, n, 1, data, call);
    default:
        return dcu_blocks_start(st, win, offset, n, 2, data, call);
    }
}

/* The name of the call the rank is in (its record's kind). */
DCU_FN const char *dcu_push_call_name(const dcuda_state_t *st)
{
    return dcu_call_name(dcu_call_kind_of(st->call));
}

/* The kind, type, op and root of `args` (coll_local.h: dcu_local_args). */
DCU_FN void dcu_push_decode(uint64_t args, dcu_push_t *c)
{
    c->kind = dcu_args_kind(args);
    c->type = dcu_args_type(args);
    c->op = dcu_args_op(args);
    c->root = dcu_args_root(args);
}

/* A first call of its arguments (all threads): its checks, which fill
 * *c. The leader keeps what they found in the memo for the calls that
 * repeat them: every thread looked at the memo before the checks'
 * barrier. */
DCU_FN dcuda_status_t dcu_push_prepare(dcuda_state_t *st, uint32_t win, size_t offset, size_t n,
                                       uint64_t args, dcu_push_t *c)
{
    dcu_push_decode(args, c);
    dcuda_status_t s = dcu_push_checks(st, win, offset, n, c->kind, c->type, c->op, c->root,
                                       &c->data, &c->bytes, dcu_push_call_name(st));
    if (s != DCUDA_OK)
        return s;
    c->comm = dcu_win_comm(win);
    c->me = dcu_comm_rank(st, c->comm);
    c->P = dcu_comm_size(st, c->comm);
    if (dcu_leader()) {
        dcuda_push_memo_t *m = &st->push_memo;
        m->win = win;
        m->me = (int16_t)c->me;
        m->ranks = (int16_t)c->P;
        m->args = args;
        m->offset = (uint64_t)offset;
        m->n = (uint64_t)n;
        m->data = c->data;
        m->bytes = c->bytes;
    }
    return DCUDA_OK;
}

/* A call whose arguments and window are the memo's, the window still live
 * (all threads): the checks they passed would pass again (a window's
 * parts and its communicator do not change while it lives); *c from the
 * memo. 0: a call to check. No barrier before it: the memo, the windows
 * and the pushed calls' counts changed last before a barrier of an
 * earlier call (the leader fills the memo before the send's barrier; a
 * window's creation and free end with one). */
DCU_FN int dcu_push_recall(const dcuda_state_t *st, uint32_t win, size_t offset, size_t n,
                           uint64_t args, dcu_push_t *c)
{
    const dcuda_push_memo_t *m = &st->push_memo;
    if (!(dcu_state_fields_ok(st) & (m->win == win) & (m->args == args) &
          (m->offset == (uint64_t)offset) & (m->n == (uint64_t)n)) ||
        dcu_check_win(st, win) != DCUDA_OK)
        return 0;
    dcu_push_decode(args, c);
    c->comm = dcu_win_comm(win);
    c->me = m->me;
    c->P = m->ranks;
    c->data = m->data;
    c->bytes = m->bytes;
    return 1;
}

/* The pushed call c, checked, of n (its count or size): the send, the
 * wait, the records' check and the result. */
DCU_FN dcuda_status_t dcu_push_go(dcuda_state_t *st, dcu_push_t *c, size_t n)
{
    DCU_TRACE_MARK(st, DCU_TRACE_CHECKS);
    c->parity = st->push_seq[c->comm] & 1u;
    const dcu_push_way_t w = dcu_push_way(st, c);
    dcuda_status_t s = dcu_push_send(st, c, &w);
    /* Every thread read the parity before the send's barrier; the call's
     * later barriers hand the count on to the next call (which reads it
     * before any barrier of its own). */
    if (dcu_leader())
        st->push_seq[c->comm]++;
    DCU_TRACE_MARK(st, DCU_TRACE_SEND);
    if (s == DCUDA_OK)
        s = dcu_push_wait(st, c, &w, dcu_push_call_name(st));
    DCU_TRACE_MARK(st, DCU_TRACE_AGREE);
    if (s == DCUDA_OK)
        dcu_push_result(c, &w, n);
    DCU_TRACE_MARK(st, DCU_TRACE_RESULT);
    return s;
}

/* dcu_push_try: not a call of the pushed form (no status is positive). */
#define DCU_PUSH_OTHER 1

/* The pushed form of a collective where it takes the call (for the
 * largest share of one member, `bytes`): the call's status; else
 * DCU_PUSH_OTHER. A call that repeats the last pushed call's arguments on
 * the same live window skips the test and the checks (the memo); every
 * call makes its record and compares the others'. The test, the checks
 * and the call in one function out of line: each call out of line saves
 * and restores, in every thread, the registers its callee uses (ncu, a
 * benchmark kernel of 255 registers: about 135 local-memory accesses and
 * 2,000 warp instructions a call when the pushed call made four). */
DCU_FN_COLD int dcu_push_try(dcuda_state_t *st, uint32_t win, size_t offset, size_t n,
                             uint64_t args, uint64_t bytes)
{
    dcu_push_t c;
    /* A split's window (its handle says so: no load), or a type or op the
     * args cannot carry: another form's. */
    if (dcu_win_comm(win) > DCU_COMM_NODE || (args & DCU_LOCAL_WIDE))
        return DCU_PUSH_OTHER;
    if (!st || !dcu_push_recall(st, win, offset, n, args, &c)) {
        if (!dcu_push_takes(st, win, bytes))
            return DCU_PUSH_OTHER;
        DCU_TRACE_MARK(st, DCU_TRACE_TAKES);
        dcuda_status_t s = dcu_push_prepare(st, win, offset, n, args, &c);
        if (s != DCUDA_OK)
            return (int)s;
    }
    return (int)dcu_push_go(st, &c, n);
}

#endif /* DCUDA_IMPL_COLL_PUSH_H */
