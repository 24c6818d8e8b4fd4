/*
 * The deadlock detector: a run in which every rank of every process is
 * blocked (in a wait or a barrier, or finished) and nothing is in flight
 * can never go on, so it ends with DCUDA_ERR_DEADLOCK and the report of
 * what each rank waits for, instead of hanging (DEADLOCK setting, on by
 * default). A wait that can still be satisfied is never ended.
 *
 * Each process looks at itself (a snapshot): every rank blocked or
 * finished, each blocked rank's counter still at the value it last saw
 * (shared/layout.h: dcuda_rank_status_t.seen), the proxy with nothing in
 * its hands, no rank's episode changed between the first and the last
 * look. Process 0 asks all processes for such a snapshot in rounds, through
 * the node segment when every process is on its node, through a tree of
 * network messages otherwise (node/, proxy/), and declares a deadlock when
 * two rounds in a row found every process quiet, none changed in between,
 * and every message counted as sent counted as received (Mattern's four
 * counters: no message was on its way, and nothing moved between the two
 * rounds, so nothing can move again). A host counts as a process's
 * thread that may notify a rank from dcuda_host_run_start until
 * dcuda_host_run_wait, except while a thread of it waits for the ranks'
 * notifications (host_wait.c): while some host may and some rank waits
 * for a user tag, no round finds deadlock; ranks that wait only for the
 * library's tags (barriers, collectives) no host can release.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "node/node.h"
#include "util/clock.h"

/* How often a process looks for a round to answer, and the least time
 * between two rounds of process 0 (two rounds find a deadlock). */
#define DL_LOOK_NS (5 * DCU_NS_PER_MS)
#define DL_GAP_NS (40 * DCU_NS_PER_MS)

enum dl_way { DL_LOCAL, DL_NODE, DL_NET };

struct dcu_detector {
    int way;
    dcuda_notif_counters_t *notifs; /* host copy of the ranks' counters */
    dcuda_barrier_t barriers[DCUDA_COMM_COUNT];
    uint32_t *episodes; /* [ranks]: the first look's */
    /* The ranks and their counters at my last quiet snapshot. */
    dcuda_notif_counters_t *quiet_notifs;
    dcu_rank_view_t *views;
    struct {              /* one run's, zero at its start */
        uint64_t print;   /* my state at my last answer */
        int answered;     /* I answered a round of this run */
        int viewed;       /* views hold a quiet snapshot of this run */
        uint64_t next_ns; /* when to look next */
        /* Process 0. */
        uint32_t round; /* the last round asked */
        int collecting;
        int prev_quiet; /* the round before was quiet everywhere */
        uint64_t done_ns;
        /* The local way's one round. */
        uint32_t local_asked, local_collected;
        dcu_quiet_t local_sum;
    } run;
};

static void free_detector(dcu_detector_t *d)
{
    free(d->notifs);
    free(d->episodes);
    free(d->quiet_notifs);
    free(d->views);
    free(d);
}

dcuda_status_t dcu_deadlock_create(dcuda_host_h h)
{
    dcu_detector_t *d = calloc(1, sizeof *d);
    size_t n = (size_t)h->image.device_size;
    if (!d)
        return DCUDA_ERR_NO_MEMORY;
    d->notifs = calloc(n, sizeof *d->notifs);
    d->episodes = calloc(n, sizeof *d->episodes);
    d->quiet_notifs = calloc(n, sizeof *d->quiet_notifs);
    d->views = calloc(n, sizeof *d->views);
    if (!d->notifs || !d->episodes || !d->quiet_notifs || !d->views) {
        free_detector(d);
        return DCUDA_ERR_NO_MEMORY;
    }
    /* Over the network as soon as anything goes through it (NET_LOOPBACK
     * with one process too: its messages are counted on their way). */
    d->way = h->net_peers ? DL_NET : h->info.process_count == 1 ? DL_LOCAL : DL_NODE;
    h->detector = d;
    return DCUDA_OK;
}

void dcu_deadlock_destroy(dcuda_host_h h)
{
    if (!h->detector)
        return;
    free_detector(h->detector);
    h->detector = NULL;
}

void dcu_deadlock_start(dcuda_host_h h)
{
    dcu_detector_t *d = h->detector;
    memset(&d->run, 0, sizeof d->run);
    d->run.done_ns = dcu_clock_ns();
}

/* ---- one process's snapshot ------------------------------------------------------ */

static int blocked(uint32_t phase)
{
    return phase == DCUDA_PHASE_WAITING || phase == DCUDA_PHASE_BARRIER;
}

/* Every rank of mine blocked or finished, as the watchdog's view says. */
static int all_blocked(dcuda_host_h h)
{
    for (int r = 0; r < h->image.device_size; r++) {
        uint32_t phase = atomic_load_explicit(&h->status_h[r].phase, memory_order_acquire);
        if (!blocked(phase) && phase != DCUDA_PHASE_FINISHED)
            return 0;
    }
    return 1;
}

/* A set wait's counter (DCUDA_WAITS_SET) as rank r sees it: how many
 * tags of its set have a notification it had not consumed when it began
 * to block (it published what it had consumed of every tag then). */
static uint32_t set_ready_now(dcuda_host_h h, int r, const dcuda_rank_status_t *s)
{
    const dcuda_notif_counters_t *arrived = &h->detector->notifs[r];
    const dcuda_tag_counts_t *consumed = &h->consumed_seen_h[r];
    uint32_t first = atomic_load_explicit(&s->tag, memory_order_relaxed);
    uint32_t mask = atomic_load_explicit(&s->count, memory_order_relaxed), n = 0;
    for (uint32_t i = 0; i < 32 && first + i < DCUDA_TAG_COUNT; i++) {
        uint32_t tag = first + i;
        uint32_t left = dcu_arrivals(&arrived->arrived[tag]) - atomic_load(&consumed->count[tag]);
        n += (mask >> i & 1u) && (int32_t)left > 0;
    }
    return n;
}

/* The counter blocked rank r waits on, as it is now. */
static uint32_t counter_now(dcuda_host_h h, int r, const dcuda_rank_status_t *s)
{
    dcu_detector_t *d = h->detector;
    uint32_t waits = atomic_load_explicit(&s->waits, memory_order_relaxed);
    uint32_t index = (waits >> 8) % DCUDA_COMM_COUNT;
    switch (waits & 0xffu) {
    case DCUDA_WAITS_SET:
        return set_ready_now(h, r, s);
    case DCUDA_WAITS_NOTIF:
        return dcu_arrivals(&d->notifs[r].arrived[atomic_load(&s->tag) % DCUDA_TAG_SLOTS]);
    case DCUDA_WAITS_ARRIVED:
        return atomic_load(&d->barriers[index].arrived);
    case DCUDA_WAITS_RELEASED:
        return atomic_load(&d->barriers[index].released);
    case DCUDA_WAITS_NODE:
        return atomic_load_explicit(
            &dcu_node()->slots[(waits >> 8) % (uint32_t)h->info.process_count].arrived,
            memory_order_acquire);
    default:
        return atomic_load_explicit(h->net_barrier_h, memory_order_acquire);
    }
}

/* The ranks' phases and episodes, folded into *print; 1 if every rank is
 * blocked or finished. */
static int look(dcuda_host_h h, uint64_t *print, int first)
{
    dcu_detector_t *d = h->detector;
    int quiet = 1;
    uint64_t x = 0xcbf29ce484222325ull;
    for (int r = 0; r < h->image.device_size; r++) {
        const dcuda_rank_status_t *s = &h->status_h[r];
        uint32_t episode = atomic_load_explicit(&s->episode, memory_order_acquire);
        uint32_t phase = atomic_load_explicit(&s->phase, memory_order_acquire);
        quiet &= blocked(phase) || phase == DCUDA_PHASE_FINISHED;
        if (first)
            d->episodes[r] = episode;
        else
            quiet &= d->episodes[r] == episode;
        x = (x ^ (uint64_t)phase << 32 ^ episode) * 0x100000001b3ull;
    }
    *print = x;
    return quiet;
}

void dcu_rank_view(const dcuda_rank_status_t *s, dcu_rank_view_t *v)
{
    v->phase = atomic_load_explicit(&s->phase, memory_order_acquire);
    v->tag = atomic_load_explicit(&s->tag, memory_order_relaxed);
    v->count = atomic_load_explicit(&s->count, memory_order_relaxed);
    v->comm = atomic_load_explicit(&s->comm, memory_order_relaxed);
    v->target = atomic_load_explicit(&s->target, memory_order_relaxed);
    v->waits = atomic_load_explicit(&s->waits, memory_order_relaxed);
    v->call = atomic_load_explicit(&s->call, memory_order_relaxed);
    v->call_seq = atomic_load_explicit(&s->call_seq, memory_order_relaxed);
}

/* The ranks as they are now, with the counters last peeked: at a quiet
 * snapshot, what the report of a deadlock shows. */
static void keep_views(dcuda_host_h h)
{
    dcu_detector_t *d = h->detector;
    for (int r = 0; r < h->image.device_size; r++)
        dcu_rank_view(&h->status_h[r], &d->views[r]);
    memcpy(d->quiet_notifs, d->notifs, (size_t)h->image.device_size * sizeof *d->notifs);
    d->run.viewed = 1;
}

/* The ranks' counters as they are now. */
static dcuda_status_t peek_counters(dcuda_host_h h)
{
    dcu_detector_t *d = h->detector;
    return h->ops->peek(h->backend, d->notifs, h->image.notifs,
                        (size_t)h->image.device_size * sizeof *d->notifs);
}

/* A blocked rank of mine waits for a user tag: one a host could notify. */
static int user_waits(dcuda_host_h h)
{
    for (int r = 0; r < h->image.device_size; r++) {
        const dcuda_rank_status_t *s = &h->status_h[r];
        uint32_t phase = atomic_load_explicit(&s->phase, memory_order_acquire);
        uint32_t waits = atomic_load_explicit(&s->waits, memory_order_relaxed);
        uint32_t kind = waits & 0xffu;
        if (phase == DCUDA_PHASE_WAITING &&
            (kind == DCUDA_WAITS_NOTIF || kind == DCUDA_WAITS_SET) &&
            atomic_load_explicit(&s->tag, memory_order_relaxed) < DCUDA_TAG_COUNT)
            return 1;
    }
    return 0;
}

/* Whether this process is quiet now, and its state (ranks and counts). A
 * host's notification on its way, or a host's wait for the ranks'
 * notifications that has what it waits for, keeps it from being quiet;
 * whether the host may still notify is told beside (dcu_quiet_t). */
static int snapshot(dcuda_host_h h, uint64_t *print)
{
    dcu_detector_t *d = h->detector;
    uint64_t again;
    if (!look(h, print, 1) || !dcu_proxies_idle(h->proxy) || dcu_host_notes_busy(h) ||
        dcu_host_wait_satisfied(h))
        return 0;
    if (peek_counters(h) != DCUDA_OK ||
        h->ops->peek(h->backend, d->barriers, h->image.barriers, sizeof d->barriers) != DCUDA_OK)
        return 0;
    for (int r = 0; r < h->image.device_size; r++) {
        const dcuda_rank_status_t *s = &h->status_h[r];
        uint32_t phase = atomic_load_explicit(&s->phase, memory_order_acquire);
        if (blocked(phase) && counter_now(h, r, s) != atomic_load(&s->seen))
            return 0; /* something new for it to look at */
    }
    if (!look(h, &again, 0) || again != *print)
        return 0;
    keep_views(h);
    return 1;
}

const dcu_rank_view_t *dcu_deadlock_views(dcuda_host_h h, const dcuda_notif_counters_t **arrived)
{
    dcu_detector_t *d = h->detector;
    if (!d->run.viewed) { /* no quiet snapshot (a process of no ranks): as they are now */
        if (peek_counters(h) != DCUDA_OK)
            memset(d->notifs, 0, (size_t)h->image.device_size * sizeof *d->notifs);
        keep_views(h);
    }
    *arrived = d->quiet_notifs;
    return d->views;
}

/* ---- the rounds --------------------------------------------------------------------- */

static uint32_t asked(dcuda_host_h h)
{
    dcu_detector_t *d = h->detector;
    switch (d->way) {
    case DL_NODE:
        return dcu_node_dl_asked();
    case DL_NET:
        return dcu_proxy_dl_asked(dcu_proxies_first(h->proxy));
    default:
        return d->run.local_asked != d->run.local_collected ? d->run.local_asked : 0u;
    }
}

static void answer(dcuda_host_h h, uint32_t round, const dcu_quiet_t *q)
{
    dcu_detector_t *d = h->detector;
    if (d->way == DL_NODE)
        dcu_node_dl_answer(round, q);
    else if (d->way == DL_NET)
        dcu_proxy_dl_answer(dcu_proxies_first(h->proxy), round, q);
    else {
        d->run.local_sum = *q;
        d->run.local_collected = round;
    }
}

static void ask(dcuda_host_h h, uint32_t round)
{
    dcu_detector_t *d = h->detector;
    if (d->way == DL_NODE)
        dcu_node_dl_ask(round);
    else if (d->way == DL_NET)
        dcu_proxy_dl_ask(dcu_proxies_first(h->proxy), round);
    else
        d->run.local_asked = round;
}

static int collect(dcuda_host_h h, uint32_t round, dcu_quiet_t *sum)
{
    dcu_detector_t *d = h->detector;
    if (d->way == DL_NODE)
        return dcu_node_dl_collect(round, sum);
    if (d->way == DL_NET)
        return dcu_proxy_dl_collect(dcu_proxies_first(h->proxy), round, sum);
    *sum = d->run.local_sum;
    return d->run.local_collected == round;
}

/* Process 0: the run is deadlocked. Written where every process (and
 * every rank of the node) sees it before this one's ranks are released. */
static void declare(dcuda_host_h h)
{
    if (h->detector->way == DL_NODE)
        dcu_node_dl_declare();
    else if (h->detector->way == DL_NET)
        dcu_proxy_dl_declare(dcu_proxies_first(h->proxy));
    h->detector->run.local_asked = UINT32_MAX; /* the local way: found */
}

static int declared(dcuda_host_h h)
{
    if (h->detector->way == DL_NODE)
        return dcu_node_dl_declared();
    if (h->detector->way == DL_NET)
        return dcu_proxy_dl_declared(dcu_proxies_first(h->proxy));
    return h->detector->run.local_asked == UINT32_MAX;
}

/* My answer to the round asked of me, if any. */
static void answer_round(dcuda_host_h h)
{
    dcu_detector_t *d = h->detector;
    uint32_t round = asked(h);
    if (!round || round == UINT32_MAX)
        return;
    uint64_t print = 0;
    dcu_quiet_t q = dcu_quiet_none();
    q.quiet = (uint32_t)snapshot(h, &print);
    q.host_free = (uint32_t)dcu_host_may_notify(h);
    q.user_waits = (uint32_t)user_waits(h);
    q.changed = !d->run.answered || print != d->run.print;
    d->run.print = print;
    d->run.answered = 1;
    answer(h, round, &q);
}

/* Process 0: collects the round in flight and judges it, or asks for the
 * next once its own ranks are all blocked. */
static void coordinate(dcuda_host_h h, uint64_t now)
{
    dcu_detector_t *d = h->detector;
    dcu_quiet_t sum;
    if (d->run.collecting) {
        if (!collect(h, d->run.round, &sum))
            return;
        int stuck = dcu_quiet_stuck(&sum);
        if (stuck && d->run.prev_quiet && !sum.changed && sum.sent == sum.received)
            declare(h);
        d->run.prev_quiet = stuck;
        d->run.collecting = 0;
        d->run.done_ns = now;
    } else if (now - d->run.done_ns >= DL_GAP_NS && all_blocked(h)) {
        ask(h, ++d->run.round);
        d->run.collecting = 1;
    }
}

int dcu_deadlock_poll(dcuda_host_h h)
{
    dcu_detector_t *d = h->detector;
    uint64_t now = dcu_clock_ns();
    if (!h->settings.deadlock || h->deadlocked)
        return 0;
    if (declared(h)) /* its ranks may have been told already (proxy) */
        return 1;
    if (now < d->run.next_ns || atomic_load_explicit(h->cancel_h, memory_order_acquire))
        return 0;
    d->run.next_ns = now + DL_LOOK_NS;
    answer_round(h);
    if (h->info.process_index == 0)
        coordinate(h, now);
    return declared(h);
}

int dcu_deadlock_stalled(dcuda_host_h h, uint64_t ns, char *why, size_t why_size)
{
    if (h->detector->way == DL_NET)
        return dcu_proxy_dl_stalled(dcu_proxies_first(h->proxy), ns, why, why_size);
    return h->detector->way == DL_NODE && dcu_node_stalled(ns, why, why_size);
}
