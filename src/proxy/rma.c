/*
 * The proxy's RMA service: the ranks' puts and notifications to ranks of
 * other processes (PUT, NOTIFY commands), made into messages in the order
 * of the commands; those that arrive for my ranks, handed to their
 * inboxes in order (inbox.h); each pass on the network path, the puts
 * that waited for inbox room retried. (A large put read from rank memory
 * and the gets are bulk.c's.)
 */
#include <string.h>

#include "service.h"
#include "trace.h"

/* ---- what arrives ------------------------------------------------------------------- */

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

static void rma_message(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body)
{
    (void)from;
    const uint64_t bytes = h->type == DCU_WIRE_PUT ? h->count : 0;
    dcu_trace_mark(DCU_TRACE_RECEIVED, bytes);
    if (h->type == DCU_WIRE_PUT)
        apply_put(p, h, body);
    else
        apply_notify(p, h);
    dcu_trace_mark(DCU_TRACE_WRITTEN, bytes);
}

/* ---- commands into messages ----------------------------------------------------------- */

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

static int rma_command(dcu_proxy_t *p, const dcuda_cmd_t *cmd, uint32_t t, int target)
{
    if (cmd->op == DCUDA_CMD_PUT)
        send_put(p, cmd, t, target);
    else
        send_notify(p, cmd, target);
    return p->failure[0] ? DCUDA_ERR_PEER : DCUDA_OK;
}

/* ---- each pass ------------------------------------------------------------------------- */

/* Puts that waited for inbox room, written where there is room now; a
 * WORLD barrier that waited for them may complete. */
static int rma_progress(dcu_proxy_t *p)
{
    if (p->failure[0] || dcu_inbox_held(p->inboxes) == 0)
        return 0;
    int r = dcu_inbox_retry(p->inboxes);
    if (r < 0)
        dcu_proxy_fail(p, "cannot write a put that waited for inbox room");
    if (r > 0)
        dcu_proxy_advance_barriers(p);
    return r > 0;
}

const dcu_proxy_service_t dcu_proxy_svc_rma = {
    .name = "rma",
    .messages = DCU_SVC_BIT(DCU_WIRE_PUT) | DCU_SVC_BIT(DCU_WIRE_NOTIFY),
    .commands = DCU_SVC_BIT(DCUDA_CMD_PUT) | DCU_SVC_BIT(DCUDA_CMD_NOTIFY),
    .on_message = rma_message,
    .on_command = rma_command,
    .progress = rma_progress,
};
