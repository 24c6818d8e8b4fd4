/*
 * The shared tables of one device: allocates the layouts of
 * dcuda/shared/ in rank-visible or mapped memory through the backend,
 * resets them before each run, and reads the timer slots back afterwards.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "dcuda/impl/common.h"
#include "node/node.h"
#include "util/msg.h"

/* Bytes of a ring head (a counter on a cache line of its own). */
#define HEAD_BYTES 64

/* A window table: this process's ranks' parts of each window slot (the
 * parts of other processes are theirs to keep). WORLD's holds the windows
 * of NODE and of the splits too (DCUDA_WIN_TABLE_SLOTS). */
static size_t win_table_slots(int comm)
{
    return comm == 0 /* WORLD */ ? DCUDA_WIN_TABLE_SLOTS : DCUDA_MAX_WINDOWS;
}

static size_t win_table_bytes(int comm, int ranks)
{
    return win_table_slots(comm) * (size_t)ranks * sizeof(dcuda_win_entry_t);
}

static dcuda_status_t alloc_peer_tables(dcuda_host_h h)
{
    dcuda_context_t *c = &h->image;
    size_t procs = (size_t)c->process_count;
    void *p;
    dcuda_status_t st = dcu_mem_alloc(h, procs * sizeof(dcuda_peer_t), &p);
    if (st != DCUDA_OK)
        return st;
    c->peers = (dcuda_peer_t *)p;
    size_t segments = dcu_peer_segments();
    if (segments && (st = dcu_mem_alloc(h, segments * sizeof(dcuda_segment_t), &p)))
        return st;
    c->segments = segments ? (dcuda_segment_t *)p : NULL;
    c->node_slots = h->node_rank ? ((dcu_node_t *)h->node_rank)->slots : NULL;
    c->node_deadlock = h->node_rank ? &((dcu_node_t *)h->node_rank)->deadlocked : NULL;
    return DCUDA_OK;
}

/* WORLD ranks beyond which a process keeps no node-wide table of parts
 * (64 MiB of it; 64 processes of 8,192 CPU ranks would need 512 MiB
 * each), and the node's collectives take their trees. */
#define NODE_PARTS_MAX_RANKS 65536

/* One node of several processes without a network path: the node-wide
 * parts of WORLD windows, which the collectives read (coll_local.h;
 * none with NODE_READS=0, and the collectives take their trees). */
static dcuda_status_t alloc_node_parts(dcuda_host_h h)
{
    dcuda_context_t *c = &h->image;
    void *p;
    dcuda_status_t st;
    if (c->net || c->process_count < 2 || !h->settings.node_reads)
        return DCUDA_OK;
    if (c->world_size > NODE_PARTS_MAX_RANKS) {
        dcu_msg_info("%d WORLD ranks on one node: WORLD collectives take their trees (the "
                     "node's reads keep a table of at most %d ranks' parts)",
                     c->world_size, NODE_PARTS_MAX_RANKS);
        return DCUDA_OK;
    }
    size_t entries = (size_t)DCUDA_MAX_WINDOWS * (size_t)c->world_size;
    if ((st = dcu_mem_alloc(h, entries * sizeof(dcuda_win_entry_t), &p)))
        return st;
    c->node_parts = (dcuda_win_entry_t *)p;
    if ((st = dcu_mem_alloc(h, DCUDA_MAX_WINDOWS * sizeof(uint32_t), &p)))
        return st;
    c->node_unreachable = (DCUDA_ATOMIC(uint32_t) *)p;
    return DCUDA_OK;
}

/* The ranks' member lists of splits (impl/comm.h): one a rank and split
 * id, each as long as the largest parent a split may have: WORLD, within
 * COMM_LISTS_BYTES a process (but at least COMM_LIST_MIN_RANKS). */
#define COMM_LISTS_BYTES ((size_t)64 << 20)
#define COMM_LIST_MIN_RANKS 256

static dcuda_status_t alloc_comm_lists(dcuda_host_h h)
{
    dcuda_context_t *c = &h->image;
    void *p;
    size_t fit = COMM_LISTS_BYTES / ((size_t)c->device_size *
                                     (DCUDA_COMM_IDS - DCUDA_COMM_FIRST_SPLIT) * sizeof(int32_t));
    fit = fit < COMM_LIST_MIN_RANKS ? COMM_LIST_MIN_RANKS : fit;
    c->comm_list_cap = (size_t)c->world_size < fit ? c->world_size : (int32_t)fit;
    size_t entries = (size_t)c->device_size * (DCUDA_COMM_IDS - DCUDA_COMM_FIRST_SPLIT) *
                     (size_t)c->comm_list_cap;
    dcuda_status_t st = dcu_mem_alloc(h, entries * sizeof(int32_t), &p);
    c->comm_lists = st == DCUDA_OK ? (int32_t *)p : NULL;
    return st;
}

/* With a process on the network path: each rank's inbox and how far it
 * consumed it (mapped: the proxy writes one, the rank the other). */
static dcuda_status_t alloc_mapped_inboxes(dcuda_host_h h)
{
    dcuda_context_t *c = &h->image;
    size_t ranks = (size_t)c->device_size;
    void *hp, *dp;
    dcuda_status_t st;
    if (!c->net)
        return DCUDA_OK;
    st = h->ops->alloc_mapped(h->backend, ranks * DCUDA_INBOX_ENTRIES * sizeof(dcuda_inbox_entry_t),
                              &hp, &dp);
    if (st != DCUDA_OK)
        return st;
    h->inbox_h = (dcuda_inbox_entry_t *)hp;
    c->inbox = (dcuda_inbox_entry_t *)dp;
    size_t tail_bytes = (ranks * sizeof(uint32_t) + HEAD_BYTES - 1u) / HEAD_BYTES * HEAD_BYTES;
    if ((st = h->ops->alloc_mapped(h->backend, tail_bytes, &hp, &dp)))
        return st;
    h->inbox_tail_h = (DCUDA_ATOMIC(uint32_t) *)hp;
    c->inbox_tail = (DCUDA_ATOMIC(uint32_t) *)dp;
    return DCUDA_OK;
}

static dcuda_status_t alloc_tables(dcuda_host_h h)
{
    dcuda_context_t *c = &h->image;
    void *p;
    dcuda_status_t st;
    if ((st = dcu_mem_alloc(h, (size_t)c->device_size * sizeof(dcuda_notif_counters_t), &p)))
        return st;
    c->notifs = (dcuda_notif_counters_t *)p;
    if ((st = dcu_mem_alloc(h, DCUDA_COMM_COUNT * sizeof(dcuda_barrier_t), &p)))
        return st;
    c->barriers = (dcuda_barrier_t *)p;
    for (int comm = 0; comm < DCUDA_COMM_COUNT; comm++) {
        if ((st = dcu_mem_alloc(h, win_table_bytes(comm, c->device_size), &p)))
            return st;
        c->win_entries[comm] = (dcuda_win_entry_t *)p;
    }
    if ((st = dcu_mem_alloc(h, DCUDA_MAX_TIMERS * sizeof(dcuda_timer_slot_t), &p)))
        return st;
    c->timers = (dcuda_timer_slot_t *)p;
    if ((st = dcu_mem_alloc(h, HEAD_BYTES, &p)))
        return st;
    c->log.head = (DCUDA_ATOMIC(uint32_t) *)p;
    if ((st = dcu_mem_alloc(h, sizeof(dcuda_error_record_t), &p)))
        return st;
    c->error = (dcuda_error_record_t *)p;
    if ((st = dcu_mem_alloc(h, HEAD_BYTES, &p)))
        return st;
    c->cmd.head = (DCUDA_ATOMIC(uint32_t) *)p;
    if ((st = dcu_mem_alloc(h, DCUDA_MAX_NODE_PROCESSES * sizeof(uint32_t), &p)))
        return st;
    h->node_push = (DCUDA_ATOMIC(uint32_t) *)p;
    if ((st = alloc_peer_tables(h)) || (st = alloc_node_parts(h)) ||
        (st = dcu_peers_node_members(h)) || (st = alloc_comm_lists(h)))
        return st;
    /* The library's parts of my ranks (window slot DCUDA_LIB_SLOT) and
     * the node scratch after them: the other processes of the node map
     * them; the proxy serves puts into the parts as into a window's. */
    uint64_t stride = dcu_lib_stride(c->world_size, c->node_size, c->device_size);
    c->lib_stride = (uint32_t)stride;
    if ((st = dcu_mem_alloc(h, (size_t)dcu_lib_bytes(c->world_size, c->node_size, c->device_size),
                            &p)))
        return st;
    c->lib = (dcuda_lib_part_t *)p;
    if ((st = dcu_mem_alloc(h, (size_t)c->device_size * DCUDA_TAG_COUNT * sizeof(uint32_t), &p)))
        return st;
    c->to_host_sent = (uint32_t *)p;
    return dcu_mem_alloc(h, sizeof(dcuda_context_t), (void **)&h->dev_ctx);
}

static dcuda_status_t alloc_mapped_tables(dcuda_host_h h)
{
    const dcu_backend_ops_t *ops = h->ops;
    dcu_backend_t *b = h->backend;
    dcuda_context_t *c = &h->image;
    void *hp, *dp;
    dcuda_status_t st;
    if ((st = ops->alloc_mapped(b, (size_t)c->device_size * sizeof(dcuda_rank_status_t), &hp, &dp)))
        return st;
    h->status_h = (dcuda_rank_status_t *)hp;
    c->rank_status = (dcuda_rank_status_t *)dp;
    if ((st = ops->alloc_mapped(b, (size_t)c->device_size * sizeof(dcuda_tag_counts_t), &hp, &dp)))
        return st;
    h->consumed_seen_h = (dcuda_tag_counts_t *)hp;
    c->consumed_seen = (dcuda_tag_counts_t *)dp;
    if ((st = ops->alloc_mapped(b, HEAD_BYTES, &hp, &dp)))
        return st;
    h->cancel_h = (DCUDA_ATOMIC(uint32_t) *)hp;
    c->cancel = (DCUDA_ATOMIC(uint32_t) *)dp;
    if ((st = ops->alloc_mapped(b, c->log.capacity * sizeof(dcuda_log_entry_t), &hp, &dp)))
        return st;
    h->log_h = (dcuda_log_entry_t *)hp;
    c->log.entries = (dcuda_log_entry_t *)dp;
    if ((st = ops->alloc_mapped(b, c->cmd.capacity * sizeof(dcuda_cmd_t), &hp, &dp)))
        return st;
    h->cmd_h = (dcuda_cmd_t *)hp;
    c->cmd.entries = (dcuda_cmd_t *)dp;
    if ((st = ops->alloc_mapped(b, (size_t)c->device_size * sizeof(dcuda_cmd_reply_t), &hp, &dp)))
        return st;
    h->replies_h = (dcuda_cmd_reply_t *)hp;
    c->replies = (dcuda_cmd_reply_t *)dp;
    if ((st = ops->alloc_mapped(b, HEAD_BYTES, &hp, &dp)))
        return st;
    h->cmd_tail_h = (DCUDA_ATOMIC(uint32_t) *)hp;
    c->cmd_tail = (DCUDA_ATOMIC(uint32_t) *)dp;
    if ((st = ops->alloc_mapped(b, HEAD_BYTES, &hp, &dp)))
        return st;
    h->net_barrier_h = (DCUDA_ATOMIC(uint32_t) *)hp;
    c->net_barrier = (DCUDA_ATOMIC(uint32_t) *)dp;
    if ((st = ops->alloc_mapped(b, (size_t)c->device_size * sizeof(dcuda_to_host_t), &hp, &dp)))
        return st;
    h->to_host_h = (dcuda_to_host_t *)hp;
    c->to_host = (dcuda_to_host_t *)dp;
    dcu_host_wait_run_end(h); /* counts from 0 (and again after each run) */
    return alloc_mapped_inboxes(h);
}

/* Entries of a command ring of `ranks` ranks (a power of two; core.h says
 * how many). */
static uint32_t cmd_ring_entries(const dcuda_context_t *c, int32_t ring_ranks)
{
    uint64_t ranks = (uint64_t)ring_ranks, wanted = ranks;
    uint32_t entries = c->net ? DCU_CMD_NET_ENTRIES : DCU_CMD_ENTRIES;
    if (c->net) {
        wanted = ranks * DCU_CMD_NET_ENTRIES_A_RANK;
        wanted = wanted < DCU_CMD_NET_ENTRIES_MAX ? wanted : DCU_CMD_NET_ENTRIES_MAX;
        wanted = wanted > ranks ? wanted : ranks;
    }
    while (entries < wanted)
        entries *= 2;
    return entries;
}

/* Proxy lanes: the command ring of every lane after the first (the
 * first's is cmd), sized for its ranks. */
static dcuda_status_t alloc_lane_rings(dcuda_host_h h)
{
    dcuda_context_t *c = &h->image;
    const uint32_t lanes = c->proxy_lanes;
    c->cmd_lanes[0] = c->cmd;
    c->cmd_lane_tails[0] = c->cmd_tail;
    h->lane_cmd_h[0] = h->cmd_h;
    h->lane_tail_h[0] = h->cmd_tail_h;
    for (uint32_t l = 1; l < lanes; l++) {
        int32_t ranks = DCUDA_LANE_FIRST(c->device_size, l + 1, lanes) -
                        DCUDA_LANE_FIRST(c->device_size, l, lanes);
        dcuda_ring_t *r = &c->cmd_lanes[l];
        void *p, *hp, *dp;
        dcuda_status_t st;
        *r = c->cmd;
        r->capacity = cmd_ring_entries(c, ranks);
        if ((st = dcu_mem_alloc(h, HEAD_BYTES, &p)))
            return st;
        r->head = (DCUDA_ATOMIC(uint32_t) *)p;
        if ((st = h->ops->alloc_mapped(h->backend, r->capacity * sizeof(dcuda_cmd_t), &hp, &dp)))
            return st;
        h->lane_cmd_h[l] = (dcuda_cmd_t *)hp;
        r->entries = dp;
        if ((st = h->ops->alloc_mapped(h->backend, HEAD_BYTES, &hp, &dp)))
            return st;
        h->lane_tail_h[l] = (DCUDA_ATOMIC(uint32_t) *)hp;
        c->cmd_lane_tails[l] = (DCUDA_ATOMIC(uint32_t) *)dp;
    }
    return DCUDA_OK;
}

static void free_lane_rings(dcuda_host_h h)
{
    dcuda_context_t *c = &h->image;
    for (int l = 1; l < DCUDA_MAX_PROXY_LANES; l++) {
        if (c->cmd_lanes[l].head)
            dcu_mem_free(h, (void *)c->cmd_lanes[l].head);
        if (h->lane_cmd_h[l])
            h->ops->free_mapped(h->backend, h->lane_cmd_h[l]);
        if (h->lane_tail_h[l])
            h->ops->free_mapped(h->backend, (void *)h->lane_tail_h[l]);
        h->lane_cmd_h[l] = NULL;
        h->lane_tail_h[l] = NULL;
    }
    h->lane_cmd_h[0] = NULL;
    h->lane_tail_h[0] = NULL;
}

/* A ring's descriptor before its memory is allocated. */
static void ring_describe(dcuda_ring_t *r, uint32_t capacity, size_t entry_size, uint32_t version)
{
    r->capacity = capacity;
    r->entry_size = (uint16_t)entry_size;
    r->version = (uint16_t)version;
}

dcuda_status_t dcu_context_create(dcuda_host_h h)
{
    dcuda_context_t *c = &h->image;
    memset(c, 0, sizeof *c);
    c->magic = DCUDA_CONTEXT_MAGIC;
    c->version = DCUDA_LAYOUT_VERSION;
    c->world_size = h->info.rank_count;
    c->world_first = h->info.rank_start;
    c->device_size = h->info.rank_responsible;
    c->device_index = h->info.device_index;
    c->process_count = h->info.process_count;
    c->process_index = h->info.process_index;
    c->notif_start = (uint32_t)h->settings.notif_start;
    c->net = h->net_peers > 0;
    c->shared_bytes = h->shared_bytes;
    c->on_error =
        strcmp(h->settings.on_error, "abort") == 0 ? DCUDA_ON_ERROR_ABORT : DCUDA_ON_ERROR_CONTINUE;
    ring_describe(&c->log, (uint32_t)h->settings.log_entries, sizeof(dcuda_log_entry_t),
                  DCUDA_LOG_RING_VERSION);
    c->proxy_lanes = (uint32_t)h->proxy_lanes; /* dcu_proxies_fit: 1 or more */
    ring_describe(&c->cmd, cmd_ring_entries(c, c->device_size), sizeof(dcuda_cmd_t),
                  DCUDA_CMD_RING_VERSION);
    dcuda_status_t st = alloc_tables(h);
    if (st == DCUDA_OK)
        st = alloc_mapped_tables(h);
    if (st == DCUDA_OK)
        st = alloc_lane_rings(h);
    if (st != DCUDA_OK) {
        dcu_msg_error("cannot allocate the shared tables of %d ranks: %s", c->device_size,
                      dcuda_status_string(st));
        dcu_context_destroy(h);
    }
    return st;
}

void dcu_context_destroy(dcuda_host_h h)
{
    const dcu_backend_ops_t *ops = h->ops;
    dcuda_context_t *c = &h->image;
    free_lane_rings(h);
    void *dev[] = { c->notifs,
                    c->barriers,
                    c->win_entries[0],
                    c->win_entries[1],
                    c->timers,
                    (void *)c->log.head,
                    (void *)c->cmd.head,
                    c->error,
                    h->dev_ctx,
                    h->user_dev,
                    c->peers,
                    c->segments,
                    c->node_parts,
                    (void *)c->node_unreachable,
                    c->lib,
                    c->to_host_sent };
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            dcu_mem_free(h, dev[i]);
    void *mapped[] = { h->status_h,
                       h->consumed_seen_h,
                       (void *)h->cancel_h,
                       h->log_h,
                       h->cmd_h,
                       h->replies_h,
                       (void *)h->cmd_tail_h,
                       (void *)h->net_barrier_h,
                       h->inbox_h,
                       (void *)h->inbox_tail_h,
                       h->to_host_h };
    for (size_t i = 0; i < sizeof mapped / sizeof mapped[0]; i++)
        if (mapped[i])
            ops->free_mapped(h->backend, mapped[i]);
    memset(c, 0, sizeof *c);
    h->dev_ctx = NULL;
    h->user_dev = NULL;
    h->user_capacity = 0;
    h->status_h = NULL;
    h->consumed_seen_h = NULL;
    h->log_h = NULL;
    h->cmd_h = NULL;
    h->replies_h = NULL;
    h->cancel_h = NULL;
    h->cmd_tail_h = NULL;
    h->net_barrier_h = NULL;
    h->inbox_h = NULL;
    h->inbox_tail_h = NULL;
    h->to_host_h = NULL;
}

/* Copies `count` copies of the `elem_size` bytes at elem to rank memory. */
static dcuda_status_t fill_rank_memory(dcuda_host_h h, void *dst, const void *elem,
                                       size_t elem_size, size_t count)
{
    size_t bytes = elem_size * count;
    char *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return DCUDA_ERR_NO_MEMORY;
    for (size_t i = 0; i < count; i++)
        memcpy(tmp + i * elem_size, elem, elem_size);
    dcuda_status_t st = h->ops->copy_in(h->backend, dst, tmp, bytes);
    free(tmp);
    return st;
}

static dcuda_status_t reset_rank_tables(dcuda_host_h h)
{
    dcuda_context_t *c = &h->image;
    uint32_t start = c->notif_start;
    dcuda_timer_slot_t timer;
    memset(&timer, 0, sizeof timer);
    timer.start_ns = UINT64_MAX;
    static const dcuda_win_entry_t no_window;
    static const dcuda_barrier_t barrier;
    static const uint32_t zero[16];
    static const dcuda_error_record_t no_error;
    dcuda_status_t st;
    const uint32_t count[2] = { start, 0u }; /* the ranks' from `start`, the host's from 0 */
    if ((st = fill_rank_memory(h, c->notifs, count, sizeof count,
                               (size_t)c->device_size * DCUDA_TAG_SLOTS)) ||
        (st = fill_rank_memory(h, c->barriers, &barrier, sizeof barrier, DCUDA_COMM_COUNT)) ||
        (st = fill_rank_memory(h, c->win_entries[0], &no_window, sizeof no_window,
                               win_table_slots(0) * (size_t)c->device_size)) ||
        (st = fill_rank_memory(h, c->win_entries[1], &no_window, sizeof no_window,
                               win_table_slots(1) * (size_t)c->device_size)) ||
        (st = fill_rank_memory(h, c->timers, &timer, sizeof timer, DCUDA_MAX_TIMERS)))
        return st;
    static const uint32_t none_sent = 0;
    if ((st = fill_rank_memory(h, c->to_host_sent, &none_sent, sizeof none_sent,
                               (size_t)c->device_size * DCUDA_TAG_COUNT)))
        return st;
    static const uint32_t no_win = DCUDA_WIN_NONE;
    if (c->node_unreachable && (st = fill_rank_memory(h, (void *)c->node_unreachable, &no_win,
                                                      sizeof no_win, DCUDA_MAX_WINDOWS)))
        return st;
    dcu_backend_t *b = h->backend;
    if ((st = h->ops->copy_in(b, c->error, &no_error, sizeof no_error)) ||
        (st = h->ops->copy_in(b, (void *)c->cmd.head, zero, sizeof zero)))
        return st;
    for (uint32_t l = 1; l < c->proxy_lanes; l++)
        if ((st = h->ops->copy_in(b, (void *)c->cmd_lanes[l].head, zero, sizeof zero)))
            return st;
    return h->ops->copy_in(b, (void *)c->log.head, zero, sizeof zero);
}

/* The watchdog's view, the cancel flag and the replies to commands; the
 * rings' entries and the proxy's counts are reset by their consumers
 * (monitor, proxy) when the run starts. */
static void reset_mapped_tables(dcuda_host_h h)
{
    memset(h->status_h, 0, (size_t)h->image.device_size * sizeof(dcuda_rank_status_t));
    /* A rank numbers its commands from 1 again each run: a reply the last
     * run left must not match one of this run's (seq 0 matches none). */
    memset(h->replies_h, 0, (size_t)h->image.device_size * sizeof(dcuda_cmd_reply_t));
    *h->cancel_h = 0;
}

static dcuda_status_t stage_user_data(dcuda_host_h h, const void *user, size_t user_size)
{
    if (user_size > h->user_capacity) {
        if (h->user_dev)
            dcu_mem_free(h, h->user_dev);
        h->user_dev = NULL;
        h->user_capacity = 0;
        dcuda_status_t st = dcu_mem_alloc(h, user_size, &h->user_dev);
        if (st != DCUDA_OK)
            return st;
        h->user_capacity = user_size;
    }
    h->image.user_data = user_size ? h->user_dev : NULL;
    h->image.user_size = user_size;
    return user_size ? h->ops->copy_in(h->backend, h->user_dev, user, user_size) : DCUDA_OK;
}

dcuda_status_t dcu_context_reset(dcuda_host_h h, const void *user, size_t user_size)
{
    dcuda_status_t st = reset_rank_tables(h);
    if (st == DCUDA_OK)
        st = stage_user_data(h, user, user_size);
    if (st != DCUDA_OK)
        return st;
    reset_mapped_tables(h);
    h->image.run_mark = dcu_node_run_mark();
    return DCUDA_OK;
}

dcuda_status_t dcu_context_collect_timers(dcuda_host_h h)
{
    dcuda_timer_slot_t slots[DCUDA_MAX_TIMERS];
    dcuda_status_t st = h->ops->copy_out(h->backend, slots, h->image.timers, sizeof slots);
    if (st != DCUDA_OK)
        return st;
    uint32_t ranks = (uint32_t)h->image.device_size;
    h->timing_count = 0;
    for (int i = 0; i < DCUDA_MAX_TIMERS; i++) {
        const dcuda_timer_slot_t *t = &slots[i];
        if (t->starts == 0 && t->stops == 0)
            break;
        if (t->starts != ranks || t->stops != ranks) {
            dcu_msg_warn("timer %d: started by %u and stopped by %u of %u ranks; timers are "
                         "collective over the ranks of a device",
                         i, (unsigned)t->starts, (unsigned)t->stops, (unsigned)ranks);
            break;
        }
        h->timings[h->timing_count++] = (double)(t->stop_ns - t->start_ns) / 1e6;
    }
    return DCUDA_OK;
}
