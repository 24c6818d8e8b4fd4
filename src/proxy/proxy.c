/*
 * The proxy (see proxy.h and docs/remote-path.md).
 *
 * Commands are consumed in ticket order. Every entry of a command is
 * recycled (its seq set for the next lap) before the proxy publishes how
 * many tickets it has consumed (cmd_tail) and, last, answers a command that
 * wants a reply: a rank that sees either knows those entries are free.
 *
 * Messages keep the order of the commands that made them; the manager keeps
 * the order of each pair of processes; arrivals go to their rank's inbox in
 * order, and the rank applies them in order, the data of a put before the
 * notification that tells of it. A WORLD barrier (netbar.h) completes
 * only once what was sent to my ranks before the others entered it is in
 * their inboxes (not held for lack of room), so a rank that sees it finds
 * everything sent before it there.
 *
 * A large put (PUT_READ) is read from rank memory by the backend's copy
 * engine into a ring of pinned staging buffers and sent chunk by chunk as
 * the reads finish; its rank waits for the answer, so no later command of
 * that rank can overtake its chunks.
 *
 * A FENCE (fence.h) is answered once what the proxy sent before it is in
 * its receivers' inboxes: commands execute in order, so that is every
 * earlier command's message (a PUT_READ's rank waited for its own).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy_impl.h"
#include "trace.h"
#include "util/clock.h"
#include "util/nvtx.h"

/* Acknowledgements wait for a pass in which nothing more arrived (one for
 * a burst of messages), unless this many bytes of credit are owed: a
 * sender that streams a large put waits for them. */
#define PROXY_ACK_NOW_BYTES (DCU_NET_PUT_CHUNK / 2)
/* How long the end of a run waits for its messages to leave. */
#define PROXY_DRAIN_NS (5 * DCU_NS_PER_S)
/* How long after a cancel the ranks that wait for a window part or a
 * fence wait on for their answer (abandon_asks). */
#define PROXY_ASK_GRACE_NS (1 * DCU_NS_PER_S)

/* ---- applying what arrives ------------------------------------------------------ */

static void deliver(dcu_proxy_t *p, const dcu_wire_header_t *h, int r, uint64_t dst,
                    const void *data)
{
    dcu_inbox_source_t src = { h->src_proc, dcu_proxy_message_bytes(h) };
    if (dcu_inbox_deliver(p->inboxes, r, dst, data, (uint32_t)h->count, h->tag, src) != DCUDA_OK)
        dcu_proxy_fail(p, "cannot hand a %s from rank %d to rank %d", data ? "put" : "notification",
                       h->src_rank, h->dst_rank);
}

static void apply_put(dcu_proxy_t *p, const dcu_wire_header_t *h, const void *body)
{
    int r;
    const dcuda_win_entry_t *part = dcu_proxy_part_of(p, h, "put", &r);
    if (part)
        deliver(p, h, r, part->base + h->offset, body);
}

static void apply_notify(dcu_proxy_t *p, const dcu_wire_header_t *h)
{
    int r = h->dst_rank - p->world_first;
    if (r < 0 || r >= p->c.ranks || h->tag == 0) {
        dcu_proxy_fail(p, "a notification from rank %d for rank %d, which is not mine", h->src_rank,
                       h->dst_rank);
        return;
    }
    deliver(p, h, r, 0u, NULL);
}

/* Moves the WORLD barrier my device is in on: sends the rounds due, and
 * completes it when it can (its ranks then leave it). */
static void advance_barriers(dcu_proxy_t *p)
{
    int q;
    uint32_t round;
    for (;;) {
        while (!p->failure[0] && dcu_netbar_send(&p->bar, &q, &round))
            dcu_proxy_send_bare(p, q, DCU_WIRE_ROUND, p->bar.entered, round, 0);
        if (p->failure[0] || !dcu_netbar_complete(&p->bar))
            return;
        atomic_store_explicit(p->c.net_barrier, p->bar.done, memory_order_release);
    }
}

/* A barrier step's verdict: NULL, or why process `from` sent a wrong one. */
static void barrier_verdict(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *bad)
{
    if (bad)
        dcu_proxy_fail(p, "process %d: %s (WORLD barrier %u; this process completed %u)", from, bad,
                       h->epoch, p->bar.done);
    else
        advance_barriers(p);
}

static void apply_step(dcu_proxy_t *p, int from, const dcu_wire_header_t *h)
{
    if (h->type == DCU_WIRE_ROUND) {
        barrier_verdict(p, from, h, dcu_netbar_heard(&p->bar, from, h->epoch, h->tag));
        return;
    }
    dcu_trace_mark(DCU_TRACE_ACKED, h->count);
    const char *bad = dcu_netbar_acked(&p->bar, from, h->tag, h->count);
    if (!bad && (h->flags & DCU_WIRE_ALL_TAKEN))
        dcu_netbar_cleared(&p->bar, from, h->tag);
    barrier_verdict(p, from, h, bad);
}

/* A peer's message text, printable characters only (it comes from outside),
 * into dst; `fallback` when the message had none. */
static void copy_peer_text(char *dst, size_t size, const dcu_wire_header_t *h, const char *body,
                           const char *fallback, int from)
{
    size_t n = h->length < size - 1 ? h->length : size - 1;
    for (size_t i = 0; i < n; i++)
        dst[i] = body[i] >= 0x20 && body[i] < 0x7f ? body[i] : '?';
    dst[n] = '\0';
    if (n == 0)
        snprintf(dst, size, fallback, from);
}

/* A process ended this run early: its waits end here too, and my
 * neighbours in the tree hear it. */
static void apply_abort(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body)
{
    if (p->aborted[0])
        return;
    copy_peer_text(p->aborted, sizeof p->aborted, h, body, "process %d", from);
    dcu_proxy_tell(p, DCU_PROXY_ABORTED);
    dcu_proxy_spread(p, DCU_WIRE_ABORT, p->aborted, from);
    uint32_t none = DCUDA_CANCEL_NONE;
    atomic_compare_exchange_strong_explicit(p->c.cancel, &none, DCUDA_CANCEL_ERROR,
                                            memory_order_acq_rel, memory_order_acquire);
}

/* A process left this run (exit() while its ranks ran, or named silent): it
 * is lost to it, and my neighbours in the tree hear it. */
static void apply_left(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body)
{
    if (p->left[0])
        return;
    copy_peer_text(p->left, sizeof p->left, h, body, "process %d left while its ranks ran", from);
    dcu_proxy_tell(p, DCU_PROXY_LEFT);
    dcu_proxy_spread(p, DCU_WIRE_LEFT, p->left, from);
    uint32_t none = DCUDA_CANCEL_NONE;
    atomic_compare_exchange_strong_explicit(p->c.cancel, &none, DCUDA_CANCEL_PEER,
                                            memory_order_acq_rel, memory_order_acquire);
}

static void receive_message(dcu_proxy_t *p, int from, const void *data, size_t size)
{
    dcu_wire_header_t h;
    char why[128];
    if (p->failure[0])
        return;
    if (dcu_wire_check(data, size, from, &p->limits, &h, why, sizeof why) != DCUDA_OK) {
        dcu_proxy_fail(p, "refused a message from process %d: %s", from, why);
        return;
    }
    /* What a run that ended early left on the way is not this run's. */
    if (h.run != p->run)
        return;
    dcu_proxy_heard(p, from, &h);
    const char *body = (const char *)data + sizeof h;
    if (h.flags & DCU_WIRE_ENDED) /* the run ended before what this carries */
        dcu_proxy_dl_declare(p);
    p->received += dcu_proxy_moves_ranks(h.type);
    if (dcu_proxy_credited(h.type)) {
        uint64_t credit = h.flags & DCU_WIRE_UNCREDITED ? UINT64_MAX : p->c.net_credit;
        const char *bad = dcu_netbar_arrived(&p->bar, from, dcu_proxy_credit_bytes(&h), credit);
        if (bad) {
            dcu_proxy_fail(p, "process %d sent %s", from, bad);
            return;
        }
    }
    switch (h.type) {
    case DCU_WIRE_PUT:
        dcu_trace_mark(DCU_TRACE_RECEIVED, h.count);
        apply_put(p, &h, body);
        dcu_trace_mark(DCU_TRACE_WRITTEN, h.count);
        break;
    case DCU_WIRE_NOTIFY:
        dcu_trace_mark(DCU_TRACE_RECEIVED, 0);
        apply_notify(p, &h);
        dcu_trace_mark(DCU_TRACE_WRITTEN, 0);
        break;
    case DCU_WIRE_ABORT:
        apply_abort(p, from, &h, body);
        break;
    case DCU_WIRE_LEFT:
        apply_left(p, from, &h, body);
        break;
    case DCU_WIRE_PROBE:
    case DCU_WIRE_REPLY:
    case DCU_WIRE_FOUND:
        dcu_proxy_dl_receive(p, from, &h, body);
        break;
    case DCU_WIRE_ROUND:
    case DCU_WIRE_ACK:
        apply_step(p, from, &h);
        break;
    case DCU_WIRE_PART_ASK:
        dcu_proxy_tell_part(p, from, &h);
        break;
    case DCU_WIRE_GET:
        dcu_proxy_apply_get(p, from, &h, body);
        break;
    case DCU_WIRE_HOST_PUT:
    case DCU_WIRE_HOST_GET:
    case DCU_WIRE_HOST_DATA:
    case DCU_WIRE_HOST_DONE:
        dcu_proxy_apply_host(p, from, &h, body);
        break;
    case DCU_WIRE_BEAT: /* heard above */
        break;
    default: /* DCU_WIRE_PART */
        dcu_proxy_apply_part(p, from, &h);
        break;
    }
}

/* A frame of whole messages from process `from` (frames.h), in a receive
 * buffer of the manager: nonzero when the inbox keeps it (spares.h). */
static int receive(void *arg, int from, void *data, size_t size)
{
    dcu_proxy_t *p = arg;
    size_t at = 0, offset = 0, n = 0;
    int r = 0;
    dcu_nvtx_push(DCU_NVTX_PROXY_RECEIVE);
    dcu_spares_begin(&p->spares, data);
    while (!p->failure[0] && (r = dcu_wire_next(data, size, &at, &offset, &n)) > 0)
        receive_message(p, from, (const char *)data + offset, n);
    if (!p->failure[0] && r < 0)
        dcu_proxy_fail(p, "refused a message from process %d: a frame that ends inside a message",
                       from);
    int kept = dcu_spares_end(&p->spares);
    dcu_nvtx_pop();
    return kept;
}

/* ---- turning commands into messages ----------------------------------------------- */

/* Copies n bytes of payload from the entries after header ticket t. */
static void gather(const dcu_proxy_t *p, uint32_t t, char *out, size_t n)
{
    const char *entries = (const char *)p->c.entries;
    uint32_t first = (t + 1u) & (p->c.capacity - 1u);
    size_t room = (size_t)(p->c.capacity - first) * sizeof(dcuda_cmd_t);
    size_t a = n < room ? n : room;
    memcpy(out, entries + (size_t)first * sizeof(dcuda_cmd_t), a);
    memcpy(out + a, entries, n - a);
}

/* A checked PUT (header ticket t) to process q. */
static void send_put(dcu_proxy_t *p, const dcuda_cmd_t *cmd, uint32_t t, int q)
{
    uint64_t size = cmd->args[3];
    dcu_wire_header_t *h = dcu_proxy_message_to(p, q, DCU_WIRE_PUT, (size_t)size);
    if (!h)
        return;
    h->src_rank = p->world_first + cmd->rank;
    h->dst_rank = (int32_t)cmd->args[0];
    h->tag = (uint32_t)cmd->args[5];
    h->slot = (uint32_t)cmd->args[1];
    h->offset = cmd->args[2];
    h->count = size;
    gather(p, t, (char *)(h + 1), (size_t)size);
    dcu_proxy_send_to(p, q, h);
    dcu_trace_mark(DCU_TRACE_SENT, size);
}

/* A checked NOTIFY to process q. */
static void send_notify(dcu_proxy_t *p, const dcuda_cmd_t *cmd, int q)
{
    dcu_wire_header_t *h = dcu_proxy_message_to(p, q, DCU_WIRE_NOTIFY, 0);
    if (!h)
        return;
    h->src_rank = p->world_first + cmd->rank;
    h->dst_rank = (int32_t)cmd->args[0];
    h->tag = (uint32_t)cmd->args[5];
    dcu_proxy_send_to(p, q, h);
    dcu_trace_mark(DCU_TRACE_SENT, 0);
}

/* ---- what others read of the proxy; WORLD barriers; asks abandoned ----------------- */

int dcu_proxy_pending(const dcu_proxy_t *p)
{
    return p->net ? p->c.net_ops->pending(p->net) + p->frames.count : 0;
}

int dcu_proxy_barrier_open(const dcu_proxy_t *p)
{
    return p->net && !p->failure[0] && p->bar.entered != p->bar.done;
}

void dcu_proxy_counts(const dcu_proxy_t *p, uint64_t *sent, uint64_t *received)
{
    *sent = p->sent;
    *received = p->received;
}

int dcu_proxy_idle(dcu_proxy_t *p)
{
    /* A host's request in flight may notify a rank (host_reqs.c). */
    if (dcu_ring_next(&p->queue) || p->job_count || p->host_pending || p->chunks_first ||
        atomic_load_explicit(&p->host_queue, memory_order_acquire) ||
        (p->net && (p->remote.asking || p->fences.count)))
        return 0;
    /* An acknowledgement not sent yet may still end a barrier's wait. */
    return !p->net || (dcu_inbox_held(p->inboxes) == 0 && dcu_inbox_unread(p->inboxes) == 0 &&
                       p->bar.owed_count == 0);
}

/* My device reached WORLD barrier `epoch` (a checked command), which
 * creates window `slot` or none: my ranks' parts of a new window are read
 * (other processes will ask for them once they passed it) and what was
 * known of the slot's last window is stale; the barrier runs its rounds
 * once what my ranks sent is acknowledged (netbar.h). */
static void send_barrier(dcu_proxy_t *p, const dcuda_cmd_t *cmd)
{
    uint32_t epoch = (uint32_t)cmd->args[0], slot = (uint32_t)cmd->args[1];
    /* Once the run is cancelled, my ranks' waits end at once: they may
     * reach a later barrier before this one completed its rounds (which
     * other processes may still owe): nothing to enter then. */
    if (epoch != p->bar.done + 1u && atomic_load_explicit(p->c.cancel, memory_order_acquire) != 0)
        return;
    if (dcu_netbar_enter(&p->bar, epoch)) {
        dcu_proxy_fail(p, "process %d reached WORLD barrier %u while this one completed %u",
                       p->c.process_index, epoch, p->bar.done);
        return;
    }
    if (slot != DCUDA_CMD_NO_SLOT) {
        if (!dcu_proxy_read_parts(p, slot, 0, p->c.ranks))
            return;
        dcu_parts_new_window(&p->remote, slot);
    }
    advance_barriers(p);
}

/* Once the proxy failed or a peer was lost, no answer may come: the ranks
 * that wait for a part or a fence are answered DCUDA_ERR_PEER. Once the
 * run was cancelled otherwise (an error or a stall), the owners still
 * answer (and acknowledge) while they serve the run, but may leave it
 * first: after PROXY_ASK_GRACE_NS the ranks that still wait are answered
 * DCUDA_ERR_ABORTED (a wait for a reply is not one the cancel ends). */
static void abandon_asks(dcu_proxy_t *p)
{
    int r;
    uint32_t tag, cancel = atomic_load_explicit(p->c.cancel, memory_order_acquire);
    if ((!p->remote.asking && !p->fences.count) || (!p->failure[0] && cancel == DCUDA_CANCEL_NONE))
        return;
    if (!p->failure[0] && cancel != DCUDA_CANCEL_PEER) {
        uint64_t now = dcu_clock_ns();
        if (!p->cancel_seen_ns)
            p->cancel_seen_ns = now;
        if (now - p->cancel_seen_ns < PROXY_ASK_GRACE_NS)
            return;
    }
    dcuda_status_t why =
        p->failure[0] || cancel == DCUDA_CANCEL_PEER ? DCUDA_ERR_PEER : DCUDA_ERR_ABORTED;
    while (dcu_parts_next_waiting(&p->remote, &r, &tag))
        dcu_proxy_answer_value(p, r, tag, why, 0u);
    while (dcu_fences_next_waiting(&p->fences, &r, &tag))
        dcu_proxy_answer_value(p, r, tag, why, 0u);
}

/* ---- fences (fence.h) ----------------------------------------------------------- */

/* A checked FENCE: answered at once when nothing sent is unacknowledged
 * (or there is no network path), else once it is (advance_fences). */
static int take_fence(dcu_proxy_t *p, const dcuda_cmd_t *cmd)
{
    int waits;
    if (!p->net)
        return DCUDA_OK;
    const char *bad = dcu_fences_take(&p->fences, &p->bar, cmd->rank, cmd->tag, &waits);
    if (bad) {
        dcu_proxy_fail(p, "rank %d: %s", p->world_first + cmd->rank, bad);
        return DCUDA_ERR_PEER;
    }
    return waits ? PROXY_LATER : DCUDA_OK;
}

/* Answers the fences the acknowledgements so far complete. */
static void advance_fences(dcu_proxy_t *p)
{
    int r;
    uint32_t tag;
    while (dcu_fences_done(&p->fences, &p->bar, &r, &tag))
        dcu_proxy_answer_value(p, r, tag, DCUDA_OK, dcu_clock_ns());
}

/* ---- the command queue ---------------------------------------------------------- */

/* What command `cmd` (header ticket t, checked: verdict v, info) asks; the
 * answer, if it wants one now (a PUT_READ it accepted is answered once
 * read). */
static int execute(dcu_proxy_t *p, const dcuda_cmd_t *cmd, uint32_t t, dcu_cmd_verdict_t v,
                   const dcu_cmd_info_t *info, const char *why)
{
    if (v == DCU_CMD_UNKNOWN) {
        if (!cmd->tag)
            dcu_proxy_fail(p, "%s", why);
        return DCUDA_ERR_INVALID_ARG;
    }
    if (cmd->op == DCUDA_CMD_PUT)
        dcu_trace_mark(DCU_TRACE_SEEN, cmd->args[3]);
    else if (cmd->op == DCUDA_CMD_NOTIFY)
        dcu_trace_mark(DCU_TRACE_SEEN, 0);
    if (v == DCU_CMD_REFUSED) {
        dcu_proxy_fail(p, "%s", why);
        return DCUDA_ERR_PEER;
    }
    switch (cmd->op) {
    case DCUDA_CMD_PING:
        return DCUDA_OK;
    case DCUDA_CMD_PUT_READ:
        return dcu_proxy_accept_read(p, cmd, info->target);
    case DCUDA_CMD_PART:
        return dcu_proxy_ask_part(p, cmd, info->target);
    case DCUDA_CMD_FENCE:
        return take_fence(p, cmd);
    case DCUDA_CMD_WINDOW:
        return dcu_proxy_take_window(p, cmd);
    case DCUDA_CMD_PUT:
        send_put(p, cmd, t, info->target);
        break;
    case DCUDA_CMD_NOTIFY:
        send_notify(p, cmd, info->target);
        break;
    case DCUDA_CMD_GET:
        dcu_proxy_send_get(p, cmd, info->target);
        break;
    default: /* DCUDA_CMD_BARRIER */
        send_barrier(p, cmd);
        break;
    }
    return p->failure[0] ? DCUDA_ERR_PEER : DCUDA_OK;
}

/* Must the executable command `cmd` wait for its target's credit? */
static int waits_for_credit(const dcu_proxy_t *p, const dcuda_cmd_t *cmd,
                            const dcu_cmd_info_t *info)
{
    uint64_t bytes = sizeof(dcu_wire_header_t);
    if (cmd->op == DCUDA_CMD_PUT)
        bytes += cmd->args[3];
    else if (cmd->op != DCUDA_CMD_NOTIFY)
        return 0;
    return !dcu_proxy_credit_allows(p, info->target, bytes);
}

/* Serves every command that is ready, in ticket order, up to one that
 * waits for its target's credit (it stays first: the ranks' commands
 * keep their order, and a rank whose command waits applies what arrives
 * in its inbox meanwhile, which lets its own senders go on). Once the
 * proxy failed it still consumes them, executing none and answering each
 * that waits with DCUDA_ERR_PEER, so that no rank waits for it forever. */
static int serve_commands(dcu_proxy_t *p)
{
    int served = 0, ranged = 0;
    dcuda_cmd_t *e;
    while ((e = dcu_ring_next(&p->queue)) != NULL) {
        dcuda_cmd_t cmd = *e;
        uint32_t t = p->queue.tail;
        dcu_cmd_info_t info;
        char why[256];
        dcu_cmd_verdict_t v = dcu_cmd_check(&cmd, &p->cmd_limits, &info, why, sizeof why);
        if (v == DCU_CMD_UNREADABLE) {
            dcu_proxy_fail(p, "%s", why);
            break; /* a queue that lies about its entries cannot be read on */
        }
        if (v == DCU_CMD_EXECUTE && !p->failure[0] && waits_for_credit(p, &cmd, &info))
            break;
        if (!ranged++) /* from the first command served: an empty pass calls no NVTX */
            dcu_nvtx_push(DCU_NVTX_PROXY_SERVE);
        int reply = p->failure[0] ? DCUDA_ERR_PEER : execute(p, &cmd, t, v, &info, why);
        dcu_ring_done_n(&p->queue, info.entries);
        atomic_store_explicit(p->c.cmd_tail, p->queue.tail, memory_order_release);
        if (cmd.tag && reply != PROXY_LATER)
            dcu_proxy_answer(p, &cmd, cmd.op == DCUDA_CMD_PING ? DCUDA_OK : (dcuda_status_t)reply);
        served = 1;
    }
    if (ranged)
        dcu_nvtx_pop();
    return served;
}

int dcu_proxy_poll(dcu_proxy_t *p)
{
    int did = serve_commands(p);
    did |= dcu_proxy_host_serve(p);
    dcu_proxy_send_frames(p);
    did |= dcu_proxy_advance_reads(p);
    abandon_asks(p);
    if (p->net && !p->failure[0]) {
        int r = p->c.net_ops->progress(p->net);
        if (r < 0)
            dcu_proxy_net_failed(p, "network");
        if (r == 0) /* nothing more arrived for now */
            dcu_proxy_send_acks(p);
        did |= r > 0;
    }
    if (p->net)
        did |= dcu_proxy_host_chunks_advance(p);
    if (p->net && !p->failure[0])
        advance_fences(p);
    if (p->net && !p->failure[0])
        dcu_proxy_beats(p);
    if (p->net && !p->failure[0] && dcu_inbox_held(p->inboxes) > 0) {
        int r = dcu_inbox_retry(p->inboxes);
        if (r < 0)
            dcu_proxy_fail(p, "cannot write a put that waited for inbox room");
        if (r > 0)
            advance_barriers(p);
        did |= r > 0;
    }
    if (p->unacked >= PROXY_ACK_NOW_BYTES)
        dcu_proxy_send_acks(p);
    dcu_proxy_send_frames(p);
    return did;
}

void dcu_proxy_drain(dcu_proxy_t *p)
{
    uint64_t start = dcu_clock_ns();
    if (!p->net)
        return;
    dcu_nvtx_push(DCU_NVTX_PROXY_DRAIN);
    dcu_proxy_host_chunks_settle(p); /* their answers go with the rest */
    dcu_proxy_send_frames(p);
    while (p->c.net_ops->pending(p->net) > 0) {
        if (p->c.net_ops->progress(p->net) < 0 || dcu_clock_ns() - start > PROXY_DRAIN_NS) {
            dcu_msg_warn("%d message(s) did not leave at the end of the run",
                         p->c.net_ops->pending(p->net));
            break;
        }
    }
    if (dcu_inbox_settle(p->inboxes) != DCUDA_OK)
        dcu_proxy_fail(p, "cannot apply the puts the ranks left in their inboxes");
    p->host_closed = 1;                        /* what comes later ends at once */
    dcu_proxy_host_end_all(p, DCUDA_ERR_PEER); /* their owners did not answer in the run */
    dcu_nvtx_pop();
}

/* ---- life --------------------------------------------------------------------------- */

void dcu_proxy_reset(dcu_proxy_t *p)
{
    dcu_ring_reset(&p->queue);
    memset(p->c.replies, 0, (size_t)p->c.ranks * sizeof *p->c.replies);
    atomic_store_explicit(p->c.cmd_tail, 0u, memory_order_relaxed);
    p->run++;
    p->aborted[0] = p->left[0] = '\0';
    p->spread = 0;
    p->sent = p->received = 0;
    p->unacked = 0;
    memset(&p->dl, 0, sizeof p->dl);
    dcu_proxy_host_end_all(p, DCUDA_ERR_PEER); /* none is left after a drain */
    p->host_closed = 0;
    if (!p->net)
        return;
    dcu_proxy_beats_reset(p);
    /* The parts of the last run are gone (a window of a communicator is
     * read one member at a time: the others' entries of its slot stay
     * empty, and a message for them is refused). */
    memset(p->parts_known, 0, sizeof p->parts_known);
    memset(p->parts, 0, (size_t)DCUDA_WIN_TABLE_SLOTS * (size_t)p->c.ranks * sizeof *p->parts);
    dcu_proxy_know_lib(p);
    dcu_parts_reset(&p->remote);
    dcu_fences_reset(&p->fences); /* their ranks ended with the run */
    p->cancel_seen_ns = 0;
    /* A run that ended on a lost peer may leave reads behind (its ranks were
     * answered): their buffers are free again; those the manager still
     * sends come back through dcu_proxy_release_message. */
    for (int i = 0; i < PROXY_STAGING; i++)
        if (p->staging[i].state == STAGING_READING)
            p->staging[i].state = STAGING_FREE;
    /* A get's read the run's end dropped (dcu_inbox_settle): its buffer
     * is free once the copy engine is done with it. */
    for (int i = 0; i < PROXY_GET_BUFFERS; i++)
        if (p->gets[i].state == STAGING_READING) {
            while (p->c.ops->read_done(p->c.backend, p->gets[i].ticket) == 0)
                dcu_clock_sleep_ns(1000);
            p->gets[i].state = STAGING_FREE;
        }
    p->job_head = p->job_count = p->job_reading = 0;
    p->drain = p->fill;
    dcu_netbar_reset(&p->bar);
    atomic_store_explicit(p->c.net_barrier, 0u, memory_order_relaxed);
}

/* The inboxes, tables and staging of the network path, and its manager. */
static dcuda_status_t open_net(dcu_proxy_t *p)
{
    const dcu_proxy_config_t *c = &p->c;
    p->inboxes = dcu_inboxes_create(c->inbox, c->inbox_tail, c->ranks, c->ops, c->backend,
                                    dcu_proxy_landed, p, c->inbox_max);
    p->parts = calloc((size_t)DCUDA_WIN_TABLE_SLOTS * (size_t)c->ranks, sizeof *p->parts);
    p->jobs = calloc((size_t)c->ranks, sizeof *p->jobs);
    if (p->inboxes) {
        dcu_inboxes_on_read(p->inboxes, dcu_proxy_serve_get, p);
        dcu_inboxes_share_writes(p->inboxes, &p->writes); /* and the hosts' chunks (host_serve.c) */
    }
    if (!p->inboxes || !p->parts || !p->jobs ||
        dcu_netbar_init(&p->bar, c->process_count, c->process_index,
                        c->path[c->process_index] == DCUDA_PATH_NET) != DCUDA_OK ||
        dcu_parts_init(&p->remote, c->ranks) != DCUDA_OK ||
        dcu_fences_init(&p->fences, c->ranks) != DCUDA_OK)
        return DCUDA_ERR_NO_MEMORY;
    /* A chunk and its header; a host's get's answer (HOST_DATA) has its
     * request between them. */
    const size_t buffer_bytes =
        sizeof(dcu_wire_header_t) + sizeof(dcu_wire_host_t) + DCU_NET_PUT_CHUNK;
    for (int i = 0; i < PROXY_BUFFERS; i++)
        if (!(dcu_proxy_buffer_at(p, i)->msg = dcu_proxy_pinned_alloc(p, buffer_bytes)))
            return DCUDA_ERR_NO_MEMORY;
    dcu_frames_init(&p->frames, dcu_proxy_send_now, p);
    if (dcu_spares_init(&p->spares, c->ops, c->backend, c->net_credit) != DCUDA_OK)
        return DCUDA_ERR_NO_MEMORY;
    dcu_net_env_t env = c->net_env;
    env.mem = (dcu_net_mem_t){ dcu_proxy_receive_buffer, dcu_proxy_receive_buffer_free,
                               dcu_proxy_release_message, p };
    dcuda_status_t st = c->net_ops->open(&env, receive, p, &p->net);
    if (st != DCUDA_OK)
        return st;
    const dcu_inbox_keeper_t keeper = { dcu_spares_keep, dcu_spares_unkeep, &p->spares };
    dcu_inboxes_on_keep(p->inboxes, &keeper);
    return dcu_spares_fill(&p->spares);
}

dcuda_status_t dcu_proxy_create(const dcu_proxy_config_t *config, dcu_proxy_t **out)
{
    dcu_proxy_t *p = calloc(1, sizeof *p);
    if (!p)
        return DCUDA_ERR_NO_MEMORY;
    p->c = *config;
    dcu_ring_reader_init(&p->queue, config->entries, config->capacity, sizeof(dcuda_cmd_t));
    p->world_first = config->proc_first[config->process_index];
    p->world_size = config->proc_first[config->process_count];
    p->limits = (dcu_wire_limits_t){ config->process_count, p->world_size, DCU_NET_MAX_MESSAGE };
    dcuda_status_t st = DCUDA_OK;
    if (config->net_ops)
        st = open_net(p);
    p->cmd_limits = (dcu_cmd_limits_t){ .ranks = config->ranks,
                                        .capacity = config->capacity,
                                        .world_first = p->world_first,
                                        .process_count = config->process_count,
                                        .proc_first = config->proc_first,
                                        .path = config->path,
                                        .net = p->net != NULL };
    if (st != DCUDA_OK) {
        dcu_proxy_destroy(p);
        return st;
    }
    *out = p;
    return DCUDA_OK;
}

void dcu_proxy_destroy(dcu_proxy_t *p)
{
    dcu_trace_write(p->c.process_index);
    /* Drained after every run: only a failure leaves chunks or frames. */
    dcu_proxy_host_chunks_settle(p);
    dcu_frames_discard(&p->frames);
    if (p->net) /* after a lost peer, the manager waits for nothing */
        p->c.net_ops->close(p->net, p->failure[0] ||
                                        atomic_load_explicit(p->c.cancel, memory_order_acquire) ==
                                            DCUDA_CANCEL_PEER);
    dcu_inboxes_destroy(p->inboxes); /* gives back the buffers it kept */
    if (p->c.net_ops)
        dcu_spares_free(&p->spares);
    for (int i = 0; i < PROXY_BUFFERS; i++) { /* one an abandoned manager may still read is left */
        staging_t *b = dcu_proxy_buffer_at(p, i);
        if (b->msg && b->state != STAGING_SENDING)
            dcu_proxy_pinned_free(p, b->msg);
    }
    free(p->jobs);
    free(p->parts);
    dcu_parts_free(&p->remote);
    dcu_fences_free(&p->fences);
    dcu_netbar_free(&p->bar);
    free(p);
}
