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

#include "service.h"
#include "trace.h"
#include "util/clock.h"
#include "util/nvtx.h"

/* Acknowledgements wait for a pass in which nothing more arrived (one for
 * a burst of messages), unless this many bytes of credit are owed: a
 * sender that streams a large put waits for them. */
#define PROXY_ACK_NOW_BYTES (DCU_NET_PUT_CHUNK / 2)
/* How long the end of a run waits for its messages to leave. */
#define PROXY_DRAIN_NS (5 * DCU_NS_PER_S)

/* ---- the services --------------------------------------------------------------- */

/* The services in polling order (service.h): each pass serves them in
 * this order, then polls them in this order after the manager's progress.
 * A service calls only those after it in this list (and the core). */
static const dcu_proxy_service_t *const services[] = {
    &dcu_proxy_svc_host,    &dcu_proxy_svc_bulk,     &dcu_proxy_svc_fence,   &dcu_proxy_svc_beats,
    &dcu_proxy_svc_rma,     &dcu_proxy_svc_atomics,  &dcu_proxy_svc_barrier, &dcu_proxy_svc_parts,
    &dcu_proxy_svc_control, &dcu_proxy_svc_detector,
};
#define SERVICES ((int)(sizeof services / sizeof services[0]))
/* The wire types (1 .. DCU_WIRE_ATOMIC_DONE but 3, retired: wire.h) and
 * commands (DCUDA_CMD_PUT .. DCUDA_CMD_ATOMIC; PING is the core's) the
 * table must cover. */
#define LAST_WIRE_TYPE DCU_WIRE_ATOMIC_DONE
#define RETIRED_WIRE_TYPE 3u
#define LAST_COMMAND DCUDA_CMD_ATOMIC

const dcu_proxy_service_t *const *dcu_proxy_services(int *count)
{
    *count = SERVICES;
    return services;
}

/* The service that receives wire type `type`, or executes command `op`;
 * NULL for none. */
static const dcu_proxy_service_t *service_of_message(unsigned type)
{
    for (int i = 0; i < SERVICES && type < 32; i++)
        if (services[i]->messages & DCU_SVC_BIT(type))
            return services[i];
    return NULL;
}

static const dcu_proxy_service_t *service_of_command(unsigned op)
{
    for (int i = 0; i < SERVICES && op < 32; i++)
        if (services[i]->commands & DCU_SVC_BIT(op))
            return services[i];
    return NULL;
}

/* How many services claim bit n of messages (which 0) or commands (1). */
static int claimants(unsigned n, int which)
{
    int k = 0;
    for (int i = 0; i < SERVICES; i++)
        k += ((which ? services[i]->commands : services[i]->messages) & DCU_SVC_BIT(n)) != 0;
    return k;
}

int dcu_proxy_services_check(char *why, size_t why_size)
{
    for (unsigned t = 0; t < 32; t++) {
        int want = t >= 1 && t <= LAST_WIRE_TYPE && t != RETIRED_WIRE_TYPE, k = claimants(t, 0);
        if (k != want) {
            snprintf(why, why_size, "wire type %u is received by %d services (want %d)", t, k,
                     want);
            return -1;
        }
    }
    for (unsigned op = 0; op < 32; op++) {
        int want = op >= DCUDA_CMD_PUT && op <= LAST_COMMAND, k = claimants(op, 1);
        if (k != want) {
            snprintf(why, why_size, "command %u is executed by %d services (want %d)", op, k, want);
            return -1;
        }
    }
    for (int i = 0; i < SERVICES; i++)
        if ((services[i]->commands && !services[i]->on_command) ||
            (!services[i]->messages && services[i]->on_message)) {
            snprintf(why, why_size,
                     "service %s has no handler for its commands, or a "
                     "message handler for no message",
                     services[i]->name);
            return -1;
        }
    return 0;
}

/* ---- what arrives ----------------------------------------------------------------- */

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
    const dcu_proxy_service_t *s = service_of_message(h.type); /* dcu_wire_check knows it */
    if (s && s->on_message)
        s->on_message(p, from, &h, body);
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

/* ---- what others read of the proxy ------------------------------------------------- */

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
        (p->net && (p->remote.asking || p->fences.count || p->atomics_waiting ||
                    dcu_inbox_answers_due(p->inboxes))))
        return 0;
    /* An acknowledgement not sent yet may still end a barrier's wait. */
    return !p->net || (dcu_inbox_held(p->inboxes) == 0 && dcu_inbox_unread(p->inboxes) == 0 &&
                       p->bar.owed_count == 0);
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
    if (cmd->op == DCUDA_CMD_PING)
        return DCUDA_OK;
    const dcu_proxy_service_t *s = service_of_command(cmd->op); /* dcu_cmd_check knows it */
    return s ? s->on_command(p, cmd, t, info->target) : DCUDA_ERR_INVALID_ARG;
}

/* Must the executable command `cmd` wait for its target's credit? */
static int waits_for_credit(const dcu_proxy_t *p, const dcuda_cmd_t *cmd,
                            const dcu_cmd_info_t *info)
{
    uint64_t bytes = sizeof(dcu_wire_header_t);
    if (cmd->op == DCUDA_CMD_PUT)
        bytes += cmd->args[3];
    else if (cmd->op == DCUDA_CMD_ATOMIC)
        bytes += sizeof(dcu_wire_atomic_t);
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

/* One pass: the command queue, the services' work, the manager's progress
 * (and the acknowledgements once nothing more arrived), the services'
 * steps after it; the frames made on the way leave at the end. */
int dcu_proxy_poll(dcu_proxy_t *p)
{
    int did = serve_commands(p);
    for (int i = 0; i < SERVICES; i++)
        if (services[i]->serve)
            did |= services[i]->serve(p) > 0;
    dcu_proxy_send_frames(p);
    if (p->net && !p->failure[0]) {
        int r = p->c.net_ops->progress(p->net);
        if (r < 0)
            dcu_proxy_net_failed(p, "network");
        if (r == 0) /* nothing more arrived for now */
            dcu_proxy_send_acks(p);
        did |= r > 0;
    }
    for (int i = 0; p->net && i < SERVICES; i++)
        if (services[i]->progress)
            did |= services[i]->progress(p) > 0;
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
    for (int i = 0; i < SERVICES; i++)
        if (services[i]->drain)
            services[i]->drain(p);
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
    for (int i = 0; i < SERVICES; i++)
        if (services[i]->close)
            services[i]->close(p);
    dcu_nvtx_pop();
}

/* ---- life --------------------------------------------------------------------------- */

void dcu_proxy_reset(dcu_proxy_t *p)
{
    dcu_ring_reset(&p->queue);
    memset(p->c.replies, 0, (size_t)p->c.ranks * sizeof *p->c.replies);
    atomic_store_explicit(p->c.cmd_tail, 0u, memory_order_relaxed);
    p->run++;
    p->sent = p->received = 0;
    p->unacked = 0;
    p->cancel_seen_ns = 0;
    for (int i = 0; i < SERVICES; i++)
        if (services[i]->reset)
            services[i]->reset(p);
}

static dcuda_status_t open_net(dcu_proxy_t *p)
{
    const dcu_proxy_config_t *c = &p->c;
    p->inboxes = dcu_inboxes_create(c->inbox, c->inbox_tail, c->ranks, c->ops, c->backend,
                                    dcu_proxy_landed, p, c->inbox_max);
    p->parts = calloc((size_t)DCUDA_WIN_TABLE_SLOTS * (size_t)c->ranks, sizeof *p->parts);
    p->jobs = calloc((size_t)c->ranks, sizeof *p->jobs);
    p->atomic_waits = calloc((size_t)c->ranks, sizeof *p->atomic_waits);
    if (p->inboxes) {
        dcu_inboxes_on_read(p->inboxes, dcu_proxy_serve_get, p);
        dcu_inboxes_on_answer(p->inboxes, dcu_proxy_atomic_answered, p);
        dcu_inboxes_share_writes(p->inboxes, &p->writes); /* and the hosts' chunks (host_serve.c) */
    }
    if (!p->inboxes || !p->parts || !p->jobs || !p->atomic_waits ||
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
    free(p->atomic_waits);
    dcu_parts_free(&p->remote);
    dcu_fences_free(&p->fences);
    dcu_netbar_free(&p->bar);
    free(p);
}
