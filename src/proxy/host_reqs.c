/*
 * RMA from the host over the network path (see proxy.h, wire.h and
 * docs/communicators.md, "RMA from the host").
 *
 * The asking side: the host runtime hands a request to its proxy, which
 * sends it in chunks of at most DCU_NET_PUT_CHUNK, oldest request first,
 * to the process of the part's owner: HOST_PUT chunks carrying the bytes,
 * or HOST_GET chunks. The owner answers each chunk (a get's with its
 * bytes in HOST_DATA first) with HOST_DONE, and the bytes of chunks sent
 * and not yet answered stay below HOST_WINDOW: a large request streams
 * over polls instead of filling the heap. A request ends at the answer of
 * its last chunk, or at the first refusal. Messages of a pair keep their
 * order and requests go out in order, so requests to one owner are
 * carried out in the order they were made.
 *
 * The owner's side (host_serve.c) answers each chunk once its bytes
 * moved, in the order the chunks arrived.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "service.h"
#include "util/array.h"
#include "util/msg.h"

/* Bytes of a host's chunks in flight from one proxy at most. */
#ifndef DCU_HOST_WINDOW_CHUNKS
#define DCU_HOST_WINDOW_CHUNKS 4u
#endif
#define HOST_WINDOW (DCU_HOST_WINDOW_CHUNKS * DCU_NET_PUT_CHUNK)

/* The process (of the network path's numbering) that holds WORLD rank r
 * (a rank of WORLD: the host checked it, the wire did for answers). */
static int holder(const dcu_proxy_t *p, int32_t r)
{
    return dcu_array_range_of(p->c.proc_first, p->c.process_count, r);
}

static void end_request(dcu_host_rma_t *r, dcuda_status_t st)
{
    r->status = st;
    atomic_store_explicit(&r->done, 1, memory_order_release);
}

void dcu_proxy_host_submit(dcu_proxy_t *p, dcu_host_rma_t *r)
{
    r->sent = r->answered = r->received = 0;
    r->started = 0;
    atomic_store_explicit(&r->done, 0, memory_order_relaxed);
    /* seq_cst, as the take: a host that hands one over and then finds the
     * run closed, or the drain that takes the queue after closing it, sees
     * it (core/host_rma.c). */
    r->next = atomic_load_explicit(&p->host_queue, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&p->host_queue, &r->next, r, memory_order_seq_cst,
                                                  memory_order_relaxed)) {
    }
}

/* ---- the asking side ---------------------------------------------------------------- */

/* The chunk of request r at `at` (n bytes) to process q: a put's bytes
 * follow the request, a get asks for them. 0 once the proxy failed. */
static int send_chunk(dcu_proxy_t *p, int q, const dcu_host_rma_t *r, uint64_t at, uint64_t n)
{
    const dcu_wire_host_t w = { r->id, r->offset, r->size };
    size_t bytes = r->put ? (size_t)n : 0u;
    dcu_wire_header_t *h = dcu_proxy_message_to(
        p, q, r->put ? DCU_WIRE_HOST_PUT : DCU_WIRE_HOST_GET, sizeof w + bytes);
    if (!h)
        return 0;
    h->src_rank = p->world_first;
    h->dst_rank = r->rank;
    h->slot = r->slot;
    h->offset = r->offset + at;
    h->count = n;
    h->tag = at + n == r->size ? r->notify : 0u; /* a notification goes with the last */
    memcpy(h + 1, &w, sizeof w);
    if (bytes)
        memcpy((char *)(h + 1) + sizeof w, (const char *)r->host + at, bytes);
    dcu_proxy_send_to(p, q, h);
    return 1;
}

/* Sends r's next chunks while the window has room (an empty request: one
 * chunk of 0 bytes, which the owner checks all the same): 1 once all of
 * it went. */
static int send_chunks(dcu_proxy_t *p, dcu_host_rma_t *r)
{
    int q = holder(p, r->rank);
    while (!r->started || r->sent < r->size) {
        uint64_t n = r->size - r->sent < DCU_NET_PUT_CHUNK ? r->size - r->sent : DCU_NET_PUT_CHUNK;
        if (p->host_in_flight && p->host_in_flight + n > HOST_WINDOW)
            return 0;
        if (!send_chunk(p, q, r, r->sent, n))
            return 0;
        r->started = 1;
        r->sent += n;
        p->host_in_flight += n;
    }
    return 1;
}

/* Why requests end early now (DCUDA_OK: they do not). */
static dcuda_status_t ending(const dcu_proxy_t *p)
{
    uint32_t cancel = atomic_load_explicit(p->c.cancel, memory_order_acquire);
    if (p->failure[0] || p->host_closed || cancel == DCUDA_CANCEL_PEER)
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
    p->host_pending = p->host_last = NULL;
    p->host_in_flight = 0;
}

static int host_serve(dcu_proxy_t *p)
{
    if (!atomic_load_explicit(&p->host_queue, memory_order_relaxed) && !p->host_pending)
        return 0;
    dcuda_status_t end = ending(p);
    if (end != DCUDA_OK) {
        dcu_proxy_host_end_all(p, end);
        return 1;
    }
    int did = 0;
    for (dcu_host_rma_t *r = take_queue(p), *next; r; r = next) {
        next = r->next;
        r->id = ++p->host_ids;
        r->next = NULL;
        if (p->host_last)
            p->host_last->next = r;
        else
            p->host_pending = r;
        p->host_last = r;
        did = 1;
    }
    for (dcu_host_rma_t *r = p->host_pending; r && !p->failure[0]; r = r->next) {
        uint64_t before = r->sent;
        int was_started = r->started, all = send_chunks(p, r);
        did |= r->sent != before || r->started != was_started;
        if (!all)
            break; /* in order: the next waits for this one's chunks */
    }
    return did;
}

/* My pending request `id`, or NULL: one that ended early (what it still
 * gets is dropped). */
static dcu_host_rma_t *pending(dcu_proxy_t *p, uint64_t id, dcu_host_rma_t **before)
{
    dcu_host_rma_t *prev = NULL;
    for (dcu_host_rma_t *r = p->host_pending; r; prev = r, r = r->next)
        if (r->id == id) {
            *before = prev;
            return r;
        }
    return NULL;
}

/* Ends pending request r (after `before` in the list): its chunks still
 * on the way leave the window. */
static void finish(dcu_proxy_t *p, dcu_host_rma_t *r, dcu_host_rma_t *before, dcuda_status_t st)
{
    if (before)
        before->next = r->next;
    else
        p->host_pending = r->next;
    if (p->host_last == r)
        p->host_last = before;
    p->host_in_flight -= r->sent - r->answered;
    end_request(r, st);
}

static void apply_data(dcu_proxy_t *p, int from, const dcu_wire_header_t *h,
                       const dcu_wire_host_t *w, const char *bytes)
{
    dcu_host_rma_t *before, *r = pending(p, w->id, &before);
    if (!r)
        return;
    if (r->put || w->total != r->size || holder(p, r->rank) != from ||
        h->offset + h->count > r->sent) {
        dcu_proxy_fail(p,
                       "process %d answered request %llu of this host with bytes it did not "
                       "ask for",
                       from, (unsigned long long)w->id);
        return;
    }
    memcpy((char *)r->host + h->offset, bytes, (size_t)h->count);
    r->received += h->count;
}

/* A chunk's answer (its bytes at h->offset, h->count of the part): a
 * refusal ends the request, the last chunk's answer completes it. */
static void apply_done(dcu_proxy_t *p, int from, const dcu_wire_header_t *h,
                       const dcu_wire_host_t *w)
{
    dcu_host_rma_t *before, *r = pending(p, w->id, &before);
    if (!r)
        return;
    dcuda_status_t st = (dcuda_status_t)(-(int32_t)h->tag);
    if (holder(p, r->rank) != from || h->count > r->sent - r->answered) {
        dcu_proxy_fail(p,
                       "process %d answered request %llu of this host for a chunk it did not "
                       "send",
                       from, (unsigned long long)w->id);
        return;
    }
    r->answered += h->count;
    p->host_in_flight -= h->count;
    if (st == DCUDA_OK && !r->put && r->received != r->answered)
        st = DCUDA_ERR_PEER; /* the owner answered a chunk whose bytes did not come */
    if (st != DCUDA_OK || (r->started && r->answered == r->size))
        finish(p, r, before, st);
}

static void apply_host(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body)
{
    dcu_wire_host_t w;
    memcpy(&w, body, sizeof w);
    const char *bytes = body + sizeof w;
    switch (h->type) {
    case DCU_WIRE_HOST_PUT:
    case DCU_WIRE_HOST_GET:
        dcu_proxy_serve_host_chunk(p, from, h, body);
        break;
    case DCU_WIRE_HOST_DATA:
        apply_data(p, from, h, &w, bytes);
        break;
    default: /* DCU_WIRE_HOST_DONE */
        apply_done(p, from, h, &w);
        break;
    }
}

/* ---- the service ------------------------------------------------------------------------ */

/* The run's end: the chunks in hand served (drain: their answers go with
 * the rest); once what was sent left, the requests still waiting ended
 * (their owners did not answer in the run) and later ones end at once. */
static void host_close(dcu_proxy_t *p)
{
    p->host_closed = 1;
    dcu_proxy_host_end_all(p, DCUDA_ERR_PEER);
}

static void host_reset(dcu_proxy_t *p)
{
    dcu_proxy_host_end_all(p, DCUDA_ERR_PEER); /* none is left after a drain */
    p->host_closed = 0;
}

const dcu_proxy_service_t dcu_proxy_svc_host = {
    .name = "host",
    .messages = DCU_SVC_BIT(DCU_WIRE_HOST_PUT) | DCU_SVC_BIT(DCU_WIRE_HOST_GET) |
                DCU_SVC_BIT(DCU_WIRE_HOST_DATA) | DCU_SVC_BIT(DCU_WIRE_HOST_DONE),
    .on_message = apply_host,
    .serve = host_serve,
    .progress = dcu_proxy_host_chunks_advance, /* the chunks of hosts' requests moved on */
    .drain = dcu_proxy_host_chunks_settle,
    .close = host_close,
    .reset = host_reset,
};
