/*
 * What one process's ranks need to reach the others': every rank-visible
 * allocation is recorded with what a peer needs to map it (a memfd, a CUDA
 * IPC handle); before each run the processes publish their lists in the
 * node segment, map the peers' allocations they have not mapped yet (an
 * allocation is opened once and kept while its owner exports it), and fill
 * the tables the ranks read: one dcuda_peer_t per process and the segments
 * that translate a peer's addresses into this process's.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/boot.h"
#include "core.h"
#include "dcuda/impl/common.h"
#include "node/node.h"
#include "util/array.h"
#include "util/msg.h"

/* ---- this process's allocations ----------------------------------------- */

/* The largest allocation: no object is larger, and backends round sizes up
 * (to cache lines, pages) without wrapping below SIZE_MAX. */
#define DCU_MEM_MAX ((size_t)PTRDIFF_MAX)

dcuda_status_t dcu_mem_alloc(dcuda_host_h h, size_t size, void **ptr)
{
    if (size > DCU_MEM_MAX) {
        dcu_msg_error("dcuda_host_alloc: %zu bytes is more than an allocation can hold (at most "
                      "%zu)",
                      size, DCU_MEM_MAX);
        return DCUDA_ERR_INVALID_ARG;
    }
    if (!dcu_array_room((void **)&h->mems, h->mem_count, &h->mem_cap, sizeof *h->mems))
        return DCUDA_ERR_NO_MEMORY;
    dcu_mem_rec_t *rec = &h->mems[h->mem_count];
    memset(rec, 0, sizeof *rec);
    dcuda_status_t st = h->ops->alloc(h->backend, size, &rec->ptr, &rec->ex);
    if (st != DCUDA_OK)
        return st;
    rec->ex.serial = ++h->mem_serial;
    rec->ex.base = (uint64_t)(uintptr_t)rec->ptr;
    rec->ex.size = size;
    h->mem_count++;
    *ptr = rec->ptr;
    return DCUDA_OK;
}

/* Does another process of this node map this one's allocations? */
static int node_has_peers(void)
{
    int me = dcu_boot_rank();
    for (int p = 0; p < dcu_boot_size(); p++)
        if (p != me && dcu_boot_node(p) == dcu_boot_node(me))
            return 1;
    return 0;
}

/* The export tables hold DCUDA_MAX_SEGMENTS allocations a process: a user
 * allocation (or registration) past that is refused here, with the
 * reason, rather than failing a put later. One entry stays free for the
 * runtime's copy of the user struct until a run has made it. */
static dcuda_status_t check_room(dcuda_host_h h, const char *call)
{
    int exported = 0, own = 0;
    for (int i = 0; i < h->mem_count; i++) {
        exported += h->mems[i].ex.kind != DCU_EXPORT_NONE;
        own += h->mems[i].ex.kind != DCU_EXPORT_NONE && !h->mems[i].user;
    }
    int reserved = h->user_dev ? 0 : 1;
    if (exported + reserved < DCUDA_MAX_SEGMENTS || !node_has_peers())
        return DCUDA_OK;
    dcu_msg_error("%s: process %d has %d allocations that the other processes of its node "
                  "map, and can have at most %d (%d are the runtime's tables%s): free or "
                  "deregister one, or use fewer, larger allocations",
                  call, dcu_boot_rank(), exported, DCUDA_MAX_SEGMENTS, own,
                  reserved ? ", one is kept for the user data of dcuda_host_run" : "");
    return DCUDA_ERR_NO_MEMORY;
}

dcuda_status_t dcu_mem_alloc_user(dcuda_host_h h, size_t size, void **ptr)
{
    dcuda_status_t st = check_room(h, "dcuda_host_alloc");
    if (st == DCUDA_OK)
        st = dcu_mem_alloc(h, size, ptr);
    if (st == DCUDA_OK)
        h->mems[h->mem_count - 1].user = 1;
    return st;
}

/* Does [at, at + size) overlap a recorded allocation or registration?
 * Names it in why. (Ranges of one allocation that do not overlap may each
 * be registered: a peer opens the allocation for each, as CUDA counts.) */
static int clashes(dcuda_host_h h, uint64_t at, uint64_t size, char *why, size_t why_size)
{
    for (int i = 0; i < h->mem_count; i++) {
        const dcu_mem_rec_t *m = &h->mems[i];
        uint64_t base = m->ex.base, end = base + m->ex.size;
        if (at < end && base < at + (size ? size : 1)) {
            snprintf(why, why_size, "overlaps %s at %p (%llu bytes)",
                     m->registered ? "a registration" : "an allocation of dcuda", m->ptr,
                     (unsigned long long)m->ex.size);
            return 1;
        }
    }
    return 0;
}

dcuda_status_t dcu_mem_register(dcuda_host_h h, void *ptr, size_t size)
{
    if (!ptr || size == 0 || size > DCU_MEM_MAX || (uintptr_t)ptr > UINTPTR_MAX - size) {
        dcu_msg_error("dcuda_host_register: %zu bytes at %p: give memory (not NULL) of 1 to %zu "
                      "bytes",
                      size, ptr, DCU_MEM_MAX);
        return DCUDA_ERR_INVALID_ARG;
    }
    dcuda_status_t st = check_room(h, "dcuda_host_register");
    if (st != DCUDA_OK ||
        !dcu_array_room((void **)&h->mems, h->mem_count, &h->mem_cap, sizeof *h->mems))
        return st != DCUDA_OK ? st : DCUDA_ERR_NO_MEMORY;
    dcu_export_t ex;
    memset(&ex, 0, sizeof ex);
    st = h->ops->register_mem(h->backend, ptr, size, &ex);
    if (st != DCUDA_OK)
        return st;
    char why[160];
    uint64_t at = (uint64_t)(uintptr_t)ptr;
    if (clashes(h, at, size, why, sizeof why)) {
        dcu_msg_error("dcuda_host_register: %zu bytes at %p: %s", size, ptr, why);
        return DCUDA_ERR_INVALID_ARG;
    }
    if (ex.kind == DCU_EXPORT_NONE && node_has_peers()) {
        dcu_msg_error("dcuda_host_register: the other processes of this node cannot map memory "
                      "that the application allocated on %s ranks; allocate it with "
                      "dcuda_host_alloc",
                      h->ops->name);
        return DCUDA_ERR_UNSUPPORTED;
    }
    dcu_mem_rec_t *rec = &h->mems[h->mem_count++];
    memset(rec, 0, sizeof *rec);
    rec->ptr = ptr;
    rec->ex = ex;
    rec->ex.serial = ++h->mem_serial;
    rec->ex.base = at;
    rec->ex.size = size;
    rec->registered = 1;
    return DCUDA_OK;
}

static int find_mem(dcuda_host_h h, const void *ptr)
{
    for (int i = 0; i < h->mem_count; i++)
        if (h->mems[i].ptr == ptr)
            return i;
    return -1;
}

/* Forgets an allocation (freeing it unless the application owns it). */
void dcu_mem_free(dcuda_host_h h, void *ptr)
{
    int i = find_mem(h, ptr);
    if (i < 0)
        return;
    if (!h->mems[i].registered)
        h->ops->free(h->backend, ptr, &h->mems[i].ex);
    h->mems[i] = h->mems[--h->mem_count];
}

dcuda_status_t dcu_mem_free_user(dcuda_host_h h, void *ptr)
{
    int i = find_mem(h, ptr);
    if (i < 0 || !h->mems[i].user) {
        dcu_msg_error("dcuda_host_free: %p is not a live allocation of dcuda_host_alloc (%s)", ptr,
                      i >= 0 && h->mems[i].registered
                          ? "it is registered memory: dcuda_host_deregister it"
                          : "freed already, or never returned by it");
        return DCUDA_ERR_INVALID_ARG;
    }
    dcu_mem_free(h, ptr);
    return DCUDA_OK;
}

dcuda_status_t dcu_mem_deregister(dcuda_host_h h, void *ptr)
{
    int i = find_mem(h, ptr);
    if (i < 0 || !h->mems[i].registered) {
        dcu_msg_error("dcuda_host_deregister: %p is not registered (deregistered already, or "
                      "never given to dcuda_host_register)",
                      ptr);
        return DCUDA_ERR_INVALID_ARG;
    }
    dcu_mem_free(h, ptr);
    return DCUDA_OK;
}

/* ---- agreeing on the world ------------------------------------------------ */

/* What each process tells the others at init (one allgather). */
typedef struct agree_entry {
    int32_t rank_count;
    char backend[8];
    char kernel[52]; /* the kernel's name, cut to fit */
} agree_entry_t;

/* Every process starts the same kernel; each on its own backend (GPU
 * ranks and CPU ranks in one program reach each other through the
 * network path: they are never on one node, dcu_boot_find_nodes). */
static int same_run(const agree_entry_t *a, const agree_entry_t *b)
{
    return strncmp(a->kernel, b->kernel, sizeof a->kernel) == 0;
}

/* The path to each process: the same node's processes share memory; the
 * others are reached through the proxies. With NET_LOOPBACK every process
 * is on another node, this one too (its ranks reach each other's WORLD
 * ranks through the proxies: engine.h). */
static void choose_paths(dcuda_host_h h)
{
    int count = dcu_boot_size(), me = dcu_boot_rank();
    h->net_peers = 0;
    for (int p = 0; p < count; p++) {
        if (p == me)
            h->path[p] = h->settings.net_loopback ? DCUDA_PATH_NET : DCUDA_PATH_DEVICE;
        else if (dcu_boot_node(p) == dcu_boot_node(me))
            h->path[p] = (uint8_t)h->ops->peer_path;
        else
            h->path[p] = DCUDA_PATH_NET;
        h->net_peers += h->path[p] == DCUDA_PATH_NET;
    }
}

dcuda_status_t dcu_peers_agree(dcuda_host_h h)
{
    int count = dcu_boot_size(), me = dcu_boot_rank();
    agree_entry_t mine, *all = calloc((size_t)count, sizeof *all);
    h->proc_first = calloc((size_t)count + 1u, sizeof *h->proc_first);
    h->path = calloc((size_t)count, sizeof *h->path);
    if (!all || !h->proc_first || !h->path) {
        free(all); /* proc_first and path go with the host */
        return DCUDA_ERR_NO_MEMORY;
    }
    memset(&mine, 0, sizeof mine);
    mine.rank_count = h->info.rank_responsible;
    strncpy(mine.backend, h->ops->name, sizeof mine.backend - 1);
    strncpy(mine.kernel, h->kernel.name, sizeof mine.kernel - 1);
    dcuda_status_t st = dcu_boot_allgather(&mine, all, sizeof mine);
    int world = 0;
    for (int p = 0; st == DCUDA_OK && p < count; p++) {
        if (!same_run(&all[p], &mine)) {
            dcu_msg_error("process %d runs kernel %s on %s ranks but process %d runs kernel %s "
                          "on %s ranks: every process must start the same kernel",
                          me, mine.kernel, mine.backend, p, all[p].kernel, all[p].backend);
            st = DCUDA_ERR_BACKEND;
        }
        h->proc_first[p] = world;
        world += all[p].rank_count;
    }
    free(all);
    if (st != DCUDA_OK)
        return st;
    h->proc_first[count] = world;
    choose_paths(h);
    h->info.rank_count = world;
    h->info.rank_start = h->proc_first[me];
    h->info.node_count = dcu_boot_node_count();
    h->info.node_index = dcu_boot_node(me);
    if (dcu_node()) { /* what the node's processes tell of each other */
        dcu_node_proc_t *entry = dcu_node_proc(me);
        entry->rank_count = mine.rank_count;
        entry->world_first = h->proc_first[me];
        memcpy(entry->backend, mine.backend, sizeof entry->backend);
        snprintf(entry->kernel, sizeof entry->kernel, "%s", h->kernel.name);
    }
    return DCUDA_OK;
}

/* DCUDA_COMM_NODE: the WORLD ranks of the processes of my node, in
 * process order, in rank memory (they do not change from run to run), and
 * the NODE rank of my first rank. */
dcuda_status_t dcu_peers_node_members(dcuda_host_h h)
{
    int count = dcu_boot_size(), me = dcu_boot_rank(), node = dcu_boot_node(me);
    int32_t size = 0, first = 0;
    for (int p = 0; p < count; p++)
        if (dcu_boot_node(p) == node) {
            first = p == me ? size : first;
            size += h->proc_first[p + 1] - h->proc_first[p];
        }
    int32_t *list = malloc((size_t)size * sizeof *list + 1u);
    if (!list)
        return DCUDA_ERR_NO_MEMORY;
    int32_t n = 0;
    for (int p = 0; p < count; p++) {
        if (dcu_boot_node(p) != node)
            continue;
        for (int32_t r = h->proc_first[p]; r < h->proc_first[p + 1]; r++)
            list[n++] = r;
    }
    void *mem;
    dcuda_status_t st = dcu_mem_alloc(h, (size_t)size * sizeof *list, &mem);
    if (st == DCUDA_OK)
        st = h->ops->copy_in(h->backend, mem, list, (size_t)size * sizeof *list);
    free(list);
    if (st != DCUDA_OK)
        return st;
    h->image.node_members = (const int32_t *)mem;
    h->image.node_size = size;
    h->image.node_first = first;
    return DCUDA_OK;
}

/* ---- mapping the peers' allocations --------------------------------------- */

size_t dcu_peer_segments(void)
{
    int n = dcu_node_count();
    return n > 1 ? (size_t)n * DCUDA_MAX_SEGMENTS : 0u;
}

/* My allocations that peers map, in the node segment. Memory no peer can
 * map (the application's, on the network path) is not among them, and
 * needs not be: only the proxy writes it. */
static void publish(dcuda_host_h h)
{
    dcu_node_proc_t *mine = dcu_node_proc(dcu_boot_rank());
    int n = 0, exportable = 0;
    for (int i = 0; i < h->mem_count; i++) {
        if (h->mems[i].ex.kind == DCU_EXPORT_NONE)
            continue;
        exportable++;
        if (n < DCUDA_MAX_SEGMENTS)
            mine->exports[n++] = h->mems[i].ex;
    }
    if (n < exportable)
        dcu_msg_warn("only %d of %d allocations can be reached by other processes (at most %d)", n,
                     exportable, DCUDA_MAX_SEGMENTS);
    mine->export_count = (uint32_t)n;
    mine->notifs_base = (uint64_t)(uintptr_t)h->image.notifs;
    mine->win_world_base = (uint64_t)(uintptr_t)h->image.win_entries[0 /* WORLD */];
    mine->push_base = (uint64_t)(uintptr_t)h->node_push;
    mine->lib_base = (uint64_t)(uintptr_t)h->image.lib;
}

static dcu_import_t *find_import(dcuda_host_h h, int proc, uint64_t serial)
{
    for (int i = 0; i < h->import_count; i++)
        if (h->imports[i].proc == proc && h->imports[i].serial == serial)
            return &h->imports[i];
    return NULL;
}

static dcuda_status_t open_import(dcuda_host_h h, int proc, const dcu_export_t *e)
{
    if (!dcu_array_room((void **)&h->imports, h->import_count, &h->import_cap, sizeof *h->imports))
        return DCUDA_ERR_NO_MEMORY;
    dcu_import_t *im = &h->imports[h->import_count];
    memset(im, 0, sizeof *im);
    dcuda_status_t st = h->ops->import(h->backend, proc, e, &im->mapped);
    if (st != DCUDA_OK)
        return st;
    im->local = (char *)im->mapped + e->offset;
    im->proc = proc;
    im->serial = e->serial;
    im->base = e->base;
    im->size = e->size;
    h->import_count++;
    return DCUDA_OK;
}

/* Is allocation `serial` of process p still exported? */
static int still_exported(const dcu_node_proc_t *q, uint64_t serial)
{
    for (uint32_t k = 0; k < q->export_count; k++)
        if (q->exports[k].serial == serial)
            return 1;
    return 0;
}

/* Unmaps what peers freed, then maps what they export and is not mapped
 * yet (in that order: a new allocation may reuse a freed one's memory). */
static dcuda_status_t map_peers(dcuda_host_h h)
{
    int count = dcu_boot_size(), me = dcu_boot_rank();
    for (int i = 0; i < h->import_count;) {
        dcu_import_t *im = &h->imports[i];
        if (still_exported(dcu_node_proc(im->proc), im->serial)) {
            i++;
            continue;
        }
        h->ops->unimport(h->backend, im->mapped, im->size);
        *im = h->imports[--h->import_count];
    }
    for (int p = 0; p < count; p++) {
        if (p == me || h->path[p] == DCUDA_PATH_NET)
            continue; /* processes of other nodes map nothing of ours, nor we of theirs */
        const dcu_node_proc_t *q = dcu_node_proc(p);
        for (uint32_t k = 0; k < q->export_count; k++) {
            if (find_import(h, p, q->exports[k].serial))
                continue;
            dcuda_status_t st = open_import(h, p, &q->exports[k]);
            if (st != DCUDA_OK)
                return st;
        }
    }
    return DCUDA_OK;
}

uint64_t dcu_peers_local(dcuda_host_h h, int p, uint64_t addr, uint64_t size)
{
    for (int i = 0; i < h->import_count; i++) {
        const dcu_import_t *im = &h->imports[i];
        if (im->proc == p && addr >= im->base && addr - im->base <= im->size &&
            size <= im->size - (addr - im->base))
            return (uint64_t)(uintptr_t)im->local + (addr - im->base);
    }
    return 0;
}

static const char *path_name(uint32_t path)
{
    return path == DCUDA_PATH_SHM ? "shared memory" : "GPU peer memory";
}

/* My own allocations that the node's peers map, as they see them (at
 * most `room`): ranks of my device test their parts against them as the
 * peers do, so that every process of the node judges a part alike
 * (dcu_remote_part; the node-wide reads of coll_local.h). */
static size_t own_segments(dcuda_segment_t *segs, size_t room)
{
    if (!dcu_node())
        return 0;
    const dcu_node_proc_t *mine = dcu_node_proc(dcu_boot_rank());
    size_t n = 0;
    for (uint32_t i = 0; i < mine->export_count && n < room; i++) {
        const dcu_export_t *e = &mine->exports[i];
        segs[n++] = (dcuda_segment_t){ e->base, e->size, e->base, 0 };
    }
    return n;
}

/* Fills the peer table and the segments, and copies both to the ranks. */
static dcuda_status_t fill_tables(dcuda_host_h h)
{
    int count = dcu_boot_size(), me = dcu_boot_rank();
    /* The node's allocations (the peers', and mine as they see them): a
     * process alone has none. */
    size_t cap = dcu_peer_segments(), n = 0, own = 0;
    dcuda_segment_t *segs = calloc(cap ? cap : 1, sizeof *segs);
    dcuda_peer_t *peers = calloc((size_t)count, sizeof *peers);
    if (!segs || !peers) {
        free(segs);
        free(peers);
        return DCUDA_ERR_NO_MEMORY;
    }
    for (int p = 0; p < count; p++) {
        dcuda_peer_t *peer = &peers[p];
        memset(peer, 0, sizeof *peer);
        peer->segment_first = (uint32_t)n;
        peer->world_first = h->proc_first[p];
        peer->rank_count = h->proc_first[p + 1] - h->proc_first[p];
        peer->path = h->path[p];
        if (p == me) {
            peer->notifs = h->image.notifs;
            peer->win_world = h->image.win_entries[0 /* WORLD */];
            peer->node_push = h->node_push;
            peer->lib = h->image.lib;
            own = own_segments(segs + n, cap - n);
            n += own;
            peer->segment_count = (uint32_t)own;
            continue;
        }
        if (peer->path == DCUDA_PATH_NET) /* its counters and parts are the proxies' to reach */
            continue;
        const dcu_node_proc_t *q = dcu_node_proc(p);
        for (int i = 0; i < h->import_count && n < cap; i++) {
            const dcu_import_t *im = &h->imports[i];
            if (im->proc != p)
                continue;
            segs[n++] = (dcuda_segment_t){ im->base, im->size, (uint64_t)(uintptr_t)im->local, 0 };
        }
        peer->segment_count = (uint32_t)n - peer->segment_first;
        peer->notifs =
            (dcuda_notif_counters_t *)(uintptr_t)dcu_peers_local(h, p, q->notifs_base, 1);
        peer->win_world =
            (dcuda_win_entry_t *)(uintptr_t)dcu_peers_local(h, p, q->win_world_base, 1);
        peer->node_push =
            (DCUDA_ATOMIC(uint32_t) *)(uintptr_t)dcu_peers_local(h, p, q->push_base, 1);
        peer->lib = (dcuda_lib_part_t *)(uintptr_t)dcu_peers_local(
            h, p, q->lib_base,
            dcu_lib_bytes(h->image.world_size, h->image.node_size, peer->rank_count));
        if (!peer->notifs || !peer->win_world || !peer->node_push || !peer->lib) {
            dcu_msg_error("the tables of process %d are not mapped in process %d", p, me);
            free(segs);
            free(peers);
            return DCUDA_ERR_SYSTEM;
        }
    }
    dcuda_status_t st =
        h->ops->copy_in(h->backend, h->image.peers, peers, (size_t)count * sizeof *peers);
    if (st == DCUDA_OK && n)
        st = h->ops->copy_in(h->backend, h->image.segments, segs, n * sizeof *segs);
    free(segs);
    free(peers);
    int loop = h->path[me] == DCUDA_PATH_NET, others = h->net_peers - loop;
    if (st == DCUDA_OK && count > 1)
        dcu_msg_info("process %d reaches %d peer process(es) through %s (%zu mapped "
                     "allocations) and %d through the network",
                     me, count - 1 - others, path_name(h->ops->peer_path), n - own, others);
    if (st == DCUDA_OK && loop)
        dcu_msg_info("process %d reaches its own ranks through the network (NET_LOOPBACK=1)", me);
    return st;
}

/* WORLD barrier slots: align every process on the highest count so far
 * (equal unless a run was cut short), and start this run from there. */
static void align_node_slots(dcuda_host_h h)
{
    dcu_node_t *node = dcu_node();
    uint32_t base = 0;
    for (int l = 0; l < dcu_node_count(); l++) {
        uint32_t v = atomic_load_explicit(&node->slots[l].arrived, memory_order_acquire);
        if (l == 0 || (int32_t)(v - base) > 0)
            base = v;
    }
    atomic_store_explicit(&node->slots[dcu_node_index()].arrived, base, memory_order_release);
    h->image.node_base = base;
}

dcuda_status_t dcu_peers_exchange(dcuda_host_h h)
{
    if (dcu_boot_size() == 1)
        return fill_tables(h);
    publish(h);
    /* Every process has reset its tables, published, and ended its last run. */
    dcuda_status_t st = dcu_boot_barrier();
    if (st == DCUDA_OK)
        st = map_peers(h);
    if (st == DCUDA_OK)
        st = fill_tables(h);
    if (st == DCUDA_OK && !h->net_peers) /* with the network path, the proxies run barriers */
        align_node_slots(h);
    return st;
}

void dcu_peers_release(dcuda_host_h h)
{
    for (int i = 0; i < h->import_count; i++)
        h->ops->unimport(h->backend, h->imports[i].mapped, h->imports[i].size);
    free(h->imports);
    h->imports = NULL;
    h->import_count = h->import_cap = 0;
    free(h->proc_first);
    free(h->path);
    h->proc_first = NULL;
    h->path = NULL;
}
