/*
 * The proxy's WORLD barriers and fences, both completed by what the
 * acknowledgements of my sends say (netbar.h, fence.h). Barrier service:
 * the BARRIER command (my device reached a WORLD barrier; its rounds run
 * once what my ranks sent is acknowledged) and the ROUND and ACK messages.
 * Fence service: the FENCE command, answered once what the proxy sent
 * before it is in its receivers' inboxes; each pass, the fences the
 * acknowledgements complete, and those the run's end abandons.
 */
#include <stdatomic.h>

#include "service.h"
#include "trace.h"
#include "util/clock.h"

/* ---- WORLD barriers ------------------------------------------------------------------ */

void dcu_proxy_advance_barriers(dcu_proxy_t *p)
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
        dcu_proxy_advance_barriers(p);
}

/* A ROUND of a barrier, or an ACK of what my ranks sent. */
static void barrier_message(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body)
{
    (void)body;
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

/* My device reached WORLD barrier `epoch` (a checked command), which
 * creates window `slot` or none: my ranks' parts of a new window are read
 * (other processes will ask for them once they passed it) and what was
 * known of the slot's last window is stale; the barrier runs its rounds
 * once what my ranks sent is acknowledged (netbar.h). */
static int barrier_command(dcu_proxy_t *p, const dcuda_cmd_t *cmd, uint32_t t, int target)
{
    (void)t, (void)target;
    uint32_t epoch = (uint32_t)cmd->args[0], slot = (uint32_t)cmd->args[1];
    /* Once the run is cancelled, my ranks' waits end at once: they may
     * reach a later barrier before this one completed its rounds (which
     * other processes may still owe): nothing to enter then. */
    if (epoch != p->bar.done + 1u && atomic_load_explicit(p->c.cancel, memory_order_acquire) != 0)
        return DCUDA_OK;
    if (dcu_netbar_enter(&p->bar, epoch)) {
        dcu_proxy_fail(p, "process %d reached WORLD barrier %u while this one completed %u",
                       p->c.process_index, epoch, p->bar.done);
        return DCUDA_ERR_PEER;
    }
    if (slot != DCUDA_CMD_NO_SLOT) {
        if (!dcu_proxy_read_parts(p, slot, 0, p->c.ranks))
            return DCUDA_ERR_PEER;
        dcu_parts_new_window(&p->remote, slot);
    }
    dcu_proxy_advance_barriers(p);
    return p->failure[0] ? DCUDA_ERR_PEER : DCUDA_OK;
}

static void barrier_reset(dcu_proxy_t *p)
{
    if (!p->net)
        return;
    dcu_netbar_reset(&p->bar);
    atomic_store_explicit(p->c.net_barrier, 0u, memory_order_relaxed);
}

const dcu_proxy_service_t dcu_proxy_svc_barrier = {
    .name = "barrier",
    .messages = DCU_SVC_BIT(DCU_WIRE_ROUND) | DCU_SVC_BIT(DCU_WIRE_ACK),
    .commands = DCU_SVC_BIT(DCUDA_CMD_BARRIER),
    .on_message = barrier_message,
    .on_command = barrier_command,
    .reset = barrier_reset,
};

/* ---- fences -------------------------------------------------------------------------- */

/* A checked FENCE: answered at once when nothing sent is unacknowledged
 * (or there is no network path), else once it is (fence_progress). */
static int fence_command(dcu_proxy_t *p, const dcuda_cmd_t *cmd, uint32_t t, int target)
{
    int waits;
    (void)t, (void)target;
    if (!p->net)
        return DCUDA_OK;
    const char *bad = dcu_fences_take(&p->fences, &p->bar, cmd->rank, cmd->tag, &waits);
    if (bad) {
        dcu_proxy_fail(p, "rank %d: %s", p->world_first + cmd->rank, bad);
        return DCUDA_ERR_PEER;
    }
    return waits ? PROXY_LATER : DCUDA_OK;
}

/* The fences that wait when no answer may come any more (dcu_proxy_asks_end). */
static int fence_serve(dcu_proxy_t *p)
{
    int r;
    uint32_t tag;
    if (!p->net || !p->fences.count)
        return 0;
    dcuda_status_t why = dcu_proxy_asks_end(p);
    if (why == DCUDA_OK)
        return 0;
    while (dcu_fences_next_waiting(&p->fences, &r, &tag))
        dcu_proxy_answer_value(p, r, tag, why, 0u);
    return 1;
}

/* Answers the fences the acknowledgements so far complete. */
static int fence_progress(dcu_proxy_t *p)
{
    int r, did = 0;
    uint32_t tag;
    if (p->failure[0])
        return 0;
    while (dcu_fences_done(&p->fences, &p->bar, &r, &tag)) {
        dcu_proxy_answer_value(p, r, tag, DCUDA_OK, dcu_clock_ns());
        did = 1;
    }
    return did;
}

static void fence_reset(dcu_proxy_t *p)
{
    if (p->net)
        dcu_fences_reset(&p->fences); /* their ranks ended with the run */
}

const dcu_proxy_service_t dcu_proxy_svc_fence = {
    .name = "fence",
    .commands = DCU_SVC_BIT(DCUDA_CMD_FENCE),
    .on_command = fence_command,
    .serve = fence_serve,
    .progress = fence_progress,
    .reset = fence_reset,
};
