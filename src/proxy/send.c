/*
 * The proxy's sending (see proxy_impl.h and docs/remote-path.md): what a
 * message counts against its receiver's credit, making messages in the
 * frames of their targets (frames.h), handing them and the frames to the
 * network manager, the messages it gives back, the acknowledgements owed
 * to senders, and the ABORT and LEFT texts spread along the detector's
 * tree (a send that finds a peer lost spreads a LEFT). Every file of the
 * proxy but proxy_core.c sends through it; it calls only proxy_core.c of
 * them, and the counting files below (netbar.c, frames.c, trace.c).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_impl.h"
#include "trace.h"

/* ---- what a message counts ------------------------------------------------------ */

/* A message's size as its credit counts it (dcu_netbar_may_send). */
uint32_t dcu_proxy_message_bytes(const dcu_wire_header_t *h)
{
    return (uint32_t)(sizeof *h + h->length);
}

/* Messages that move ranks on (the deadlock detector counts them: while
 * one is on its way, the ranks may not be stuck). */
int dcu_proxy_moves_ranks(uint8_t type)
{
    return type == DCU_WIRE_PUT || type == DCU_WIRE_NOTIFY || type == DCU_WIRE_ROUND ||
           type == DCU_WIRE_ACK || type == DCU_WIRE_PART_ASK || type == DCU_WIRE_PART ||
           type == DCU_WIRE_GET || type == DCU_WIRE_ATOMIC || type == DCU_WIRE_ATOMIC_DONE;
}

/* Messages acknowledged by their receiver (netbar.h): what a WORLD
 * barrier waits for (an ATOMIC, as a put, once in its inbox). A GET is
 * acknowledged once its bytes are read and sent back, so a barrier after
 * a get orders it; it counts nothing against the credit (its answer,
 * puts, does): an answer that waited for the credit a GET of the other
 * direction held would wait for ever. */
int dcu_proxy_credited(uint8_t type)
{
    return type == DCU_WIRE_PUT || type == DCU_WIRE_NOTIFY || type == DCU_WIRE_GET ||
           type == DCU_WIRE_ATOMIC;
}

/* The bytes of message h that its receiver's credit counts. */
uint32_t dcu_proxy_credit_bytes(const dcu_wire_header_t *h)
{
    return h->type == DCU_WIRE_GET ? 0u : dcu_proxy_message_bytes(h);
}

/* May a message of `bytes` that moves ranks go to process q now? Not
 * beyond q's credit while the run goes on; once it was cancelled or the
 * proxy failed, what is sent is no longer waited for, and it goes. */
int dcu_proxy_credit_allows(const dcu_proxy_t *p, int q, uint64_t bytes)
{
    return p->failure[0] || atomic_load_explicit(p->c.cancel, memory_order_acquire) ||
           dcu_netbar_may_send(&p->bar, q, bytes, p->c.net_credit);
}

/* ---- making messages ------------------------------------------------------------ */

/* A message of `type` with a body of `length` bytes for process q, its
 * header filled: in q's frame when small (no allocation, no copy), else
 * of its own (malloc). */
dcu_wire_header_t *dcu_proxy_message_to(dcu_proxy_t *p, int q, uint8_t type, size_t length)
{
    size_t size = sizeof(dcu_wire_header_t) + length;
    int framed = size <= DCU_FRAME_ALONE;
    dcu_wire_header_t *h = framed ? dcu_frames_reserve(&p->frames, q, size) : malloc(size);
    if (!h) {
        dcu_proxy_fail(p, "out of memory for a message of %zu bytes", length);
        return NULL;
    }
    dcu_wire_header(h, type, (uint32_t)length, p->c.process_index, p->run);
    p->in_frame = framed ? h : NULL;
    return h;
}

/* Makes h the header of a PUT of n bytes from src_rank to dst_rank's part
 * of window slot at offset, notified with tag (tag + 1; 0: none): a
 * chunk of a large put or of a get's answer. */
void dcu_proxy_put_header(const dcu_proxy_t *p, dcu_wire_header_t *h, int32_t src_rank,
                          int32_t dst_rank, uint32_t slot, uint64_t offset, uint64_t n,
                          uint32_t tag)
{
    dcu_wire_header(h, DCU_WIRE_PUT, (uint32_t)n, p->c.process_index, p->run);
    h->src_rank = src_rank;
    h->dst_rank = dst_rank;
    h->tag = tag;
    h->slot = slot;
    h->offset = offset;
    h->count = n;
}

/* A message without a body (ROUND, ACK, BEAT) to process q. */
void dcu_proxy_send_bare(dcu_proxy_t *p, int q, uint8_t type, uint32_t epoch, uint32_t tag,
                         uint64_t count)
{
    dcu_wire_header_t *h = dcu_proxy_message_to(p, q, type, 0);
    if (!h)
        return;
    h->epoch = epoch;
    h->tag = tag;
    h->count = count;
    dcu_proxy_send_to(p, q, h);
}

/* ---- texts along the tree ------------------------------------------------------- */

/* Here, not in proxy.c, which applies the texts that arrive: a send that
 * finds a peer lost spreads a LEFT (dcu_proxy_net_failed), and this file
 * calls nothing above it. */

/* My neighbours in the detector's tree (parent (i - 1) / 2, children
 * 2i + 1 and 2i + 2) into out; how many. */
int dcu_proxy_tree_neighbours(const dcu_proxy_t *p, int out[3])
{
    int me = p->c.process_index, n = 0;
    int cand[3] = { me > 0 ? (me - 1) / 2 : -1, 2 * me + 1, 2 * me + 2 };
    for (int k = 0; k < 3; k++)
        if (cand[k] >= 0 && cand[k] < p->c.process_count)
            out[n++] = cand[k];
    return n;
}

/* A text of `type` (ABORT, LEFT) to every process: told to my neighbours
 * in the detector's tree but `from` (the one it came from; -1: none), once
 * a run and type, and passed on by each when it first hears it. On a tree
 * every process hears it, in at most twice its depth (2 log2 P hops), from
 * any number of first tellers, and no process sends more than 3 copies;
 * a process cut off by a dead one names that one itself (beats). The
 * processes of a node go through the manager like any other (as beats). */
void dcu_proxy_spread(dcu_proxy_t *p, uint8_t type, const char *why, int from)
{
    unsigned bit = type == DCU_WIRE_ABORT ? 1u : 2u;
    if (!p->net || p->failure[0] || (p->spread & bit))
        return;
    p->spread |= bit;
    size_t n = strnlen(why, DCU_WIRE_ABORT_MAX);
    int nb[3], count = dcu_proxy_tree_neighbours(p, nb);
    for (int k = 0; k < count; k++) {
        if (nb[k] == from)
            continue;
        dcu_wire_header_t *h = dcu_proxy_message_to(p, nb[k], type, n);
        if (!h)
            return;
        memcpy(h + 1, why, n);
        dcu_proxy_send_to(p, nb[k], h);
    }
}

void dcu_proxy_abort(dcu_proxy_t *p, const char *why)
{
    dcu_proxy_spread(p, DCU_WIRE_ABORT, why, -1);
}

void dcu_proxy_leave(dcu_proxy_t *p, const char *why)
{
    dcu_proxy_spread(p, DCU_WIRE_LEFT, why, -1);
}

/* ---- handing messages to the manager -------------------------------------------- */

/* The network manager failed (`what`: in a send, or in its progress):
 * when it lost a peer (a dead process), the others hear it from me first
 * (a LEFT naming that process), before my own end shows to them as a
 * lost connection to me. */
void dcu_proxy_net_failed(dcu_proxy_t *p, const char *what)
{
    const char *why = p->c.net_ops->why(p->net);
    int q = p->c.net_ops->lost ? p->c.net_ops->lost(p->net) : -1;
    if (q >= 0 && !p->left[0] && !p->failure[0]) {
        snprintf(p->left, sizeof p->left, "%s", why);
        dcu_proxy_tell(p, DCU_PROXY_LEFT);
        dcu_proxy_spread(p, DCU_WIRE_LEFT, p->left, q);
    }
    dcu_proxy_fail(p, "%s: %s", what, why);
}

/* Hands a frame, or a message that goes alone, to the manager. */
dcuda_status_t dcu_proxy_send_now(void *arg, int q, void *buf, size_t size)
{
    dcu_proxy_t *p = arg;
    dcuda_status_t st = p->c.net_ops->send(p->net, q, buf, size);
    if (st != DCUDA_OK) {
        char what[40];
        snprintf(what, sizeof what, "cannot send to process %d", q);
        dcu_proxy_net_failed(p, what);
    }
    return st;
}

/* The manager is done with a message: a staging buffer is free again.
 * Here, not with the buffers' other uses in bulk.c (which sends through
 * this file): dcu_proxy_send_to releases a message that cannot go. */
void dcu_proxy_release_message(void *arg, void *msg)
{
    staging_t *b = dcu_proxy_staging_of(arg, msg);
    if (b)
        dcu_trace_mark(DCU_TRACE_RELEASED, b->msg->count);
    if (b)
        b->state = STAGING_FREE;
    else
        free(msg);
}

/* Sends message h (the proxy's from now on) to process q: the one
 * dcu_proxy_message_to wrote in q's frame goes with the frame; one of its
 * own (large, or in a staging buffer) goes alone, after that frame. */
void dcu_proxy_send_to(dcu_proxy_t *p, int q, dcu_wire_header_t *h)
{
    if (p->dl.found)
        h->flags |= DCU_WIRE_ENDED;
    p->sent += dcu_proxy_moves_ranks(h->type);
    if (dcu_proxy_credited(h->type)) {
        if (!dcu_netbar_may_send(&p->bar, q, dcu_proxy_credit_bytes(h), p->c.net_credit))
            h->flags |= DCU_WIRE_UNCREDITED; /* after a cancel (dcu_proxy_credit_allows) */
        dcu_netbar_sent(&p->bar, q, dcu_proxy_credit_bytes(h));
    }
    if (h == p->in_frame) {
        p->in_frame = NULL;
        return;
    }
    if (dcu_frames_flush_to(&p->frames, q) == DCUDA_OK)
        dcu_proxy_send_now(p, q, h, sizeof *h + h->length);
    else
        dcu_proxy_release_message(p, h);
}

/* Sends every open frame (after each pass, and before the manager is
 * waited for). */
void dcu_proxy_send_frames(dcu_proxy_t *p)
{
    if (p->net && !p->failure[0])
        dcu_frames_flush(&p->frames);
}

/* ---- acknowledgements ----------------------------------------------------------- */

/* A message from process `from` is in an inbox (inbox.h): what the next
 * acknowledgement to it counts. */
void dcu_proxy_landed(void *arg, int from, uint32_t bytes)
{
    dcu_proxy_t *p = arg;
    dcu_trace_mark(DCU_TRACE_LANDED, bytes);
    dcu_netbar_taken(&p->bar, from, bytes);
    p->unacked += bytes;
}

/* Acknowledges what my ranks' inboxes took (the count, and the bytes as
 * the senders' credit). */
void dcu_proxy_send_acks(dcu_proxy_t *p)
{
    int q;
    uint32_t count;
    uint64_t bytes;
    while (!p->failure[0] && dcu_netbar_owed(&p->bar, &q, &count, &bytes)) {
        dcu_wire_header_t *h = dcu_proxy_message_to(p, q, DCU_WIRE_ACK, 0);
        if (!h)
            break;
        h->tag = count;
        h->count = bytes;
        h->flags = dcu_netbar_all_taken(&p->bar, q) ? DCU_WIRE_ALL_TAKEN : 0u;
        dcu_proxy_send_to(p, q, h);
    }
    p->unacked = 0;
}
