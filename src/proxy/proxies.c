/*
 * The proxy lanes (proxies.h, docs/scale.md).
 *
 * Commands: a rank writes the command ring of its lane (the context's
 * cmd_lanes), numbered from the lane's first rank, and its lane's proxy
 * serves that ring as a proxy serves its process's; a WORLD barrier's last
 * rank of the device posts it to every lane's ring. (A first form had the
 * host thread read one ring and hand each command to its lane's: the
 * copies between the threads' caches cost more than the lanes saved.)
 *
 * Barriers: each lane completes WORLD barriers among the lanes of every
 * process (its sends acknowledged first, as between processes); the ranks
 * are told the smallest count of the lanes.
 *
 * Threads: lanes 1.. poll on their own threads while a run goes on, and
 * tell the host thread through atomics only (idle, their news, their
 * work); everything else of theirs is touched by the host thread only while
 * they are stopped.
 */
#include "proxies.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lane_space.h"
#include "util/clock.h"
#include "util/msg.h"
#include "util/quiet.h"

/* A lane thread of CPU ranks that found nothing to do for this long naps
 * between looks (one of GPU ranks keeps looking: its core is not the
 * ranks'). */
#define LANE_BUSY_NS (2 * DCU_NS_PER_MS)
#define LANE_NAP_NS (50 * DCU_NS_PER_US)
/* How long the end of a run waits for the lanes' messages to leave
 * together (each lane's drain then waits on its own, as a proxy's does). */
#define LANE_DRAIN_NS (5 * DCU_NS_PER_S)

typedef struct lane {
    dcu_proxy_t *proxy;
    dcu_proxy_config_t config;
    int index, first, count; /* its device ranks: [first, first + count) */
    _Atomic uint32_t barriers;
    _Atomic int news, idle, stop;
    _Atomic int worked; /* its thread did something since the host thread last looked */
    uint64_t answered_sent, answered_received; /* at its last answer to the detector */
    pthread_t thread;
    int running;
    dcuda_status_t opened;
} lane_t;

struct dcu_proxies {
    int count;
    lane_t *lane;
    dcu_proxy_config_t process; /* the process's configuration */
    uint32_t published;         /* barriers told to the ranks */
    int32_t *first;             /* lane numbers: first WORLD rank, path */
    uint8_t *path;
};

int dcu_proxies_count(const dcu_proxies_t *g) { return g->count; }
dcu_proxy_t *dcu_proxies_first(dcu_proxies_t *g) { return g->lane[0].proxy; }

/* ---- barriers ------------------------------------------------------------------------ */

/* The ranks hear of a WORLD barrier once every lane completed it; 1 if
 * they heard of one now. */
static int publish_barriers(dcu_proxies_t *g)
{
    uint32_t least = atomic_load_explicit(&g->lane[0].barriers, memory_order_acquire);
    for (int i = 1; i < g->count; i++) {
        uint32_t b = atomic_load_explicit(&g->lane[i].barriers, memory_order_acquire);
        if ((int32_t)(b - least) < 0)
            least = b;
    }
    if (least == g->published)
        return 0;
    g->published = least;
    atomic_store_explicit(g->process.net_barrier, least, memory_order_release);
    return 1;
}

/* ---- a lane's own thread ------------------------------------------------------------ */

/* Whether lane l has anything in its hands, for the host thread (its
 * news the proxy tells itself, dcu_proxy_config_t.news). */
static void tell_idle(lane_t *l)
{
    atomic_store_explicit(&l->idle, dcu_proxy_idle(l->proxy), memory_order_release);
}

/* A round of the deadlock detector asked of lane l (not lane 0): quiet
 * when nothing is in its hands, changed when it moved messages since. */
static void answer_round(lane_t *l)
{
    uint32_t round = dcu_proxy_dl_asked(l->proxy);
    if (!round)
        return;
    uint64_t sent, received;
    dcu_proxy_counts(l->proxy, &sent, &received);
    dcu_quiet_t q = dcu_quiet_none();
    q.quiet = (uint32_t)dcu_proxy_idle(l->proxy);
    q.changed = sent != l->answered_sent || received != l->answered_received;
    l->answered_sent = sent;
    l->answered_received = received;
    dcu_proxy_dl_answer(l->proxy, round, &q);
}

static void *lane_main(void *arg)
{
    lane_t *l = arg;
    const dcu_backend_ops_t *ops = l->config.ops;
    if (ops->bind_thread && ops->bind_thread(l->config.backend) != DCUDA_OK)
        dcu_msg_warn("proxy lane %d: cannot bind its thread to the device", l->index);
    uint64_t last_work = dcu_clock_ns();
    while (!atomic_load_explicit(&l->stop, memory_order_acquire)) {
        int did = dcu_proxy_poll(l->proxy);
        answer_round(l);
        tell_idle(l);
        uint64_t now = dcu_clock_ns();
        if (did) {
            last_work = now;
            atomic_store_explicit(&l->worked, 1, memory_order_relaxed);
        } else if (ops->kind == DCU_BACKEND_CPU && now - last_work > LANE_BUSY_NS)
            dcu_clock_sleep_ns(LANE_NAP_NS); /* CPU ranks want the core */
        else
            sched_yield();
    }
    return NULL;
}

dcuda_status_t dcu_proxies_start(dcu_proxies_t *g)
{
    for (int i = 1; i < g->count; i++) {
        lane_t *l = &g->lane[i];
        atomic_store_explicit(&l->stop, 0, memory_order_relaxed);
        if (pthread_create(&l->thread, NULL, lane_main, l) != 0) {
            dcu_msg_error("cannot start the thread of proxy lane %d", i);
            dcu_proxies_stop(g);
            return DCUDA_ERR_SYSTEM;
        }
        l->running = 1;
    }
    return DCUDA_OK;
}

void dcu_proxies_stop(dcu_proxies_t *g)
{
    for (int i = 1; i < g->count; i++) {
        lane_t *l = &g->lane[i];
        if (!l->running)
            continue;
        atomic_store_explicit(&l->stop, 1, memory_order_release);
        pthread_join(l->thread, NULL);
        l->running = 0;
    }
}

/* ---- the host thread's calls -------------------------------------------------------- */

int dcu_proxies_poll(dcu_proxies_t *g)
{
    if (g->count == 1)
        return dcu_proxy_poll(g->lane[0].proxy);
    int did = 0;
    for (int i = 0; i < g->count; i++) {
        lane_t *l = &g->lane[i];
        if (i == 0 || !l->running) {
            did |= dcu_proxy_poll(l->proxy);
            if (i > 0)
                answer_round(l);
        } else { /* the host thread stays busy while a lane is (it tells barriers) */
            did |= atomic_exchange_explicit(&l->worked, 0, memory_order_relaxed);
        }
    }
    did |= publish_barriers(g);
    return did;
}

void dcu_proxies_reset(dcu_proxies_t *g)
{
    for (int i = 0; i < g->count; i++) {
        lane_t *l = &g->lane[i];
        dcu_proxy_reset(l->proxy);
        l->answered_sent = l->answered_received = 0;
        atomic_store_explicit(&l->news, 0, memory_order_relaxed);
        atomic_store_explicit(&l->idle, 1, memory_order_relaxed);
    }
    if (g->count == 1)
        return;
    atomic_store_explicit(g->process.net_barrier, 0u, memory_order_relaxed);
    g->published = 0;
}

void dcu_proxies_ranks_done(dcu_proxies_t *g)
{
    for (int i = 0; i < g->count; i++)
        dcu_proxy_ranks_done(g->lane[i].proxy);
}

/* Every lane's messages leave together (a lane's send may wait for
 * another lane to receive, as between processes), then each lane applies
 * what its ranks left in their inboxes. */
void dcu_proxies_drain(dcu_proxies_t *g)
{
    uint64_t start = dcu_clock_ns();
    for (int pending = g->count > 1; pending && dcu_clock_ns() - start < LANE_DRAIN_NS;) {
        pending = 0;
        for (int i = 0; i < g->count; i++) {
            (void)dcu_proxy_poll(g->lane[i].proxy);
            pending |= dcu_proxy_pending(g->lane[i].proxy) > 0;
        }
    }
    for (int i = 0; i < g->count; i++)
        dcu_proxy_drain(g->lane[i].proxy);
}

static const char *first_news(const dcu_proxies_t *g, int bit,
                              const char *(*of)(const dcu_proxy_t *))
{
    const char *why = of(g->lane[0].proxy);
    for (int i = 1; !why && i < g->count; i++) {
        const lane_t *l = &g->lane[i];
        if (!l->running || (atomic_load_explicit(&l->news, memory_order_acquire) & bit))
            why = of(l->proxy);
    }
    return why;
}

const char *dcu_proxies_failure(const dcu_proxies_t *g)
{
    return first_news(g, DCU_PROXY_FAILED, dcu_proxy_failure);
}

const char *dcu_proxies_aborted(const dcu_proxies_t *g)
{
    return first_news(g, DCU_PROXY_ABORTED, dcu_proxy_aborted);
}

const char *dcu_proxies_left(const dcu_proxies_t *g)
{
    return first_news(g, DCU_PROXY_LEFT, dcu_proxy_left);
}

void dcu_proxies_abort(dcu_proxies_t *g, const char *why)
{
    dcu_proxy_abort(g->lane[0].proxy, why);
}

void dcu_proxies_leave(dcu_proxies_t *g, const char *why)
{
    dcu_proxy_leave(g->lane[0].proxy, why);
    dcu_proxy_drain(g->lane[0].proxy);
}

int dcu_proxies_barrier_open(const dcu_proxies_t *g)
{
    for (int i = 0; i < g->count; i++)
        if (dcu_proxy_barrier_open(g->lane[i].proxy))
            return 1;
    return 0;
}

int dcu_proxies_idle(dcu_proxies_t *g)
{
    if (!dcu_proxy_idle(g->lane[0].proxy))
        return 0;
    for (int i = 1; i < g->count; i++) {
        lane_t *l = &g->lane[i];
        if (l->running ? !atomic_load_explicit(&l->idle, memory_order_acquire)
                       : !dcu_proxy_idle(l->proxy))
            return 0;
    }
    return 1;
}

/* ---- life ----------------------------------------------------------------------------- */

/* Lane l's configuration: its share of the ranks and of their tables, its
 * own ring and counts, lane numbers. */
static void configure(dcu_proxies_t *g, lane_t *l, const dcu_proxy_config_t *c,
                      const dcu_lane_ring_t *ring)
{
    dcu_proxy_config_t *lc = &l->config;
    *lc = *c;
    lc->entries = ring->entries;
    lc->capacity = ring->capacity;
    lc->cmd_tail = ring->cmd_tail;
    lc->net_barrier = &l->barriers;
    lc->news = &l->news;
    lc->ranks = l->count;
    lc->replies = c->replies + l->first;
    lc->inbox = c->inbox + (size_t)l->first * DCUDA_INBOX_ENTRIES;
    lc->inbox_tail = c->inbox_tail + l->first;
    lc->own_table = c->own_table + l->first;
    lc->own_stride = c->ranks;
    lc->lib = c->lib + (size_t)l->first * c->lib_stride;
    lc->ops = dcu_lane_locked_ops(c->ops);
    lc->process_count = c->process_count * g->count;
    lc->process_index = c->process_index * g->count + l->index;
    lc->proc_first = g->first;
    lc->path = g->path;
    lc->net_env = dcu_lane_env(&c->net_env, g->count, l->index);
}

static void *open_lane(void *arg)
{
    lane_t *l = arg;
    dcu_lane_gather_enter(l->index);
    l->opened = dcu_proxy_create(&l->config, &l->proxy);
    if (l->opened != DCUDA_OK)
        dcu_lane_gather_abandon();
    return NULL;
}

/* Every lane opens its manager at once (their allgathers are one step). */
static dcuda_status_t open_lanes(dcu_proxies_t *g)
{
    dcu_lane_gather_begin(&g->process.net_env, g->count);
    int started = 0;
    for (; started < g->count; started++)
        if (pthread_create(&g->lane[started].thread, NULL, open_lane, &g->lane[started]) != 0)
            break;
    for (int i = started; i < g->count; i++) { /* could not start: they never come */
        g->lane[i].opened = DCUDA_ERR_SYSTEM;
        dcu_lane_gather_abandon();
    }
    dcuda_status_t st = DCUDA_OK;
    for (int i = 0; i < g->count; i++) {
        if (i < started)
            pthread_join(g->lane[i].thread, NULL);
        if (st == DCUDA_OK)
            st = g->lane[i].opened;
    }
    dcu_lane_gather_end();
    return st;
}

int dcu_proxies_fit(int wanted, const dcu_net_ops_t *net_ops, const int32_t *proc_first, int procs)
{
    if (!net_ops || wanted <= 1)
        return 1; /* no network path: the proxy only answers pings */
    if (!(net_ops->caps & DCU_NET_CAP_LANES)) {
        dcu_msg_error("PROXY_LANES=%d: the %s network manager is driven by one thread; "
                      "several lanes need NET=ucx (or PROXY_LANES=1)",
                      wanted, net_ops->name);
        return -1;
    }
    int fit = wanted;
    for (int p = 0; p < procs; p++) {
        int n = (int)(proc_first[p + 1] - proc_first[p]);
        if (n < fit)
            fit = n > 1 ? n : 1;
    }
    if (fit < wanted)
        dcu_msg_info("PROXY_LANES=%d: %d lane(s) serve, as many as the process of fewest ranks "
                     "has ranks",
                     wanted, fit);
    return fit;
}

static dcuda_status_t make_lanes(dcu_proxies_t *g, const dcu_proxy_config_t *c,
                                 const dcu_lane_ring_t *rings)
{
    g->first = dcu_lane_first(c->proc_first, c->process_count, g->count);
    g->path = dcu_lane_path(c->path, c->process_count, g->count);
    if (!g->first || !g->path)
        return DCUDA_ERR_NO_MEMORY;
    for (int i = 0; i < g->count; i++) {
        lane_t *l = &g->lane[i];
        l->index = i;
        l->first = DCUDA_LANE_FIRST(c->ranks, i, g->count);
        l->count = DCUDA_LANE_FIRST(c->ranks, i + 1, g->count) - l->first;
        configure(g, l, c, &rings[i]);
    }
    return open_lanes(g);
}

dcuda_status_t dcu_proxies_create(const dcu_proxy_config_t *config, int lanes,
                                  const dcu_lane_ring_t *rings, dcu_proxies_t **out)
{
    dcu_proxies_t *g = calloc(1, sizeof *g);
    if (!g || !(g->lane = calloc((size_t)lanes, sizeof *g->lane))) {
        free(g);
        return DCUDA_ERR_NO_MEMORY;
    }
    g->count = lanes;
    g->process = *config;
    dcuda_status_t st =
        lanes == 1 ? dcu_proxy_create(config, &g->lane[0].proxy) : make_lanes(g, config, rings);
    if (st != DCUDA_OK) {
        dcu_proxies_destroy(g);
        return st;
    }
    *out = g;
    return DCUDA_OK;
}

static void *close_lane(void *arg)
{
    lane_t *l = arg;
    dcu_proxy_destroy(l->proxy);
    l->proxy = NULL;
    return NULL;
}

/* Every lane closes its manager at once: a manager's goodbyes wait for
 * its peers', the other lanes of this process among them. */
static void close_lanes(dcu_proxies_t *g)
{
    for (int i = 0; i < g->count; i++) {
        lane_t *l = &g->lane[i];
        l->running =
            l->proxy && g->count > 1 && pthread_create(&l->thread, NULL, close_lane, l) == 0;
    }
    for (int i = 0; i < g->count; i++) {
        lane_t *l = &g->lane[i];
        if (l->running)
            pthread_join(l->thread, NULL);
        else if (l->proxy)
            close_lane(l);
        l->running = 0;
    }
}

void dcu_proxies_destroy(dcu_proxies_t *g)
{
    if (!g)
        return;
    dcu_proxies_stop(g);
    if (g->lane)
        close_lanes(g);
    free(g->lane);
    free(g->first);
    free(g->path);
    free(g);
}
