/*
 * The monitor: runs on the host thread that waits in dcuda_host_run. It
 * prints rank log lines as they arrive in the log ring (so they appear
 * while ranks still run) and is the watchdog: when a rank has stayed
 * blocked in one wait or barrier for longer than the WATCHDOG setting, it
 * reports every blocked rank, what it waits for and what has arrived, and
 * with WATCHDOG_CANCEL set it cancels the blocked waits. It also watches
 * the peer processes and ends the run when one of them dies.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "node/node.h"
#include "util/clock.h"
#include "util/logfmt.h"
#include "util/msg.h"

/* Blocked ranks listed in one watchdog report. */
#define WATCHDOG_REPORT_LINES 32
/* How often the watchdog and the peer watch look. */
#define MONITOR_CHECK_NS (50 * DCU_NS_PER_MS)

typedef struct rank_watch {
    uint32_t episode;  /* episode last seen blocked */
    uint32_t reported; /* episode last reported + 1 (0: none) */
    uint64_t since_ns; /* when that episode was first seen */
} rank_watch_t;

struct dcu_monitor {
    dcu_ring_reader_t log;
    uint64_t next_check_ns;
    rank_watch_t *watch;
    dcuda_notif_counters_t *notifs; /* host copy, for reports */
};

dcuda_status_t dcu_monitor_create(dcuda_host_h h)
{
    dcu_monitor_t *m = calloc(1, sizeof *m);
    int n = h->image.device_size;
    if (m) {
        m->watch = calloc((size_t)n, sizeof *m->watch);
        m->notifs = calloc((size_t)n, sizeof *m->notifs);
    }
    if (!m || !m->watch || !m->notifs) {
        if (m) {
            free(m->watch);
            free(m->notifs);
        }
        free(m);
        return DCUDA_ERR_NO_MEMORY;
    }
    dcu_ring_reader_init(&m->log, h->log_h, h->image.log.capacity, sizeof(dcuda_log_entry_t));
    h->monitor = m;
    return DCUDA_OK;
}

void dcu_monitor_destroy(dcuda_host_h h)
{
    if (!h->monitor)
        return;
    free(h->monitor->watch);
    free(h->monitor->notifs);
    free(h->monitor);
    h->monitor = NULL;
}

void dcu_monitor_start(dcuda_host_h h)
{
    dcu_monitor_t *m = h->monitor;
    dcu_ring_reset(&m->log);
    m->next_check_ns = 0;
    memset(m->watch, 0, (size_t)h->image.device_size * sizeof *m->watch);
}

static void print_entry(const dcuda_log_entry_t *e)
{
    char text[1024];
    dcu_log_entry_text(e, text, sizeof text);
    if (e->kind & (DCUDA_LOG_ERROR_KIND | DCUDA_LOG_WARN_KIND)) {
        fprintf(stderr, "dcuda: %s: rank %d: %s\n",
                e->kind & DCUDA_LOG_ERROR_KIND ? "error" : "warning", (int)e->rank, text);
        fflush(stderr);
    } else {
        fprintf(stdout, "[rank %d] %s\n", (int)e->rank, text);
        fflush(stdout);
    }
}

/* Prints every entry that is ready, in ticket order. */
static int drain_log(dcuda_host_h h)
{
    dcu_monitor_t *m = h->monitor;
    int printed = 0;
    dcuda_log_entry_t *e;
    while ((e = dcu_ring_next(&m->log)) != NULL) {
        print_entry(e);
        dcu_ring_done(&m->log, e);
        printed = 1;
    }
    return printed;
}

/* Tags with notifications ready for a rank, as "tag 3 x2, tag 9 x1". */
static void describe_ready(const dcuda_notif_counters_t *arrived, const dcuda_rank_status_t *s,
                           uint32_t notif_start, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    int listed = 0;
    for (int tag = 0; tag < DCUDA_TAG_COUNT && len + 32 < size; tag++) {
        /* Only the waited-for tag has a consumed count the rank published;
         * for the others, report what arrived since the start. */
        uint32_t base =
            (uint32_t)tag == atomic_load(&s->tag) ? atomic_load(&s->consumed) : notif_start;
        uint32_t n = atomic_load(&arrived->arrived[tag]) - base;
        if (n == 0 || (int32_t)n < 0)
            continue;
        len += (size_t)snprintf(out + len, size - len, "%stag %d x%u", listed ? ", " : "", tag,
                                (unsigned)n);
        listed++;
    }
    if (!listed)
        snprintf(out, size, "nothing");
}

static void report_rank(dcuda_host_h h, int r, const dcuda_rank_status_t *s, uint64_t now)
{
    dcu_monitor_t *m = h->monitor;
    double secs = (double)(now - m->watch[r].since_ns) / DCU_NS_PER_S;
    int world = h->image.world_first + r;
    if (atomic_load(&s->phase) == DCUDA_PHASE_WAITING) {
        char ready[256];
        describe_ready(&m->notifs[r], s, h->image.notif_start, ready, sizeof ready);
        fprintf(stderr,
                "dcuda: watchdog:   rank %d waits %.1f s for %u notification(s) of tag %u; "
                "ready since its last consume: %s\n",
                world, secs, (unsigned)atomic_load(&s->count), (unsigned)atomic_load(&s->tag),
                ready);
    } else {
        fprintf(stderr,
                "dcuda: watchdog:   rank %d waits %.1f s in a barrier on %s (barrier count "
                "%u needed)\n",
                world, secs, atomic_load(&s->comm) == 0 ? "WORLD" : "DEVICE",
                (unsigned)atomic_load(&s->target));
    }
}

/* What has arrived for each rank (what waits in an inbox is not counted
 * yet). 0 if they cannot be read. */
static int peek_counters(dcuda_host_h h, dcuda_notif_counters_t *out, int n)
{
    return h->ops->peek(h->backend, out, h->image.notifs, (size_t)n * sizeof *out) == DCUDA_OK;
}

static void watchdog_report(dcuda_host_h h, uint64_t now)
{
    dcu_monitor_t *m = h->monitor;
    int n = h->image.device_size, blocked = 0, finished = 0;
    if (!peek_counters(h, m->notifs, n))
        memset(m->notifs, 0, (size_t)n * sizeof *m->notifs);
    for (int r = 0; r < n; r++) {
        uint32_t phase = atomic_load(&h->status_h[r].phase);
        blocked += phase == DCUDA_PHASE_WAITING || phase == DCUDA_PHASE_BARRIER;
        finished += phase == DCUDA_PHASE_FINISHED;
    }
    fprintf(stderr,
            "dcuda: watchdog: %sno progress for %.1f s: %d of %d ranks blocked, %d finished, "
            "%d running\n",
            dcu_msg_who(), h->settings.watchdog, blocked, n, finished, n - blocked - finished);
    int lines = 0;
    for (int r = 0; r < n; r++) {
        const dcuda_rank_status_t *s = &h->status_h[r];
        uint32_t phase = atomic_load(&s->phase);
        if (phase != DCUDA_PHASE_WAITING && phase != DCUDA_PHASE_BARRIER)
            continue;
        if (lines++ < WATCHDOG_REPORT_LINES)
            report_rank(h, r, s, now);
        m->watch[r].reported = m->watch[r].episode + 1;
    }
    if (lines > WATCHDOG_REPORT_LINES)
        fprintf(stderr, "dcuda: watchdog:   ... and %d more blocked ranks\n",
                lines - WATCHDOG_REPORT_LINES);
    if (h->settings.watchdog_cancel) {
        fprintf(stderr, "dcuda: watchdog: cancelling the blocked waits (WATCHDOG_CANCEL=1)\n");
        atomic_store_explicit(h->cancel_h, DCUDA_CANCEL_WATCHDOG, memory_order_release);
    }
    fflush(stderr);
}

/* Tracks blocked episodes; reports when one outlasts the limit. */
static void watchdog_check(dcuda_host_h h, uint64_t now)
{
    dcu_monitor_t *m = h->monitor;
    double seconds = h->settings.watchdog;
    if (!(seconds > 0 && seconds <= DCU_WATCHDOG_MAX_S))
        return; /* never (settings.c folds larger values into 0) */
    uint64_t limit = (uint64_t)(seconds * DCU_NS_PER_S);
    int due = 0;
    for (int r = 0; r < h->image.device_size; r++) {
        const dcuda_rank_status_t *s = &h->status_h[r];
        uint32_t phase = atomic_load_explicit(&s->phase, memory_order_acquire);
        uint32_t episode = atomic_load_explicit(&s->episode, memory_order_acquire);
        rank_watch_t *w = &m->watch[r];
        if (phase != DCUDA_PHASE_WAITING && phase != DCUDA_PHASE_BARRIER)
            continue;
        if (episode != w->episode || w->since_ns == 0) {
            w->episode = episode;
            w->since_ns = now;
        }
        if (now - w->since_ns >= limit && w->reported != episode + 1)
            due = 1;
    }
    if (due)
        watchdog_report(h, now);
}

/* A peer process that died ends this run: its blocked waits fail with
 * DCUDA_ERR_PEER and the run returns that error. */
static void peers_check(dcuda_host_h h)
{
    if (h->lost[0] || !dcu_node_lost(h->lost, sizeof h->lost))
        return;
    dcu_msg_error("%s while the ranks of process %d run kernel %s; ending the run", h->lost,
                  h->info.process_index, h->kernel.name);
    atomic_store_explicit(h->cancel_h, DCUDA_CANCEL_PEER, memory_order_release);
}

int dcu_monitor_poll(dcuda_host_h h)
{
    int printed = drain_log(h);
    uint64_t now = dcu_clock_ns();
    if (now >= h->monitor->next_check_ns) {
        h->monitor->next_check_ns = now + MONITOR_CHECK_NS;
        if (h->settings.watchdog > 0)
            watchdog_check(h, now);
        peers_check(h);
    }
    return printed;
}

void dcu_monitor_drain(dcuda_host_h h) { drain_log(h); }
