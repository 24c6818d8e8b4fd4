/*
 * Beats along the deadlock detector's tree (see proxy.h, dcu_proxy_left):
 * while a run goes on, each process beats its neighbours in the tree
 * (parent, children), and one that stays silent too long is named lost
 * to the run, here and, along the tree, in every process. proxy.c hands
 * it every message that arrives (dcu_proxy_heard), sets it up with each
 * run (dcu_proxy_beats_reset) and calls its step once a pass
 * (dcu_proxy_beats). It calls only send.c and proxy_core.c of the proxy.
 */
#include <stdatomic.h>
#include <stdio.h>

#include "service.h"
#include "util/clock.h"

/* Beats along the detector's tree while a run goes on: how often a
 * process beats, and how long a neighbour may stay silent before it is
 * named lost (a dead or stopped process, or a host thread held up, is
 * named within PROXY_SILENCE_NS + PROXY_BEAT_NS). */
#define PROXY_BEAT_NS (DCU_NS_PER_S / 2)
#define PROXY_SILENCE_NS (4 * DCU_NS_PER_S)

/* Anything from a neighbour in the tree is a beat; a BEAT of tag 1 says
 * its ranks are done (it beats no more this run). */
void dcu_proxy_heard(dcu_proxy_t *p, int from, const dcu_wire_header_t *h)
{
    for (int k = 0; k < p->nbs; k++)
        if (p->nb[k].q == from) {
            p->nb[k].heard_ns = dcu_clock_ns();
            p->nb[k].done |= h->type == DCU_WIRE_BEAT && h->tag == 1;
        }
}

/* My neighbours in the detector's tree, each heard from now (a run
 * starts in every process after one barrier). */
void dcu_proxy_beats_reset(dcu_proxy_t *p)
{
    int nb[3];
    uint64_t now = dcu_clock_ns();
    p->nbs = dcu_proxy_tree_neighbours(p, nb);
    for (int k = 0; k < p->nbs; k++) {
        p->nb[k].q = nb[k];
        p->nb[k].heard_ns = now;
        p->nb[k].done = 0;
    }
    p->beat_ns = 0;
    p->listened_ns = 0;
}

/* A neighbour's silence counts only while this thread listened: of a
 * gap between two of its looks longer than a beat (the process stopped,
 * or its host thread held up), what its neighbours sent meanwhile may
 * still wait in the manager, so every neighbour's silence is moved on by
 * the gap less one beat (polls that are merely slow still add up to a
 * verdict). Without this a process that resumes after a stop names the
 * healthy neighbour that is busy naming it. */
static void forgive_own_gap(dcu_proxy_t *p, uint64_t now)
{
    uint64_t gap = p->listened_ns ? now - p->listened_ns : 0;
    p->listened_ns = now;
    if (gap <= PROXY_BEAT_NS)
        return;
    for (int k = 0; k < p->nbs; k++) {
        uint64_t moved = p->nb[k].heard_ns + (gap - PROXY_BEAT_NS);
        p->nb[k].heard_ns = moved < now ? moved : now;
    }
}

/* A neighbour silent for too long while this run goes on: it is lost to
 * the run, here and, told, in every process. */
static void name_silent(dcu_proxy_t *p, int q, uint64_t silent_ns)
{
    char who[88], me[40];
    if (p->c.net_env.describe)
        p->c.net_env.describe(q, who, sizeof who);
    else
        snprintf(who, sizeof who, "process %d", q);
    int lanes = p->c.net_env.lanes, i = p->c.process_index;
    if (lanes > 1)
        snprintf(me, sizeof me, "process %d, lane %d", i / lanes, i % lanes);
    else
        snprintf(me, sizeof me, "process %d", i);
    snprintf(p->left, sizeof p->left,
             "%s sent nothing for %.1f s while its run went on (dead, stopped, or its host "
             "thread held up; noticed by %s)",
             who, (double)silent_ns / DCU_NS_PER_S, me);
    dcu_proxy_tell(p, DCU_PROXY_LEFT);
    dcu_proxy_spread(p, DCU_WIRE_LEFT, p->left, -1);
    uint32_t none = DCUDA_CANCEL_NONE;
    atomic_compare_exchange_strong_explicit(p->c.cancel, &none, DCUDA_CANCEL_PEER,
                                            memory_order_acq_rel, memory_order_acquire);
}

/* Beats my neighbours every PROXY_BEAT_NS, and names one silent for
 * PROXY_SILENCE_NS. Not once the run was cancelled: a process whose
 * ranks ended stops beating, and its peers' ranks may still compute. */
void dcu_proxy_beats(dcu_proxy_t *p)
{
    uint64_t now = dcu_clock_ns();
    forgive_own_gap(p, now);
    if (now - p->beat_ns >= PROXY_BEAT_NS) {
        p->beat_ns = now;
        for (int k = 0; k < p->nbs; k++)
            if (!p->nb[k].done)
                dcu_proxy_send_bare(p, p->nb[k].q, DCU_WIRE_BEAT, 0, 0, 0);
    }
    if (p->left[0] || atomic_load_explicit(p->c.cancel, memory_order_acquire))
        return;
    for (int k = 0; k < p->nbs; k++)
        if (!p->nb[k].done && now - p->nb[k].heard_ns > PROXY_SILENCE_NS) {
            name_silent(p, p->nb[k].q, now - p->nb[k].heard_ns);
            return;
        }
}

void dcu_proxy_ranks_done(dcu_proxy_t *p)
{
    for (int k = 0; p->net && !p->failure[0] && k < p->nbs; k++)
        dcu_proxy_send_bare(p, p->nb[k].q, DCU_WIRE_BEAT, 0, 1, 0);
}

/* ---- the service ------------------------------------------------------------------------ */

static int beats_progress(dcu_proxy_t *p)
{
    if (!p->failure[0])
        dcu_proxy_beats(p);
    return 0;
}

static void beats_reset(dcu_proxy_t *p)
{
    if (p->net)
        dcu_proxy_beats_reset(p);
}

/* A beat is heard as every message is (dcu_proxy_heard): nothing more. */
const dcu_proxy_service_t dcu_proxy_svc_beats = {
    .name = "beats",
    .messages = DCU_SVC_BIT(DCU_WIRE_BEAT),
    .progress = beats_progress,
    .reset = beats_reset,
};
