/*
 * Collectives whose ranks all live on my device (DEVICE, or WORLD of a
 * job of one process without the loopback path), or on my node (WORLD of
 * several processes, none on the network path: their parts over NVLink
 * or in shared memory), for small data: every
 * rank reads what it needs from the other ranks' parts where they lie,
 * between two barriers of the communicator (every rank has called it;
 * every rank has read), instead of log P rounds of notified puts and
 * handshakes down and up a tree. No rank writes into another's part, and
 * a rank's part is its own again when the call returns. A reduction
 * combines the parts in the same order on every rank, so that every rank
 * gets the same bits. An allreduce, a reduce and a small allgather on a
 * node go through the devices instead (dcu_node_reduce,
 * dcu_node_allgather): one rank a device reads its device's parts,
 * every rank one share a process. Out of line: inlined, the
 * reads' registers would be saved around every collective of a kernel.
 */
#ifndef DCUDA_IMPL_COLL_LOCAL_H
#define DCUDA_IMPL_COLL_LOCAL_H

#include "coll_base.h"
#include "comm_barrier.h"

/* Communicators of fewer ranks take the tree (its log P rounds are
 * fewer than the reads' two barriers); a rank reads at most READ_MAX
 * bytes for a reduce, ALLREDUCE_MAX for an allreduce, GATHER_MAX for an
 * allgather, an alltoall or a reduce-scatter (their trees and direct puts
 * cost more). A reduce's tree only gathers, half an allreduce's rounds:
 * on an H100, 1 KiB at 33 ranks (33 KiB read) took 10.5 us up the tree
 * and 20.2 by reads, where an allreduce took 30.5 and 21.8; at 66 ranks
 * the allreduce's reads and tree tie (37 to 39 us), at 132 the tree wins
 * (47 against 70). A broadcast's data is read once a rank at any size:
 * the tree copies it ceil(log2 P) times one after another, the readers
 * once, side by side. */
#define DCU_LOCAL_MIN_RANKS 4
#define DCU_LOCAL_READ_MAX 16384u
#define DCU_LOCAL_ALLREDUCE_MAX 65536u
#define DCU_LOCAL_GATHER_MAX 524288u
#define DCU_LOCAL_BCAST_MAX UINT64_MAX

/* WORLD of several processes of one node (parts over NVLink, or in
 * shared memory): every rank reads at most this many bytes times the
 * ranks (the data of one part, or of each), from measurement on two
 * H100 (docs/results/log/nvidia-h100-x2/2026-11-26-node-reads.txt). The readers of a broadcast pull
 * the root's data across the link side by side: at 528 ranks 64 KiB took
 * 76 us by reads and 81 by the tree, 1 MiB 819 against 481 by the chain;
 * at 32 ranks 1 MiB 85 against 138. An allreduce of 8 B at 528 ranks took
 * 56 us by reads against 98, but 1 KiB at 32 (32 KiB read) 52 against
 * 41. A reduce's reads, which only its root made, lost at 528 ranks (30
 * against 23 us for 8 B); the allreduce and the reduce now go through
 * the devices instead (dcu_node_reduce: one rank a device reads its
 * device's parts, then a rank one share a process), the same limit (not
 * measured on GPUs yet). The gathers' limit stands (an alltoall of 8 B a
 * block at 528 ranks: 31 us against 2.2 ms); an allgather whose blocks of
 * every process fit its node scratch goes through the devices
 * (dcu_node_allgather; not measured on GPUs yet). */
#define DCU_NODE_BCAST_MAX (64u << 20)
#define DCU_NODE_ALLREDUCE_MAX 16384u
#define DCU_NODE_REDUCE_MAX DCU_NODE_ALLREDUCE_MAX
#define DCU_NODE_GATHER_MAX DCU_LOCAL_GATHER_MAX

/* Is every rank of comm on my device, its part read by a plain load? */
DCU_FN int dcu_coll_device(const dcuda_state_t *st, int comm)
{
    return comm == DCU_COMM_DEVICE || (st->process_count == 1 && !st->loopback);
}

/* On a node of several processes without a network path, is every
 * WORLD rank's part of win reached by loads (node_parts, filled when the
 * window was created), and its `bytes` times the ranks at most
 * `node_most`? Every process of the node answers alike. Out of line:
 * inlined into every collective, it cost one device's small ones 3 to 4%
 * (their kernel's registers). */
DCU_FN_COLD int dcu_local_takes_node(const dcuda_state_t *st, uint32_t win, uint64_t bytes,
                                     int ranks, uint64_t node_most)
{
    const int comm = dcu_win_comm(win), slot = dcu_win_slot(win);
    const dcuda_context_t *ctx = st->ctx;
    return bytes <= node_most && bytes * (uint64_t)ranks <= node_most && comm == DCU_COMM_WORLD &&
           slot < DCUDA_MAX_WINDOWS && ctx->node_parts &&
           dcu_ld_acquire(&ctx->node_unreachable[slot], 0) != win;
}

/* Does a collective on win take the reads, when a rank reads `bytes` of
 * each part (`scaled`) or of one part, at most `most` in all on one
 * device, and at most `node_most` bytes times the ranks on a node?
 * Before the call's checks (the reads' entry points make them): cheap,
 * inline; no division (a GPU's is long). */
DCU_FN int dcu_local_takes(const dcuda_state_t *st, uint32_t win, uint64_t bytes, int scaled,
                           uint64_t most, uint64_t node_most)
{
    if (!st)
        return 0;
    int comm = dcu_win_comm(win);
    if (!dcu_comm_valid(comm)) /* NODE, splits: their members' order is no table's */
        return 0;
    int ranks = dcu_comm_size(st, comm);
    if (ranks < DCU_LOCAL_MIN_RANKS)
        return 0;
    if (dcu_coll_device(st, comm))
        return bytes <= most && (!scaled || bytes * (uint64_t)ranks <= most);
    return st->process_count > 1 && dcu_local_takes_node(st, win, bytes, ranks, node_most);
}

/* Does a reduction of count elements of type on win take the reads, a
 * rank reading each part's (at most `most` in all; `node_most` on a
 * node)? Types and ops it does
 * not know take the tree, whose checks report them as given (the reads'
 * entry gets them in a byte). */
DCU_FN int dcu_local_takes_reduction(const dcuda_state_t *st, uint32_t win, size_t count, int type,
                                     int op, uint64_t most, uint64_t node_most)
{
    return (unsigned)type <= (unsigned)DCUDA_DOUBLE && (unsigned)op <= (unsigned)DCUDA_MAX &&
           dcu_local_takes(st, win, (uint64_t)count * dcuda_datatype_bytes((dcuda_datatype_t)type),
                           1, most, node_most);
}

/* The parts of window slot `slot` of comm, by comm rank (both tables of
 * a device hold its ranks in rank order; the node's, every WORLD rank). */
DCU_FN const dcuda_win_entry_t *dcu_local_parts(const dcuda_state_t *st, int comm, int slot)
{
    if (comm == DCU_COMM_WORLD && st->process_count > 1)
        return st->ctx->node_parts + (size_t)slot * (size_t)st->world_size;
    return dcu_win_entry(st, comm, slot, comm == DCU_COMM_WORLD ? st->world_first : 0);
}

/* Rank j's part for a collective: 0 if it holds `room` bytes from offset
 * with the data there aligned to `align` bytes (a power of two), 1 if it
 * is too small, 2 if the data would be misaligned. */
DCU_FN int dcu_local_part_fault(const dcuda_win_entry_t *part, uint64_t offset, uint64_t room,
                                uint64_t align)
{
    if (dcu_check_range(part->size, offset, room) != DCUDA_OK)
        return 1;
    return ((part->base + offset) & (align - 1u)) != 0 ? 2 : 0;
}

/* Parts a thread looks at at once in dcu_local_parts_hold (their loads
 * in flight together, where one after another each waited its turn). */
#define DCU_LOCAL_HOLD_BATCH 4

/* Does every rank's part of win hold the `room` bytes from offset that
 * the collective needs of it, its data aligned to `align` bytes (a
 * reduction's elements)? Every rank checks every part (the tables are
 * the same for all), so when one does not, all of them report it and
 * none waits in a barrier for a rank that returned. */
DCU_FN_COLD dcuda_status_t dcu_local_parts_hold(const dcuda_state_t *st, uint32_t win,
                                                uint64_t offset, uint64_t room, uint64_t align,
                                                const char *call)
{
    int comm = dcu_win_comm(win), slot = dcu_win_slot(win), ranks = dcu_comm_size(st, comm);
    const dcuda_win_entry_t *parts = dcu_local_parts(st, comm, slot);
    const int nt = dcu_threads();
    int fault = 0;
    for (int j = dcu_thread(); j < ranks; j += DCU_LOCAL_HOLD_BATCH * nt) {
        dcuda_win_entry_t e[DCU_LOCAL_HOLD_BATCH];
        for (int k = 0; k < DCU_LOCAL_HOLD_BATCH; k++) { /* past the last rank: a part that holds */
            const dcuda_win_entry_t any = { 0u, UINT64_MAX };
            e[k] = j + k * nt < ranks ? parts[j + k * nt] : any;
        }
        for (int k = 0; k < DCU_LOCAL_HOLD_BATCH; k++)
            fault |= dcu_local_part_fault(&e[k], offset, room, align);
    }
    if (!dcu_sync_any(fault))
        return DCUDA_OK;
    int j = 0;
    while (j < ranks - 1 && !dcu_local_part_fault(&parts[j], offset, room, align))
        j++;
    if (dcu_local_part_fault(&parts[j], offset, room, align) == 2)
        return DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, call,
                          "rank %d's part of window %d puts the data at offset %llu at %p, not "
                          "aligned to its %llu-byte elements",
                          j, slot, (unsigned long long)offset,
                          (void *)(uintptr_t)(parts[j].base + offset), (unsigned long long)align);
    return DCU_REPORT(st, DCUDA_ERR_BOUNDS, call,
                      "rank %d's %llu-byte part of window %d lacks the %llu bytes from offset "
                      "%llu that the collective needs",
                      j, (unsigned long long)parts[j].size, slot, (unsigned long long)room,
                      (unsigned long long)offset);
}

/* ---- combining the ranks' elements ---------------------------------------------- */

#if defined(__CUDACC__)
/* Parts whose places, then elements, a lane loads at once. */
#define DCU_LOCAL_COMBINE_BATCH 8

/* out[i] = the op of element i at byte `at` of every part, i < count.
 * Each element is combined by a group of lanes of one warp (as many as
 * fit while the block covers all elements at once, at most 32 and at
 * most the parts), each lane taking every L-th part, then a butterfly
 * of shuffles: the reads of the parts are in flight together. */
template <typename T, typename Op>
static __device__ __forceinline__ void dcu_local_combine_as(const dcuda_win_entry_t *parts,
                                                            int ranks, uint64_t at, size_t count,
                                                            T *out, Op op)
{
    const int nt = (int)blockDim.x;
    int lanes = 32;
    while (lanes > 1 && ((size_t)(nt / lanes) < count || lanes > ranks || lanes > nt))
        lanes /= 2; /* at most the block's threads: at least one group */
    const int lane = (int)threadIdx.x % lanes, groups = nt / lanes;
    const size_t rounds = (count + (size_t)groups - 1u) / (size_t)groups;
    /* The lanes of my warp (a block's last warp may be short): every one
     * of them shuffles in every round. */
    const unsigned left = (unsigned)nt - (threadIdx.x & ~31u);
    const unsigned warp = left >= 32u ? 0xffffffffu : (1u << left) - 1u;
    for (size_t r = 0; r < rounds; r++) { /* every lane of a warp shuffles alike */
        const size_t i = r * (size_t)groups + (size_t)threadIdx.x / (size_t)lanes;
        const int valid = i < count && (int)threadIdx.x < groups * lanes;
        T acc = T();
        for (int j0 = lane; valid && j0 < ranks; j0 += DCU_LOCAL_COMBINE_BATCH * lanes) {
            /* A batch of parts: their places loaded together, then their
             * elements together, then combined in rank order (the order
             * one at a time had: every rank the same bits). */
            uint64_t base[DCU_LOCAL_COMBINE_BATCH];
            T v[DCU_LOCAL_COMBINE_BATCH];
#pragma unroll
            for (int k = 0; k < DCU_LOCAL_COMBINE_BATCH; k++)
                base[k] = j0 + k * lanes < ranks ? parts[j0 + k * lanes].base : 0u;
#pragma unroll
            for (int k = 0; k < DCU_LOCAL_COMBINE_BATCH; k++)
                v[k] =
                    j0 + k * lanes < ranks ? __ldcg((const T *)(uintptr_t)(base[k] + at) + i) : T();
#pragma unroll
            for (int k = 0; k < DCU_LOCAL_COMBINE_BATCH; k++)
                if (j0 + k * lanes < ranks)
                    acc = j0 == lane && k == 0 ? v[k] : op(acc, v[k]);
        }
        for (int m = lanes / 2; m >= 1; m /= 2) {
            T other = __shfl_xor_sync(warp, acc, m, lanes);
            acc = op(acc, other);
        }
        if (valid && lane == 0)
            out[i] = acc;
    }
}

template <typename T>
static __device__ void dcu_local_combine_t(const dcuda_win_entry_t *parts, int ranks, uint64_t at,
                                           size_t count, void *out, int op)
{
    if (op == DCUDA_SUM)
        dcu_local_combine_as(parts, ranks, at, count, (T *)out, dcu_op_sum());
    else if (op == DCUDA_MIN)
        dcu_local_combine_as(parts, ranks, at, count, (T *)out, dcu_op_min());
    else
        dcu_local_combine_as(parts, ranks, at, count, (T *)out, dcu_op_max());
}

/* out = the op over `ranks` parts of the count elements of type at byte
 * `at` of each; the rank's threads are in step again on return. */
DCU_FN void dcu_local_combine_parts(const dcuda_win_entry_t *parts, int ranks, uint64_t at,
                                    size_t count, int type, int op, void *out)
{
    if (type == DCUDA_INT32)
        dcu_local_combine_t<int32_t>(parts, ranks, at, count, out, op);
    else if (type == DCUDA_INT64)
        dcu_local_combine_t<long long>(parts, ranks, at, count, out, op);
    else if (type == DCUDA_FLOAT)
        dcu_local_combine_t<float>(parts, ranks, at, count, out, op);
    else
        dcu_local_combine_t<double>(parts, ranks, at, count, out, op);
    dcu_sync();
}
#else
/* The same on a CPU rank, one thread: part 0, then every other part in
 * rank order combined into it by the trees' own element-wise reduction. */
DCU_FN void dcu_local_combine_parts(const dcuda_win_entry_t *parts, int ranks, uint64_t at,
                                    size_t count, int type, int op, void *out)
{
    dcu_copy((char *)out, (const char *)(uintptr_t)(parts[0].base + at),
             count * dcuda_datatype_bytes((dcuda_datatype_t)type));
    for (int j = 1; j < ranks; j++)
        dcu_reduce_into(out, (const void *)(uintptr_t)(parts[j].base + at), count, type, op);
}
#endif

/* out = the op over the ranks of comm of the count elements of type at
 * byte `at` of their parts of window slot `slot`. */
DCU_FN void dcu_local_combine(const dcuda_state_t *st, int comm, int slot, uint64_t at,
                              size_t count, int type, int op, void *out)
{
    dcu_local_combine_parts(dcu_local_parts(st, comm, slot), dcu_comm_size(st, comm), at, count,
                            type, op, out);
}

/* ---- combining P sources' elements in order ---------------------------------------- */

#if defined(__CUDACC__)
template <typename T, typename Op>
static __device__ __forceinline__ void dcu_combine_from_as(T *out, const char *const *src, int P,
                                                           size_t count, Op op)
{
    for (size_t i = threadIdx.x; i < count; i += blockDim.x) {
        T acc = __ldcg((const T *)src[0] + i);
        for (int j = 1; j < P; j++)
            acc = op(acc, __ldcg((const T *)src[j] + i));
        out[i] = acc;
    }
}

template <typename T>
static __device__ __forceinline__ void dcu_combine_from_t(T *out, const char *const *src, int P,
                                                          size_t count, int op)
{
    if (op == DCUDA_SUM)
        dcu_combine_from_as(out, src, P, count, dcu_op_sum());
    else if (op == DCUDA_MIN)
        dcu_combine_from_as(out, src, P, count, dcu_op_min());
    else
        dcu_combine_from_as(out, src, P, count, dcu_op_max());
}
#define DCU_COMBINE_FROM(T, out, src, P, count, op)                                                \
    dcu_combine_from_t<T>((T *)(out), src, P, count, op)
#else
/* One thread: element by element, every source read before the result
 * is written (a source may be the result's own place). */
#define DCU_COMBINE_FROM(T, out, src, P, count, op)                                                \
    do {                                                                                           \
        T *o_ = (T *)(out);                                                                        \
        for (size_t i_ = 0; i_ < (count); i_++) {                                                  \
            T acc_ = ((const T *)(src)[0])[i_];                                                    \
            for (int j_ = 1; j_ < (P); j_++) {                                                     \
                T b_ = ((const T *)(src)[j_])[i_];                                                 \
                acc_ = (op) == DCUDA_SUM   ? acc_ + b_                                             \
                       : (op) == DCUDA_MIN ? (b_ < acc_ ? b_ : acc_)                               \
                                           : (b_ > acc_ ? b_ : acc_);                              \
            }                                                                                      \
            o_[i_] = acc_;                                                                         \
        }                                                                                          \
    } while (0)
#endif

/* out[i] = src[0][i] op src[1][i] op ... op src[P-1][i] for i < count, by
 * the rank's threads (in step again on return): inlined where one call
 * site runs it on a short path (the pushed call), else dcu_combine_from. */
DCU_FN void dcu_combine_from_here(void *out, const char *const *src, int P, size_t count, int type,
                                  int op)
{
    if (type == DCUDA_INT32)
        DCU_COMBINE_FROM(int32_t, out, src, P, count, op);
    else if (type == DCUDA_INT64)
        DCU_COMBINE_FROM(int64_t, out, src, P, count, op);
    else if (type == DCUDA_FLOAT)
        DCU_COMBINE_FROM(float, out, src, P, count, op);
    else
        DCU_COMBINE_FROM(double, out, src, P, count, op);
    dcu_sync();
}

/* The same out of line. */
DCU_FN_COLD void dcu_combine_from(void *out, const char *const *src, int P, size_t count, int type,
                                  int op)
{
    dcu_combine_from_here(out, src, P, count, type, op);
}

/* ---- the collectives --------------------------------------------------------------- */
/* Each makes the call's own checks (as its tree would), then every
 * rank's part's, then reads between the two barriers. */

/* The first barrier, after my right neighbour's record was compared
 * with mine: past it every member has called this very call (a member in
 * another call, or with other arguments, was reported before any part is
 * read). */
DCU_FN_COLD dcuda_status_t dcu_local_all_in(dcuda_state_t *st, int comm, const char *call)
{
    dcuda_status_t s = dcu_call_ring_check(st, comm, call);
    DCU_TRACE_MARK(st, DCU_TRACE_SEND); /* a trace build: the records compared */
    return s == DCUDA_OK ? dcu_comm_barrier_any(st, comm, call) : s;
}

/* Root's size bytes at offset into every other part. */
DCU_FN_COLD dcuda_status_t dcu_local_broadcast(dcuda_state_t *st, uint32_t win, size_t offset,
                                               size_t size, int root)
{
    static const char call[] = "dcuda_broadcast";
    char *data = 0;
    dcuda_status_t s = dcu_broadcast_start(st, win, offset, size, root, &data, call);
    int comm = dcu_win_comm(win);
    if (s == DCUDA_OK)
        s = dcu_local_parts_hold(st, win, offset, size, 1u, call);
    if (s == DCUDA_OK)
        s = dcu_local_all_in(st, comm, call); /* the root's data is in */
    if (s != DCUDA_OK)
        return s;
    const dcuda_win_entry_t *parts = dcu_local_parts(st, comm, dcu_win_slot(win));
    if (dcu_comm_rank(st, comm) != root && size) {
        dcu_copy_fresh(data, (const char *)(uintptr_t)(parts[root].base + offset), size);
        dcu_sync();
    }
    return dcu_comm_barrier_any(st, comm, call); /* every rank has read it */
}

/* A reduction's checks where ranks read each other's parts: the call's
 * own (*t, *data and *bytes as dcu_reduction_start gives them), then
 * every part's room and alignment, then every rank in (dcu_local_all_in). */
DCU_FN_COLD dcuda_status_t dcu_local_reduction_start(dcuda_state_t *st, uint32_t win, size_t offset,
                                                     size_t count, int type, int op, int has_root,
                                                     int root, dcu_tree_t *t, char **data,
                                                     uint64_t *bytes, const char *call)
{
    dcuda_status_t s =
        dcu_reduction_start(st, win, offset, count, type, op, has_root, root, t, data, bytes, call);
    DCU_TRACE_MARK(st, DCU_TRACE_CHECKS); /* a trace build: the call's own checks */
    if (s == DCUDA_OK)
        s = dcu_local_parts_hold(st, win, offset,
                                 dcuda_allreduce_room(t->size, count, (dcuda_datatype_t)type),
                                 dcuda_datatype_bytes((dcuda_datatype_t)type), call);
    DCU_TRACE_MARK(st, DCU_TRACE_PUT_DATA); /* every part's room */
    if (s == DCUDA_OK)
        s = dcu_local_all_in(st, dcu_win_comm(win), call); /* every rank's data is in */
    return s;
}

/* ---- WORLD of several processes: through each device's first rank ---- */

DCUDA_STATIC_ASSERT(DCU_NODE_ALLREDUCE_MAX <= DCUDA_NODE_SCRATCH_BYTES,
                    "a node allreduce's share fits the node scratch");

/* Process p's node scratch (shared/layout.h: after its ranks' library
 * parts), where its device rank 0 leaves its device's share. */
DCU_FN const char *dcu_node_scratch(const dcuda_state_t *st, int p)
{
    const dcuda_peer_t *q = &st->peers[p];
    return (const char *)q->lib +
           (size_t)dcu_lib_bytes(st->world_size, dcu_node_size(st), q->rank_count) -
           DCUDA_NODE_SCRATCH_BYTES;
}

/* The rest of an allreduce (a reduce: only `mine`, its root, gets the
 * result) of WORLD over the processes of a node, through the devices,
 * once every rank has called it (dcu_local_reduction_start): each
 * device's rank 0 combines its device's parts (local reads) into its
 * process's node scratch; once every share is there (a second barrier),
 * every rank (the root) combines the shares in process order into its
 * own data. Where every rank read every part (P x ranks loads over the
 * links: 1,056 ranks of four H200 took 172.9 us for 8 bytes, 22.6
 * barriers), each reads one share a process. Every rank combines the
 * same shares in the same order, so every rank gets the same bits. No
 * barrier after the reads: a share is written again only after the next
 * such call's first barrier, which no rank passes before every rank has
 * left this one. */
DCU_FN_COLD dcuda_status_t dcu_node_reduce(dcuda_state_t *st, uint32_t win, size_t offset,
                                           size_t count, int type, int op, char *data, int mine,
                                           const char *call)
{
    if (st->device_rank == 0) {
        const dcuda_win_entry_t *own =
            dcu_local_parts(st, DCU_COMM_WORLD, dcu_win_slot(win)) + st->world_first;
        dcu_local_combine_parts(own, st->device_size, offset, count, type, op,
                                (void *)dcu_node_scratch(st, st->process_index));
    }
    dcuda_status_t s = dcu_comm_barrier_any(st, DCU_COMM_WORLD, call); /* every share is in */
    if (s != DCUDA_OK || !mine)
        return s;
    const char *shares[DCUDA_MAX_NODE_PROCESSES];
    for (int p = 0; p < st->process_count; p++)
        shares[p] = dcu_node_scratch(st, p);
    dcu_combine_from(data, shares, st->process_count, count, type, op);
    return DCUDA_OK;
}

/* The op over every rank of the count elements at offset, into every
 * rank's data (an allreduce) or root's (has_root): on one device first
 * into my scratch (the bytes after the data), which nobody reads, then,
 * once every rank has read my data, over it; on a node through the
 * devices (dcu_node_reduce). */
DCU_FN_COLD dcuda_status_t dcu_local_reduce(dcuda_state_t *st, uint32_t win, size_t offset,
                                            size_t count, int type, int op, int has_root, int root)
{
    const char *call = has_root ? "dcuda_reduce" : "dcuda_allreduce";
    dcu_tree_t t = { 0, 1, -1, 0, 0 }; /* set by dcu_reduction_start */
    char *data = 0;
    uint64_t bytes = 0;
    dcuda_status_t s = dcu_local_reduction_start(st, win, offset, count, type, op, has_root, root,
                                                 &t, &data, &bytes, call);
    if (s != DCUDA_OK)
        return s;
    int comm = dcu_win_comm(win);
    const int mine = !has_root || t.me == root;
    if (!dcu_coll_device(st, comm))
        return dcu_node_reduce(st, win, offset, count, type, op, data, mine, call);
    if (mine)
        dcu_local_combine(st, comm, dcu_win_slot(win), offset, count, type, op, data + bytes);
    DCU_TRACE_MARK(st, DCU_TRACE_RESULT);
    if ((s = dcu_comm_barrier_any(st, comm, call)) != DCUDA_OK) /* every rank has read my data */
        return s;
    if (mine) {
        dcu_copy(data, data + bytes, (size_t)bytes);
        dcu_sync();
    }
    return DCUDA_OK;
}

/* Does an allreduce of count elements of type on win go through the
 * devices in slices (dcu_node_allreduce_sliced)? WORLD over a node's
 * processes that the reads serve (dcu_local_takes_node), beyond the
 * small form's room, every process with the same ranks and at least two
 * (the slices of a device pair up across the devices): every process
 * answers alike. Out of line, before the call's checks. */
DCU_FN_COLD int dcu_node_sliced_takes(const dcuda_state_t *st, uint32_t win, size_t count, int type,
                                      int op)
{
    if (!st || dcu_win_comm(win) != DCU_COMM_WORLD || st->process_count < 2 ||
        (unsigned)type > (unsigned)DCUDA_DOUBLE || (unsigned)op > (unsigned)DCUDA_MAX ||
        !dcu_state_fields_ok(st) || dcu_check_win(st, win) != DCUDA_OK)
        return 0;
    const uint64_t bytes = (uint64_t)count * dcuda_datatype_bytes((dcuda_datatype_t)type);
    if (!dcu_local_takes_node(st, win, bytes, st->world_size, UINT64_MAX))
        return 0;
    const int ranks = st->peers[0].rank_count;
    for (int p = 1; p < st->process_count; p++)
        if (st->peers[p].rank_count != ranks)
            return 0;
    return ranks >= 2;
}

/* Device rank d's slice of count elements (of `ranks` slices, the first
 * count % ranks one element longer): from *first, *n of them. */
DCU_FN void dcu_node_slice(size_t count, int ranks, int d, size_t *first, size_t *n)
{
    const size_t base = count / (size_t)ranks, extra = count % (size_t)ranks, k = (size_t)d;
    *first = k * base + (k < extra ? k : extra);
    *n = base + (k < extra ? 1u : 0u);
}

/* A larger allreduce of WORLD over a node's processes, every rank of every
 * device moving its slice at once (device rank d takes slice d of the
 * elements): once every rank has called it, rank d combines slice d of its
 * device's parts (local reads) into its scratch; once every device has
 * (a WORLD barrier), it combines the devices' sums of slice d, from the
 * scratch of rank d of each process in process order, into its data;
 * once its device's slices are final (a DEVICE barrier), it copies the
 * others from its device's ranks; a last WORLD barrier holds every part
 * until all have read. Where the tree and the ring took log P or P steps
 * of the whole data through 1,056 ranks (1 MiB: 7.5 ms on four H100),
 * each element crosses the links once a device. Every rank ends with the
 * same bits. */
DCU_FN_COLD dcuda_status_t dcu_node_allreduce_sliced(dcuda_state_t *st, uint32_t win, size_t offset,
                                                     size_t count, int type, int op)
{
    static const char call[] = "dcuda_allreduce";
    dcu_tree_t t = { 0, 1, -1, 0, 0 }; /* set by dcu_reduction_start */
    char *data = 0;
    uint64_t bytes = 0;
    const size_t elem = dcuda_datatype_bytes((dcuda_datatype_t)type);
    dcuda_status_t s =
        dcu_local_reduction_start(st, win, offset, count, type, op, 0, 0, &t, &data, &bytes, call);
    if (s != DCUDA_OK)
        return s;
    const dcuda_win_entry_t *parts = dcu_local_parts(st, DCU_COMM_WORLD, dcu_win_slot(win));
    const int d = st->device_rank, ranks = st->device_size;
    size_t first, n;
    dcu_node_slice(count, ranks, d, &first, &n);
    const uint64_t mine = offset + (uint64_t)(first * elem); /* my slice's data */
    if (n) /* my device's sum of my slice, into my scratch */
        dcu_local_combine_parts(parts + st->world_first, ranks, mine, n, type, op,
                                data + bytes + first * elem);
    if ((s = dcu_comm_barrier_any(st, DCU_COMM_WORLD, call)) != DCUDA_OK) /* every device's */
        return s;
    if (n) { /* the devices' sums of my slice, into my data */
        const char *sums[DCUDA_MAX_NODE_PROCESSES];
        for (int p = 0; p < st->process_count; p++)
            sums[p] =
                (const char *)(uintptr_t)parts[st->peers[p].world_first + d].base + mine + bytes;
        dcu_combine_from(data + first * elem, sums, st->process_count, n, type, op);
    }
    if ((s = dcu_barrier(st, DCU_COMM_DEVICE, call)) != DCUDA_OK) /* my device's slices */
        return s;
    for (int k = 1; k < ranks; k++) { /* the others, from my device's ranks */
        const int j = (d + k) % ranks;
        size_t from, m;
        dcu_node_slice(count, ranks, j, &from, &m);
        if (m)
            dcu_copy_fresh(data + from * elem,
                           (const char *)(uintptr_t)parts[st->world_first + j].base + offset +
                               from * elem,
                           m * elem);
    }
    dcu_sync();
    return dcu_comm_barrier_any(st, DCU_COMM_WORLD, call); /* every rank has read */
}

/* Block me (count elements) of every rank's data combined into my first
 * block, through my scratch (after the ranks' blocks). */
DCU_FN_COLD dcuda_status_t dcu_local_reduce_scatter(dcuda_state_t *st, uint32_t win, size_t offset,
                                                    size_t count, int type, int op)
{
    static const char call[] = "dcuda_reduce_scatter";
    char *data = 0;
    uint64_t all = 0;
    dcuda_status_t s =
        dcu_reduce_scatter_start(st, win, offset, count, type, op, &data, &all, call);
    int comm = dcu_win_comm(win), ranks = dcu_comm_size(st, comm), me = dcu_comm_rank(st, comm);
    if (s == DCUDA_OK)
        s = dcu_local_parts_hold(st, win, offset,
                                 dcuda_reduce_scatter_room(ranks, count, (dcuda_datatype_t)type),
                                 dcuda_datatype_bytes((dcuda_datatype_t)type), call);
    if (s == DCUDA_OK)
        s = dcu_local_all_in(st, comm, call);
    if (s != DCUDA_OK)
        return s;
    size_t block = (size_t)all / (size_t)ranks;
    dcu_local_combine(st, comm, dcu_win_slot(win), offset + (uint64_t)me * block, count, type, op,
                      data + all);
    if ((s = dcu_comm_barrier_any(st, comm, call)) != DCUDA_OK)
        return s;
    dcu_copy(data, data + all, block);
    dcu_sync();
    return DCUDA_OK;
}

/* Copies, for every j < n but `skip` (-1: none), `size` bytes at
 * at + j * at_j of parts[j] to out + j * size: groups of threads take
 * blocks in turn (as many blocks in flight as groups), each group as wide
 * as a block's 64-byte pieces (at most 32). */
DCU_FN void dcu_gather_parts(const dcuda_win_entry_t *parts, int n, uint64_t at, uint64_t at_j,
                             size_t size, char *out, int skip)
{
    const int nt = dcu_threads();
    int width = 1;
    while (width < 32 && width * 2 <= nt && (size_t)width * 64u < size)
        width *= 2;
    const int groups = nt / width, lane = dcu_thread() % width;
    for (int j = dcu_thread() / width; j < n && dcu_thread() < groups * width; j += groups) {
        if (j == skip)
            continue;
        const char *src = (const char *)(uintptr_t)(parts[j].base + at + (uint64_t)j * at_j);
        dcu_copy_fresh_by(out + (size_t)j * size, src, size, (size_t)lane, (size_t)width);
    }
    dcu_sync();
}

/* Copies, for every rank j of comm but `skip` (-1: none), `size` bytes
 * at from(j) of its part to to(j) of my data, from(j) = offset + j *
 * from_j + from_me; to(j) = j * size + to_at. */
DCU_FN void dcu_local_gather(const dcuda_state_t *st, int comm, int slot, uint64_t offset,
                             uint64_t from_j, uint64_t from_me, size_t size, char *data,
                             size_t to_at, int skip)
{
    dcu_gather_parts(dcu_local_parts(st, comm, slot), dcu_comm_size(st, comm), offset + from_me,
                     from_j, size, data + to_at, skip);
}

/* Does an allgather of `size` bytes a rank of WORLD over a node's
 * processes go through the devices: do the blocks of every process's
 * ranks fit its node scratch? Every process answers alike. */
DCU_FN int dcu_node_gather_fits(const dcuda_state_t *st, size_t size)
{
    for (int p = 0; p < st->process_count; p++)
        if ((uint64_t)st->peers[p].rank_count * (uint64_t)size > DCUDA_NODE_SCRATCH_BYTES)
            return 0;
    return 1;
}

/* The rest of an allgather of WORLD over a node's processes, through the
 * devices, once every rank has called it: each device's rank 0 copies
 * its device's blocks (local reads) one after another into its process's
 * node scratch; once every process's are there (a second barrier), every
 * rank copies each process's run of blocks into its place in its data.
 * Where every rank read every other rank's block (1,055 reads at 1,056
 * ranks, 792 of them over the links, 92 us for 8 bytes on four H200),
 * each reads one contiguous run a process. No barrier after the reads,
 * as dcu_node_reduce's. */
DCU_FN_COLD dcuda_status_t dcu_node_allgather(dcuda_state_t *st, uint32_t win, size_t offset,
                                              size_t size, char *data, const char *call)
{
    if (st->device_rank == 0) {
        const dcuda_win_entry_t *own =
            dcu_local_parts(st, DCU_COMM_WORLD, dcu_win_slot(win)) + st->world_first;
        dcu_gather_parts(own, st->device_size, offset + (uint64_t)st->world_first * size, size,
                         size, (char *)dcu_node_scratch(st, st->process_index), -1);
    }
    dcuda_status_t s = dcu_comm_barrier_any(st, DCU_COMM_WORLD, call); /* every run is in */
    if (s != DCUDA_OK)
        return s;
    for (int p = 0; p < st->process_count; p++) {
        const dcuda_peer_t *q = &st->peers[p];
        dcu_copy_fresh(data + (size_t)q->world_first * size, dcu_node_scratch(st, p),
                       (size_t)q->rank_count * size);
    }
    dcu_sync();
    return DCUDA_OK;
}

/* Every rank's block (its own, at offset + rank * size) into its place in
 * my data. */
DCU_FN_COLD dcuda_status_t dcu_local_allgather(dcuda_state_t *st, uint32_t win, size_t offset,
                                               size_t size)
{
    static const char call[] = "dcuda_allgather";
    char *data = 0;
    dcuda_status_t s = dcu_blocks_start(st, win, offset, size, 1, &data, call);
    int comm = dcu_win_comm(win), ranks = dcu_comm_size(st, comm);
    if (s == DCUDA_OK)
        s = dcu_local_parts_hold(st, win, offset, (uint64_t)ranks * size, 1u, call);
    if (s == DCUDA_OK)
        s = dcu_local_all_in(st, comm, call);
    if (s != DCUDA_OK)
        return s;
    if (!dcu_coll_device(st, comm) && dcu_node_gather_fits(st, size))
        return dcu_node_allgather(st, win, offset, size, data, call);
    /* My own block is in place already (others read it meanwhile). */
    dcu_local_gather(st, comm, dcu_win_slot(win), offset, size, 0, size, data, 0,
                     dcu_comm_rank(st, comm));
    return dcu_comm_barrier_any(st, comm, call);
}

/* Block me of every rank j's blocks sent into block j of my receive area
 * (after my blocks sent). */
DCU_FN_COLD dcuda_status_t dcu_local_alltoall(dcuda_state_t *st, uint32_t win, size_t offset,
                                              size_t size)
{
    static const char call[] = "dcuda_alltoall";
    char *data = 0;
    dcuda_status_t s = dcu_blocks_start(st, win, offset, size, 2, &data, call);
    int comm = dcu_win_comm(win), ranks = dcu_comm_size(st, comm), me = dcu_comm_rank(st, comm);
    if (s == DCUDA_OK)
        s = dcu_local_parts_hold(st, win, offset, dcuda_alltoall_room(ranks, size), 1u, call);
    if (s == DCUDA_OK)
        s = dcu_local_all_in(st, comm, call);
    if (s != DCUDA_OK)
        return s;
    dcu_local_gather(st, comm, dcu_win_slot(win), offset, 0, (uint64_t)me * size, size, data,
                     (size_t)ranks * size, -1);
    return dcu_comm_barrier_any(st, comm, call);
}

/* ---- one entry -------------------------------------------------------------------- */

/* Which collective dcu_local_run makes, with its datatype, op and root,
 * in one 64-bit word: one call of few arguments where each collective
 * is inlined into rank code (eight arguments at six call sites made a
 * kernel of every call spill 1,588 bytes of loads where it spilled 408). */
enum {
    DCU_LOCAL_BROADCAST = 0,
    DCU_LOCAL_ALLREDUCE = 1,
    DCU_LOCAL_REDUCE = 2,
    DCU_LOCAL_REDUCE_SCATTER = 3,
    DCU_LOCAL_ALLGATHER = 4,
    DCU_LOCAL_ALLTOALL = 5
};

/* Set in a call's args when its type or op does not fit the byte that
 * carries it: no form that takes args takes the call (the tree's checks
 * refuse it, naming the value as given). */
#define DCU_LOCAL_WIDE ((uint64_t)1 << 24)

/* A call's kind, type, op and root in one word (the local and the
 * pushed forms take it). */
DCU_FN uint64_t dcu_local_args(int kind, int type, int op, int root)
{
    const uint64_t wide = (uint32_t)type > 0xffu || (uint32_t)op > 0xffu ? DCU_LOCAL_WIDE : 0u;
    return (uint64_t)(uint32_t)kind | (uint64_t)((uint32_t)type & 0xffu) << 8 |
           (uint64_t)((uint32_t)op & 0xffu) << 16 | wide | (uint64_t)(uint32_t)root << 32;
}

/* The fields of a call's args (dcu_local_args). */
DCU_FN int dcu_args_kind(uint64_t args) { return (int)(args & 0xffu); }
DCU_FN int dcu_args_type(uint64_t args) { return (int)((args >> 8) & 0xffu); }
DCU_FN int dcu_args_op(uint64_t args) { return (int)((args >> 16) & 0xffu); }
DCU_FN int dcu_args_root(uint64_t args) { return (int)(int32_t)(args >> 32); }

/* The collective of `args` on win at offset, of n (its count or size). */
DCU_FN_COLD dcuda_status_t dcu_local_run(dcuda_state_t *st, uint32_t win, size_t offset, size_t n,
                                         uint64_t args)
{
    const int root = dcu_args_root(args), type = dcu_args_type(args), op = dcu_args_op(args);
    switch (dcu_args_kind(args)) {
    case DCU_LOCAL_BROADCAST:
        return dcu_local_broadcast(st, win, offset, n, root);
    case DCU_LOCAL_ALLREDUCE:
        return dcu_local_reduce(st, win, offset, n, type, op, 0, 0);
    case DCU_LOCAL_REDUCE:
        return dcu_local_reduce(st, win, offset, n, type, op, 1, root);
    case DCU_LOCAL_REDUCE_SCATTER:
        return dcu_local_reduce_scatter(st, win, offset, n, type, op);
    case DCU_LOCAL_ALLGATHER:
        return dcu_local_allgather(st, win, offset, n);
    default:
        return dcu_local_alltoall(st, win, offset, n);
    }
}

#endif /* DCUDA_IMPL_COLL_LOCAL_H */
