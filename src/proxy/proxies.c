/*
 * The proxy lanes (proxies.h, docs/scale.md).
 *
 * Handing out: the host thread reads the ranks' command ring in ticket
 * order and copies each command (its payload entries too) into its rank's
 * lane ring, a ring of the same protocol in host memory, the rank renumbered
 * from the lane's first; a WORLD barrier goes to every lane. The ring's
 * entries are recycled and its consumed count published once copied, so a
 * lane's answer still tells its rank that every ticket up to its command's
 * is free. A command whose lane ring has no room waits first in the ring,
 * as a command that waits for credit does in a proxy.
 *
 * Barriers: each lane completes WORLD barriers among the lanes of every
 * process (its sends acknowledged first, as between processes); the ranks
 * are told the smallest count of the lanes.
 *
 * Threads: lanes 1.. poll on their own threads while a run goes on, and
 * tell the host thread through atomics only (idle, their news, the ranks'
 * end); everything else of theirs is touched by the host thread only while
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
#include "util/ring.h"

/* A lane thread that found nothing to do for this long naps between looks. */
#define LANE_BUSY_NS (2 * DCU_NS_PER_MS)
#define LANE_NAP_NS (50 * DCU_NS_PER_US)
/* How long the end of a run waits for the lanes' messages to leave
 * together (each lane's drain then waits on its own, as a proxy's does). */
#define LANE_DRAIN_NS (5 * DCU_NS_PER_S)

typedef struct lane {
    dcu_proxy_t *proxy;
    dcu_proxy_config_t config;
    int index, first, count; /* its device ranks: [first, first + count) */
    dcuda_cmd_t *ring;       /* its command ring (host memory) */
    uint32_t capacity, head; /* head: tickets handed out */
    _Atomic uint32_t consumed, barriers;
    _Atomic int news, idle, stop, done_asked;
    uint64_t answered_sent, answered_received; /* at its last answer to the detector */
    pthread_t thread;
    int running;
    dcuda_status_t opened;
} lane_t;

struct dcu_proxies {
    int count;
    lane_t *lane;
    const dcu_proxy_config_t *process; /* the process's configuration (count > 1) */
    dcu_ring_reader_t queue;           /* the ranks' command ring (count > 1) */
    uint32_t published;                /* barriers told to the ranks */
    int32_t *first;                    /* lane numbers: first WORLD rank, path */
    uint8_t *path;
    dcu_proxy_config_t process_config;
    char failure[256];
};

int dcu_proxies_count(const dcu_proxies_t *g) { return g->count; }
dcu_proxy_t *dcu_proxies_first(dcu_proxies_t *g) { return g->lane[0].proxy; }

/* ---- handing out commands ------------------------------------------------------- */

static int lane_of(const dcu_proxies_t *g, int rank)
{
    int l = g->count - 1;
    while (l > 0 && g->lane[l].first > rank)
        l--;
    return l;
}

/* Room for k entries in lane l's ring? */
static int has_room(const lane_t *l, uint32_t k)
{
    uint32_t last = l->head + k - 1u;
    const dcuda_cmd_t *e = &l->ring[last & (l->capacity - 1u)];
    return atomic_load_explicit(&e->seq, memory_order_acquire) == last;
}

/* Copies the command at ticket t (header `cmd`, k entries) into lane l's
 * ring as sent by its device rank `rank`: payload first, header's seq last. */
static void hand(dcu_proxies_t *g, lane_t *l, const dcuda_cmd_t *cmd, uint32_t t, uint32_t k,
                 int32_t rank)
{
    const dcuda_cmd_t *from = (const dcuda_cmd_t *)g->queue.entries;
    const uint32_t mask = g->queue.capacity - 1u, lmask = l->capacity - 1u;
    for (uint32_t i = 1; i < k; i++)
        memcpy(&l->ring[(l->head + i) & lmask], &from[(t + i) & mask], sizeof(dcuda_cmd_t));
    dcuda_cmd_t *h = &l->ring[l->head & lmask];
    h->rank = rank;
    h->op = cmd->op;
    h->tag = cmd->tag;
    memcpy(h->args, cmd->args, sizeof h->args);
    atomic_store_explicit(&h->seq, l->head + 1u, memory_order_release);
    l->head += k;
}

static void group_fail(dcu_proxies_t *g, const char *why)
{
    if (!g->failure[0])
        snprintf(g->failure, sizeof g->failure, "%s", why);
}

static int hand_out(dcu_proxies_t *g)
{
    int did = 0;
    dcuda_cmd_t *e;
    while (!g->failure[0] && (e = dcu_ring_next(&g->queue)) != NULL) {
        dcuda_cmd_t cmd = *e;
        uint32_t t = g->queue.tail;
        uint32_t k = cmd.op == DCUDA_CMD_PUT ? (uint32_t)cmd.args[4] : 1u;
        if (cmd.rank < 0 || cmd.rank >= g->process->ranks || k < 1u || k > g->queue.capacity / 4u) {
            char why[128];
            snprintf(why, sizeof why, "a command of %u entries from device rank %d", k, cmd.rank);
            group_fail(g, why); /* a ring that lies about its entries cannot be read on */
            break;
        }
        if (cmd.op == DCUDA_CMD_BARRIER) {
            int room = 1;
            for (int i = 0; i < g->count; i++)
                room &= has_room(&g->lane[i], 1u);
            if (!room)
                break;
            for (int i = 0; i < g->count; i++)
                hand(g, &g->lane[i], &cmd, t, 1u, 0);
        } else {
            lane_t *l = &g->lane[lane_of(g, cmd.rank)];
            if (!has_room(l, k))
                break;
            hand(g, l, &cmd, t, k, cmd.rank - l->first);
        }
        dcu_ring_done_n(&g->queue, k);
        atomic_store_explicit(g->process->cmd_tail, g->queue.tail, memory_order_release);
        did = 1;
    }
    return did;
}

/* The ranks hear of a WORLD barrier once every lane completed it. */
static void publish_barriers(dcu_proxies_t *g)
{
    uint32_t least = atomic_load_explicit(&g->lane[0].barriers, memory_order_acquire);
    for (int i = 1; i < g->count; i++) {
        uint32_t b = atomic_load_explicit(&g->lane[i].barriers, memory_order_acquire);
        if ((int32_t)(b - least) < 0)
            least = b;
    }
    if (least != g->published) {
        g->published = least;
        atomic_store_explicit(g->process->net_barrier, least, memory_order_release);
    }
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
        if (atomic_load_explicit(&l->done_asked, memory_order_acquire) == 1) {
            dcu_proxy_ranks_done(l->proxy);
            atomic_store_explicit(&l->done_asked, 2, memory_order_relaxed);
        }
        tell_idle(l);
        uint64_t now = dcu_clock_ns();
        if (did)
            last_work = now;
        else if (now - last_work > LANE_BUSY_NS)
            dcu_clock_sleep_ns(LANE_NAP_NS);
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
        if (atomic_load_explicit(&l->done_asked, memory_order_relaxed) == 1) {
            dcu_proxy_ranks_done(l->proxy);
            atomic_store_explicit(&l->done_asked, 2, memory_order_relaxed);
        }
    }
}

/* ---- the host thread's calls -------------------------------------------------------- */

int dcu_proxies_poll(dcu_proxies_t *g)
{
    if (g->count == 1)
        return dcu_proxy_poll(g->lane[0].proxy);
    int did = hand_out(g);
    for (int i = 0; i < g->count; i++)
        if (i == 0 || !g->lane[i].running) {
            did |= dcu_proxy_poll(g->lane[i].proxy);
            if (i > 0)
                answer_round(&g->lane[i]);
        }
    publish_barriers(g);
    return did;
}

void dcu_proxies_reset(dcu_proxies_t *g)
{
    for (int i = 0; i < g->count; i++) {
        lane_t *l = &g->lane[i];
        dcu_proxy_reset(l->proxy);
        l->head = 0;
        l->answered_sent = l->answered_received = 0;
        atomic_store_explicit(&l->news, 0, memory_order_relaxed);
        atomic_store_explicit(&l->idle, 1, memory_order_relaxed);
        atomic_store_explicit(&l->done_asked, 0, memory_order_relaxed);
    }
    if (g->count == 1)
        return;
    dcu_ring_reset(&g->queue);
    atomic_store_explicit(g->process->cmd_tail, 0u, memory_order_relaxed);
    atomic_store_explicit(g->process->net_barrier, 0u, memory_order_relaxed);
    g->published = 0;
    g->failure[0] = '\0';
}

void dcu_proxies_ranks_done(dcu_proxies_t *g)
{
    dcu_proxy_ranks_done(g->lane[0].proxy);
    for (int i = 1; i < g->count; i++) {
        lane_t *l = &g->lane[i];
        if (l->running) /* its thread tells (or dcu_proxies_stop does) */
            atomic_store_explicit(&l->done_asked, 1, memory_order_release);
        else
            dcu_proxy_ranks_done(l->proxy);
    }
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
    return g->failure[0] ? g->failure : first_news(g, DCU_PROXY_FAILED, dcu_proxy_failure);
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

int dcu_proxies_idle(dcu_proxies_t *g)
{
    if (!dcu_proxy_idle(g->lane[0].proxy))
        return 0;
    if (g->count == 1)
        return 1;
    if (dcu_ring_next(&g->queue))
        return 0;
    for (int i = 1; i < g->count; i++) {
        lane_t *l = &g->lane[i];
        if (atomic_load_explicit(&l->consumed, memory_order_acquire) != l->head)
            return 0;
        if (l->running ? !atomic_load_explicit(&l->idle, memory_order_acquire)
                       : !dcu_proxy_idle(l->proxy))
            return 0;
    }
    return 1;
}

/* ---- life ----------------------------------------------------------------------------- */

/* Lane l's configuration: its share of the ranks and of their tables, its
 * own ring and counts, lane numbers. */
static void configure(dcu_proxies_t *g, lane_t *l, const dcu_proxy_config_t *c)
{
    dcu_proxy_config_t *lc = &l->config;
    *lc = *c;
    lc->entries = l->ring;
    lc->capacity = l->capacity;
    lc->cmd_tail = &l->consumed;
    lc->net_barrier = &l->barriers;
    lc->news = &l->news;
    lc->ranks = l->count;
    lc->replies = c->replies + l->first;
    lc->inbox = c->inbox + (size_t)l->first * DCUDA_INBOX_ENTRIES;
    lc->inbox_tail = c->inbox_tail + l->first;
    lc->own_table = c->own_table + l->first;
    lc->own_stride = c->ranks;
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
    dcu_lane_gather_begin(&g->process->net_env, g->count);
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

/* Why `lanes` lanes cannot serve this program, or NULL. */
static const char *lanes_refused(const dcu_proxy_config_t *c, int lanes, char *why, size_t size)
{
    if (lanes < 1 || lanes > DCU_MAX_LANES) {
        snprintf(why, size, "PROXY_LANES=%d is not in 1..%d", lanes, DCU_MAX_LANES);
        return why;
    }
    if (lanes > 1 && c->net_ops && !strcmp(c->net_ops->name, "mpi")) {
        snprintf(why, size,
                 "PROXY_LANES=%d: the MPI network manager is driven by one thread; "
                 "several lanes need NET=ucx (or PROXY_LANES=1)",
                 lanes);
        return why;
    }
    return NULL;
}

/* Lanes no larger than the smallest process (each lane serves a rank at
 * least; every process computes the same). */
static int lanes_that_fit(const dcu_proxy_config_t *c, int lanes)
{
    int fit = lanes;
    for (int p = 0; p < c->process_count; p++) {
        int n = (int)(c->proc_first[p + 1] - c->proc_first[p]);
        if (n < fit)
            fit = n > 1 ? n : 1;
    }
    if (fit < lanes)
        dcu_msg_info("PROXY_LANES=%d: %d lane(s) serve, as many as the process of fewest ranks "
                     "has ranks",
                     lanes, fit);
    return fit;
}

static dcuda_status_t make_lanes(dcu_proxies_t *g, const dcu_proxy_config_t *c)
{
    g->first = dcu_lane_first(c->proc_first, c->process_count, g->count);
    g->path = dcu_lane_path(c->path, c->process_count, g->count);
    if (!g->first || !g->path)
        return DCUDA_ERR_NO_MEMORY;
    dcu_ring_reader_init(&g->queue, c->entries, c->capacity, sizeof(dcuda_cmd_t));
    const uint32_t capacity = c->capacity; /* a command of as many entries fits */
    for (int i = 0; i < g->count; i++) {
        lane_t *l = &g->lane[i];
        l->index = i;
        l->first = (int)((int64_t)c->ranks * i / g->count);
        l->count = (int)((int64_t)c->ranks * (i + 1) / g->count) - l->first;
        l->capacity = capacity;
        l->ring = aligned_alloc(64, (size_t)capacity * sizeof(dcuda_cmd_t));
        if (!l->ring)
            return DCUDA_ERR_NO_MEMORY;
        configure(g, l, c);
    }
    return open_lanes(g);
}

dcuda_status_t dcu_proxies_create(const dcu_proxy_config_t *config, int lanes, dcu_proxies_t **out)
{
    char why[256];
    if (!config->net_ops)
        lanes = 1; /* no network path: the proxy only answers pings */
    if (lanes_refused(config, lanes, why, sizeof why)) {
        dcu_msg_error("%s", why);
        return DCUDA_ERR_SETTING;
    }
    lanes = lanes_that_fit(config, lanes);
    dcu_proxies_t *g = calloc(1, sizeof *g);
    if (!g || !(g->lane = calloc((size_t)lanes, sizeof *g->lane))) {
        free(g);
        return DCUDA_ERR_NO_MEMORY;
    }
    g->count = lanes;
    g->process_config = *config;
    g->process = &g->process_config;
    dcuda_status_t st =
        lanes == 1 ? dcu_proxy_create(config, &g->lane[0].proxy) : make_lanes(g, config);
    if (st != DCUDA_OK) {
        dcu_proxies_destroy(g);
        return st;
    }
    *out = g;
    return DCUDA_OK;
}

void dcu_proxies_destroy(dcu_proxies_t *g)
{
    if (!g)
        return;
    dcu_proxies_stop(g);
    for (int i = 0; g->lane && i < g->count; i++) {
        if (g->lane[i].proxy)
            dcu_proxy_destroy(g->lane[i].proxy);
        free(g->lane[i].ring);
    }
    free(g->lane);
    free(g->first);
    free(g->path);
    free(g);
}
