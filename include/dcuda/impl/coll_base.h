/*
 * What the collectives share (coll.h, coll_ring.h): the library's tags of
 * each communicator, the binomial tree, the element-wise reduction and
 * the checks of a collective's room and datatype.
 */
#ifndef DCUDA_IMPL_COLL_BASE_H
#define DCUDA_IMPL_COLL_BASE_H

#include "../dcuda_types.h"
#include "engine.h"

/* The library's tags of communicator comm: DCUDA_TAG_COUNT + comm *
 * DCU_COLL_KINDS + kind. */
enum {
    DCU_COLL_UP = 0,         /* a child's partial result (allreduce: into my scratch; allgather:
                              * its subtree's blocks, into their place); alltoall: a block */
    DCU_COLL_DOWN = 1,       /* the result, from my parent, into my data */
    DCU_COLL_READY_UP = 2,   /* broadcast: a child has called it */
    DCU_COLL_READY_DOWN = 3, /* allreduce, allgather: my parent has called it (what UP writes
                              * is free) */
    DCU_COLL_ROOT = 4,       /* broadcast: the root's data, into rank 0's data */
    DCU_COLL_READY_ROOT = 5, /* broadcast: rank 0 has called it (to the root) */
    DCU_COLL_RESULT = 6,     /* reduce: my result, from rank 0; reduce-scatter: my subtree's
                              * blocks, from my parent; into my data */
    DCU_COLL_ALL_IN = 7,     /* alltoall, direct reduce-scatter on a small communicator: a
                              * rank has called it (to every other one) */
    DCU_COLL_RING_DATA = 8,  /* ring (coll_ring.h): a block from my left, into my scratch
                              * (a reduce-scatter step) or my data (an allgather step) */
    DCU_COLL_RING_CTRL = 9,  /* ring: my right has called it, then (allreduce) its puts no
                              * longer read its data; the reads of parts: my right's record */
    DCU_COLL_PUSH = 10,      /* a pushed collective's share, into my slot for its sender
                              * (coll_push.h), of an even count; of an odd one the next tag:
                              * a member one call ahead counts on the other */
    DCU_COLL_PUSH_ODD = 11,
    DCU_COLL_KINDS = DCUDA_TAG_COLL_KINDS
};
DCUDA_STATIC_ASSERT(DCUDA_TAG_COUNT + DCUDA_COMM_IDS * DCU_COLL_KINDS <= DCUDA_TAG_GET,
                    "collective tags before the get's");

DCU_FN int dcu_coll_tag(int comm, int kind)
{
    return DCUDA_TAG_COUNT + comm * DCU_COLL_KINDS + kind;
}

/* ---- call records (impl/agree.h) ---------------------------------------------- */

/* The start of a call on window win: its record published (the leader,
 * before the call's first dcu_sync, which hands st->call to the other
 * threads; no thread reads it between calls). Nothing when the state or
 * the window is refused: the call's own checks report it. */
DCU_FN void dcu_call_begin(dcuda_state_t *st, int kind, uint32_t win, int type, int op, int root,
                           uint64_t n, uint64_t offset)
{
    if (dcu_leader() && dcu_state_ok(st) && dcu_check_win(st, win) == DCUDA_OK)
        dcu_call_record(st, kind, dcu_win_comm(win), dcu_win_slot(win), type, op, root, n, offset);
    DCU_TRACE_MARK(st, DCU_TRACE_RECORD);
}

/* The same for a call on communicator comm (a barrier, a window's
 * creation, a split: `slot` the window it names, DCUDA_CALL_NO_SLOT for
 * none). */
DCU_FN void dcu_call_begin_comm(dcuda_state_t *st, int kind, int comm, int slot, uint64_t offset)
{
    if (dcu_leader() && dcu_state_ok(st) && dcu_comm_live(st, comm))
        dcu_call_record(st, kind, comm, slot, 0, 0, 0, 0u, offset);
}

/* Where a library put to rank `rank` of comm goes: its WORLD rank, and
 * when stores reach it (my device, or a process of my node) its library
 * part, its counters and whether their release is at system scope (another
 * process); part NULL: the network path. */
typedef struct dcu_lib_target {
    int world, sys;
    char *part;
    dcuda_notif_counters_t *notifs;
} dcu_lib_target_t;

DCU_FN dcu_lib_target_t dcu_lib_target(const dcuda_state_t *st, int comm, int rank)
{
    dcu_lib_target_t t;
    t.world = dcu_comm_world_rank(st, comm, rank);
    const int d = comm == DCU_COMM_DEVICE ? rank : dcu_device_rank_of(st, DCU_COMM_WORLD, t.world);
    const dcuda_peer_t *q =
        d < 0 ? &st->peers[dcu_process_of(st, t.world)] : (const dcuda_peer_t *)0;
    t.sys = d < 0;
    t.part = (char *)0;
    t.notifs = (dcuda_notif_counters_t *)0;
    if (q && q->path == DCUDA_PATH_NET)
        return t;
    t.part = d >= 0 ? (char *)dcu_lib_of(st, d) : dcu_lib_peer(st, q, t.world);
    t.notifs = d >= 0 ? &st->notifs[d] : &q->notifs[t.world - q->world_first];
    return t;
}

/* My record and n bytes of data after it through the network path, at
 * byte `at` of WORLD rank world's library part: two commands, in order,
 * the notification of `tag` with the last. */
DCU_FN_COLD dcuda_status_t dcu_lib_put_net(dcuda_state_t *st, int world, size_t at,
                                           const char *data, size_t n, int tag)
{
    const size_t rec = sizeof(dcuda_call_words_t);
    dcuda_status_t s =
        dcu_put_net(st, (uint32_t)DCUDA_LIB_SLOT, world, at, rec, (const char *)st->call, !n, tag);
    return s == DCUDA_OK && n
               ? dcu_put_net(st, (uint32_t)DCUDA_LIB_SLOT, world, at + rec, n, data, 1, tag)
               : s;
}

/* All threads: my record (st->call) at byte `at` of the library part of
 * rank `rank` of comm, and n bytes of data after it, then a notification
 * of `tag` (on the path a put to it takes), which releases both and
 * every access before it. The data is read when it returns. */
DCU_FN_COLD dcuda_status_t dcu_lib_put(dcuda_state_t *st, int comm, int rank, size_t at,
                                       const char *data, size_t n, int tag)
{
    dcu_sync();    /* the rank's earlier accesses are done */
    if (st->ended) /* the run ended: no member may go on on my word */
        return (dcuda_status_t)st->ended;
    const size_t rec = sizeof(dcuda_call_words_t);
    const dcu_lib_target_t t = dcu_lib_target(st, comm, rank);
    if (!t.part)
        return dcu_lib_put_net(st, t.world, at, data, n, tag);
    char *to = t.part;
    dcuda_notif_counters_t *notifs = t.notifs;
    if (n) {
        dcu_copy(to + at + rec, data, n);
        dcu_sync(); /* the data is written and read */
        DCU_TRACE_MARK(st, DCU_TRACE_PUT_DATA);
    }
    if (dcu_leader()) {
        dcu_copy_tiny(to + at, (const char *)st->call, (uint32_t)rec);
        dcu_red_release(&notifs->arrived[tag].ranks, 1u, t.sys);
    }
    return DCUDA_OK;
}

/* All threads: tells rank `rank` of comm that I am in my call (a
 * notification of `tag`), with my record into its mailbox `box` of comm. */
DCU_FN_COLD dcuda_status_t dcu_call_push(dcuda_state_t *st, int comm, int rank, int box, int tag)
{
    const size_t at =
        offsetof(dcuda_lib_part_t, mailbox) +
        ((size_t)comm * DCUDA_MAILBOX_SLOTS + (size_t)box) * sizeof(dcuda_call_words_t);
    return dcu_lib_put(st, comm, rank, at, (const char *)0, 0u, tag);
}

/* My record to my left of comm, with a notification (RING_CTRL), and my
 * right's compared with mine: before the first barrier of a collective
 * whose ranks then read or write every part, so that past it every rank
 * knows every record equal (one notification a rank, where reading every
 * member's record cost P loads a rank: 270 us more for a broadcast of
 * 1,056 ranks over four H100). */
DCU_FN_COLD dcuda_status_t dcu_call_ring_check(dcuda_state_t *st, int comm, const char *call)
{
    const int n = dcu_comm_size(st, comm), me = dcu_comm_rank(st, comm);
    if (n < 2)
        return DCUDA_OK;
    const int tag = dcu_coll_tag(comm, DCU_COLL_RING_CTRL);
    dcuda_status_t s = dcu_call_push(st, comm, (me + n - 1) % n, DCUDA_MAILBOX_RIGHT, tag);
    return s == DCUDA_OK ? dcu_wait_boxes(st, tag, 1, call, dcu_boxes(comm, DCUDA_MAILBOX_RIGHT, 1))
                         : s;
}

/* The tree of a communicator of `size` ranks, seen from rank `me`. */
typedef struct dcu_tree {
    int me, size;
    int parent;   /* -1 at rank 0 */
    int slot;     /* my scratch slot at my parent: log2 of (me - parent) */
    int children; /* me + 2^k for k < children, those below size */
} dcu_tree_t;

DCU_FN dcu_tree_t dcu_tree_of(int me, int size)
{
    dcu_tree_t t;
    t.me = me;
    t.size = size;
    t.parent = -1;
    t.slot = 0;
    int k = 0;
    while ((1 << k) < size && (me == 0 || !(me & (1 << k))))
        k++;
    if (me != 0) {
        t.parent = me & (me - 1);
        t.slot = k;
    }
    t.children = 0;
    while (t.children < k && me + (1 << t.children) < size)
        t.children++;
    return t;
}

DCU_FN int dcu_tree_child(const dcu_tree_t *t, int k) { return t->me + (1 << k); }

/* Ranks of my subtree: me .. me + span - 1. */
DCU_FN int dcu_tree_span(const dcu_tree_t *t)
{
    int span = t->me == 0 ? t->size : 1 << t->slot;
    return span < t->size - t->me ? span : t->size - t->me;
}

/* acc[i] = acc[i] op in[i] for i < count, one element a load, thread t
 * of the rank taking elements t, t + threads, ... */
#define DCU_REDUCE_LOOP(T, acc, in, count, op)                                                     \
    do {                                                                                           \
        T *a_ = (T *)(acc);                                                                        \
        const T *b_ = (const T *)(in);                                                             \
        size_t i_ = (size_t)dcu_thread(), n_ = (count), step_ = (size_t)dcu_threads();             \
        if ((op) == DCUDA_SUM)                                                                     \
            for (; i_ < n_; i_ += step_)                                                           \
                a_[i_] = a_[i_] + b_[i_];                                                          \
        else if ((op) == DCUDA_MIN)                                                                \
            for (; i_ < n_; i_ += step_)                                                           \
                a_[i_] = b_[i_] < a_[i_] ? b_[i_] : a_[i_];                                        \
        else                                                                                       \
            for (; i_ < n_; i_ += step_)                                                           \
                a_[i_] = b_[i_] > a_[i_] ? b_[i_] : a_[i_];                                        \
    } while (0)

#define DCU_REDUCE_TYPES(LOOP, acc, in, count, type, op)                                           \
    do {                                                                                           \
        if ((type) == DCUDA_INT32)                                                                 \
            LOOP(int32_t, acc, in, count, op);                                                     \
        else if ((type) == DCUDA_INT64)                                                            \
            LOOP(int64_t, acc, in, count, op);                                                     \
        else if ((type) == DCUDA_FLOAT)                                                            \
            LOOP(float, acc, in, count, op);                                                       \
        else                                                                                       \
            LOOP(double, acc, in, count, op);                                                      \
    } while (0)

#if defined(__CUDACC__)
/* Arrays of at least this many bytes a GPU rank combines a vector a load
 * (dcu_reduce_wide): one element a load held its adds to about 1 GB/s. */
#define DCU_REDUCE_WIDE_MIN 1024u

/* The same by whole vectors (dcu_combine), which thread takes which
 * element following how acc and in lie. */
template <typename T>
static __device__ __forceinline__ void dcu_reduce_vectors(void *acc, const void *in, size_t count,
                                                          int op)
{
    T *a = (T *)acc;
    const T *b = (const T *)in;
    const size_t i = (size_t)dcu_thread(), nt = (size_t)dcu_threads();
    if (op == DCUDA_SUM)
        dcu_combine(a, b, count, i, nt, dcu_op_sum());
    else if (op == DCUDA_MIN)
        dcu_combine(a, b, count, i, nt, dcu_op_min());
    else
        dcu_combine(a, b, count, i, nt, dcu_op_max());
}
#define DCU_REDUCE_VECTORS(T, acc, in, count, op) dcu_reduce_vectors<T>(acc, in, count, op)

/* Out of line, as the rings: inlined, its registers made a kernel of puts
 * and collectives spill (its 8-byte put and flush 20% slower). */
DCU_FN_COLD void dcu_reduce_wide(void *acc, const void *in, size_t count, int type, int op)
{
    DCU_REDUCE_TYPES(DCU_REDUCE_VECTORS, acc, in, count, type, op);
}
#endif

/* acc = acc op in, element-wise, by the rank's threads; they are in step
 * again on return (which thread takes which element may differ from one
 * call to the next). */
DCU_FN void dcu_reduce_into(void *acc, const void *in, size_t count, int type, int op)
{
#if defined(__CUDACC__)
    if ((uint64_t)count * dcuda_datatype_bytes((dcuda_datatype_t)type) >= DCU_REDUCE_WIDE_MIN)
        dcu_reduce_wide(acc, in, count, type, op);
    else
#endif
        DCU_REDUCE_TYPES(DCU_REDUCE_LOOP, acc, in, count, type, op);
    dcu_sync();
}

/* ---- checks -------------------------------------------------------------------- */

/* What a collective needs of its (checked) window: `room` bytes from
 * offset in my part. *base gets the address of offset in my part. */
DCU_FN dcuda_status_t dcu_checked_room(const dcuda_state_t *st, uint32_t win, uint64_t offset,
                                       uint64_t room, char **base, const char *call)
{
    const dcuda_win_entry_t *mine = dcu_my_win_entry(st, dcu_win_comm(win), dcu_win_slot(win));
    dcuda_status_t s = dcu_check_range(mine->size, offset, room);
    if (s != DCUDA_OK)
        return DCU_REPORT(st, s, call,
                          "offset %llu + %llu bytes outside my %llu-byte part of window %d",
                          (unsigned long long)offset, (unsigned long long)room,
                          (unsigned long long)mine->size, dcu_win_slot(win));
    *base = (char *)(uintptr_t)mine->base + offset;
    return DCUDA_OK;
}

/* The bytes count elements of type take, or 0 (reported) if type or op is
 * none or the size overflows. */
DCU_FN uint64_t dcu_checked_reduction(const dcuda_state_t *st, size_t count, int type, int op,
                                      const char *call, dcuda_status_t *s)
{
    uint64_t elem = dcuda_datatype_bytes((dcuda_datatype_t)type);
    *s = DCUDA_OK;
    if (!elem)
        *s = DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call,
                        "datatype %d is none of DCUDA_INT32, INT64, FLOAT, DOUBLE", type);
    else if (op != DCUDA_SUM && op != DCUDA_MIN && op != DCUDA_MAX)
        *s = DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call,
                        "op %d is none of DCUDA_SUM, DCUDA_MIN, DCUDA_MAX", op);
    else if ((uint64_t)count > UINT64_MAX / 64u / elem)
        *s = DCU_REPORT(st, DCUDA_ERR_OVERFLOW, call, "count %llu overflows",
                        (unsigned long long)count);
    return *s == DCUDA_OK ? (uint64_t)count * elem : 0u;
}

/* The checks of a reduction of `count` elements of type (op) on a
 * checked window, whose every part needs `room` bytes from offset; *data
 * and *bytes (of the count elements) for the caller. */
DCU_FN dcuda_status_t dcu_reduction_checks(const dcuda_state_t *st, uint32_t win, size_t offset,
                                           size_t count, int type, int op, uint64_t room,
                                           char **data, uint64_t *bytes, const char *call)
{
    dcuda_status_t s;
    *bytes = dcu_checked_reduction(st, count, type, op, call, &s);
    if (s != DCUDA_OK)
        return s;
    if ((s = dcu_checked_room(st, win, offset, room, data, call)) != DCUDA_OK)
        return s;
    uint64_t elem = dcuda_datatype_bytes((dcuda_datatype_t)type);
    if (count && (uintptr_t)*data % elem != 0)
        return DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call,
                          "offset %llu puts the data at %p, not aligned to its %llu-byte elements",
                          (unsigned long long)offset, (void *)*data, (unsigned long long)elem);
    return DCUDA_OK;
}

/* The checks of an allreduce and of a reduce (to `root` when has_root):
 * *t, *data and *bytes for what follows. */
DCU_FN dcuda_status_t dcu_reduction_start(dcuda_state_t *st, uint32_t win, size_t offset,
                                          size_t count, int type, int op, int has_root, int root,
                                          dcu_tree_t *t, char **data, uint64_t *bytes,
                                          const char *call)
{
    dcuda_status_t s = dcu_win_call_start(st, win, call); /* before its communicator is read */
    if (s != DCUDA_OK)
        return s;
    int comm = dcu_win_comm(win), size = dcu_comm_size(st, comm);
    s = dcu_reduction_checks(st, win, offset, count, type, op,
                             dcuda_allreduce_room(size, count, (dcuda_datatype_t)type), data, bytes,
                             call);
    if (s != DCUDA_OK)
        return s;
    if (has_root && (root < 0 || root >= size))
        return DCU_REPORT(st, DCUDA_ERR_RANK, call, "root %d not in 0..%d of %s", root, size - 1,
                          dcu_comm_name(comm));
    *t = dcu_tree_of(dcu_comm_rank(st, comm), size);
    return DCUDA_OK;
}

/* The checks of a broadcast: *data is the offset in my part. */
DCU_FN dcuda_status_t dcu_broadcast_start(dcuda_state_t *st, uint32_t win, size_t offset,
                                          size_t size, int root, char **data, const char *call)
{
    dcuda_status_t s = dcu_win_call_start(st, win, call);
    if (s == DCUDA_OK)
        s = dcu_checked_room(st, win, offset, size, data, call);
    if (s != DCUDA_OK)
        return s;
    int comm = dcu_win_comm(win), ranks = dcu_comm_size(st, comm);
    if (root < 0 || root >= ranks)
        return DCU_REPORT(st, DCUDA_ERR_RANK, call, "root %d not in 0..%d of %s", root, ranks - 1,
                          dcu_comm_name(comm));
    return DCUDA_OK;
}

/* The checks of a reduce-scatter of `count` elements a block: *data and
 * *bytes (of every rank's blocks) for what follows. */
DCU_FN dcuda_status_t dcu_reduce_scatter_start(dcuda_state_t *st, uint32_t win, size_t offset,
                                               size_t count, int type, int op, char **data,
                                               uint64_t *bytes, const char *call)
{
    dcuda_status_t s = dcu_win_call_start(st, win, call);
    if (s != DCUDA_OK)
        return s;
    int size = dcu_comm_size(st, dcu_win_comm(win));
    if ((uint64_t)count > UINT64_MAX / 64u / (uint64_t)size)
        return DCU_REPORT(st, DCUDA_ERR_OVERFLOW, call, "count %llu x %d ranks overflows",
                          (unsigned long long)count, size);
    return dcu_reduction_checks(st, win, offset, count * (size_t)size, type, op,
                                dcuda_reduce_scatter_room(size, count, (dcuda_datatype_t)type),
                                data, bytes, call);
}

/* The start of a collective of blocks of `size` bytes, one a rank of the
 * communicator, `copies` times (allgather 1, alltoall 2: what it sends and
 * what it receives): the checks; *data is the offset in my part. */
DCU_FN dcuda_status_t dcu_blocks_start(dcuda_state_t *st, uint32_t win, size_t offset, size_t size,
                                       unsigned copies, char **data, const char *call)
{
    dcuda_status_t s = dcu_win_call_start(st, win, call);
    if (s != DCUDA_OK)
        return s;
    int ranks = dcu_comm_size(st, dcu_win_comm(win));
    if ((uint64_t)size > UINT64_MAX / 64u / (uint64_t)ranks)
        return DCU_REPORT(st, DCUDA_ERR_OVERFLOW, call, "size %llu x %d ranks overflows",
                          (unsigned long long)size, ranks);
    return dcu_checked_room(st, win, offset, (uint64_t)copies * (uint64_t)size * (uint64_t)ranks,
                            data, call);
}

#endif /* DCUDA_IMPL_COLL_BASE_H */
