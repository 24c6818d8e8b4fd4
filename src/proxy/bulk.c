/*
 * The proxy's bulk data (see proxy_impl.h and docs/remote-path.md): the
 * chunks of large puts, read from rank memory by the backend's copy
 * engine into a ring of pinned staging buffers and sent as the reads
 * finish; the answers of gets, read the same way into pinned get buffers
 * once their turn at the target rank came; and the memory the network
 * manager sends from and receives into.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "service.h"
#include "trace.h"
#include "util/clock.h"

/* ---- gets of other processes' ranks --------------------------------------------- */

/* A checked GET to process q: the asker's part that the answer writes
 * travels in the body. */
static void send_get(dcu_proxy_t *p, const dcuda_cmd_t *cmd, int q)
{
    dcu_wire_header_t *h = dcu_proxy_message_to(p, q, DCU_WIRE_GET, sizeof(dcu_wire_get_t));
    if (!h)
        return;
    const dcu_wire_get_t g = { (uint32_t)(cmd->args[1] >> 32), 0u, cmd->args[4] };
    h->src_rank = p->world_first + cmd->rank;
    h->dst_rank = (int32_t)cmd->args[0];
    h->tag = (uint32_t)cmd->args[5];
    h->slot = (uint32_t)cmd->args[1];
    h->offset = cmd->args[2];
    h->count = cmd->args[3];
    memcpy(h + 1, &g, sizeof g);
    dcu_proxy_send_to(p, q, h);
}

/* Process `from` asks for bytes of my rank's part: their turn comes in
 * that rank's inbox, after everything that reached the rank before. */
static void apply_get(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body)
{
    int r;
    if (!dcu_proxy_holds(p, from, h->src_rank)) {
        dcu_proxy_fail(p, "process %d sent a get for rank %d, which it does not hold", from,
                       h->src_rank);
        return;
    }
    const dcuda_win_entry_t *part = dcu_proxy_part_of(p, h, "get", &r);
    if (!part)
        return;
    dcu_wire_get_t g;
    memcpy(&g, body, sizeof g);
    const get_request_t req = { h->src_rank, from,   part->base + h->offset,
                                h->count,    h->tag, g.slot,
                                g.offset,    0u,     -1 };
    const dcu_inbox_source_t src = { from, dcu_proxy_credit_bytes(h) };
    if (dcu_inbox_read(p->inboxes, r, &req, sizeof req, src) != DCUDA_OK)
        dcu_proxy_fail(p, "cannot serve a get of rank %d", h->src_rank);
}

int dcu_proxy_free_get_buffer(const dcu_proxy_t *p)
{
    for (int i = 0; i < PROXY_GET_BUFFERS; i++)
        if (p->gets[i].state == STAGING_FREE)
            return i;
    return -1;
}

/* Starts the read of a get's next chunk (the answer: a PUT to the asker's
 * part) into a free get buffer: 1 started, 0 none free yet. */
static int start_get_read(dcu_proxy_t *p, int r, get_request_t *q)
{
    int i = dcu_proxy_free_get_buffer(p);
    if (i < 0)
        return 0;
    staging_t *b = &p->gets[i];
    uint64_t n = q->count - q->done < DCU_NET_PUT_CHUNK ? q->count - q->done : DCU_NET_PUT_CHUNK;
    dcu_wire_header_t *h = b->msg;
    dcu_proxy_put_header(p, h, p->world_first + r, q->asker, q->slot, q->offset + q->done, n,
                         q->done + n == q->count ? q->tag : 0u);
    const void *src = (const void *)(uintptr_t)(q->src + q->done);
    if (p->c.ops->read_start(p->c.backend, h + 1, src, (size_t)n, &b->ticket) != DCUDA_OK) {
        dcu_proxy_fail(p, "cannot read the part of rank %d for a get of rank %d", h->src_rank,
                       q->asker);
        return 1;
    }
    b->state = STAGING_READING;
    q->buffer = i;
    return 1;
}

/* Sends a get's chunk once its read is done: a small one as a message of
 * its own (frames pack it), a large one from its buffer (free again when
 * the manager releases it). Not held to the asker's credit (its part holds
 * what it asked for): an answer that waited for the credit could wait for
 * ever, behind the asker's own gets of my ranks held in the asker's
 * inbox, whose answers wait for my credit in turn (four gets of 1 MiB
 * each way hung so with the default 4 MiB). 1 sent (or the proxy
 * failed), 0 not yet. */
static int send_get_chunk(dcu_proxy_t *p, get_request_t *q)
{
    staging_t *b = &p->gets[q->buffer];
    dcu_wire_header_t *h = b->msg;
    int done = p->c.ops->read_done(p->c.backend, b->ticket);
    if (done < 0)
        dcu_proxy_fail(p, "cannot read the part of rank %d for a get of rank %d", h->src_rank,
                       q->asker);
    if (done == 0)
        return 0;
    q->buffer = -1;
    if (done < 0) {
        b->state = STAGING_FREE;
        return 1;
    }
    q->done += h->count;
    h->flags |= DCU_WIRE_UNCREDITED;
    size_t size = sizeof *h + h->length;
    if (size > DCU_FRAME_ALONE) {
        b->state = STAGING_SENDING;
        dcu_proxy_send_to(p, q->from, h);
        return 1;
    }
    dcu_wire_header_t *m = dcu_proxy_message_to(p, q->from, DCU_WIRE_PUT, h->length);
    if (m)
        memcpy(m, h, size);
    b->state = STAGING_FREE;
    if (m)
        dcu_proxy_send_to(p, q->from, m);
    return 1;
}

/* A get's turn in rank r's inbox (inbox.h): its bytes are read by the
 * backend's copy engine into pinned get buffers, a network chunk at a
 * time, and sent back to the asker in puts (the last notified), outside
 * the asker's credit (send_get_chunk), so that what a get holds here is
 * one chunk; the rank's later messages wait meanwhile, and the proxy serves
 * everything else while a read goes on. 1 once all of it went (or the
 * proxy failed), 0 to go on later. */
int dcu_proxy_serve_get(void *arg, int r, void *data, uint32_t size)
{
    dcu_proxy_t *p = arg;
    get_request_t *q = data;
    (void)size;
    if (!q->count) { /* nothing to read: the notification alone (no credit, as below) */
        dcu_wire_header_t *h = dcu_proxy_message_to(p, q->from, DCU_WIRE_PUT, 0);
        if (h) {
            dcu_proxy_put_header(p, h, p->world_first + r, q->asker, q->slot, q->offset, 0u,
                                 q->tag);
            h->flags |= DCU_WIRE_UNCREDITED;
            dcu_proxy_send_to(p, q->from, h);
        }
        return 1;
    }
    while (!p->failure[0]) {
        if (q->buffer < 0 && !start_get_read(p, r, q))
            return 0;
        if (p->failure[0] || !send_get_chunk(p, q))
            break;
        if (q->done == q->count)
            return 1;
    }
    return p->failure[0] != 0;
}

/* ---- large puts, read from rank memory -------------------------------------------- */

static read_job_t *job_at(dcu_proxy_t *p, int i)
{
    return &p->jobs[(p->job_head + i) % p->c.ranks];
}

/* Queues a checked PUT_READ to process q, or says why not:
 * DCUDA_ERR_UNSUPPORTED when the source is not memory this proxy can read
 * (the rank then sends it in PUT commands). */
static int accept_read(dcu_proxy_t *p, const dcuda_cmd_t *cmd, int q)
{
    uint64_t size = cmd->args[3], src = cmd->args[4];
    if (p->job_count >= p->c.ranks) { /* each rank waits for its answer */
        dcu_proxy_fail(p, "rank %d sent a put to read of %llu bytes to window %llu",
                       p->world_first + cmd->rank, (unsigned long long)size,
                       (unsigned long long)cmd->args[1]);
        return DCUDA_ERR_PEER;
    }
    if (!p->c.readable || !p->c.readable(p->c.readable_arg, src, size))
        return DCUDA_ERR_UNSUPPORTED;
    *job_at(p, p->job_count++) = (read_job_t){ *cmd, q, 0u, 0u };
    return PROXY_LATER;
}

/* Starts reads of the queued puts' next chunks into free staging buffers. */
static void start_reads(dcu_proxy_t *p)
{
    while (p->job_reading < p->job_count && !p->failure[0]) {
        read_job_t *j = job_at(p, p->job_reading);
        uint64_t size = j->cmd.args[3];
        staging_t *b = &p->staging[p->fill];
        if (b->state != STAGING_FREE)
            return;
        uint64_t n = size - j->issued < DCU_NET_PUT_CHUNK ? size - j->issued : DCU_NET_PUT_CHUNK;
        dcu_wire_header_t *h = b->msg;
        dcu_proxy_put_header(p, h, p->world_first + j->cmd.rank, (int32_t)j->cmd.args[0],
                             (uint32_t)j->cmd.args[1], j->cmd.args[2] + j->issued, n,
                             j->issued + n == size ? (uint32_t)j->cmd.args[5] : 0u);
        const void *src = (const void *)(uintptr_t)(j->cmd.args[4] + j->issued);
        if (p->c.ops->read_start(p->c.backend, h + 1, src, (size_t)n, &b->ticket) != DCUDA_OK) {
            dcu_proxy_fail(p, "cannot read the source of a put of rank %d", h->src_rank);
            return;
        }
        b->state = STAGING_READING;
        b->job = (p->job_head + p->job_reading) % p->c.ranks;
        j->issued += n;
        p->job_reading += j->issued == size; /* the next put's reads may start */
        p->fill = (p->fill + 1) % PROXY_STAGING;
    }
}

/* Sends the chunks whose reads finished, in order; answers a put once all
 * of it was handed to the manager. > 0 if it did anything. */
static int send_reads(dcu_proxy_t *p)
{
    int did = 0;
    for (staging_t *b; (b = &p->staging[p->drain])->state == STAGING_READING && !p->failure[0];) {
        if (!dcu_proxy_credit_allows(p, p->jobs[b->job].q, dcu_proxy_message_bytes(b->msg)))
            break;
        int r = p->c.ops->read_done(p->c.backend, b->ticket);
        if (r < 0)
            dcu_proxy_fail(p, "cannot read the source of a put of rank %d", b->msg->src_rank);
        if (r <= 0)
            break;
        read_job_t *j = &p->jobs[b->job];
        b->state = STAGING_SENDING; /* until the manager releases it */
        j->sent += b->msg->count;
        dcu_proxy_send_to(p, j->q, b->msg);
        dcu_trace_mark(DCU_TRACE_SENT, b->msg->count);
        p->drain = (p->drain + 1) % PROXY_STAGING;
        if (j->sent == j->cmd.args[3]) { /* jobs end in order */
            dcu_proxy_answer(p, &j->cmd, p->failure[0] ? DCUDA_ERR_PEER : DCUDA_OK);
            p->job_head = (p->job_head + 1) % p->c.ranks;
            p->job_count--;
            p->job_reading--;
        }
        did = 1;
    }
    return did;
}

/* Moves the large puts on; once the proxy failed or a peer was lost, their
 * ranks are answered DCUDA_ERR_PEER instead (a send may never complete). */
static int advance_reads(dcu_proxy_t *p)
{
    if (!p->job_count)
        return 0;
    if (p->failure[0] ||
        atomic_load_explicit(p->c.cancel, memory_order_acquire) == DCUDA_CANCEL_PEER) {
        for (; p->job_count > 0; p->job_count--) {
            dcu_proxy_answer(p, &job_at(p, 0)->cmd, DCUDA_ERR_PEER);
            p->job_head = (p->job_head + 1) % p->c.ranks;
        }
        p->job_reading = 0;
        return 1;
    }
    int did = send_reads(p);
    start_reads(p);
    return did;
}

/* Message buffers in pinned memory: copies to and from GPUs run at full speed. */
void *dcu_proxy_pinned_alloc(void *arg, size_t size)
{
    dcu_proxy_t *p = arg;
    void *host = NULL, *rank = NULL;
    return p->c.ops->alloc_mapped(p->c.backend, size, &host, &rank) == DCUDA_OK ? host : NULL;
}

void dcu_proxy_pinned_free(void *arg, void *buf)
{
    dcu_proxy_t *p = arg;
    p->c.ops->free_mapped(p->c.backend, buf);
}

/* The manager's receive buffers (spares.h). */
void *dcu_proxy_receive_buffer(void *arg, size_t size)
{
    dcu_proxy_t *p = arg;
    return dcu_spares_alloc(&p->spares, size);
}

void dcu_proxy_receive_buffer_free(void *arg, void *buf)
{
    dcu_proxy_t *p = arg;
    dcu_spares_put(&p->spares, buf);
}

/* ---- the service ------------------------------------------------------------------------ */

static void bulk_message(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body)
{
    apply_get(p, from, h, body);
}

static int bulk_command(dcu_proxy_t *p, const dcuda_cmd_t *cmd, uint32_t t, int target)
{
    (void)t;
    if (cmd->op == DCUDA_CMD_PUT_READ)
        return accept_read(p, cmd, target);
    send_get(p, cmd, target);
    return p->failure[0] ? DCUDA_ERR_PEER : DCUDA_OK;
}

/* A new run: a run that ended on a lost peer may leave reads behind (its
 * ranks were answered): their buffers are free again (those the manager
 * still sends come back through dcu_proxy_release_message); a get's read
 * the run's end dropped (dcu_inbox_settle) frees its buffer once the copy
 * engine is done with it. */
static void bulk_reset(dcu_proxy_t *p)
{
    if (!p->net)
        return;
    for (int i = 0; i < PROXY_STAGING; i++)
        if (p->staging[i].state == STAGING_READING)
            p->staging[i].state = STAGING_FREE;
    for (int i = 0; i < PROXY_GET_BUFFERS; i++)
        if (p->gets[i].state == STAGING_READING) {
            while (p->c.ops->read_done(p->c.backend, p->gets[i].ticket) == 0)
                dcu_clock_sleep_ns(1000);
            p->gets[i].state = STAGING_FREE;
        }
    p->job_head = p->job_count = p->job_reading = 0;
    p->drain = p->fill;
}

const dcu_proxy_service_t dcu_proxy_svc_bulk = {
    .name = "bulk",
    .messages = DCU_SVC_BIT(DCU_WIRE_GET),
    .commands = DCU_SVC_BIT(DCUDA_CMD_PUT_READ) | DCU_SVC_BIT(DCUDA_CMD_GET),
    .on_message = bulk_message,
    .on_command = bulk_command,
    .serve = advance_reads,
    .reset = bulk_reset,
};
