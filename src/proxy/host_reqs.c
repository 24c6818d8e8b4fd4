/*
 * RMA from the host over the network path (see proxy.h, wire.h and
 * docs/communicators.md, "RMA from the host").
 *
 * The asking side: the host runtime hands a request to its proxy, which
 * sends it at its next poll, as HOST_PUT chunks or one HOST_GET to the
 * process of the part's owner, and ends it at the owner's HOST_DONE (a
 * get's bytes come before it, in HOST_DATA chunks the proxy copies into
 * the host's memory). Messages of a pair keep their order, so the
 * requests of one host reach an owner in the order they were made.
 *
 * The owner's side: the proxy checks the request against the part as the
 * owner rank's table holds it now (a freed window's part is empty), and a
 * refusal is the request's answer, not a failure of the run; it writes or
 * reads the bytes with the backend's copies and waits for each, so that a
 * get after a put reads what the put wrote, and answers. The ranks take
 * no part: their inboxes see none of it.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_impl.h"
#include "util/clock.h"

/* The process (of the network path's numbering) that holds WORLD rank r. */
static int holder(const dcu_proxy_t *p, int32_t r)
{
    int lo = 0, hi = p->c.process_count - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (p->c.proc_first[mid] <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static void end_request(dcu_host_rma_t *r, dcuda_status_t st)
{
    r->status = st;
    atomic_store_explicit(&r->done, 1, memory_order_release);
}

void dcu_proxy_host_submit(dcu_proxy_t *p, dcu_host_rma_t *r)
{
    r->received = 0;
    atomic_store_explicit(&r->done, 0, memory_order_relaxed);
    r->next = atomic_load_explicit(&p->host_queue, memory_order_relaxed);
    /* seq_cst, as the take: a host that hands one over and then finds the
     * run closed, or the drain that takes the queue after closing it, sees
     * it (core/host_rma.c). */
    while (!atomic_compare_exchange_weak_explicit(&p->host_queue, &r->next, r, memory_order_seq_cst,
                                                  memory_order_relaxed)) {
    }
}

/* ---- the asking side ---------------------------------------------------------------- */

/* A message of request r to process q: bytes [at, at + n) of it (a put's
 * bytes follow the request), sent. 0 once the proxy failed. */
static int send_host(dcu_proxy_t *p, int q, uint8_t type, const dcu_host_rma_t *r, uint64_t at,
                     uint64_t n)
{
    const dcu_wire_host_t w = { r->id, r->offset, r->size };
    size_t bytes = type == DCU_WIRE_HOST_PUT ? (size_t)n : 0u;
    dcu_wire_header_t *h = dcu_proxy_message_to(p, q, type, sizeof w + bytes);
    if (!h)
        return 0;
    h->src_rank = p->world_first;
    h->dst_rank = r->rank;
    h->slot = r->slot;
    h->offset = r->offset + at;
    h->count = n;
    memcpy(h + 1, &w, sizeof w);
    if (bytes)
        memcpy((char *)(h + 1) + sizeof w, (const char *)r->host + at, bytes);
    dcu_proxy_send_to(p, q, h);
    return 1;
}

/* A put goes in chunks (one, of 0 bytes, for an empty one: the owner
 * checks it all the same), a get as one ask. */
static void send_request(dcu_proxy_t *p, dcu_host_rma_t *r)
{
    int q = holder(p, r->rank);
    if (!r->put) {
        (void)send_host(p, q, DCU_WIRE_HOST_GET, r, 0, r->size);
        return;
    }
    uint64_t at = 0;
    do {
        uint64_t n = r->size - at < DCU_NET_PUT_CHUNK ? r->size - at : DCU_NET_PUT_CHUNK;
        if (!send_host(p, q, DCU_WIRE_HOST_PUT, r, at, n))
            return;
        at += n;
    } while (at < r->size);
}

/* Why requests end early now (DCUDA_OK: they do not). */
static dcuda_status_t ending(const dcu_proxy_t *p)
{
    uint32_t cancel = atomic_load_explicit(p->c.cancel, memory_order_acquire);
    if (p->failure[0] || cancel == DCUDA_CANCEL_PEER)
        return DCUDA_ERR_PEER;
    return cancel != DCUDA_CANCEL_NONE ? DCUDA_ERR_ABORTED : DCUDA_OK;
}

/* The requests handed over, oldest first. */
static dcu_host_rma_t *take_queue(dcu_proxy_t *p)
{
    dcu_host_rma_t *newest = atomic_exchange_explicit(&p->host_queue, NULL, memory_order_seq_cst);
    dcu_host_rma_t *oldest = NULL;
    while (newest) {
        dcu_host_rma_t *r = newest;
        newest = r->next;
        r->next = oldest;
        oldest = r;
    }
    return oldest;
}

void dcu_proxy_host_cancel_queued(dcu_proxy_t *p, dcuda_status_t status)
{
    for (dcu_host_rma_t *r = take_queue(p), *next; r; r = next) {
        next = r->next;
        end_request(r, status);
    }
}

void dcu_proxy_host_end_all(dcu_proxy_t *p, dcuda_status_t status)
{
    dcu_proxy_host_cancel_queued(p, status);
    for (dcu_host_rma_t *r = p->host_pending, *next; r; r = next) {
        next = r->next;
        end_request(r, status);
    }
    p->host_pending = NULL;
}

int dcu_proxy_host_serve(dcu_proxy_t *p)
{
    if (!atomic_load_explicit(&p->host_queue, memory_order_relaxed) && !p->host_pending)
        return 0;
    dcuda_status_t end = ending(p);
    if (end != DCUDA_OK) {
        dcu_proxy_host_end_all(p, end);
        return 1;
    }
    dcu_host_rma_t *r = take_queue(p);
    int did = r != NULL;
    while (r && !p->failure[0]) {
        dcu_host_rma_t *next = r->next;
        r->id = ++p->host_ids;
        r->next = p->host_pending;
        p->host_pending = r; /* before its answer can come */
        send_request(p, r);
        r = next;
    }
    for (dcu_host_rma_t *next; r; r = next) { /* the proxy failed meanwhile */
        next = r->next;
        end_request(r, DCUDA_ERR_PEER);
    }
    return did;
}

/* My pending request `id` (unlinked when `take`), or NULL: one that ended
 * early (its answer is dropped). */
static dcu_host_rma_t *pending(dcu_proxy_t *p, uint64_t id, int take)
{
    for (dcu_host_rma_t **at = &p->host_pending; *at; at = &(*at)->next)
        if ((*at)->id == id) {
            dcu_host_rma_t *r = *at;
            if (take)
                *at = r->next;
            return r;
        }
    return NULL;
}

static void apply_data(dcu_proxy_t *p, int from, const dcu_wire_header_t *h,
                       const dcu_wire_host_t *w, const char *bytes)
{
    dcu_host_rma_t *r = pending(p, w->id, 0);
    if (!r)
        return;
    if (r->put || w->total != r->size || holder(p, r->rank) != from) {
        dcu_proxy_fail(p,
                       "process %d answered request %llu of this host with bytes it did not "
                       "ask for",
                       from, (unsigned long long)w->id);
        return;
    }
    memcpy((char *)r->host + h->offset, bytes, (size_t)h->count);
    r->received += h->count;
}

static void apply_done(dcu_proxy_t *p, int from, const dcu_wire_header_t *h,
                       const dcu_wire_host_t *w)
{
    dcu_host_rma_t *r = pending(p, w->id, 1);
    if (!r)
        return;
    dcuda_status_t st = (dcuda_status_t)(-(int32_t)h->tag);
    if (holder(p, r->rank) != from || (st == DCUDA_OK && !r->put && r->received != r->size)) {
        dcu_proxy_fail(p, "process %d ended request %llu of this host before its bytes came", from,
                       (unsigned long long)w->id);
        st = DCUDA_ERR_PEER;
    }
    end_request(r, st);
}

/* ---- the owner's side --------------------------------------------------------------- */

/* The part of my rank h->dst_rank in window h->slot as its table holds it
 * now, and whether the request's bytes lie in it: DCUDA_OK and its base,
 * or the refusal the asker gets. */
static dcuda_status_t host_part(dcu_proxy_t *p, const dcu_wire_header_t *h,
                                const dcu_wire_host_t *w, uint64_t *base)
{
    int r = h->dst_rank - p->world_first;
    if (r < 0 || r >= p->c.ranks) {
        dcu_proxy_fail(p, "a host's request from process %d for rank %d, which is not mine",
                       h->src_proc, h->dst_rank);
        return DCUDA_ERR_PEER;
    }
    size_t stride = (size_t)(p->c.own_stride ? p->c.own_stride : p->c.ranks);
    dcuda_win_entry_t e;
    if (p->c.ops->peek(p->c.backend, &e, p->c.own_table + (size_t)h->slot * stride + (size_t)r,
                       sizeof e) != DCUDA_OK)
        return DCUDA_ERR_BACKEND;
    if (e.base == 0)
        return DCUDA_ERR_WIN;
    if (w->first > e.size || w->total > e.size - w->first)
        return DCUDA_ERR_BOUNDS;
    *base = e.base;
    return DCUDA_OK;
}

/* A copy of the backend's, waited for: write (into rank memory) or read. */
static dcuda_status_t copy_now(dcu_proxy_t *p, int write, void *dst, const void *src, size_t n)
{
    uint64_t ticket = 0;
    dcuda_status_t st = write ? p->c.ops->write_start(p->c.backend, dst, src, n, &ticket)
                              : p->c.ops->read_start(p->c.backend, dst, src, n, &ticket);
    int done = 0;
    while (st == DCUDA_OK && (done = write ? p->c.ops->write_done(p->c.backend, ticket)
                                           : p->c.ops->read_done(p->c.backend, ticket)) == 0) {
    }
    return st != DCUDA_OK ? st : done < 0 ? DCUDA_ERR_BACKEND : DCUDA_OK;
}

static void answer_done(dcu_proxy_t *p, int from, const dcu_wire_header_t *h,
                        const dcu_wire_host_t *w, dcuda_status_t st)
{
    const dcu_wire_host_t a = { w->id, 0u, 0u };
    dcu_wire_header_t *m = dcu_proxy_message_to(p, from, DCU_WIRE_HOST_DONE, sizeof a);
    if (!m)
        return;
    m->src_rank = h->dst_rank;
    m->dst_rank = h->src_rank;
    m->tag = (uint32_t)(-(int32_t)st);
    memcpy(m + 1, &a, sizeof a);
    dcu_proxy_send_to(p, from, m);
}

/* A chunk of a host's put: written unless refused; its last chunk answered. */
static void serve_put(dcu_proxy_t *p, int from, const dcu_wire_header_t *h,
                      const dcu_wire_host_t *w, const char *bytes)
{
    uint64_t base = 0;
    dcuda_status_t st = host_part(p, h, w, &base);
    if (st == DCUDA_OK && h->count)
        st = copy_now(p, 1, (void *)(uintptr_t)(base + h->offset), bytes, (size_t)h->count);
    if (h->offset + h->count == w->first + w->total && !p->failure[0])
        answer_done(p, from, h, w, st);
}

/* A host's get: read and sent back chunk by chunk, then answered. */
static void serve_get(dcu_proxy_t *p, int from, const dcu_wire_header_t *h,
                      const dcu_wire_host_t *w)
{
    uint64_t base = 0;
    dcuda_status_t st = host_part(p, h, w, &base);
    for (uint64_t at = 0, n; st == DCUDA_OK && at < h->count && !p->failure[0]; at += n) {
        n = h->count - at < DCU_NET_PUT_CHUNK ? h->count - at : DCU_NET_PUT_CHUNK;
        const dcu_wire_host_t a = { w->id, 0u, w->total };
        dcu_wire_header_t *m = dcu_proxy_message_to(p, from, DCU_WIRE_HOST_DATA, sizeof a + n);
        if (!m)
            return;
        m->src_rank = h->dst_rank;
        m->dst_rank = h->src_rank;
        m->offset = at;
        m->count = n;
        memcpy(m + 1, &a, sizeof a);
        st = copy_now(p, 0, (char *)(m + 1) + sizeof a,
                      (const void *)(uintptr_t)(base + h->offset + at), (size_t)n);
        dcu_proxy_send_to(p, from, m); /* made: it goes (refused by the status after) */
    }
    if (!p->failure[0])
        answer_done(p, from, h, w, st);
}

void dcu_proxy_apply_host(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body)
{
    dcu_wire_host_t w;
    memcpy(&w, body, sizeof w);
    const char *bytes = body + sizeof w;
    switch (h->type) {
    case DCU_WIRE_HOST_PUT:
        serve_put(p, from, h, &w, bytes);
        break;
    case DCU_WIRE_HOST_GET:
        serve_get(p, from, h, &w);
        break;
    case DCU_WIRE_HOST_DATA:
        apply_data(p, from, h, &w, bytes);
        break;
    default: /* DCU_WIRE_HOST_DONE */
        apply_done(p, from, h, &w);
        break;
    }
}
