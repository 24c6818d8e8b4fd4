/*
 * The proxy's remote atomics service (ATOMIC commands; wire ATOMIC,
 * ATOMIC_DONE): a rank's atomic on a word of a rank of another process
 * goes to that rank's proxy, which puts it in the rank's inbox in order
 * with what arrived for it before (inbox.h); the rank applies it while it
 * waits and writes its answer beside it; the proxy reads the answer once
 * the rank consumed it and sends it back, and the asker's proxy answers
 * its rank's command with the word's value before. A rank waits for one
 * atomic at a time: its reply tag is kept until the answer comes, or
 * until no answer may come any more (the run cancelled, the proxy
 * failed).
 */
#include <string.h>

#include "service.h"

/* ---- the asker's side ----------------------------------------------------------------- */

/* A checked ATOMIC command to process q: answered once the target's
 * answer comes back. */
static int send_atomic(dcu_proxy_t *p, const dcuda_cmd_t *cmd, uint32_t t, int q)
{
    (void)t;
    dcu_wire_header_t *h = dcu_proxy_message_to(p, q, DCU_WIRE_ATOMIC, sizeof(dcu_wire_atomic_t));
    if (!h)
        return DCUDA_ERR_PEER;
    h->src_rank = p->world_first + cmd->rank;
    h->dst_rank = (int32_t)cmd->args[0];
    h->slot = (uint32_t)cmd->args[1];
    h->offset = cmd->args[2];
    h->count = cmd->args[1] >> 40;
    h->tag = cmd->tag;
    const dcu_wire_atomic_t a = { (uint32_t)(cmd->args[1] >> 32) & 0xffu, (uint32_t)cmd->args[5],
                                  cmd->args[3], cmd->args[4] };
    memcpy(h + 1, &a, sizeof a);
    dcu_proxy_send_to(p, q, h);
    p->atomics_waiting += p->atomic_waits[cmd->rank] == 0u;
    p->atomic_waits[cmd->rank] = cmd->tag;
    return PROXY_LATER;
}

/* The target's answer: my rank's command answered. One nobody waits for
 * (its rank was answered when the run was cancelled) is dropped. */
static void take_answer(dcu_proxy_t *p, int from, const dcu_wire_header_t *h)
{
    int r = h->dst_rank - p->world_first;
    if (r < 0 || r >= p->c.ranks || !dcu_proxy_holds(p, from, h->src_rank) ||
        p->atomic_waits[r] != h->tag) {
        if (atomic_load_explicit(p->c.cancel, memory_order_acquire) == DCUDA_CANCEL_NONE)
            dcu_proxy_fail(p, "process %d answered an atomic of rank %d that no rank waits for",
                           from, h->dst_rank);
        return;
    }
    p->atomic_waits[r] = 0u;
    p->atomics_waiting--;
    dcu_proxy_answer_value(p, r, h->tag, h->epoch ? DCUDA_ERR_INVALID_ARG : DCUDA_OK, h->count);
}

/* ---- the target's side ---------------------------------------------------------------- */

/* An atomic from process `from` on my rank's word: into its inbox. Its
 * token for the answer: the asker and its reply tag. */
static void take_atomic(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body)
{
    int r;
    const dcuda_win_entry_t *part = dcu_proxy_part_of(p, h, "remote atomic", &r);
    if (!part)
        return;
    if (!dcu_proxy_holds(p, from, h->src_rank)) {
        dcu_proxy_fail(p, "process %d sent an atomic of rank %d, which it does not hold", from,
                       h->src_rank);
        return;
    }
    dcu_wire_atomic_t w;
    memcpy(&w, body, sizeof w);
    const dcu_inbox_atomic_t a = { w.op,      (uint32_t)h->count,
                                   w.note,    w.operand,
                                   w.compare, (uint64_t)(uint32_t)h->src_rank << 32 | h->tag };
    dcu_inbox_source_t src = { from, dcu_proxy_message_bytes(h) };
    if (dcu_inbox_atomic(p->inboxes, r, part->base + h->offset, &a, src) != DCUDA_OK)
        dcu_proxy_fail(p, "cannot hand an atomic from rank %d to rank %d", h->src_rank,
                       h->dst_rank);
}

void dcu_proxy_atomic_answered(void *arg, int r, int from, uint64_t token, dcuda_status_t status,
                               uint64_t value)
{
    dcu_proxy_t *p = arg;
    if (status != DCUDA_OK && status != DCUDA_ERR_INVALID_ARG) {
        dcu_proxy_fail(p, "rank %d left no answer to an atomic", p->world_first + r);
        return;
    }
    dcu_wire_header_t *h = dcu_proxy_message_to(p, from, DCU_WIRE_ATOMIC_DONE, 0);
    if (!h)
        return;
    h->src_rank = p->world_first + r;
    h->dst_rank = (int32_t)(token >> 32);
    h->tag = (uint32_t)token;
    h->count = value;
    h->epoch = status == DCUDA_OK ? 0u : 1u;
    dcu_proxy_send_to(p, from, h);
}

/* ---- the service ------------------------------------------------------------------------ */

static void atomics_message(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body)
{
    if (h->type == DCU_WIRE_ATOMIC)
        take_atomic(p, from, h, body);
    else
        take_answer(p, from, h);
}

/* The ranks that wait for an answer when none may come any more
 * (dcu_proxy_asks_end). */
static int atomics_serve(dcu_proxy_t *p)
{
    if (!p->net || !p->atomics_waiting)
        return 0;
    dcuda_status_t why = dcu_proxy_asks_end(p);
    if (why == DCUDA_OK)
        return 0;
    for (int r = 0; r < p->c.ranks; r++)
        if (p->atomic_waits[r]) {
            dcu_proxy_answer_value(p, r, p->atomic_waits[r], why, 0u);
            p->atomic_waits[r] = 0u;
        }
    p->atomics_waiting = 0;
    return 1;
}

/* The answers my ranks wrote since the last pass, sent back. */
static int atomics_progress(dcu_proxy_t *p)
{
    return !p->failure[0] && dcu_inbox_answers_due(p->inboxes) ? dcu_inbox_answers(p->inboxes) : 0;
}

/* A new run: no rank waits (those of the last run were answered or ended
 * with it). */
static void atomics_reset(dcu_proxy_t *p)
{
    if (!p->net)
        return;
    memset(p->atomic_waits, 0, (size_t)p->c.ranks * sizeof *p->atomic_waits);
    p->atomics_waiting = 0;
}

const dcu_proxy_service_t dcu_proxy_svc_atomics = {
    .name = "atomics",
    .messages = DCU_SVC_BIT(DCU_WIRE_ATOMIC) | DCU_SVC_BIT(DCU_WIRE_ATOMIC_DONE),
    .commands = DCU_SVC_BIT(DCUDA_CMD_ATOMIC),
    .on_message = atomics_message,
    .on_command = send_atomic,
    .serve = atomics_serve,
    .progress = atomics_progress,
    .reset = atomics_reset,
};
