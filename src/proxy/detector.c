/*
 * The deadlock detector's rounds over the network (see proxy.h and
 * core/deadlock.c), on a tree of the processes rooted at process 0: a
 * round asked goes down the tree (PROBE), each process's answer folded
 * with its children's goes up (REPLY), and the root's verdict goes down
 * again (FOUND), declared in the node's word on its way (node/node.h).
 * proxy.c hands it the detector's messages (dcu_proxy_dl_receive), and
 * the verdict any message carries (DCU_WIRE_ENDED: dcu_proxy_dl_declare).
 * It calls only send.c and proxy_core.c of the proxy.
 */
#include <stdio.h>
#include <string.h>

#include "node/node.h"
#include "service.h"
#include "util/clock.h"

static int dl_children(const dcu_proxy_t *p)
{
    int first = 2 * p->c.process_index + 1;
    return first >= p->c.process_count ? 0 : first + 1 >= p->c.process_count ? 1 : 2;
}

/* A message of the detector's (no body but a reply's) to process q. */
static void dl_send(dcu_proxy_t *p, int q, uint8_t type, uint32_t round, const dcu_quiet_t *sum)
{
    dcu_wire_header_t *h = dcu_proxy_message_to(p, q, type, sum ? sizeof *sum : 0);
    if (!h)
        return;
    h->epoch = round;
    if (sum)
        memcpy(h + 1, sum, sizeof *sum);
    dcu_proxy_send_to(p, q, h);
}

static void dl_to_children(dcu_proxy_t *p, uint8_t type, uint32_t round)
{
    for (int k = 0; k < dl_children(p); k++)
        dl_send(p, 2 * p->c.process_index + 1 + k, type, round, NULL);
}

/* Round `round` is asked of this process: it asks its children. */
static void dl_begin(dcu_proxy_t *p, uint32_t round)
{
    p->dl.asked = round;
    p->dl.mine_in = p->dl.replies = 0;
    p->dl.answered_by[0] = p->dl.answered_by[1] = 0;
    p->dl.sum = dcu_quiet_none();
    p->dl.asked_ns = dcu_clock_ns();
    dl_to_children(p, DCU_WIRE_PROBE, round);
}

/* Once my answer and my children's are in: up to my parent (the root keeps
 * it). */
static void dl_pass_up(dcu_proxy_t *p)
{
    if (!p->dl.mine_in || p->dl.replies < dl_children(p))
        return;
    if (p->c.process_index == 0) {
        p->dl.collected = p->dl.asked;
        p->dl.result = p->dl.sum;
    } else {
        dl_send(p, (p->c.process_index - 1) / 2, DCU_WIRE_REPLY, p->dl.asked, &p->dl.sum);
    }
}

/* The run is deadlocked: the node's word says so before anything else
 * that arrives is applied (a blocked rank whose wait it completes reads
 * the word, and ends with the deadlock), and my children in the tree hear
 * it. The monitor reports and ends the waits (core/deadlock.c). */
static void dl_found(dcu_proxy_t *p)
{
    if (p->dl.found)
        return;
    p->dl.found = 1;
    dcu_node_dl_declare();
    dl_to_children(p, DCU_WIRE_FOUND, 0);
}

void dcu_proxy_dl_receive(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body)
{
    int child = from - (2 * p->c.process_index + 1);
    if (h->type == DCU_WIRE_FOUND) {
        dl_found(p);
    } else if (h->type == DCU_WIRE_PROBE && from == (p->c.process_index - 1) / 2) {
        dl_begin(p, h->epoch);
    } else if (h->type == DCU_WIRE_REPLY && child >= 0 && child < dl_children(p) &&
               h->epoch == p->dl.asked && !p->dl.answered_by[child]) {
        dcu_quiet_t q;
        memcpy(&q, body, sizeof q);
        dcu_quiet_fold(&p->dl.sum, &q);
        p->dl.answered_by[child] = 1;
        p->dl.replies++;
        dl_pass_up(p);
    } else {
        dcu_proxy_fail(p, "process %d sent a deadlock detector's message out of turn", from);
    }
}

void dcu_proxy_dl_ask(dcu_proxy_t *p, uint32_t round) { dl_begin(p, round); }

uint32_t dcu_proxy_dl_asked(const dcu_proxy_t *p) { return p->dl.mine_in ? 0u : p->dl.asked; }

void dcu_proxy_dl_answer(dcu_proxy_t *p, uint32_t round, const dcu_quiet_t *q)
{
    if (round != p->dl.asked || p->dl.mine_in)
        return;
    dcu_quiet_t mine = *q;
    mine.sent = p->sent;
    mine.received = p->received;
    dcu_quiet_fold(&p->dl.sum, &mine);
    p->dl.mine_in = 1;
    dl_pass_up(p);
}

int dcu_proxy_dl_collect(const dcu_proxy_t *p, uint32_t round, dcu_quiet_t *sum)
{
    if (p->dl.collected != round)
        return 0;
    *sum = p->dl.result;
    return 1;
}

void dcu_proxy_dl_declare(dcu_proxy_t *p) { dl_found(p); }

int dcu_proxy_dl_declared(const dcu_proxy_t *p) { return p->dl.found; }

int dcu_proxy_dl_stalled(const dcu_proxy_t *p, uint64_t ns, char *why, size_t why_size)
{
    uint64_t now = dcu_clock_ns();
    if (!p->net || !p->dl.asked || now - p->dl.asked_ns < ns)
        return 0;
    for (int k = 0; k < dl_children(p); k++) {
        if (p->dl.answered_by[k])
            continue;
        char who[128];
        int q = 2 * p->c.process_index + 1 + k;
        if (p->c.net_env.describe)
            p->c.net_env.describe(q, who, sizeof who);
        else
            snprintf(who, sizeof who, "process %d", q);
        snprintf(why, why_size,
                 "%s has not answered for %.1f s (stopped, or its host thread held up)", who,
                 (double)(now - p->dl.asked_ns) / DCU_NS_PER_S);
        return 1;
    }
    return 0;
}

/* ---- the service ------------------------------------------------------------------------ */

static void detector_reset(dcu_proxy_t *p) { memset(&p->dl, 0, sizeof p->dl); }

const dcu_proxy_service_t dcu_proxy_svc_detector = {
    .name = "detector",
    .messages =
        DCU_SVC_BIT(DCU_WIRE_PROBE) | DCU_SVC_BIT(DCU_WIRE_REPLY) | DCU_SVC_BIT(DCU_WIRE_FOUND),
    .on_message = dcu_proxy_dl_receive,
    .reset = detector_reset,
};
