/*
 * The model's arithmetic, shared by every backend and by the host: the
 * qualifiers the engine's functions carry, window handle encoding,
 * communicator sizes, routing a target to its counters and path, bounds
 * and overflow checks, and the wrap-around-safe test of counters (the
 * put's own tests, the search for the window that holds a source buffer
 * among them, are checks.h's). Pure functions over
 * the shared layouts: nothing here touches memory another rank may write.
 */
#ifndef DCUDA_IMPL_COMMON_H
#define DCUDA_IMPL_COMMON_H

#include "../dcuda_status.h"
#include "../shared/layout.h"

#if defined(__CUDACC__)
/* Usable from host and rank code (tests and probes call some on the host). */
#define DCU_HD static __host__ __device__ __forceinline__
/* Rarely taken paths stay out of line, keeping the hot path compact. */
#define DCU_HD_COLD static __host__ __device__ __noinline__
/* The engine's functions: rank code only. */
#define DCU_FN static __device__ __forceinline__
#define DCU_FN_COLD static __device__ __noinline__
#else
#define DCU_HD static inline
#if defined(__GNUC__)
#define DCU_HD_COLD __attribute__((noinline, unused)) static
#else
#define DCU_HD_COLD static
#endif
#define DCU_FN static inline
#define DCU_FN_COLD DCU_HD_COLD
#endif

/* Counters as the engine's primitives take them. */
typedef DCUDA_ATOMIC(uint32_t) dcu_u32a_t;
typedef DCUDA_ATOMIC(int32_t) dcu_i32a_t;
typedef DCUDA_ATOMIC(uint64_t) dcu_u64a_t;

/* How long a waiting rank has polled (the backend's dcu_pause paces it). */
typedef struct dcu_waiter {
    uint32_t polls;
    uint32_t sleep_ns;
} dcu_waiter_t;

/* Communicators (also in dcuda_rank.h). WORLD and DEVICE have windows;
 * NODE and the splits (impl/comm.h) are lists of WORLD ranks. */
#define DCU_COMM_WORLD 0
#define DCU_COMM_DEVICE 1
#define DCU_COMM_NODE 2

/* WORLD or DEVICE: a communicator whose ranks the paths know as they are
 * (the others are lists of WORLD ranks). */
DCU_HD int dcu_comm_valid(int comm) { return comm == DCU_COMM_WORLD || comm == DCU_COMM_DEVICE; }

/* A live communicator of this rank: WORLD, DEVICE, NODE or a live split. */
DCU_HD int dcu_comm_live(const dcuda_state_t *st, int comm)
{
    return comm >= 0 && comm < DCUDA_COMM_IDS && ((st->live_comms >> comm) & 1u);
}

DCU_HD int dcu_comm_size(const dcuda_state_t *st, int comm)
{
    return comm == DCU_COMM_WORLD    ? st->world_size
           : comm == DCU_COMM_DEVICE ? st->device_size
                                     : st->comms[comm - DCU_COMM_NODE].size;
}

DCU_HD int dcu_comm_rank(const dcuda_state_t *st, int comm)
{
    return comm == DCU_COMM_WORLD    ? st->world_rank
           : comm == DCU_COMM_DEVICE ? st->device_rank
                                     : st->comms[comm - DCU_COMM_NODE].rank;
}

/* The WORLD rank of rank `rank` (in range) of live communicator comm. */
DCU_HD int dcu_comm_world_rank(const dcuda_state_t *st, int comm, int rank)
{
    return comm == DCU_COMM_WORLD    ? rank
           : comm == DCU_COMM_DEVICE ? st->world_first + rank
                                     : st->comms[comm - DCU_COMM_NODE].members[rank];
}

/* Device rank (index into this device's tables) of a rank given in comm, or
 * -1 if that rank lives on another device, or is reached as if it did: a
 * WORLD rank of my device under NET_LOOPBACK goes through the proxies. */
DCU_HD int dcu_device_rank_of(const dcuda_state_t *st, int comm, int rank)
{
    if (comm == DCU_COMM_DEVICE)
        return rank;
    rank -= st->world_first;
    return (rank >= 0 && rank < st->device_size && !st->loopback) ? rank : -1;
}

/* NODE's size as every process of the node knows it, 0 with none. */
DCU_HD int dcu_node_size(const dcuda_state_t *st)
{
    return ((st->live_comms >> DCU_COMM_NODE) & 1u) ? st->comms[0].size : 0;
}

/* Is WORLD rank `rank` one of my device's (whatever path reaches it)? */
DCU_HD int dcu_world_rank_is_mine(const dcuda_state_t *st, int rank)
{
    return (unsigned)(rank - st->world_first) < (unsigned)st->device_size;
}

/* Process holding WORLD rank `rank` (ranks are contiguous per process, in
 * process order), or -1: a binary search of the peer table (log2 P loads
 * of memory no rank writes). Put routes remember what it finds. */
DCU_HD int dcu_process_of(const dcuda_state_t *st, int rank)
{
    if (rank < 0 || rank >= st->world_size)
        return -1;
    int lo = 0, hi = st->process_count - 1; /* peers[lo].world_first <= rank */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (st->peers[mid].world_first <= rank)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Where a notification to `rank` of comm goes: the path there (dcuda_path)
 * and its counters as this rank reaches them, or NULL if no process holds
 * it or (path DCUDA_PATH_NET) its process is reached through the proxies. */
DCU_HD dcuda_notif_counters_t *dcu_target_notifs(const dcuda_state_t *st, int comm, int rank,
                                                 uint32_t *path)
{
    int d = dcu_device_rank_of(st, comm, rank);
    *path = DCUDA_PATH_DEVICE;
    if (d >= 0)
        return &st->notifs[d];
    int p = dcu_process_of(st, rank);
    if (p < 0)
        return (dcuda_notif_counters_t *)0;
    const dcuda_peer_t *q = &st->peers[p];
    *path = q->path;
    if (*path == DCUDA_PATH_NET)
        return (dcuda_notif_counters_t *)0;
    return &q->notifs[rank - q->world_first];
}

/* Rank `rank`'s part of WORLD window slot `slot` when that rank lives in
 * another process of the node: read from that process's table and
 * translated to where this process reaches it. DCUDA_ERR_UNREACHABLE (and the part as its owner
 * sees it) if the part lies outside every allocation the owner exports. */
DCU_HD_COLD dcuda_status_t dcu_remote_part(const dcuda_state_t *st, int slot, int rank,
                                           dcuda_win_entry_t *part)
{
    int p = dcu_process_of(st, rank);
    const dcuda_peer_t *q = &st->peers[p];
    *part = q->win_world[(size_t)slot * (size_t)q->rank_count + (size_t)(rank - q->world_first)];
    if (part->size == 0)
        return DCUDA_OK;
    const dcuda_segment_t *segs = st->ctx->segments + q->segment_first;
    for (uint32_t i = 0; i < q->segment_count; i++) {
        const dcuda_segment_t *g = &segs[i];
        if (part->base >= g->owner_base && part->base - g->owner_base <= g->size &&
            part->size <= g->size - (part->base - g->owner_base)) {
            part->base = part->base - g->owner_base + g->local_base;
            return DCUDA_OK;
        }
    }
    return DCUDA_ERR_UNREACHABLE;
}

/* Whose barrier serves communicator `id` of `size` ranks `members`:
 * WORLD's when it has every rank, DEVICE's when it has exactly my
 * device's (not under NET_LOOPBACK, where puts between them go through
 * the proxies, which DEVICE's barrier does not wait for), else its own.
 * members NULL: it holds every rank of my device (NODE), so its size
 * alone tells (no reads of its list at rank init). */
DCU_HD int dcu_comm_same_barrier(const dcuda_state_t *st, int id, int size, const int32_t *members)
{
    if (size == st->world_size)
        return DCU_COMM_WORLD;
    if (size != st->device_size || st->loopback)
        return id;
    for (int i = 0; members && i < size; i++)
        if (!dcu_world_rank_is_mine(st, members[i]))
            return id;
    return DCU_COMM_DEVICE;
}

/* ---- the library's parts (shared/layout.h: dcuda_lib_part_t) --------------------- */

/* Bytes of one rank's push slots for a communicator of `ranks` ranks: a
 * slot for each member and parity, where it has 2 to
 * DCUDA_PUSH_MAX_RANKS ranks (else none: it takes no pushed collective). */
DCU_HD uint64_t dcu_push_area(int ranks)
{
    return ranks >= 2 && ranks <= DCUDA_PUSH_MAX_RANKS
               ? (uint64_t)ranks * 2u * (uint64_t)DCUDA_PUSH_SLOT
               : 0u;
}

/* Bytes of one rank's library part in a process of `device` ranks, of a
 * WORLD of `world` ranks and a NODE of `node` (0: none). */
DCU_HD uint64_t dcu_lib_stride(int world, int node, int device)
{
    return (uint64_t)sizeof(dcuda_lib_part_t) + dcu_push_area(world) + dcu_push_area(node) +
           dcu_push_area(device);
}

/* Bytes of a process's library allocation: its `device` ranks' parts,
 * then its node scratch (DCUDA_NODE_SCRATCH_BYTES). */
DCU_HD uint64_t dcu_lib_bytes(int world, int node, int device)
{
    return (uint64_t)device * dcu_lib_stride(world, node, device) +
           (uint64_t)DCUDA_NODE_SCRATCH_BYTES;
}

/* Where comm's push slots (WORLD, DEVICE or NODE) start in a part. */
DCU_HD uint64_t dcu_push_at(int comm, int world, int node)
{
    uint64_t at = (uint64_t)sizeof(dcuda_lib_part_t);
    if (comm == DCU_COMM_WORLD)
        return at;
    at += dcu_push_area(world);
    return comm == DCU_COMM_NODE ? at : at + dcu_push_area(node);
}

/* Fills the state's copies of the context (at rank init). */
DCU_HD void dcu_state_bind(dcuda_state_t *st, const dcuda_context_t *ctx, int device_rank)
{
    st->ctx = ctx;
    st->device_rank = device_rank;
    st->world_rank = ctx->world_first + device_rank;
    st->world_size = ctx->world_size;
    st->device_size = ctx->device_size;
    st->world_first = ctx->world_first;
    st->process_count = ctx->process_count;
    st->process_index = ctx->process_index;
    st->peers = ctx->peers;
    st->notifs = ctx->notifs;
    st->lib = ctx->lib;
    st->lib_stride = ctx->lib_stride;
    st->ended = 0;
    for (int c = 0; c < 3; c++)
        st->push_seq[c] = 0;
    st->push_planned = 0;
    st->inbox = ctx->net ? ctx->inbox + (size_t)device_rank * DCUDA_INBOX_ENTRIES
                         : (const dcuda_inbox_entry_t *)0;
    for (int c = 0; c < DCUDA_COMM_COUNT; c++) {
        st->win_entries[c] = ctx->win_entries[c];
        st->barrier_epoch[c] = 0;
        st->live_windows[c] = 0;
    }
    for (int i = 0; i < DCUDA_PUT_ROUTES; i++)
        st->routes[i].win = DCUDA_WIN_NONE;
    st->atomic_route.win = DCUDA_WIN_NONE;
    st->push_memo.win = DCUDA_WIN_NONE;
    st->net_part_win = DCUDA_WIN_NONE;
    st->net_part_rank = -1;
    st->loopback = ctx->peers[ctx->process_index].path == DCUDA_PATH_NET;

    st->net_part_size = 0;
    st->timer_next = 0;
    st->cmd_tag = 0;
    st->cmd_consumed = 0; /* the command ring starts empty */
    st->cmd = ctx->cmd;
    st->cmd_tail = ctx->cmd_tail;
    st->cmd_rank = device_rank;
    st->net_unfenced = 0;
    st->live_comms = (1u << DCU_COMM_WORLD) | (1u << DCU_COMM_DEVICE);
    for (int c = 0; c < DCUDA_COMM_IDS - DCU_COMM_NODE; c++)
        st->comms[c].live_windows = 0;
    if (ctx->node_members) {
        dcuda_comm_info_t *node = &st->comms[DCU_COMM_NODE - DCU_COMM_NODE];
        node->size = ctx->node_size;
        node->rank = ctx->node_first + device_rank;
        node->members = ctx->node_members;
        node->barrier = dcu_comm_same_barrier(st, DCU_COMM_NODE, node->size, (const int32_t *)0);
        st->live_comms |= 1u << DCU_COMM_NODE;
    }
    if (ctx->proxy_lanes > 1) { /* my lane's ring, my number there */
        int lanes = (int)ctx->proxy_lanes, lane = lanes - 1;
        while (lane > 0 && DCUDA_LANE_FIRST(ctx->device_size, lane, lanes) > device_rank)
            lane--;
        st->cmd = ctx->cmd_lanes[lane];
        st->cmd_tail = ctx->cmd_lane_tails[lane];
        st->cmd_rank = device_rank - DCUDA_LANE_FIRST(ctx->device_size, lane, lanes);
    }
}

DCU_HD uint32_t dcu_win_encode(int comm, int slot, uint32_t gen)
{
    return (uint32_t)slot | ((uint32_t)comm << DCUDA_WIN_COMM_SHIFT) |
           ((gen & 0xffu) << DCUDA_WIN_GEN_SHIFT);
}

DCU_HD int dcu_win_slot(uint32_t win) { return (int)(win & ((1u << DCUDA_WIN_SLOT_BITS) - 1u)); }

DCU_HD int dcu_win_comm(uint32_t win) { return (int)((win >> DCUDA_WIN_COMM_SHIFT) & 0xfu); }

DCU_HD uint32_t dcu_win_gen(uint32_t win) { return (win >> DCUDA_WIN_GEN_SHIFT) & 0xffu; }

/* Rank `rank`'s part of WORLD window `win` when that rank lives in a
 * process on the network path: its size as the proxy last told this rank
 * (dcu_net_part_fetch; no address of it is used here), or 0 if the proxy
 * has told of another part since. */
DCU_HD dcuda_win_entry_t dcu_net_part(const dcuda_state_t *st, int slot, int rank)
{
    dcuda_win_entry_t part = { 0u, 0u };
    if (st->net_part_win != DCUDA_WIN_NONE && dcu_win_slot(st->net_part_win) == slot &&
        st->net_part_rank == rank)
        part.size = st->net_part_size;
    return part;
}

/* Window slots. WORLD's and DEVICE's windows take slots 0..63 of their
 * own tables; those of NODE and the splits take DCUDA_COMM_WINDOWS slots
 * each of WORLD's table, after WORLD's own, so their parts are reached as
 * WORLD's are on every path (the proxies and the wire know table slots
 * only). A handle carries the table slot. */
DCU_HD int dcu_win_first(int comm)
{
    return comm < DCU_COMM_NODE ? 0
                                : DCUDA_MAX_WINDOWS + (comm - DCU_COMM_NODE) * DCUDA_COMM_WINDOWS;
}

DCU_HD int dcu_win_room(int comm)
{
    return comm < DCU_COMM_NODE ? DCUDA_MAX_WINDOWS : DCUDA_COMM_WINDOWS;
}

/* Bit per live window of comm, from its first slot. */
DCU_HD uint64_t dcu_win_mask(const dcuda_state_t *st, int comm)
{
    return comm < DCU_COMM_NODE ? st->live_windows[comm]
                                : (uint64_t)st->comms[comm - DCU_COMM_NODE].live_windows;
}

/* Is table slot `slot` a live window of comm (< DCUDA_COMM_IDS)? */
DCU_HD int dcu_win_live(const dcuda_state_t *st, int comm, int slot)
{
    int i = slot - dcu_win_first(comm);
    return i >= 0 && i < dcu_win_room(comm) && ((dcu_win_mask(st, comm) >> i) & 1u);
}

/* The generation of comm's table slot `slot` (one of comm's). */
DCU_HD uint8_t *dcu_win_gen_of(dcuda_state_t *st, int comm, int slot)
{
    return comm < DCU_COMM_NODE
               ? &st->win_gen[comm][slot]
               : &st->comms[comm - DCU_COMM_NODE].win_gen[slot - dcu_win_first(comm)];
}

/* Marks comm's table slot `slot` live or free. */
DCU_HD void dcu_win_mark(dcuda_state_t *st, int comm, int slot, int live)
{
    int i = slot - dcu_win_first(comm);
    if (comm < DCU_COMM_NODE)
        st->live_windows[comm] = live ? st->live_windows[comm] | (uint64_t)1 << i
                                      : st->live_windows[comm] & ~((uint64_t)1 << i);
    else {
        uint32_t *m = &st->comms[comm - DCU_COMM_NODE].live_windows;
        *m = live ? *m | 1u << i : *m & ~(1u << i);
    }
}

/* Is `win` a live window of this rank? Reserved bits must be zero. */
DCU_HD dcuda_status_t dcu_check_win(const dcuda_state_t *st, uint32_t win)
{
    int slot = dcu_win_slot(win), comm = dcu_win_comm(win);
    if (win == DCUDA_WIN_NONE || (win & 0xff00f000u) != 0 || !dcu_comm_live(st, comm) ||
        !dcu_win_live(st, comm, slot))
        return DCUDA_ERR_WIN;
    if (*dcu_win_gen_of((dcuda_state_t *)st, comm, slot) != (uint8_t)dcu_win_gen(win))
        return DCUDA_ERR_WIN;
    return DCUDA_OK;
}

/* Lowest free window slot of a communicator (a table slot), or -1. */
DCU_HD int dcu_free_slot(const dcuda_state_t *st, int comm)
{
    uint64_t live = dcu_win_mask(st, comm);
    for (int i = 0; i < dcu_win_room(comm); i++)
        if (!((live >> i) & 1u))
            return dcu_win_first(comm) + i;
    return -1;
}

/* The part of rank `rank` (of comm) in table slot `slot`, for a rank of
 * this process: both tables hold this process's ranks only, WORLD's by
 * WORLD rank - world_first, so a table grows with the process, not the
 * job. A rank of NODE or a split is looked up by its WORLD rank. */
DCU_HD dcuda_win_entry_t *dcu_win_entry(const dcuda_state_t *st, int comm, int slot, int rank)
{
    if (comm == DCU_COMM_DEVICE)
        return &st->win_entries[DCU_COMM_DEVICE]
                               [(size_t)slot * (size_t)st->device_size + (size_t)rank];
    int world = dcu_comm_world_rank(st, comm, rank);
    return &st->win_entries[DCU_COMM_WORLD][(size_t)slot * (size_t)st->device_size +
                                            (size_t)(world - st->world_first)];
}

/* My own part of comm's table slot `slot`. */
DCU_HD dcuda_win_entry_t *dcu_my_win_entry(const dcuda_state_t *st, int comm, int slot)
{
    return dcu_win_entry(st, comm == DCU_COMM_DEVICE ? comm : DCU_COMM_WORLD, slot,
                         comm == DCU_COMM_DEVICE ? st->device_rank : st->world_rank);
}

DCU_HD dcuda_put_route_t *dcu_route(const dcuda_state_t *st, uint32_t win, int rank)
{
    return (dcuda_put_route_t *)&st->routes[(win * 5u + (uint32_t)rank) & (DCUDA_PUT_ROUTES - 1)];
}

/* Forgets the routes to or from window slot `slot` of comm (at its free). */
DCU_HD void dcu_routes_drop(dcuda_state_t *st, int comm, int slot)
{
    uint32_t freed = ((uint32_t)comm << 8) | (uint32_t)slot;
    for (int i = 0; i < DCUDA_PUT_ROUTES; i++) {
        uint32_t w = st->routes[i].win;
        if (w != DCUDA_WIN_NONE && ((w & 0xfffu) == freed || st->routes[i].src_slot == freed))
            st->routes[i].win = DCUDA_WIN_NONE;
    }
    if (st->atomic_route.win != DCUDA_WIN_NONE && (st->atomic_route.win & 0xfffu) == freed)
        st->atomic_route.win = DCUDA_WIN_NONE;
    if (st->net_part_win != DCUDA_WIN_NONE && (st->net_part_win & 0xfffu) == freed)
        st->net_part_win = DCUDA_WIN_NONE;
    if (st->push_memo.win != DCUDA_WIN_NONE && (st->push_memo.win & 0xfffu) == freed)
        st->push_memo.win = DCUDA_WIN_NONE;
}

/* Window creation, before its barrier: my part of slot `slot` of comm is
 * [base, base + size) (an empty part when the arguments were refused). */
DCU_HD void dcu_win_publish(const dcuda_state_t *st, int comm, int slot, uint64_t base,
                            uint64_t size)
{
    dcuda_win_entry_t *mine = dcu_my_win_entry(st, comm, slot);
    mine->base = base;
    mine->size = size;
}

/* Window creation, after its barrier: the slot is live; its handle. */
DCU_HD uint32_t dcu_win_adopt(dcuda_state_t *st, int comm, int slot)
{
    uint8_t gen = ++*dcu_win_gen_of(st, comm, slot);
    dcu_win_mark(st, comm, slot, 1);
    return dcu_win_encode(comm, slot, gen);
}

/* Window free, after its barrier: the slot and its routes go, and my part
 * too when `everywhere` (the other ranks passed the barrier as well). */
DCU_HD void dcu_win_forget(dcuda_state_t *st, int comm, int slot, int everywhere)
{
    if (everywhere)
        dcu_win_publish(st, comm, slot, 0, 0);
    dcu_win_mark(st, comm, slot, 0);
    dcu_routes_drop(st, comm, slot);
}

/* Does [addr, addr + size) lie inside [base, base + part_size)? Every
 * test is evaluated (no short-circuit): the put's fast path uses it. */
DCU_HD int dcu_inside(uint64_t base, uint64_t part_size, uint64_t addr, uint64_t size)
{
    return (addr >= base) & (addr - base <= part_size) & (size <= part_size - (addr - base));
}

/* Does [offset, offset + size) lie inside a window part of `win_size` bytes? */
DCU_HD dcuda_status_t dcu_check_range(uint64_t win_size, uint64_t offset, uint64_t size)
{
    if (offset + size < offset)
        return DCUDA_ERR_OVERFLOW;
    if (!dcu_inside(0, win_size, offset, size))
        return DCUDA_ERR_BOUNDS;
    return DCUDA_OK;
}

/* Are `count` notifications ready, given arrivals and consumptions counted
 * modulo 2^32? Safe across wrap-around while fewer than 2^31 are pending. */
DCU_HD int dcu_notifs_ready(uint32_t arrived, uint32_t consumed, uint32_t count)
{
    return (int32_t)(arrived - (consumed + count)) >= 0;
}

/* Has a growing barrier counter reached its target (modulo 2^32)? */
DCU_HD int dcu_reached(uint32_t value, uint32_t target) { return (int32_t)(value - target) >= 0; }

/* A tag the engine counts: the user's, or the library's after them. */
DCU_HD int dcu_tag_valid(int tag) { return tag >= 0 && tag < DCUDA_TAG_SLOTS; }
/* A tag rank code may name (the public calls refuse the library's). */
DCU_HD int dcu_user_tag(int tag) { return tag >= 0 && tag < DCUDA_TAG_COUNT; }

#endif /* DCUDA_IMPL_COMMON_H */
