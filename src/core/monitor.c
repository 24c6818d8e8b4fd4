/*
 * The monitor: runs on the host thread that serves the run (the one that
 * waits in dcuda_host_run, or the runtime's thread of a run of
 * dcuda_host_run_start). It prints rank log lines as they arrive in the
 * log ring (so they appear while ranks still run) and is the watchdog: when a rank has stayed
 * blocked in one wait or barrier for longer than the WATCHDOG setting, it
 * reports every blocked rank, what it waits for and what has arrived, and
 * with WATCHDOG_CANCEL set it cancels the blocked waits. It also watches
 * the peer processes and ends the run when one of them dies, and ends the
 * run early for every process when it should (ON_ERROR=abort: a rank's
 * first error; ranks that could not start or left): one line says why in
 * each process, and blocked waits end quietly with DCUDA_ERR_ABORTED.
 *
 * Error and warning lines that repeat (the same call failing on many
 * ranks) are shown a few times per run and then only counted; the count is
 * printed when the run ends (DCUDA_VERBOSE=1 shows every line).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/boot.h"
#include "core.h"
#include "node/node.h"
#include "util/clock.h"
#include "util/logfmt.h"
#include "util/msg.h"
#include "util/nvtx.h"

/* Blocked ranks listed in one watchdog report. */
#define WATCHDOG_REPORT_LINES 32
/* Error (or warning) lines of one call shown per run, and how many calls
 * are told apart. */
#define MONITOR_REPEATS_SHOWN 3
#define MONITOR_REPEAT_KEYS 32
/* How often the watchdog and the peer watch look. */
#define MONITOR_CHECK_NS (50 * DCU_NS_PER_MS)

typedef struct rank_watch {
    uint32_t episode;  /* episode last seen blocked */
    uint32_t reported; /* episode last reported + 1 (0: none) */
    uint64_t since_ns; /* when that episode was first seen */
} rank_watch_t;

/* Lines of one kind (error or warning) about one call in this run. */
typedef struct repeat_count {
    char call[48];
    uint16_t kind;
    uint32_t seen;
} repeat_count_t;

struct dcu_monitor {
    dcu_ring_reader_t log;
    uint64_t next_check_ns;
    rank_watch_t *watch;
    dcuda_notif_counters_t *notifs; /* host copy, for reports */
    dcu_rank_view_t *views;         /* the ranks' status, for reports */
    repeat_count_t repeats[MONITOR_REPEAT_KEYS];
    int repeat_keys;
};

dcuda_status_t dcu_monitor_create(dcuda_host_h h)
{
    dcu_monitor_t *m = calloc(1, sizeof *m);
    int n = h->image.device_size;
    if (m) {
        m->watch = calloc((size_t)n, sizeof *m->watch);
        m->notifs = calloc((size_t)n, sizeof *m->notifs);
        m->views = calloc((size_t)n, sizeof *m->views);
    }
    if (!m || !m->watch || !m->notifs || !m->views) {
        if (m) {
            free(m->watch);
            free(m->notifs);
            free(m->views);
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
    free(h->monitor->views);
    free(h->monitor);
    h->monitor = NULL;
}

void dcu_monitor_start(dcuda_host_h h)
{
    dcu_monitor_t *m = h->monitor;
    dcu_ring_reset(&m->log);
    m->next_check_ns = 0;
    memset(m->watch, 0, (size_t)h->image.device_size * sizeof *m->watch);
    m->repeat_keys = 0;
    h->abort_why[0] = '\0';
}

/* Counts an error or warning line under its call (the text before the
 * first colon); 1 while the call has not had MONITOR_REPEATS_SHOWN lines
 * of this kind yet, or when it cannot be told apart from others. */
static int worth_showing(dcu_monitor_t *m, uint16_t kind, const char *text)
{
    size_t n = strcspn(text, ":");
    repeat_count_t *r = NULL;
    for (int i = 0; i < m->repeat_keys && !r; i++)
        if (m->repeats[i].kind == kind && strlen(m->repeats[i].call) == n &&
            strncmp(m->repeats[i].call, text, n) == 0)
            r = &m->repeats[i];
    if (!r) {
        if (m->repeat_keys == MONITOR_REPEAT_KEYS || n >= sizeof r->call)
            return 1;
        r = &m->repeats[m->repeat_keys++];
        memcpy(r->call, text, n);
        r->call[n] = '\0';
        r->kind = kind;
        r->seen = 0;
    }
    return ++r->seen <= MONITOR_REPEATS_SHOWN;
}

/* After a run: how many lines of each call were not shown. */
static void report_repeats(dcuda_host_h h)
{
    dcu_monitor_t *m = h->monitor;
    for (int i = 0; i < m->repeat_keys; i++) {
        repeat_count_t *r = &m->repeats[i];
        if (r->seen <= MONITOR_REPEATS_SHOWN)
            continue;
        dcu_msg_report(DCU_MSG_WARN,
                       "dcuda: %s: %s%u more %s line(s) of %s from ranks not shown "
                       "(DCUDA_VERBOSE=1 shows every line)\n",
                       r->kind & DCUDA_LOG_ERROR_KIND ? "error" : "warning", dcu_msg_who(),
                       (unsigned)(r->seen - MONITOR_REPEATS_SHOWN),
                       r->kind & DCUDA_LOG_ERROR_KIND ? "error" : "warning", r->call);
        r->seen = 0;
    }
}

static void print_entry(dcuda_host_h h, const dcuda_log_entry_t *e)
{
    char text[1024];
    dcu_log_entry_text(e, text, sizeof text);
    if (e->kind & (DCUDA_LOG_ERROR_KIND | DCUDA_LOG_WARN_KIND)) {
        uint16_t kind = e->kind & (DCUDA_LOG_ERROR_KIND | DCUDA_LOG_WARN_KIND);
        if (!worth_showing(h->monitor, kind, text) && !h->settings.verbose)
            return;
        if (e->kind & DCUDA_LOG_ERROR_KIND)
            dcu_nvtx_mark("rank %d error: %s", (int)e->rank, text);
        dcu_msg_report(e->kind & DCUDA_LOG_ERROR_KIND ? DCU_MSG_ERROR : DCU_MSG_WARN,
                       "dcuda: %s: rank %d: %s",
                       e->kind & DCUDA_LOG_ERROR_KIND ? "error" : "warning", (int)e->rank, text);
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
        print_entry(h, e);
        dcu_ring_done(&m->log, e);
        printed = 1;
    }
    return printed;
}

/* A communicator id as reports name it ("WORLD", "communicator 5"). */
static const char *comm_name(uint32_t comm, char *buf, size_t size)
{
    static const char *named[] = { "WORLD", "DEVICE", "NODE" };
    if (comm < 3)
        return named[comm];
    snprintf(buf, size, "communicator %u", (unsigned)comm);
    return buf;
}

/* A tag as reports name it: "tag 3", or one of the library's, which the
 * collectives, a communicator's barrier and split count (the call a
 * rank is in says which) and a blocking get. */
static const char *tag_name(uint32_t tag, char *buf, size_t size)
{
    if (tag < DCUDA_TAG_COUNT)
        snprintf(buf, size, "tag %u", (unsigned)tag);
    else if (tag == DCUDA_TAG_GET)
        snprintf(buf, size, "the get's completion");
    else
        snprintf(buf, size, "the library's (a collective's)");
    return buf;
}

/* "dcuda_allreduce, call 7 on WORLD": the call a blocked rank is in
 * (its view), or "" when none. */
static const char *call_name(const dcu_rank_view_t *v, char *buf, size_t size)
{
    static const char *names[DCUDA_CALL_KINDS] = {
#define CALL_NAME_(name, value, api) [value] = api,
        DCUDA_CALL_MAP(CALL_NAME_)
#undef CALL_NAME_
    };
    uint32_t kind = v->call & 0xffu;
    char comm[32];
    if (kind == DCUDA_CALL_NONE || kind >= DCUDA_CALL_KINDS) {
        buf[0] = '\0';
        return buf;
    }
    snprintf(buf, size, "%s, call %u on %s", names[kind], (unsigned)v->call_seq,
             comm_name(v->call >> 8, comm, sizeof comm));
    return buf;
}

/* Tags with notifications ready for a rank, as "tag 3 x2, tag 9 x1":
 * arrived minus what the rank had consumed when it began to block (it
 * published that for every tag). */
static void describe_ready(const dcuda_notif_counters_t *arrived,
                           const dcuda_tag_counts_t *consumed, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    int listed = 0;
    for (int tag = 0; tag < DCUDA_TAG_SLOTS && len + 48 < size; tag++) {
        uint32_t n = dcu_arrivals(&arrived->arrived[tag]) - atomic_load(&consumed->count[tag]);
        if (n == 0 || (int32_t)n < 0)
            continue;
        char name[48];
        len += (size_t)snprintf(out + len, size - len, "%s%s x%u", listed ? ", " : "",
                                tag_name((uint32_t)tag, name, sizeof name), (unsigned)n);
        listed++;
    }
    if (!listed)
        snprintf(out, size, "nothing");
}

/* A set of tags (first, and bit i of mask for tag first + i) as
 * "{3, 5, 9}". */
static void describe_set(uint32_t first, uint32_t mask, char *out, size_t size)
{
    size_t len = (size_t)snprintf(out, size, "{");
    for (uint32_t i = 0; i < 32 && len + 8 < size; i++)
        if (mask >> i & 1u)
            len += (size_t)snprintf(out + len, size - len, "%s%u", len > 1 ? ", " : "", first + i);
    snprintf(out + len, size - len, "}");
}

/* One blocked rank's line: `who` starts it ("watchdog", "deadlock"),
 * secs (how long it has waited) is left out when negative; `arrived` is
 * its counters as last read. */
static void report_rank(dcuda_host_h h, const char *who, int r, const dcu_rank_view_t *v,
                        const dcuda_notif_counters_t *arrived, double secs)
{
    int world = h->image.world_first + r;
    char waited[32] = "";
    if (secs >= 0)
        snprintf(waited, sizeof waited, " %.1f s", secs);
    char call[96], comm[32];
    call_name(v, call, sizeof call);
    if (v->phase == DCUDA_PHASE_WAITING && (v->waits & 0xffu) == DCUDA_WAITS_SET) {
        char tags[200], ready[256];
        describe_set(v->tag, v->count, tags, sizeof tags);
        describe_ready(arrived, &h->consumed_seen_h[r], ready, sizeof ready);
        dcu_msg_report(DCU_MSG_ERROR,
                       "dcuda: %s:   rank %d waits%s for notifications of %u of the tags %s (one "
                       "each); ready since its last consume: %s\n",
                       who, world, waited, (unsigned)v->target, tags, ready);
    } else if (v->phase == DCUDA_PHASE_WAITING && call[0]) {
        dcu_msg_report(DCU_MSG_ERROR,
                       "dcuda: %s:   rank %d waits%s in %s (for %u of the call's notifications)\n",
                       who, world, waited, call, (unsigned)v->count);
    } else if (v->phase == DCUDA_PHASE_WAITING) {
        char ready[256], name[48];
        describe_ready(arrived, &h->consumed_seen_h[r], ready, sizeof ready);
        dcu_msg_report(DCU_MSG_ERROR,
                       "dcuda: %s:   rank %d waits%s for %u notification(s) of %s; "
                       "ready since its last consume: %s\n",
                       who, world, waited, (unsigned)v->count, tag_name(v->tag, name, sizeof name),
                       ready);
    } else {
        dcu_msg_report(
            DCU_MSG_ERROR,
            "dcuda: %s:   rank %d waits%s in a barrier on %s%s%s%s (barrier count %u needed)\n",
            who, world, waited, comm_name(v->comm, comm, sizeof comm), call[0] ? " (in " : "", call,
            call[0] ? ")" : "", (unsigned)v->target);
    }
}

/* The blocked ranks of this process, a line each (at most
 * WATCHDOG_REPORT_LINES), as `views` and `arrived` show them; the number
 * of them. `now` times each wait (0: untimed). */
static int report_blocked(dcuda_host_h h, const char *who, const dcu_rank_view_t *views,
                          const dcuda_notif_counters_t *arrived, uint64_t now)
{
    dcu_monitor_t *m = h->monitor;
    int lines = 0;
    for (int r = 0; r < h->image.device_size; r++) {
        if (views[r].phase != DCUDA_PHASE_WAITING && views[r].phase != DCUDA_PHASE_BARRIER)
            continue;
        double secs = now ? (double)(now - m->watch[r].since_ns) / DCU_NS_PER_S : -1.0;
        if (lines++ < WATCHDOG_REPORT_LINES)
            report_rank(h, who, r, &views[r], &arrived[r], secs);
        m->watch[r].reported = m->watch[r].episode + 1;
    }
    if (lines > WATCHDOG_REPORT_LINES)
        dcu_msg_report(DCU_MSG_ERROR, "dcuda: %s:   ... and %d more blocked ranks\n", who,
                       lines - WATCHDOG_REPORT_LINES);
    return lines;
}

/* The line of a host thread that waits for the ranks' notifications. */
static void report_host_wait(dcuda_host_h h, const char *who)
{
    char text[320];
    if (dcu_host_wait_text(h, text, sizeof text))
        dcu_msg_report(DCU_MSG_ERROR,
                       "dcuda: %s:   %sthe host waits in dcuda_host_wait_notifications for %s\n",
                       who, dcu_msg_who(), text);
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
    for (int r = 0; r < n; r++) { /* one look: the counts and the lines agree */
        dcu_rank_view(&h->status_h[r], &m->views[r]);
        uint32_t phase = m->views[r].phase;
        blocked += phase == DCUDA_PHASE_WAITING || phase == DCUDA_PHASE_BARRIER;
        finished += phase == DCUDA_PHASE_FINISHED;
    }
    dcu_msg_report(
        DCU_MSG_ERROR,
        "dcuda: watchdog: %sno progress for %.1f s: %d of %d ranks blocked, %d finished, "
        "%d running\n",
        dcu_msg_who(), h->settings.watchdog, blocked, n, finished, n - blocked - finished);
    dcu_nvtx_mark("watchdog: no progress for %.1f s, %d of %d ranks blocked", h->settings.watchdog,
                  blocked, n);
    (void)report_blocked(h, "watchdog", m->views, m->notifs, now);
    report_host_wait(h, "watchdog");
    char stalled[320];
    if (dcu_deadlock_stalled(h, (uint64_t)(h->settings.watchdog * DCU_NS_PER_S), stalled,
                             sizeof stalled))
        dcu_msg_report(DCU_MSG_ERROR, "dcuda: watchdog:   %s\n", stalled);
    if (h->settings.watchdog_cancel) {
        dcu_msg_report(DCU_MSG_ERROR,
                       "dcuda: watchdog: cancelling the blocked waits (WATCHDOG_CANCEL=1)\n");
        atomic_store_explicit(h->cancel_h, DCUDA_CANCEL_WATCHDOG, memory_order_release);
    }
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

/* ---- ending the run early ----------------------------------------------------- */

/* Sets the cancel flag to `reason` unless it was set already; 1 if set. */
static int cancel_run(dcuda_host_h h, uint32_t reason)
{
    uint32_t none = DCUDA_CANCEL_NONE;
    return atomic_compare_exchange_strong_explicit(h->cancel_h, &none, reason, memory_order_acq_rel,
                                                   memory_order_acquire);
}

void dcu_monitor_end_run(dcuda_host_h h, const char *why, const char *note)
{
    if (h->abort_why[0])
        return;
    cancel_run(h, DCUDA_CANCEL_ERROR);
    snprintf(h->abort_why, sizeof h->abort_why, "%s", why);
    dcu_nvtx_mark("run ends: %s", why);
    dcu_node_abort_run(why);
    dcu_proxies_abort(h->proxy, why);
    dcu_msg_error("%s; the run ends%s (blocked waits end with DCUDA_ERR_ABORTED)", note,
                  h->info.process_count > 1 ? " in every process" : "");
}

/* The first error's record as the ranks have it: 1 with its `first` entry
 * when the rank that claimed it has written it (within RECORD_WAIT_NS; a
 * rank that could no longer take part may end the run before that rank
 * is done), 0 without. */
#define RECORD_WAIT_NS (10 * 1000 * 1000)
static int error_record(dcuda_host_h h, dcuda_error_record_t *err)
{
    const size_t head = offsetof(dcuda_error_record_t, first);
    uint64_t until = dcu_clock_ns() + RECORD_WAIT_NS;
    memset(err, 0, sizeof *err);
    do {
        if (h->ops->peek(h->backend, err, h->image.error, head) != DCUDA_OK || err->status == 0)
            return 0;
    } while (!err->filled && dcu_clock_ns() < until);
    return err->filled && h->ops->peek(h->backend, &err->first, &h->image.error->first,
                                       sizeof err->first) == DCUDA_OK;
}

/* A rank of this process ended the run (ON_ERROR=abort, or a rank that
 * left): the first error, as its record holds it, goes to the others. */
static void rank_ended_run(dcuda_host_h h)
{
    dcuda_error_record_t err;
    char text[sizeof h->abort_why - 64], why[sizeof h->abort_why];
    int known = error_record(h, &err);
    if (known) {
        dcu_log_entry_text(&err.first, text, sizeof text);
        snprintf(why, sizeof why, "rank %d (process %d), which failed: %s", (int)err.rank,
                 h->info.process_index, text);
    } else {
        snprintf(why, sizeof why, "a rank of process %d, which failed", h->info.process_index);
    }
    int left = known && err.status == DCUDA_ERR_RANK_LEFT;
    dcu_monitor_end_run(h, why,
                        left ? "a rank left the kernel early" : "a rank failed (ON_ERROR=abort)");
}

/* Another process ended the run: this one's blocked waits end quietly. */
static void peer_ended_run(dcuda_host_h h, const char *why)
{
    if (h->abort_why[0])
        return;
    snprintf(h->abort_why, sizeof h->abort_why, "%s", why);
    dcu_nvtx_mark("run ended by %s", why);
    cancel_run(h, DCUDA_CANCEL_ERROR); /* unless the proxy did, or another cause came first */
    if (atomic_load_explicit(h->cancel_h, memory_order_acquire) == DCUDA_CANCEL_ERROR)
        dcu_msg_error("the run was ended by %s", why);
}

/* A peer process that died, or left its run, ends this run: its blocked
 * waits fail with DCUDA_ERR_PEER and the run returns that error. One that
 * ended the run (ON_ERROR=abort) ends it here too. */
static void peers_check(dcuda_host_h h)
{
    char why[sizeof h->abort_why];
    if (!h->abort_why[0] && dcu_node_peer_aborted(why, sizeof why))
        peer_ended_run(h, why);
    const char *left = dcu_proxies_left(h->proxy);
    if (h->lost[0])
        return;
    if (left)
        snprintf(h->lost, sizeof h->lost, "%s", left);
    else if (!dcu_node_lost(h->lost, sizeof h->lost))
        return;
    atomic_store_explicit(&h->lost_known, 1, memory_order_release);
    dcu_nvtx_mark("peer lost: %s", h->lost);
    dcu_boot_abandon(h->lost);
    dcu_msg_error("%s while the ranks of process %d run kernel %s; ending the run", h->lost,
                  h->info.process_index, h->kernel.name);
    atomic_store_explicit(h->cancel_h, DCUDA_CANCEL_PEER, memory_order_release);
}

/* The application of this process asked to end the run
 * (dcuda_host_abort): every process hears it, naming this one. */
static void application_ended_run(dcuda_host_h h)
{
    char why[sizeof h->abort_why];
    snprintf(why, sizeof why, "the application of process %d (dcuda_host_abort: %s)",
             h->info.process_index, h->abort_text[0] ? h->abort_text : "no reason given");
    dcu_monitor_end_run(h, why, "the application aborted the run (dcuda_host_abort)");
}

/* Every poll: has the application, a rank, or a process of another node
 * ended the run? */
static void abort_check(dcuda_host_h h)
{
    if (h->abort_why[0])
        return;
    const char *remote = dcu_proxies_aborted(h->proxy);
    if (atomic_load_explicit(&h->abort_asked, memory_order_acquire))
        application_ended_run(h);
    else if (remote)
        peer_ended_run(h, remote);
    else if (atomic_load_explicit(h->cancel_h, memory_order_acquire) == DCUDA_CANCEL_ERROR)
        rank_ended_run(h);
}

/* exit() while the ranks run (run.c): the processes on the network path
 * hear that this one leaves, before it is gone. */
static void leave_check(dcuda_host_h h)
{
    if (!atomic_load_explicit(&h->leaving, memory_order_acquire) ||
        atomic_load_explicit(&h->left_told, memory_order_relaxed))
        return;
    char me[128], why[256];
    dcu_boot_describe(h->info.process_index, me, sizeof me);
    snprintf(why, sizeof why, "%s left (exit() or a return from main) while its ranks ran", me);
    dcu_proxies_leave(h->proxy, why); /* and sends what lane 0 holds */
    atomic_store_explicit(&h->left_told, 1, memory_order_release);
}

void dcu_monitor_deadlock(dcuda_host_h h)
{
    const dcuda_notif_counters_t *arrived;
    const dcu_rank_view_t *views = dcu_deadlock_views(h, &arrived);
    h->deadlocked = 1;
    dcu_nvtx_mark("deadlock: every rank of every process is blocked, nothing in flight");
    dcu_msg_error("deadlock: every rank of every process is blocked and nothing is in flight, "
                  "so the run ends (its waits return DCUDA_ERR_DEADLOCK); this process's "
                  "blocked ranks:");
    if (report_blocked(h, "deadlock", views, arrived, 0) == 0)
        dcu_msg_report(DCU_MSG_ERROR, "dcuda: deadlock:   none (its ranks finished)\n");
    report_host_wait(h, "deadlock");
    dcu_node_dl_declare(); /* before my ranks go on: the node's ranks read it */
    cancel_run(h, DCUDA_CANCEL_DEADLOCK);
}

int dcu_monitor_poll(dcuda_host_h h)
{
    int printed = drain_log(h);
    dcu_node_alive();
    abort_check(h);
    leave_check(h);
    if (dcu_deadlock_poll(h))
        dcu_monitor_deadlock(h);
    uint64_t now = dcu_clock_ns();
    if (now >= h->monitor->next_check_ns) {
        h->monitor->next_check_ns = now + MONITOR_CHECK_NS;
        if (h->settings.watchdog > 0)
            watchdog_check(h, now);
        peers_check(h);
    }
    return printed;
}

void dcu_monitor_news(dcuda_host_h h)
{
    abort_check(h);
    leave_check(h);
}

void dcu_monitor_drain(dcuda_host_h h)
{
    drain_log(h);
    dcu_monitor_news(h);
    /* The ranks may have ended on a lost peer (the proxy heard it left)
     * before the periodic check named it: the run's error names it. */
    if (atomic_load_explicit(h->cancel_h, memory_order_acquire) == DCUDA_CANCEL_PEER)
        peers_check(h);
    report_repeats(h);
}
