/*
 * RMA from the host over the network path, the owner's side (the asking
 * side: host_reqs.c; docs/communicators.md, "RMA from the host"): the
 * chunks of hosts' requests for my ranks' parts, served in the order
 * they arrived. The ranks take no part: their inboxes see none of it.
 *
 * Each chunk is checked when it arrives against the part as the owner
 * rank's table holds it now (a freed window's part is empty); a refusal
 * is the chunk's answer, not a failure of the run.
 *
 * A chunk of DCUDA_NET_READ_MIN bytes or more takes the remote path's
 * staging, as the ranks' large puts and gets do (bulk.c, inbox.c): a
 * put's bytes stay in the pinned receive buffer they arrived in (spares.h)
 * while the backend's copy engine writes them into rank memory, and a
 * get's are read by it into a pinned get buffer and sent from there. The
 * proxy serves everything else meanwhile, and receives the next chunks
 * while the copies run. A smaller chunk is copied synchronously at its
 * turn, as is a staged one that finds no receive buffer to keep.
 *
 * Order. Copies of one kind overlap (the engine ends them in the order
 * they started); a get's read starts only once every put before it was
 * written, a put's write only once every get before it was read, and a
 * chunk is answered, and its notification noted, only after every chunk
 * before it. So a get after a put reads what the put wrote, and a
 * notification follows the bytes of every earlier request.
 */
#include <stdlib.h>
#include <string.h>

#include "proxy_impl.h"
#include "util/clock.h"
#include "util/msg.h"

enum { CHUNK_WAITING = 0, CHUNK_MOVING };

/* A chunk of a host's request, from its arrival to its answer. */
typedef struct host_chunk {
    struct host_chunk *next;
    dcu_wire_header_t h;
    dcu_wire_host_t w;
    int from;
    dcuda_status_t st; /* the check's verdict when it arrived */
    uint64_t base;     /* the part's, when st is DCUDA_OK */
    const char *bytes; /* a put's: in a kept receive buffer */
    void *kept;        /* the spares' token for that buffer, or NULL */
    int state;
    int buffer; /* a staged get's, in p->gets */
    uint64_t ticket;
} host_chunk_t;

static int is_put(const host_chunk_t *c) { return c->h.type == DCU_WIRE_HOST_PUT; }

/* Does chunk c take the staging (its bytes copied by the copy engine)? */
static int staged(const host_chunk_t *c)
{
    return c->st == DCUDA_OK && c->h.count >= DCUDA_NET_READ_MIN;
}

/* ---- the check, the answer, the notification ------------------------------------ */

/* The part of my rank h->dst_rank in window h->slot as its table holds it
 * now, and whether the request's bytes lie in it: DCUDA_OK and its base,
 * or the refusal the asker gets. */
static dcuda_status_t host_part(dcu_proxy_t *p, const dcu_wire_header_t *h,
                                const dcu_wire_host_t *w, uint64_t *base)
{
    int r = h->dst_rank - p->world_first;
    *base = 0;
    if (r < 0 || r >= p->c.ranks) {
        dcu_proxy_fail(p, "a host's request from process %d for rank %d, which is not mine",
                       h->src_proc, h->dst_rank);
        return DCUDA_ERR_PEER;
    }
    if (h->slot == DCU_WIRE_HOST_NO_WINDOW) /* a notification alone: no bytes */
        return DCUDA_OK;
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

/* The notification a host's request carries (h->tag), once its bytes
 * moved: a note for my host thread, which writes the host's half of the
 * rank's count. One lost because my ranks returned is a warning, as the
 * host runtime's own (core/host_notes.c): no rank can wait for it. */
static void notify_owner(dcu_proxy_t *p, const dcu_wire_header_t *h)
{
    if (!h->tag || !p->c.notes)
        return;
    dcu_note_t n = { atomic_load_explicit(&p->c.notes->run, memory_order_acquire),
                     h->dst_rank - p->c.notes_first, h->tag - 1u, 0u };
    if (dcu_notes_add(p->c.notes, n) != 0)
        dcu_msg_warn("a host's notification of tag %u to rank %d was lost: this process took "
                     "no notes (its run ended)",
                     h->tag - 1u, h->dst_rank);
}

/* The answer to chunk c, its notification first once its bytes moved. */
static void answer(dcu_proxy_t *p, const host_chunk_t *c)
{
    if (c->st == DCUDA_OK)
        notify_owner(p, &c->h);
    if (p->failure[0])
        return;
    const dcu_wire_host_t a = { c->w.id, 0u, 0u };
    dcu_wire_header_t *m = dcu_proxy_message_to(p, c->from, DCU_WIRE_HOST_DONE, sizeof a);
    if (!m)
        return;
    m->src_rank = c->h.dst_rank;
    m->dst_rank = c->h.src_rank;
    m->offset = c->h.offset;
    m->count = c->h.count;
    m->tag = (uint32_t)(-(int32_t)c->st);
    memcpy(m + 1, &a, sizeof a);
    dcu_proxy_send_to(p, c->from, m);
}

/* Fills h as the HOST_DATA message of get chunk c (its bytes after the
 * request). */
static void data_header(const dcu_proxy_t *p, const host_chunk_t *c, dcu_wire_header_t *h)
{
    const dcu_wire_host_t a = { c->w.id, 0u, c->w.total };
    dcu_wire_header(h, DCU_WIRE_HOST_DATA, (uint32_t)(sizeof a + c->h.count), p->c.process_index,
                    p->run);
    h->src_rank = c->h.dst_rank;
    h->dst_rank = c->h.src_rank;
    h->offset = c->h.offset - c->w.first;
    h->count = c->h.count;
    memcpy(h + 1, &a, sizeof a);
}

/* ---- copies made at once ------------------------------------------------------------ */

/* Chunk c's bytes moved with the backend's synchronous copies: a put's
 * written, a get's read into a message of its own and sent. */
static void copy_now(dcu_proxy_t *p, host_chunk_t *c)
{
    if (c->st != DCUDA_OK || !c->h.count || p->failure[0])
        return;
    void *part = (void *)(uintptr_t)(c->base + c->h.offset);
    if (is_put(c)) {
        c->st = p->c.ops->copy_in(p->c.backend, part, c->bytes, (size_t)c->h.count);
        return;
    }
    dcu_wire_header_t *m = dcu_proxy_message_to(p, c->from, DCU_WIRE_HOST_DATA,
                                                sizeof(dcu_wire_host_t) + (size_t)c->h.count);
    if (!m)
        return;
    data_header(p, c, m);
    c->st = p->c.ops->copy_out(p->c.backend, (char *)(m + 1) + sizeof(dcu_wire_host_t), part,
                               (size_t)c->h.count);
    dcu_proxy_send_to(p, c->from, m); /* made: it goes (refused by the status after) */
}

/* ---- copies by the copy engine ------------------------------------------------------ */

/* Starts staged chunk c's copy: 1 started, 0 no room yet (a write of the
 * backend's, a get buffer), -1 it could not start (the proxy failed). */
static int start_copy(dcu_proxy_t *p, host_chunk_t *c)
{
    void *part = (void *)(uintptr_t)(c->base + c->h.offset);
    dcuda_status_t st;
    if (is_put(c)) {
        if (p->writes >= DCU_BACKEND_WRITES)
            return 0;
        st = p->c.ops->write_start(p->c.backend, part, c->bytes, (size_t)c->h.count, &c->ticket);
        p->writes += st == DCUDA_OK;
    } else {
        int i = dcu_proxy_free_get_buffer(p);
        if (i < 0)
            return 0;
        char *to = (char *)(p->gets[i].msg + 1) + sizeof(dcu_wire_host_t);
        st = p->c.ops->read_start(p->c.backend, to, part, (size_t)c->h.count, &c->ticket);
        if (st == DCUDA_OK) {
            p->gets[i].state = STAGING_READING;
            c->buffer = i;
        }
    }
    if (st != DCUDA_OK) {
        dcu_proxy_fail(p, "cannot %s a host's request for rank %d", is_put(c) ? "write" : "read",
                       c->h.dst_rank);
        c->st = st;
        return -1;
    }
    c->state = CHUNK_MOVING;
    return 1;
}

/* Has moving chunk c's copy ended (waiting for it when `wait`)? 1 ended
 * (c->st says how), 0 not yet. */
static int copy_ended(dcu_proxy_t *p, host_chunk_t *c, int wait)
{
    int done;
    for (;;) {
        done = is_put(c) ? p->c.ops->write_done(p->c.backend, c->ticket)
                         : p->c.ops->read_done(p->c.backend, c->ticket);
        if (done != 0 || !wait)
            break;
        dcu_clock_sleep_ns(1000);
    }
    if (done == 0)
        return 0;
    if (is_put(c))
        p->writes--;
    if (done < 0) {
        dcu_proxy_fail(p, "cannot %s a host's request for rank %d", is_put(c) ? "write" : "read",
                       c->h.dst_rank);
        c->st = DCUDA_ERR_BACKEND;
    }
    return 1;
}

/* A staged get's bytes were read: its HOST_DATA goes from the get buffer,
 * which is free again once the manager sent it. */
static void send_read(dcu_proxy_t *p, host_chunk_t *c)
{
    staging_t *b = &p->gets[c->buffer];
    if (c->st != DCUDA_OK || p->failure[0]) {
        b->state = STAGING_FREE;
        return;
    }
    data_header(p, c, b->msg);
    b->state = STAGING_SENDING;
    dcu_proxy_send_to(p, c->from, b->msg);
}

/* ---- the chunks in order ------------------------------------------------------------ */

/* Ends chunk c, the first: its bytes moved (now, if its copy had not
 * started), then its answer. */
static void end_first(dcu_proxy_t *p)
{
    host_chunk_t *c = p->chunks_first;
    if (c->state == CHUNK_MOVING && !is_put(c))
        send_read(p, c);
    else if (c->state == CHUNK_WAITING)
        copy_now(p, c);
    if (c->kept)
        dcu_spares_unkeep(&p->spares, c->kept);
    answer(p, c);
    p->chunks_first = c->next;
    if (!p->chunks_first)
        p->chunks_last = NULL;
    free(c);
}

/* Starts the staged chunks' copies in order, as far as the order lets: a
 * copy of the kind of those moving (or of either when none is), behind
 * chunks that all move. */
static int start_copies(dcu_proxy_t *p)
{
    int did = 0, moving = -1; /* the kind moving: is_put, or -1 */
    for (host_chunk_t *c = p->chunks_first; c && !p->failure[0]; c = c->next) {
        if (c->state == CHUNK_MOVING) {
            moving = is_put(c);
            continue;
        }
        if (!staged(c) || (moving >= 0 && moving != is_put(c)) || start_copy(p, c) <= 0)
            break;
        moving = is_put(c);
        did = 1;
    }
    return did;
}

int dcu_proxy_host_chunks_advance(dcu_proxy_t *p)
{
    if (!p->chunks_first)
        return 0;
    if (p->failure[0]) {
        dcu_proxy_host_chunks_settle(p);
        return 1;
    }
    int did = 0;
    for (host_chunk_t *c; (c = p->chunks_first) != NULL; did = 1) {
        if (c->state == CHUNK_MOVING ? !copy_ended(p, c, 0) : staged(c))
            break; /* its copy runs, or has yet to start */
        end_first(p);
    }
    return start_copies(p) | did;
}

void dcu_proxy_host_chunks_settle(dcu_proxy_t *p)
{
    while (p->chunks_first) {
        if (p->chunks_first->state == CHUNK_MOVING)
            copy_ended(p, p->chunks_first, 1);
        end_first(p);
    }
}

/* Queues chunk c (a copy of it, with `bytes` of its own for a put's bytes
 * that must outlive the receive buffer) behind those here: 0 once the
 * proxy failed. */
static int queue_chunk(dcu_proxy_t *p, const host_chunk_t *c, size_t bytes)
{
    host_chunk_t *q = malloc(sizeof *q + bytes);
    if (!q) {
        dcu_proxy_fail(p, "out of memory for a host's request");
        return 0;
    }
    *q = *c;
    if (bytes) {
        memcpy(q + 1, c->bytes, bytes);
        q->bytes = (const char *)(q + 1);
    }
    if (p->chunks_last)
        p->chunks_last->next = q;
    else
        p->chunks_first = q;
    p->chunks_last = q;
    return 1;
}

void dcu_proxy_serve_host_chunk(dcu_proxy_t *p, int from, const dcu_wire_header_t *h,
                                const char *body)
{
    host_chunk_t c = { .h = *h, .from = from, .buffer = -1 };
    memcpy(&c.w, body, sizeof c.w);
    c.bytes = body + sizeof c.w;
    c.st = host_part(p, h, &c.w, &c.base);
    if (p->failure[0])
        return;
    /* A staged put with no receive buffer to keep: its bytes go now, after
     * those of every chunk before it. */
    if (staged(&c) && is_put(&c) && !(c.kept = dcu_spares_keep(&p->spares)))
        dcu_proxy_host_chunks_settle(p);
    int engine = staged(&c) && (!is_put(&c) || c.kept);
    if (!engine && !p->chunks_first) { /* its turn is now, and it is copied at once */
        copy_now(p, &c);
        answer(p, &c);
        return;
    }
    size_t own = is_put(&c) && !c.kept && c.st == DCUDA_OK ? (size_t)c.h.count : 0u;
    if (queue_chunk(p, &c, own))
        start_copies(p);
}
