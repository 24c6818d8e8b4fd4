/*
 * Collectives on ranks: broadcast, reduce, allreduce, reduce-scatter,
 * allgather and alltoall over the window's communicator, built on the
 * engine's notified puts with the library's own tags (after the user's
 * 256), so they run on every path a put runs on. Large allreduces,
 * reduces and allgathers go round a ring instead (coll_ring.h), which
 * has tags of its own.
 *
 * One tree for every collective of a communicator: the binomial tree of
 * its ranks rooted at rank 0 (the parent of v is v with its lowest set bit
 * cleared; the children of v are v + 2^k for 2^k below that bit). A
 * broadcast from another root first hands its data to rank 0. Keeping the
 * tree fixed is what makes counted notifications safe from one collective
 * to the next: every wait below completes before the rank lets any of the
 * senders it counts go on to the next collective, so no early arrival of
 * the next one can be counted in this one. Each communicator has tags of
 * its own (a rank of WORLD and of DEVICE is in two trees at once).
 *
 * No rank writes into another's part for a collective before that rank
 * has called it: a child announces itself (READY_UP) before its parent's
 * broadcast data lands, a parent (READY_DOWN) before its children's
 * allreduce or allgather contributions land, rank 0 (READY_ROOT) before
 * a root hands it a broadcast. Rank 0 holds a reduction's result only once
 * every rank has called the collective (each contributed), so it then
 * writes a reduce's result to its root, and a reduce-scatter's blocks go
 * down the tree, without asking. Before any block of an alltoall or of a
 * direct reduce-scatter lands, every rank learns that all are in
 * (dcu_all_in). So consecutive
 * collectives may reuse the same memory, and a rank's part is its own
 * again when the call returns.
 */
#ifndef DCUDA_IMPL_COLL_H
#define DCUDA_IMPL_COLL_H

#include "coll_base.h"
#include "coll_local.h"
#include "coll_push.h"
#include "coll_ring.h"

/* ---- the collectives ------------------------------------------------------------------ */

/* Sends my data (bytes at offset) down to every child, then makes sure
 * the puts no longer read it (the caller may change it on return). */
DCU_FN dcuda_status_t dcu_coll_send_down(dcuda_state_t *st, uint32_t win, const dcu_tree_t *t,
                                         int comm, size_t offset, size_t bytes, const char *data,
                                         const char *call)
{
    dcuda_status_t s = DCUDA_OK;
    for (int k = t->children - 1; k >= 0 && s == DCUDA_OK; k--) /* the largest subtree first */
        s = dcu_put(st, win, dcu_tree_child(t, k), offset, bytes, data, 1,
                    dcu_coll_tag(comm, DCU_COLL_DOWN), call);
    if (s == DCUDA_OK && t->children)
        s = dcu_win_flush(st, win);
    return s;
}

/* Tells my children that what they put into me is free, each with my
 * record (READY_DOWN): they compare it before they write. */
DCU_FN dcuda_status_t dcu_coll_ready_down(dcuda_state_t *st, const dcu_tree_t *t, int comm)
{
    dcuda_status_t s = DCUDA_OK;
    for (int k = 0; k < t->children && s == DCUDA_OK; k++)
        s = dcu_call_push(st, comm, dcu_tree_child(t, k), DCUDA_MAILBOX_PARENT,
                          dcu_coll_tag(comm, DCU_COLL_READY_DOWN));
    return s;
}

/* Waits for my parent's READY_DOWN and compares its record with mine. */
DCU_FN dcuda_status_t dcu_coll_parent_ready(dcuda_state_t *st, int comm, const char *call)
{
    return dcu_wait_boxes(st, dcu_coll_tag(comm, DCU_COLL_READY_DOWN), 1, call,
                          dcu_boxes(comm, DCUDA_MAILBOX_PARENT, 1));
}

DCU_FN dcuda_status_t dcu_broadcast(dcuda_state_t *st, uint32_t win, size_t offset, size_t size,
                                    int root)
{
    static const char call[] = "dcuda_broadcast";
    const int pushed = dcu_push_try(
        st, win, offset, size, dcu_local_args(DCU_LOCAL_BROADCAST, 0, 0, root), (uint64_t)size);
    if (pushed != DCU_PUSH_OTHER)
        return (dcuda_status_t)pushed;
    if (dcu_local_takes(st, win, size, 0, DCU_LOCAL_BCAST_MAX, DCU_NODE_BCAST_MAX))
        return dcu_local_run(st, win, offset, size,
                             dcu_local_args(DCU_LOCAL_BROADCAST, 0, 0, root));
    char *data = 0;
    dcuda_status_t s = dcu_broadcast_start(st, win, offset, size, root, &data, call);
    if (s != DCUDA_OK)
        return s;
    int comm = dcu_win_comm(win);
    /* Not where the network path may carry a hop: each step there is a
     * put through the proxies, and the chain's many chunks lost to the
     * tree's few large puts 2 to 5 times (the loopback path, one H100).
     * The model runs out of line, for large data only. */
    uint64_t chunk = !st->inbox && !dcu_ring_below((uint64_t)size, DCU_CHAIN_MIN_BYTES)
                         ? dcu_chain_chunk((uint64_t)size, dcu_comm_size(st, comm))
                         : 0u;
    if (chunk)
        return dcu_chain_broadcast(st, win, offset, size, root, chunk, data, call);
    dcu_tree_t t = dcu_tree_of(dcu_comm_rank(st, comm), dcu_comm_size(st, comm));
    if (t.parent >= 0)
        s = dcu_call_push(st, comm, t.parent, DCUDA_MAILBOX_CHILD + t.slot,
                          dcu_coll_tag(comm, DCU_COLL_READY_UP));
    if (root != 0 && s == DCUDA_OK) { /* the root hands its data to rank 0 */
        if (t.me == 0)
            s = dcu_call_push(st, comm, root, DCUDA_MAILBOX_ROOT,
                              dcu_coll_tag(comm, DCU_COLL_READY_ROOT));
        if (t.me == 0 && s == DCUDA_OK)
            s = dcu_wait_tag(st, dcu_coll_tag(comm, DCU_COLL_ROOT), 1, call);
        if (t.me == root && s == DCUDA_OK)
            s = dcu_wait_boxes(st, dcu_coll_tag(comm, DCU_COLL_READY_ROOT), 1, call,
                               dcu_boxes(comm, DCUDA_MAILBOX_ROOT, 1));
        if (t.me == root && s == DCUDA_OK)
            s = dcu_put(st, win, 0, offset, size, data, 1, dcu_coll_tag(comm, DCU_COLL_ROOT), call);
    }
    if (t.parent >= 0 && s == DCUDA_OK)
        s = dcu_wait_tag(st, dcu_coll_tag(comm, DCU_COLL_DOWN), 1, call);
    if (t.children && s == DCUDA_OK)
        s = dcu_wait_boxes(st, dcu_coll_tag(comm, DCU_COLL_READY_UP), t.children, call,
                           dcu_boxes(comm, DCUDA_MAILBOX_CHILD, t.children));
    if (s == DCUDA_OK)
        s = dcu_coll_send_down(st, win, &t, comm, offset, size, data, call);
    return s;
}

/* Up the tree: my children's partial results (each announced free scratch
 * first) are reduced into my data, which then goes to my parent's scratch
 * once it said it is in. At rank 0 the data is then the whole reduction. */
DCU_FN dcuda_status_t dcu_reduce_up(dcuda_state_t *st, uint32_t win, const dcu_tree_t *t, int comm,
                                    size_t offset, size_t count, uint64_t bytes, char *data,
                                    int type, int op, const char *call)
{
    dcuda_status_t s = DCUDA_OK;
    s = dcu_coll_ready_down(st, t, comm); /* my scratch is free */
    if (t->children && s == DCUDA_OK) {
        s = dcu_wait_tag(st, dcu_coll_tag(comm, DCU_COLL_UP), t->children, call);
        for (int k = 0; k < t->children && s == DCUDA_OK; k++)
            dcu_reduce_into(data, data + (size_t)bytes * (1u + (unsigned)k), count, type, op);
    }
    if (t->parent >= 0 && s == DCUDA_OK) {
        s = dcu_coll_parent_ready(st, comm, call);
        if (s == DCUDA_OK) /* dcu_put syncs first: the reduction is done */
            s = dcu_put(st, win, t->parent, offset + (size_t)bytes * (1u + (unsigned)t->slot),
                        (size_t)bytes, data, 1, dcu_coll_tag(comm, DCU_COLL_UP), call);
    }
    return s;
}

/* Large data goes round the ring (coll_ring.h) when its model says so;
 * the rest up the tree to rank 0 and down again. */
DCU_FN dcuda_status_t dcu_allreduce(dcuda_state_t *st, uint32_t win, size_t offset, size_t count,
                                    int type, int op)
{
    static const char call[] = "dcuda_allreduce";
    const int pushed =
        dcu_push_try(st, win, offset, count, dcu_local_args(DCU_LOCAL_ALLREDUCE, type, op, 0),
                     (uint64_t)count * dcuda_datatype_bytes((dcuda_datatype_t)type));
    if (pushed != DCU_PUSH_OTHER)
        return (dcuda_status_t)pushed;
    if (dcu_local_takes_reduction(st, win, count, type, op, DCU_LOCAL_ALLREDUCE_MAX,
                                  DCU_NODE_ALLREDUCE_MAX))
        return dcu_local_run(st, win, offset, count,
                             dcu_local_args(DCU_LOCAL_ALLREDUCE, type, op, 0));
    if (dcu_node_sliced_takes(st, win, count, type, op))
        return dcu_node_allreduce_sliced(st, win, offset, count, type, op);
    int comm = dcu_win_comm(win);
    dcu_tree_t t = { 0, 1, -1, 0, 0 }; /* set by dcu_reduction_start */
    char *data = 0;
    uint64_t bytes = 0;
    dcuda_status_t s =
        dcu_reduction_start(st, win, offset, count, type, op, 0, 0, &t, &data, &bytes, call);
    if (s != DCUDA_OK)
        return s;
    if (dcu_ring_allreduce_wins(bytes, (uint64_t)count, t.size))
        return dcu_ring_allreduce(st, win, offset, count, type, op, data, call);
    s = dcu_reduce_up(st, win, &t, comm, offset, count, bytes, data, type, op, call);
    if (t.parent >= 0 && s == DCUDA_OK)
        s = dcu_wait_tag(st, dcu_coll_tag(comm, DCU_COLL_DOWN), 1, call);
    if (s == DCUDA_OK)
        s = dcu_coll_send_down(st, win, &t, comm, offset, (size_t)bytes, data, call);
    return s;
}

/* Large data: the ring allreduce (every rank then holds the result).
 * Otherwise the reduction reaches rank 0 up the tree; rank 0 then puts it
 * into the root's data (every rank has contributed, so the root has
 * called). */
DCU_FN dcuda_status_t dcu_reduce(dcuda_state_t *st, uint32_t win, size_t offset, size_t count,
                                 int type, int op, int root)
{
    static const char call[] = "dcuda_reduce";
    const int pushed =
        dcu_push_try(st, win, offset, count, dcu_local_args(DCU_LOCAL_REDUCE, type, op, root),
                     (uint64_t)count * dcuda_datatype_bytes((dcuda_datatype_t)type));
    if (pushed != DCU_PUSH_OTHER)
        return (dcuda_status_t)pushed;
    if (dcu_local_takes_reduction(st, win, count, type, op, DCU_LOCAL_READ_MAX,
                                  DCU_NODE_REDUCE_MAX))
        return dcu_local_run(st, win, offset, count,
                             dcu_local_args(DCU_LOCAL_REDUCE, type, op, root));
    int comm = dcu_win_comm(win);
    dcu_tree_t t = { 0, 1, -1, 0, 0 }; /* set by dcu_reduction_start */
    char *data = 0;
    uint64_t bytes = 0;
    dcuda_status_t s =
        dcu_reduction_start(st, win, offset, count, type, op, 1, root, &t, &data, &bytes, call);
    /* The tree of a reduce is the first half of an allreduce's: the ring
     * allreduce beats it where it beats the whole tree on half the data
     * (on two H200, 2 ranks of 256 KiB: 34 us against the tree's 50). */
    if (s == DCUDA_OK && dcu_ring_allreduce_wins(bytes / 2u, (uint64_t)count / 2u, t.size))
        return dcu_ring_allreduce(st, win, offset, count, type, op, data, call);
    if (s == DCUDA_OK)
        s = dcu_reduce_up(st, win, &t, comm, offset, count, bytes, data, type, op, call);
    if (s != DCUDA_OK || root == 0)
        return s;
    if (t.me == 0)
        s = dcu_put(st, win, root, offset, (size_t)bytes, data, 1,
                    dcu_coll_tag(comm, DCU_COLL_RESULT), call);
    if (t.me == 0 && s == DCUDA_OK)
        s = dcu_win_flush(st, win);
    if (t.me == root && s == DCUDA_OK)
        s = dcu_wait_tag(st, dcu_coll_tag(comm, DCU_COLL_RESULT), 1, call);
    return s;
}

/* Communicators of at most this many ranks learn that all are in from a
 * notification of each rank to every other one; larger ones from a
 * barrier (log P steps). Measured (H100, 2026-11-25): the barrier made an
 * alltoall of 4 ranks in two processes 3 us slower (16.0 against 13.0 us)
 * and one of 264 ranks of a GPU 160 us faster (529 against 689 us). */
#define DCU_ALL_IN_NOTIFY_MAX 4

/* Returns once every rank of comm (`ranks`, I am `me`) has called the
 * collective: from then on their parts may be written. */
DCU_FN dcuda_status_t dcu_all_in(dcuda_state_t *st, int comm, int ranks, int me, const char *call)
{
    dcuda_status_t s = DCUDA_OK;
    if (ranks <= 1)
        return s;
    if (ranks > DCU_ALL_IN_NOTIFY_MAX) { /* my right's record, then the barrier */
        s = dcu_call_ring_check(st, comm, call);
        return s == DCUDA_OK ? dcu_comm_barrier_any(st, comm, call) : s;
    }
    for (int k = 1; k < ranks && s == DCUDA_OK; k++)
        s = dcu_call_push(st, comm, (me + k) % ranks, DCUDA_MAILBOX_ALL_IN + k - 1,
                          dcu_coll_tag(comm, DCU_COLL_ALL_IN));
    if (s == DCUDA_OK)
        s = dcu_wait_boxes(st, dcu_coll_tag(comm, DCU_COLL_ALL_IN), ranks - 1, call,
                           dcu_boxes(comm, DCUDA_MAILBOX_ALL_IN, ranks - 1));
    return s;
}

/* Down the tree, each subtree's blocks are consecutive (ranks v .. v +
 * span - 1): a rank holding its subtree's blocks (rank 0: the whole
 * result) puts each child's subtree of them in place in the child's data,
 * then moves its own block to the front. Log P puts deep, where rank 0
 * putting every block itself took P - 1 puts in a row. */
DCU_FN dcuda_status_t dcu_scatter_down(dcuda_state_t *st, uint32_t win, const dcu_tree_t *t,
                                       int comm, size_t offset, size_t block, char *data,
                                       const char *call)
{
    dcuda_status_t s = DCUDA_OK;
    if (t->parent >= 0)
        s = dcu_wait_tag(st, dcu_coll_tag(comm, DCU_COLL_RESULT), 1, call);
    for (int k = t->children - 1; k >= 0 && s == DCUDA_OK; k--) { /* the largest subtree first */
        dcu_tree_t child = dcu_tree_of(dcu_tree_child(t, k), t->size);
        size_t at = (size_t)child.me * block;
        s = dcu_put(st, win, child.me, offset + at, (size_t)dcu_tree_span(&child) * block,
                    data + at, 1, dcu_coll_tag(comm, DCU_COLL_RESULT), call);
    }
    if (t->children && s == DCUDA_OK)
        s = dcu_win_flush(st, win);
    if (t->me != 0 && s == DCUDA_OK) { /* my block is past the first: no overlap */
        dcu_copy(data, data + (size_t)t->me * block, block);
        dcu_sync();
    }
    return s;
}

/* Blocks of at least this many bytes are reduce-scattered directly:
 * each rank puts its block j into rank j's scratch and reduces the P
 * blocks it receives (P - 1 puts a rank, each block moved once); smaller
 * ones go up and down the tree (log P steps, but the whole array at each).
 * Measured (H100, 264 ranks of a GPU, 2026-11-25): 8 B blocks 81 us by
 * the tree; 1 KiB blocks 869 us directly, where the tree took 6,467. */
#define DCU_RS_DIRECT_MIN 256u

/* Direct: once all are in, my block j goes to rank j's scratch (slot me);
 * the blocks for me are reduced into my own, which then moves to the
 * front (after my puts have read block 0). */
DCU_FN dcuda_status_t dcu_reduce_scatter_direct(dcuda_state_t *st, uint32_t win, int comm,
                                                int ranks, int me, size_t offset, size_t count,
                                                size_t block, char *data, int type, int op,
                                                const char *call)
{
    size_t all = block * (size_t)ranks; /* the scratch follows the data */
    dcuda_status_t s = dcu_all_in(st, comm, ranks, me, call);
    for (int k = 1; k < ranks && s == DCUDA_OK; k++) {
        int j = (me + k) % ranks;
        s = dcu_put(st, win, j, offset + all + (size_t)me * block, block, data + (size_t)j * block,
                    1, dcu_coll_tag(comm, DCU_COLL_UP), call);
    }
    if (ranks > 1 && s == DCUDA_OK)
        s = dcu_wait_tag(st, dcu_coll_tag(comm, DCU_COLL_UP), ranks - 1, call);
    char *mine = data + (size_t)me * block;
    for (int i = 0; i < ranks && s == DCUDA_OK; i++)
        if (i != me)
            dcu_reduce_into(mine, data + all + (size_t)i * block, count, type, op);
    if (ranks > 1 && s == DCUDA_OK)
        s = dcu_win_flush(st, win);
    if (me != 0 && s == DCUDA_OK) {
        dcu_copy(data, mine, block);
        dcu_sync();
    }
    return s;
}

/* The reduction of every rank's size * count elements; block r of it
 * reaches rank r directly (large blocks) or up and down the tree. */
DCU_FN dcuda_status_t dcu_reduce_scatter(dcuda_state_t *st, uint32_t win, size_t offset,
                                         size_t count, int type, int op)
{
    static const char call[] = "dcuda_reduce_scatter";
    const int pushed =
        dcu_push_try(st, win, offset, count, dcu_local_args(DCU_LOCAL_REDUCE_SCATTER, type, op, 0),
                     (uint64_t)count * dcuda_datatype_bytes((dcuda_datatype_t)type));
    if (pushed != DCU_PUSH_OTHER)
        return (dcuda_status_t)pushed;
    if (dcu_local_takes_reduction(st, win, count, type, op, DCU_LOCAL_GATHER_MAX,
                                  DCU_NODE_GATHER_MAX))
        return dcu_local_run(st, win, offset, count,
                             dcu_local_args(DCU_LOCAL_REDUCE_SCATTER, type, op, 0));
    char *data = 0;
    uint64_t bytes = 0;
    dcuda_status_t s =
        dcu_reduce_scatter_start(st, win, offset, count, type, op, &data, &bytes, call);
    if (s != DCUDA_OK)
        return s;
    int comm = dcu_win_comm(win), size = dcu_comm_size(st, comm);
    size_t all = count * (size_t)size, block = (size_t)bytes / (size_t)size;
    int me = dcu_comm_rank(st, comm);
    if (block >= DCU_RS_DIRECT_MIN)
        return dcu_reduce_scatter_direct(st, win, comm, size, me, offset, count, block, data, type,
                                         op, call);
    dcu_tree_t t = dcu_tree_of(me, size);
    s = dcu_reduce_up(st, win, &t, comm, offset, all, bytes, data, type, op, call);
    if (s == DCUDA_OK)
        s = dcu_scatter_down(st, win, &t, comm, offset, block, data, call);
    return s;
}

/* Large arrays go round the ring (coll_ring.h) when its model says so.
 * Otherwise up the tree, each subtree's blocks are consecutive (ranks v ..
 * v + span - 1): a child puts its whole subtree's blocks where they belong
 * in its parent's part, once the parent said it is in; then the whole
 * array goes down as a broadcast's data. */
DCU_FN dcuda_status_t dcu_allgather(dcuda_state_t *st, uint32_t win, size_t offset, size_t size)
{
    static const char call[] = "dcuda_allgather";
    const int pushed = dcu_push_try(st, win, offset, size,
                                    dcu_local_args(DCU_LOCAL_ALLGATHER, 0, 0, 0), (uint64_t)size);
    if (pushed != DCU_PUSH_OTHER)
        return (dcuda_status_t)pushed;
    if (dcu_local_takes(st, win, size, 1, DCU_LOCAL_GATHER_MAX, DCU_NODE_GATHER_MAX))
        return dcu_local_run(st, win, offset, size, dcu_local_args(DCU_LOCAL_ALLGATHER, 0, 0, 0));
    char *data = 0;
    dcuda_status_t s = dcu_blocks_start(st, win, offset, size, 1, &data, call);
    if (s != DCUDA_OK)
        return s;
    int comm = dcu_win_comm(win), ranks = dcu_comm_size(st, comm);
    uint64_t all = (uint64_t)size * (uint64_t)ranks;
    if (dcu_ring_allgather_wins(all, ranks))
        return dcu_ring_allgather(st, win, offset, size, data, call);
    dcu_tree_t t = dcu_tree_of(dcu_comm_rank(st, comm), ranks);
    s = dcu_coll_ready_down(st, &t, comm); /* my blocks may be written */
    if (t.children && s == DCUDA_OK)
        s = dcu_wait_tag(st, dcu_coll_tag(comm, DCU_COLL_UP), t.children, call);
    if (t.parent >= 0 && s == DCUDA_OK) {
        size_t mine = offset + (size_t)t.me * size, span = (size_t)dcu_tree_span(&t) * size;
        s = dcu_coll_parent_ready(st, comm, call);
        if (s == DCUDA_OK)
            s = dcu_put(st, win, t.parent, mine, span, data + (size_t)t.me * size, 1,
                        dcu_coll_tag(comm, DCU_COLL_UP), call);
        if (s == DCUDA_OK)
            s = dcu_wait_tag(st, dcu_coll_tag(comm, DCU_COLL_DOWN), 1, call);
    }
    if (s == DCUDA_OK)
        s = dcu_coll_send_down(st, win, &t, comm, offset, (size_t)all, data, call);
    return s;
}

/* Once all are in (dcu_all_in), each rank puts its block for rank j into
 * rank j's receive area (the next rank first, so that the ranks spread
 * over their targets) and copies its own; it returns once every block for
 * it has landed and its own sources are read. */
DCU_FN dcuda_status_t dcu_alltoall(dcuda_state_t *st, uint32_t win, size_t offset, size_t size)
{
    static const char call[] = "dcuda_alltoall";
    const int pushed = dcu_push_try(st, win, offset, size,
                                    dcu_local_args(DCU_LOCAL_ALLTOALL, 0, 0, 0), (uint64_t)size);
    if (pushed != DCU_PUSH_OTHER)
        return (dcuda_status_t)pushed;
    if (dcu_local_takes(st, win, size, 1, DCU_LOCAL_GATHER_MAX, DCU_NODE_GATHER_MAX))
        return dcu_local_run(st, win, offset, size, dcu_local_args(DCU_LOCAL_ALLTOALL, 0, 0, 0));
    char *data = 0;
    dcuda_status_t s = dcu_blocks_start(st, win, offset, size, 2, &data, call);
    if (s != DCUDA_OK)
        return s;
    int comm = dcu_win_comm(win), ranks = dcu_comm_size(st, comm), me = dcu_comm_rank(st, comm);
    size_t recv = (size_t)ranks * size; /* the receive area, after the blocks sent */
    s = dcu_all_in(st, comm, ranks, me, call);
    for (int k = 1; k < ranks && s == DCUDA_OK; k++) {
        int j = (me + k) % ranks;
        s = dcu_put(st, win, j, offset + recv + (size_t)me * size, size, data + (size_t)j * size, 1,
                    dcu_coll_tag(comm, DCU_COLL_UP), call);
    }
    if (s != DCUDA_OK)
        return s;
    dcu_copy(data + recv + (size_t)me * size, data + (size_t)me * size, size);
    dcu_sync();
    if (ranks > 1)
        s = dcu_wait_tag(st, dcu_coll_tag(comm, DCU_COLL_UP), ranks - 1, call);
    if (ranks > 1 && s == DCUDA_OK)
        s = dcu_win_flush(st, win);
    return s;
}

#endif /* DCUDA_IMPL_COLL_H */
