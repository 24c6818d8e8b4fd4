/*
 * CPU backend, rank side: the rank API for ranks that are threads.
 *
 * The mechanism mirrors the GPU's: a put is a copy by the sending rank
 * followed by a release add to the target's notification counter; a wait is
 * acquire loads of the rank's own counter until it has grown far enough
 * (modulo 2^32); barriers are counters that only grow. No locks: the only
 * shared writes are atomic adds and the log ring's per-entry sequence
 * numbers. The checks come from detail/rank_checks.h and rank_common.h,
 * shared with the GPU.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../core/hostlog.h"
#include "cpu_internal.h"
#include "dcuda/dcuda_rank.h"
#include "dcuda/detail/rank_common.h"

/* ---- reporting --------------------------------------------------------- */

static void fill_entry(dcuda_log_entry_t *e, int rank, int kind, const char *text)
{
    e->rank = rank;
    e->kind = (uint16_t)kind;
    e->nargs = 0;
    e->arg_types = 0;
    size_t n = strnlen(text, DCUDA_LOG_TEXT - 1);
    memcpy(e->text, text, n);
    e->text[n] = '\0';
}

static void ring_push(const dcuda_log_ring_t *ring, int rank, int kind, const char *text)
{
    uint32_t t = atomic_fetch_add_explicit(ring->head, 1u, memory_order_relaxed);
    dcuda_log_entry_t *e = &ring->entries[t & (ring->capacity - 1)];
    unsigned spins = 0;
    /* Back-pressure: wait until the logger has freed this entry. */
    while (atomic_load_explicit(&e->seq, memory_order_acquire) != t)
        dcuda_cpu_backoff(&spins);
    fill_entry(e, rank, kind, text);
    atomic_store_explicit(&e->seq, t + 1, memory_order_release);
}

/* Reports a misuse: formats "call: details: message", records the run's
 * first error and queues the line for the host. Returns status. */
static dcuda_status_t report(dcuda_status_t status, const char *call, const char *fmt, ...)
    DCUDA_PRINTF_LIKE(3, 4);
static dcuda_status_t report(dcuda_status_t status, const char *call, const char *fmt, ...)
{
    const dcuda_context_t *ctx = dcuda_cpu_thread_ctx;
    char text[DCUDA_LOG_TEXT];
    int n = snprintf(text, sizeof text, "%s: ", call);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof text)
        snprintf(text + n, sizeof text - (size_t)n, " (%s)", dcuda_status_string(status));
    if (!ctx) {
        dcuda_hostlog_error("%s [not on a rank thread]", text);
        return status;
    }
    int rank = ctx->world_first + dcuda_cpu_thread_rank;
    int32_t none = 0;
    if (atomic_compare_exchange_strong(&ctx->error->status, &none, (int32_t)status)) {
        atomic_store(&ctx->error->rank, rank);
        fill_entry(&ctx->error->first, rank, DCUDA_LOG_ERROR_KIND, text);
    }
    atomic_fetch_add(&ctx->error->count, 1u);
    ring_push(&ctx->log, rank, DCUDA_LOG_ERROR_KIND, text);
    return status;
}

#define DCUDA_CHECK_FN static
#define DCUDA_DETAIL_REPORT(st, status, call, ...) report(status, call, __VA_ARGS__)
#include "dcuda/detail/rank_checks.h"

static int state_ok(const dcuda_state_t *st)
{
    return st && st->magic == DCUDA_STATE_MAGIC && st->ctx;
}

#define CHECK_STATE(st, call)                                                                  \
    do {                                                                                       \
        if (!state_ok(st))                                                                     \
            return report(DCUDA_ERR_NOT_INITIALIZED, call,                                     \
                          "state %p used before dcuda_rank_init", (const void *)(st));         \
    } while (0)

/* ---- blocking ----------------------------------------------------------- */

typedef struct block_desc {
    uint32_t phase, tag, count, consumed, comm;
} block_desc_t;

static void publish_blocked(const dcuda_state_t *st, const block_desc_t *d, uint32_t target)
{
    dcuda_rank_status_t *s = &st->ctx->rank_status[st->device_rank];
    atomic_store_explicit(&s->tag, d->tag, memory_order_relaxed);
    atomic_store_explicit(&s->count, d->count, memory_order_relaxed);
    atomic_store_explicit(&s->consumed, d->consumed, memory_order_relaxed);
    atomic_store_explicit(&s->comm, d->comm, memory_order_relaxed);
    atomic_store_explicit(&s->target, target, memory_order_relaxed);
    atomic_store_explicit(&s->phase, d->phase, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->episode, 1u, memory_order_release);
}

static void publish_running(const dcuda_state_t *st)
{
    atomic_store_explicit(&st->ctx->rank_status[st->device_rank].phase, DCUDA_PHASE_RUNNING,
                          memory_order_release);
}

/* Waits until *counter reaches target (mod 2^32). After a short spin the
 * rank shows itself as blocked to the watchdog, which may cancel it. */
static dcuda_status_t block_until(const dcuda_state_t *st, const _Atomic uint32_t *counter,
                                  uint32_t target, const block_desc_t *d, const char *call)
{
    unsigned spins = 0;
    int published = 0;
    while (!dcuda_detail_reached(atomic_load_explicit(counter, memory_order_acquire), target)) {
        dcuda_cpu_backoff(&spins);
        if (spins == DCUDA_CPU_BLOCKED_STEPS) {
            publish_blocked(st, d, target);
            published = 1;
        }
        uint32_t cancel = published ? atomic_load_explicit(st->ctx->cancel, memory_order_acquire) : 0;
        if (cancel) {
            dcuda_status_t why = cancel == DCUDA_CANCEL_PEER ? DCUDA_ERR_PEER : DCUDA_ERR_TIMEOUT;
            publish_running(st);
            if (d->phase == DCUDA_PHASE_WAITING)
                return report(why, call, "waiting for %u notification(s) of tag %u", d->count,
                              d->tag);
            return report(why, call, "in a barrier on %s", dcuda_detail_comm_name((int)d->comm));
        }
    }
    if (published)
        publish_running(st);
    return DCUDA_OK;
}

/* The device's last rank to reach WORLD barrier `epoch` when WORLD spans
 * processes: tells the node, waits for every process, releases its device. */
static dcuda_status_t node_barrier(const dcuda_state_t *st, uint32_t epoch, const char *call)
{
    const dcuda_context_t *ctx = st->ctx;
    uint32_t target = ctx->node_base + epoch;
    block_desc_t d = {DCUDA_PHASE_BARRIER, 0, 0, 0, DCUDA_COMM_WORLD};
    atomic_store_explicit(&ctx->node_slots[st->process_index].arrived, target,
                          memory_order_release);
    for (int p = 0; p < st->process_count; p++) {
        dcuda_status_t s = block_until(st, &ctx->node_slots[p].arrived, target, &d, call);
        if (s != DCUDA_OK)
            return s;
    }
    atomic_store_explicit(&ctx->barriers[DCUDA_COMM_WORLD].released, epoch, memory_order_release);
    return DCUDA_OK;
}

/* Barriers count arrivals on the device; WORLD over several processes adds
 * a step among the devices' last arrivals (node_barrier). */
static dcuda_status_t barrier(dcuda_state_t *st, int comm, const char *call)
{
    const dcuda_context_t *ctx = st->ctx;
    uint32_t epoch = ++st->barrier_epoch[comm];
    uint32_t target = epoch * (uint32_t)st->device_size;
    _Atomic uint32_t *arrived = &ctx->barriers[comm].arrived;
    uint32_t before = atomic_fetch_add_explicit(arrived, 1u, memory_order_acq_rel);
    block_desc_t d = {DCUDA_PHASE_BARRIER, 0, 0, 0, (uint32_t)comm};
    if (comm != DCUDA_COMM_WORLD || st->process_count == 1)
        return block_until(st, arrived, target, &d, call);
    if (before + 1u == target) {
        dcuda_status_t s = node_barrier(st, epoch, call);
        if (s != DCUDA_OK)
            return s;
    }
    return block_until(st, &ctx->barriers[DCUDA_COMM_WORLD].released, epoch, &d, call);
}

/* ---- init, communicators ------------------------------------------------ */

dcuda_status_t dcuda_rank_init(dcuda_context_h ctx, dcuda_state_t *st)
{
    static const char call[] = "dcuda_rank_init";
    if (!st)
        return report(DCUDA_ERR_INVALID_ARG, call, "state is NULL");
    if (!ctx || ctx != dcuda_cpu_thread_ctx || ctx->magic != DCUDA_CONTEXT_MAGIC ||
        ctx->version != DCUDA_LAYOUT_VERSION)
        return report(DCUDA_ERR_INVALID_ARG, call,
                      "context %p is not the handle passed to this kernel", (void *)ctx);
    memset(st, 0, sizeof *st);
    dcuda_detail_state_bind(st, ctx, dcuda_cpu_thread_rank);
    for (int t = 0; t < DCUDA_TAG_COUNT; t++)
        st->consumed[t] = ctx->notif_start;
    st->magic = DCUDA_STATE_MAGIC;
    publish_running(st);
    return barrier(st, DCUDA_COMM_WORLD, call);
}

dcuda_status_t dcuda_rank_finish(dcuda_state_t *st)
{
    CHECK_STATE(st, "dcuda_rank_finish");
    dcuda_status_t status = barrier(st, DCUDA_COMM_WORLD, "dcuda_rank_finish");
    st->magic = 0;
    return status;
}

dcuda_status_t dcuda_get_data(dcuda_state_t *st, void **data)
{
    CHECK_STATE(st, "dcuda_get_data");
    if (!data)
        return report(DCUDA_ERR_INVALID_ARG, "dcuda_get_data", "data is NULL");
    *data = st->ctx->user_data;
    return DCUDA_OK;
}

dcuda_status_t dcuda_comm_size(dcuda_state_t *st, dcuda_comm_t comm, int *size)
{
    CHECK_STATE(st, "dcuda_comm_size");
    return dcuda_detail_comm_query(st, comm, size, 1, "dcuda_comm_size");
}

dcuda_status_t dcuda_comm_rank(dcuda_state_t *st, dcuda_comm_t comm, int *rank)
{
    CHECK_STATE(st, "dcuda_comm_rank");
    return dcuda_detail_comm_query(st, comm, rank, 0, "dcuda_comm_rank");
}

dcuda_status_t dcuda_comm_barrier(dcuda_state_t *st, dcuda_comm_t comm)
{
    CHECK_STATE(st, "dcuda_comm_barrier");
    dcuda_status_t s = dcuda_detail_checked_comm(st, comm, "dcuda_comm_barrier");
    return s == DCUDA_OK ? barrier(st, comm, "dcuda_comm_barrier") : s;
}

/* ---- windows ------------------------------------------------------------ */

dcuda_status_t dcuda_win_create(dcuda_state_t *st, dcuda_comm_t comm, void *base, size_t size,
                                dcuda_win_t *win)
{
    static const char call[] = "dcuda_win_create";
    CHECK_STATE(st, call);
    dcuda_status_t s = dcuda_detail_checked_comm(st, comm, call);
    if (s != DCUDA_OK)
        return s;
    if (!win)
        return report(DCUDA_ERR_INVALID_ARG, call, "win is NULL");
    int slot = dcuda_detail_free_slot(st, comm);
    if (slot < 0) {
        *win = DCUDA_WIN_NONE;
        return report(DCUDA_ERR_WIN_LIMIT, call, "%d windows already live on %s", DCUDA_MAX_WINDOWS,
                      dcuda_detail_comm_name(comm));
    }
    /* Bad arguments still join the collective, with an empty part, so the
     * other ranks do not hang; the handle is returned for dcuda_win_free. */
    dcuda_status_t arg = dcuda_detail_checked_win_args(st, base, size, call);
    dcuda_detail_win_publish(st, comm, slot, arg == DCUDA_OK ? (uint64_t)(uintptr_t)base : 0,
                             arg == DCUDA_OK ? size : 0);
    s = barrier(st, comm, call);
    *win = s == DCUDA_OK ? dcuda_detail_win_adopt(st, comm, slot) : DCUDA_WIN_NONE;
    return s == DCUDA_OK ? arg : s;
}

dcuda_status_t dcuda_win_free(dcuda_state_t *st, dcuda_win_t win)
{
    static const char call[] = "dcuda_win_free";
    CHECK_STATE(st, call);
    dcuda_status_t s = dcuda_detail_checked_win(st, win, call);
    if (s != DCUDA_OK)
        return s;
    int comm = dcuda_detail_win_comm(win), slot = dcuda_detail_win_slot(win);
    s = barrier(st, comm, call);
    dcuda_detail_win_forget(st, comm, slot);
    return s;
}

dcuda_status_t dcuda_win_flush(dcuda_state_t *st, dcuda_win_t win)
{
    CHECK_STATE(st, "dcuda_win_flush");
    /* A CPU rank's put has finished reading its source when it returns. */
    return dcuda_detail_checked_win(st, win, "dcuda_win_flush");
}

/* ---- notified RMA ------------------------------------------------------- */

/* A notification is a release add: what the rank wrote (puts and plain
 * stores) and read before it is ordered before it, so the target may read
 * the data, or reuse a buffer it was told is free. */
static void notify_counters(dcuda_notif_counters_t *to, int tag)
{
    atomic_fetch_add_explicit(&to->arrived[tag], 1u, memory_order_release);
}

static dcuda_status_t put_common(dcuda_state_t *st, dcuda_win_t win, int rank, size_t offset,
                                 size_t size, const void *src, int notify, int tag,
                                 const char *call)
{
    CHECK_STATE(st, call);
    dcuda_detail_put_t p;
    dcuda_status_t s = notify ? dcuda_detail_checked_tag(st, tag, call) : DCUDA_OK;
    if (s != DCUDA_OK)
        return s;
    const dcuda_put_route_t *r = dcuda_detail_put_fast(st, win, rank, offset, size, src, &p.dst);
    if (r) {
        p.to.notifs = r->notifs;
    } else {
        if ((s = dcuda_detail_checked_put(st, win, rank, offset, size, src, &p, call)) !=
            DCUDA_OK)
            return s;
        dcuda_detail_route_remember(st, win, rank, &p);
    }
    if (size && p.dst != (const char *)src)
        memcpy(p.dst, src, size);
    if (notify)
        notify_counters(p.to.notifs, tag);
    return DCUDA_OK;
}

dcuda_status_t dcuda_put(dcuda_state_t *st, dcuda_win_t win, int rank, size_t offset,
                         size_t size, const void *src)
{
    return put_common(st, win, rank, offset, size, src, 0, 0, "dcuda_put");
}

dcuda_status_t dcuda_put_notify(dcuda_state_t *st, dcuda_win_t win, int rank, size_t offset,
                                size_t size, const void *src, int tag)
{
    return put_common(st, win, rank, offset, size, src, 1, tag, "dcuda_put_notify");
}

dcuda_status_t dcuda_notify(dcuda_state_t *st, int rank, dcuda_comm_t comm, int tag)
{
    static const char call[] = "dcuda_notify";
    CHECK_STATE(st, call);
    dcuda_detail_target_t t;
    dcuda_status_t s = dcuda_detail_checked_notify(st, comm, rank, tag, &t, call);
    if (s == DCUDA_OK)
        notify_counters(t.notifs, tag);
    return s;
}

int dcuda_test_notifications(dcuda_state_t *st, int tag, int count)
{
    static const char call[] = "dcuda_test_notifications";
    CHECK_STATE(st, call);
    dcuda_status_t s = dcuda_detail_checked_wait(st, tag, count, call);
    if (s != DCUDA_OK)
        return s;
    const _Atomic uint32_t *arrived = &st->notifs[st->device_rank].arrived[tag];
    if (!dcuda_detail_notifs_ready(atomic_load_explicit(arrived, memory_order_acquire),
                                   st->consumed[tag], (uint32_t)count))
        return 0;
    st->consumed[tag] += (uint32_t)count;
    return 1;
}

dcuda_status_t dcuda_wait_notifications(dcuda_state_t *st, int tag, int count)
{
    static const char call[] = "dcuda_wait_notifications";
    CHECK_STATE(st, call);
    dcuda_status_t s = dcuda_detail_checked_wait(st, tag, count, call);
    if (s != DCUDA_OK)
        return s;
    uint32_t target = st->consumed[tag] + (uint32_t)count;
    block_desc_t d = {DCUDA_PHASE_WAITING, (uint32_t)tag, (uint32_t)count, st->consumed[tag], 0};
    s = block_until(st, &st->notifs[st->device_rank].arrived[tag], target, &d, call);
    if (s == DCUDA_OK)
        st->consumed[tag] = target;
    return s;
}

/* ---- host commands ------------------------------------------------------ */

dcuda_status_t dcuda_rank_ping_host(dcuda_state_t *st)
{
    CHECK_STATE(st, "dcuda_rank_ping_host");
    const dcuda_context_t *ctx = st->ctx;
    uint32_t tag = ++st->cmd_tag;
    uint32_t t = atomic_fetch_add_explicit(ctx->cmd.head, 1u, memory_order_relaxed);
    dcuda_cmd_t *c = &ctx->cmd.entries[t & (ctx->cmd.capacity - 1)];
    unsigned spins = 0;
    while (atomic_load_explicit(&c->seq, memory_order_acquire) != t)
        dcuda_cpu_backoff(&spins);
    c->rank = st->device_rank;
    c->op = DCUDA_CMD_PING;
    c->tag = tag;
    atomic_store_explicit(&c->seq, t + 1, memory_order_release);
    dcuda_cmd_reply_t *r = &ctx->replies[st->device_rank];
    spins = 0;
    while (atomic_load_explicit(&r->seq, memory_order_acquire) != tag)
        dcuda_cpu_backoff(&spins);
    return (dcuda_status_t)r->status;
}

/* ---- timers and logging ------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static dcuda_status_t timer_step(dcuda_state_t *st, int stop, const char *call)
{
    dcuda_status_t s = dcuda_detail_checked_timer(st, stop, call);
    if (s != DCUDA_OK)
        return s;
    uint32_t step = st->timer_next;
    dcuda_timer_slot_t *t = &st->ctx->timers[step / 2];
    uint64_t now = now_ns(), seen;
    if (!stop) {
        seen = atomic_load_explicit(&t->start_ns, memory_order_relaxed);
        while (now < seen && !atomic_compare_exchange_weak(&t->start_ns, &seen, now)) {
        }
        atomic_fetch_add(&t->starts, 1u);
    } else {
        seen = atomic_load_explicit(&t->stop_ns, memory_order_relaxed);
        while (now > seen && !atomic_compare_exchange_weak(&t->stop_ns, &seen, now)) {
        }
        atomic_fetch_add(&t->stops, 1u);
    }
    st->timer_next = step + 1;
    return DCUDA_OK;
}

dcuda_status_t dcuda_start_cpu_timer(dcuda_state_t *st)
{
    CHECK_STATE(st, "dcuda_start_cpu_timer");
    return timer_step(st, 0, "dcuda_start_cpu_timer");
}

dcuda_status_t dcuda_stop_cpu_timer(dcuda_state_t *st)
{
    CHECK_STATE(st, "dcuda_stop_cpu_timer");
    return timer_step(st, 1, "dcuda_stop_cpu_timer");
}

dcuda_status_t dcuda_log(dcuda_state_t *st, const char *fmt, ...)
{
    CHECK_STATE(st, "dcuda_log");
    if (!fmt)
        return report(DCUDA_ERR_INVALID_ARG, "dcuda_log", "format is NULL");
    char text[DCUDA_LOG_TEXT];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    ring_push(&st->ctx->log, st->world_rank, DCUDA_LOG_TEXT_KIND, text);
    return DCUDA_OK;
}
