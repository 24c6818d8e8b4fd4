/*
 * RMA from the host (dcuda_host_put, dcuda_host_get and their requests;
 * docs/communicators.md, "RMA from the host").
 *
 * A global pointer (window handle, WORLD rank, offset) is resolved the way
 * a rank's checks resolve a target: the handle names a table slot, the
 * rank's process holds the table (this process's tables in rank memory,
 * a node peer's mapped here), the entry gives the part, and a peer's
 * address is translated through its mapped allocations. The bytes then
 * move on the backend's RMA copies, which finish in the order started: a
 * request is the ticket of its copy. A part of a process on the network
 * path is its owner's proxy's to check: the request goes to this
 * process's proxy (src/proxy/host_reqs.c), and ends at its answer.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "dcuda/impl/common.h"
#include "node/node.h"
#include "proxy/proxies.h"
#include "proxy/wire.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/msg.h"

/* A request's slot: the ticket of its copy (memory paths), or its
 * messages' state (the network path: net.done, which the proxy writes by
 * address: a slot never moves). Its handle names the slot, its
 * generation and the runtime (req_handle): a copy of a handle that a
 * wait or test ended names an older generation, and is refused without
 * touching the request that took the slot since. */
typedef struct dcu_req_slot {
    uint32_t gen;
    int live;
    int next_free;
    int over_net;
    uint64_t ticket;
    dcu_host_rma_t net;
} dcu_req_slot_t;

/* Slots a runtime may hold at once (the handle's 24 bits of index). */
#define REQ_SLOTS_MAX ((1 << 24) - 2)

void dcu_rma_init(dcuda_host_h h)
{
    static _Atomic uint32_t next_id;
    h->req_host_id = atomic_fetch_add(&next_id, 1u) & 0xffu;
    h->req_free = -1;
}

void dcu_rma_fini(dcuda_host_h h)
{
    for (int i = 0; i < h->req_count; i++)
        free(h->reqs[i]);
    free(h->reqs);
    h->reqs = NULL;
    h->req_count = h->req_cap = 0;
    h->req_free = -1;
}

/* The handle of slot i: generation << 32 | runtime << 24 | i + 1 (never 0,
 * so never NULL; never read through as an address). */
static dcuda_host_req_t req_handle(dcuda_host_h h, int i)
{
    uint64_t v =
        (uint64_t)h->reqs[i]->gen << 32 | (uint64_t)h->req_host_id << 24 | (uint64_t)(i + 1);
    return (dcuda_host_req_t)(uintptr_t)v;
}

/* A free slot, live (its index in *i), or NULL when none can be had. */
static dcu_req_slot_t *req_take(dcuda_host_h h, int *i)
{
    if (h->req_free < 0) {
        if (h->req_count >= REQ_SLOTS_MAX ||
            !dcu_array_room((void **)&h->reqs, h->req_count, &h->req_cap, sizeof *h->reqs))
            return NULL;
        dcu_req_slot_t *fresh = calloc(1, sizeof *fresh);
        if (!fresh)
            return NULL;
        fresh->next_free = -1;
        h->reqs[h->req_count] = fresh;
        h->req_free = h->req_count++;
    }
    *i = h->req_free;
    dcu_req_slot_t *r = h->reqs[*i];
    h->req_free = r->next_free;
    r->live = 1;
    r->over_net = 0;
    r->ticket = 0;
    return r;
}

/* Slot i ended: its handles are stale from now on. */
static void req_give(dcuda_host_h h, int i)
{
    dcu_req_slot_t *r = h->reqs[i];
    r->live = 0;
    r->gen++;
    r->next_free = h->req_free;
    h->req_free = i;
}

/* The live slot that handle `req` names, or -1 (reported) when it names
 * none of this runtime's. */
static int req_find(dcuda_host_h h, const char *call, dcuda_host_req_t req)
{
    uint64_t v = (uint64_t)(uintptr_t)req;
    int i = (int)(v & 0xffffffu) - 1;
    if (((v >> 24) & 0xffu) != h->req_host_id || i < 0 || i >= h->req_count) {
        dcu_msg_error("%s: %p is no request of this host runtime", call, (void *)req);
        return -1;
    }
    const dcu_req_slot_t *r = h->reqs[i];
    if (!r->live || r->gen != (uint32_t)(v >> 32)) {
        dcu_msg_error("%s: request %p has completed already (a copy of a handle that a wait or a "
                      "test set NULL)",
                      call, (void *)req);
        return -1;
    }
    return i;
}

/* The handle's table slot, or -1 when no window has that handle. */
static int handle_slot(uint32_t win)
{
    int comm = dcu_win_comm(win), slot = dcu_win_slot(win);
    if (win == DCUDA_WIN_NONE || (win & 0xff00f000u) != 0 || comm >= DCUDA_COMM_IDS)
        return -1;
    if (slot < dcu_win_first(comm) || slot >= dcu_win_first(comm) + dcu_win_room(comm))
        return -1;
    return slot;
}

/* The table entry of the part of WORLD rank `rank` in `slot` (a window of
 * comm), as this process reaches it; DCUDA_OK with *entry_at, or why not. */
static dcuda_status_t find_entry(dcuda_host_h h, const char *call, int comm, int slot, int rank,
                                 int *proc, const dcuda_win_entry_t **entry_at)
{
    int me = h->info.process_index;
    int p = dcu_array_range_of(h->proc_first, h->info.process_count, rank); /* rank checked */
    int first = h->proc_first[p], count = h->proc_first[p + 1] - first;
    size_t at = (size_t)slot * (size_t)count + (size_t)(rank - first);
    *proc = p;
    if (comm == DCU_COMM_DEVICE && p != me) {
        dcu_msg_error("%s: rank %d is not of this process (ranks %d to %d), and a window of "
                      "DEVICE is reached for those only",
                      call, rank, first, first + count - 1);
        return DCUDA_ERR_RANK;
    }
    if (p == me) {
        *entry_at =
            h->image.win_entries[comm == DCU_COMM_DEVICE ? DCU_COMM_DEVICE : DCU_COMM_WORLD] + at;
        return DCUDA_OK;
    }
    if (h->path[p] == DCUDA_PATH_NET) { /* its proxy checks the part */
        *entry_at = NULL;
        return DCUDA_OK;
    }
    uint64_t table = dcu_peers_local(h, p, dcu_node_proc(p)->win_world_base,
                                     (uint64_t)DCUDA_WIN_TABLE_SLOTS * (uint64_t)count *
                                         sizeof(dcuda_win_entry_t));
    if (!table) {
        dcu_msg_error("%s: the window table of process %d is not mapped here", call, p);
        return DCUDA_ERR_SYSTEM;
    }
    *entry_at = (const dcuda_win_entry_t *)(uintptr_t)table + at;
    return DCUDA_OK;
}

/* Resolves [g.offset, g.offset + size) of the part g points into: *where
 * (NULL: a part on the network path, which its owner's proxy checks). */
static dcuda_status_t resolve(dcuda_host_h h, const char *call, dcuda_gptr_t g, size_t size,
                              char **where, int *owner)
{
    *where = NULL;
    int slot = handle_slot(g.win), proc = 0;
    if (slot < 0) {
        dcu_msg_error("%s: 0x%08x is no window's handle", call, (unsigned)g.win);
        return DCUDA_ERR_WIN;
    }
    if (g.rank < 0 || g.rank >= h->info.rank_count) {
        dcu_msg_error("%s: rank %d is outside WORLD (%d ranks)", call, (int)g.rank,
                      h->info.rank_count);
        return DCUDA_ERR_RANK;
    }
    const dcuda_win_entry_t *at = NULL;
    if (g.offset + size < g.offset) {
        dcu_msg_error("%s: offset %llu + %zu bytes wraps", call, (unsigned long long)g.offset,
                      size);
        return DCUDA_ERR_OVERFLOW;
    }
    dcuda_status_t st = find_entry(h, call, dcu_win_comm(g.win), slot, g.rank, &proc, &at);
    *owner = proc;
    dcuda_win_entry_t e;
    if (st == DCUDA_OK && at)
        st = h->ops->peek(h->backend, &e, at, sizeof e);
    if (st != DCUDA_OK || !at)
        return st;
    if (e.base == 0) {
        dcu_msg_error("%s: rank %d has no part in window 0x%08x (slot %d): the window was "
                      "freed, or never created",
                      call, (int)g.rank, (unsigned)g.win, slot);
        return DCUDA_ERR_WIN;
    }
    if ((st = dcu_check_range(e.size, g.offset, size)) != DCUDA_OK) {
        dcu_msg_error("%s: bytes [%llu, +%zu) of rank %d's part of window 0x%08x, which "
                      "holds %llu",
                      call, (unsigned long long)g.offset, size, (int)g.rank, (unsigned)g.win,
                      (unsigned long long)e.size);
        return st;
    }
    uint64_t base =
        proc == h->info.process_index ? e.base : dcu_peers_local(h, proc, e.base, e.size);
    if (!base) {
        dcu_msg_error("%s: rank %d's part of window 0x%08x (0x%llx..+%llu in process %d) is not "
                      "in memory from dcuda_host_alloc, so this process cannot reach it",
                      call, (int)g.rank, (unsigned)g.win, (unsigned long long)e.base,
                      (unsigned long long)e.size, proc);
        return DCUDA_ERR_UNREACHABLE;
    }
    *where = (char *)(uintptr_t)(base + g.offset);
    return DCUDA_OK;
}

/* A run's ranks are running: DCUDA_OK; otherwise a message. */
static dcuda_status_t check_running(dcuda_host_h h, const char *call)
{
    if (dcu_host_check(h, call) != DCUDA_OK)
        return DCUDA_ERR_NOT_INITIALIZED;
    if (!h->run.started && !h->run.active) {
        dcu_msg_error("%s: no run is in flight, and windows live only while ranks run (start "
                      "one with dcuda_host_run_start)",
                      call);
        return DCUDA_ERR_WIN;
    }
    if (atomic_load(&h->rma_closed)) { /* of either kind of run */
        dcu_msg_error("%s: the ranks of the run have returned, and their windows with them", call);
        return DCUDA_ERR_WIN;
    }
    if (atomic_load_explicit(&h->lost_known, memory_order_acquire)) { /* the monitor saw it */
        dcu_msg_error("%s: %s, and the run ends", call, h->lost);
        return DCUDA_ERR_PEER;
    }
    return DCUDA_OK;
}

/* Waits for a request of the network path. */
static dcuda_status_t net_wait(const dcu_host_rma_t *n)
{
    while (!atomic_load_explicit(&n->done, memory_order_acquire))
        dcu_clock_sleep_ns(2000);
    return n->status;
}

/* A request to a rank on the network path, handed to the proxy in n. */
static dcuda_status_t over_net(dcuda_host_h h, const char *call, dcuda_gptr_t g, void *host,
                               size_t size, int put, int tag, dcu_host_rma_t *n)
{
    dcu_proxy_t *proxy = h->proxy ? dcu_proxies_first(h->proxy) : NULL;
    if (!proxy) {
        dcu_msg_error("%s: rank %d is on the network path, which this process has not opened", call,
                      (int)g.rank);
        return DCUDA_ERR_UNSUPPORTED;
    }
    memset(n, 0, sizeof *n);
    n->put = put;
    n->rank = g.rank;
    n->slot = g.win == DCUDA_WIN_NONE ? DCU_WIRE_HOST_NO_WINDOW : (uint32_t)dcu_win_slot(g.win);
    n->notify = tag < 0 ? 0u : (uint32_t)tag + 1u;
    n->offset = g.offset;
    n->size = size;
    n->host = host;
    dcu_proxy_host_submit(proxy, n);
    if (atomic_load(&h->rma_closed)) /* the run's end came first: no poll takes it now */
        dcu_proxy_host_cancel_queued(proxy, DCUDA_ERR_PEER);
    return DCUDA_OK;
}

/* A blocking call's request on the network path, waited for (without the
 * API lock: the caller owns it). */
static dcuda_status_t net_outcome(const char *call, dcuda_gptr_t g, const dcu_host_rma_t *n)
{
    dcuda_status_t st = net_wait(n);
    if (st != DCUDA_OK)
        dcu_msg_error("%s: rank %d's process refused %llu bytes at %llu of its part of window "
                      "0x%08x: %s",
                      call, (int)g.rank, (unsigned long long)n->size, (unsigned long long)g.offset,
                      (unsigned)g.win, dcuda_status_name(st));
    return st;
}

/* What a request does. */
typedef struct rma_kind {
    int put;    /* bytes to the part (else from it) */
    int notify; /* then a notification of `tag` to the part's owner */
    int alone;  /* a notification alone: no window, no bytes */
    int tag;
} rma_kind_t;

static dcuda_status_t check_tag(const char *call, rma_kind_t k)
{
    if (!k.notify || (k.tag >= 0 && k.tag < DCUDA_TAG_COUNT))
        return DCUDA_OK;
    dcu_msg_error("%s: tag %d is out of range 0..%d", call, k.tag, DCUDA_TAG_COUNT - 1);
    return DCUDA_ERR_TAG;
}

/* The process that holds WORLD rank g.rank, and the part there (NULL: a
 * notification alone, or a part on the network path). */
static dcuda_status_t locate(dcuda_host_h h, const char *call, dcuda_gptr_t g, size_t size,
                             int alone, char **part, int *proc)
{
    if (!alone)
        return resolve(h, call, g, size, part, proc);
    *part = NULL;
    if (g.rank < 0 || g.rank >= h->info.rank_count) {
        dcu_msg_error("%s: rank %d is outside WORLD (%d ranks)", call, (int)g.rank,
                      h->info.rank_count);
        return DCUDA_ERR_RANK;
    }
    *proc = dcu_array_range_of(h->proc_first, h->info.process_count, g.rank);
    return DCUDA_OK;
}

/* Starts one request: checked, resolved, copied, then the owner notified
 * of `tag` (< 0: not); its handle in *req, or waited for when req is NULL.
 * A notification alone has no window (DCUDA_WIN_NONE) and no bytes. */
static dcuda_status_t rma(dcuda_host_h h, const char *call, dcuda_gptr_t g, void *host, size_t size,
                          rma_kind_t k, dcuda_host_req_t *req)
{
    const int put = k.put, tag = k.notify ? k.tag : -1;
    dcu_host_lock();
    dcuda_status_t st = check_running(h, call);
    char *part = NULL;
    int proc = 0;
    if (st == DCUDA_OK && size && !host) {
        dcu_msg_error("%s: %s is NULL for %zu bytes", call, put ? "src" : "dst", size);
        st = DCUDA_ERR_INVALID_ARG;
    }
    if (st == DCUDA_OK)
        st = check_tag(call, k);
    if (st == DCUDA_OK)
        st = locate(h, call, g, size, k.alone, &part, &proc);
    int over = st == DCUDA_OK && h->path[proc] == DCUDA_PATH_NET && proc != h->info.process_index;
    dcu_req_slot_t *r = NULL;
    int slot = -1;
    if (st == DCUDA_OK && req && !(r = req_take(h, &slot))) {
        dcu_msg_error("%s: no room for another request (%d in flight)", call, h->req_count);
        st = DCUDA_ERR_NO_MEMORY;
    }
    if (st == DCUDA_OK && over) { /* the network path: its owner's proxy checks and copies */
        dcu_host_rma_t alone, *n = r ? &r->net : &alone;
        st = over_net(h, call, g, host, size, put, tag, n);
        if (st == DCUDA_OK && r) {
            r->over_net = 1;
            *req = req_handle(h, slot);
            r = NULL;
        }
        if (r)
            req_give(h, slot);
        dcu_host_unlock();
        return st == DCUDA_OK && !req ? net_outcome(call, g, &alone) : st;
    }
    uint64_t ticket = st == DCUDA_OK ? h->rma_last : 0u;
    if (st == DCUDA_OK && size)
        st = put ? h->ops->rma_start(h->backend, part, host, size, &ticket)
                 : h->ops->rma_start(h->backend, host, part, size, &ticket);
    if (st == DCUDA_OK && size)
        h->rma_last = ticket;
    if (st == DCUDA_OK && tag >= 0)
        st = dcu_host_note_after(h, proc, g.rank, tag, &ticket);
    if (st == DCUDA_OK) {
        h->rma_last = ticket;
        if (r) {
            r->ticket = ticket;
            *req = req_handle(h, slot);
            r = NULL;
        } else if (h->ops->rma_done(h->backend, ticket, 1) < 0) {
            st = DCUDA_ERR_BACKEND;
        }
    }
    if (r)
        req_give(h, slot);
    dcu_host_unlock();
    return st;
}

dcuda_status_t dcuda_host_put(dcuda_host_h h, dcuda_gptr_t dst, const void *src, size_t size,
                              dcuda_host_req_t *req)
{
    const rma_kind_t k = { 1, 0, 0, 0 };
    return rma(h, "dcuda_host_put", dst, (void *)(uintptr_t)src, size, k, req);
}

dcuda_status_t dcuda_host_get(dcuda_host_h h, void *dst, dcuda_gptr_t src, size_t size,
                              dcuda_host_req_t *req)
{
    const rma_kind_t k = { 0, 0, 0, 0 };
    return rma(h, "dcuda_host_get", src, dst, size, k, req);
}

dcuda_status_t dcuda_host_put_notify(dcuda_host_h h, dcuda_gptr_t dst, const void *src, size_t size,
                                     int tag, dcuda_host_req_t *req)
{
    const rma_kind_t k = { 1, 1, 0, tag };
    return rma(h, "dcuda_host_put_notify", dst, (void *)(uintptr_t)src, size, k, req);
}

dcuda_status_t dcuda_host_get_notify(dcuda_host_h h, void *dst, dcuda_gptr_t src, size_t size,
                                     int tag, dcuda_host_req_t *req)
{
    const rma_kind_t k = { 0, 1, 0, tag };
    return rma(h, "dcuda_host_get_notify", src, dst, size, k, req);
}

dcuda_status_t dcuda_host_notify(dcuda_host_h h, int rank, int tag, dcuda_host_req_t *req)
{
    const rma_kind_t k = { 1, 1, 1, tag };
    return rma(h, "dcuda_host_notify", dcuda_gptr(DCUDA_WIN_NONE, rank, 0), NULL, 0, k, req);
}

/* Completes every request started so far (the end of a run). */
void dcu_rma_settle(dcuda_host_h h)
{
    if (h->rma_last)
        (void)h->ops->rma_done(h->backend, h->rma_last, 1);
}

/* Waits for one request: its slot given back and *req NULL; its
 * outcome. A handle of another runtime, or a stale copy, is refused and
 * left alone. */
static dcuda_status_t finish_one(dcuda_host_h h, const char *call, dcuda_host_req_t *req)
{
    if (!*req)
        return DCUDA_OK;
    const int i = req_find(h, call, *req);
    if (i < 0)
        return DCUDA_ERR_INVALID_ARG;
    dcu_req_slot_t *r = h->reqs[i];
    dcuda_status_t st = DCUDA_OK;
    if (r->over_net) { /* its bytes move without the API lock (no one else takes its slot) */
        dcu_host_unlock();
        st = net_wait(&r->net);
        dcu_host_lock();
    } else if (h->ops->rma_done(h->backend, r->ticket, 1) < 0) {
        st = DCUDA_ERR_BACKEND;
    }
    req_give(h, i);
    *req = NULL;
    return st;
}

/* The requests reqs[0 .. count): with `wait`, each waited for; else done
 * only when all are (none touched otherwise). */
static dcuda_status_t complete(dcuda_host_h h, const char *call, dcuda_host_req_t *reqs,
                               size_t count, int wait, int *done)
{
    dcu_host_lock();
    dcuda_status_t st = dcu_host_check(h, call);
    if (st == DCUDA_OK && ((count && !reqs) || (!wait && !done))) {
        dcu_msg_error("%s: %s is NULL", call, reqs ? "done" : count == 1 ? "req" : "reqs");
        st = DCUDA_ERR_INVALID_ARG;
    }
    if (st == DCUDA_OK && !wait) { /* copies end in order: the newest says all */
        uint64_t newest = 0;
        int net_done = 1;
        for (size_t i = 0; i < count && st == DCUDA_OK; i++) {
            const int k = reqs[i] ? req_find(h, call, reqs[i]) : -1;
            const dcu_req_slot_t *r = k >= 0 ? h->reqs[k] : NULL;
            if (reqs[i] && !r)
                st = DCUDA_ERR_INVALID_ARG;
            else if (r && r->over_net)
                net_done &= atomic_load_explicit(&r->net.done, memory_order_acquire);
            else if (r && r->ticket > newest)
                newest = r->ticket;
        }
        *done =
            st == DCUDA_OK && net_done && (!newest || h->ops->rma_done(h->backend, newest, 0) != 0);
    }
    if (st == DCUDA_OK && (wait || *done)) {
        dcuda_status_t first = DCUDA_OK;
        for (size_t i = 0; i < count; i++) {
            dcuda_status_t one = finish_one(h, call, &reqs[i]);
            if (first == DCUDA_OK)
                first = one;
        }
        st = first;
    }
    dcu_host_unlock();
    return st;
}

dcuda_status_t dcuda_host_req_wait(dcuda_host_h h, dcuda_host_req_t *req)
{
    return complete(h, "dcuda_host_req_wait", req, 1, 1, NULL);
}

dcuda_status_t dcuda_host_req_test(dcuda_host_h h, dcuda_host_req_t *req, int *done)
{
    return complete(h, "dcuda_host_req_test", req, 1, 0, done);
}

dcuda_status_t dcuda_host_req_waitall(dcuda_host_h h, dcuda_host_req_t *reqs, size_t count)
{
    return complete(h, "dcuda_host_req_waitall", reqs, count, 1, NULL);
}

dcuda_status_t dcuda_host_req_testall(dcuda_host_h h, dcuda_host_req_t *reqs, size_t count,
                                      int *done)
{
    return complete(h, "dcuda_host_req_testall", reqs, count, 0, done);
}
