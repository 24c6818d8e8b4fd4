/*
 * The ranks' notifications to their host (dcuda_notify_host on a rank;
 * dcuda_host_wait_notifications and dcuda_host_test_notifications here).
 *
 * Each rank counts what it sent of each user tag in mapped host memory
 * (dcuda_context_t.to_host: the rank's leader is the only writer, a
 * release store of the next count). The host's count of a tag is the sum
 * of its own ranks' counts, less what the host consumed this run
 * (to_host_taken, under the API lock, which a waiting thread takes only
 * for each look). A thread blocked in the wait is recorded: the deadlock
 * detector counts a host with such a thread as one that notifies nobody
 * (a single thread cannot), and never ends a wait whose notifications are
 * there; a wait that nothing can satisfy ends as the ranks' waits do.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "util/clock.h"
#include "util/msg.h"

/* A waiting thread spins this long, then sleeps between looks (the
 * longer it waited, the longer, up to the most). */
#define WAIT_SPIN_NS (50 * DCU_NS_PER_US)
#define WAIT_SLEEP_MIN_NS (2 * DCU_NS_PER_US)
#define WAIT_SLEEP_MAX_NS (200 * DCU_NS_PER_US)

/* What the ranks sent of tag this run, less what the host consumed (read
 * first: a thread that takes meanwhile makes the answer larger, never
 * smaller, which is what the deadlock detector, reading without the API
 * lock, may afford). */
static uint32_t ready(dcuda_host_h h, int tag)
{
    uint32_t taken = atomic_load_explicit(&h->to_host_taken[tag], memory_order_acquire);
    uint32_t sum = 0;
    for (int r = 0; r < h->image.device_size; r++)
        sum += atomic_load_explicit(&h->to_host_h[r].count[tag], memory_order_acquire);
    return sum - taken;
}

void dcu_host_wait_run_begin(dcuda_host_h h)
{
    atomic_store(&h->ranks_returned, 0);
    atomic_store_explicit(&h->run_live, 1, memory_order_release);
}

void dcu_host_wait_run_end(dcuda_host_h h)
{
    atomic_store_explicit(&h->run_live, 0, memory_order_release);
    atomic_store(&h->ranks_returned, 0);
    if (h->to_host_h)
        memset(h->to_host_h, 0, (size_t)h->image.device_size * sizeof *h->to_host_h);
    for (int t = 0; t < DCUDA_TAG_COUNT; t++)
        atomic_store_explicit(&h->to_host_taken[t], 0u, memory_order_relaxed);
}

/* Why no more notifications can come (DCUDA_OK: they still may), with
 * the reason in why. */
static dcuda_status_t no_more(dcuda_host_h h, char *why, size_t why_size)
{
    switch (atomic_load_explicit(h->cancel_h, memory_order_acquire)) {
    case DCUDA_CANCEL_DEADLOCK:
        snprintf(why, why_size,
                 "every rank of every process is blocked or finished and nothing "
                 "is in flight (the deadlock report says what each waits for)");
        return DCUDA_ERR_DEADLOCK;
    case DCUDA_CANCEL_WATCHDOG:
        snprintf(why, why_size, "the watchdog ended the run's waits (WATCHDOG_CANCEL)");
        return DCUDA_ERR_TIMEOUT;
    case DCUDA_CANCEL_PEER:
        snprintf(why, why_size, "a process of the run was lost");
        return DCUDA_ERR_PEER;
    case DCUDA_CANCEL_ERROR:
        snprintf(why, why_size, "the run was ended early (a rank's error, or dcuda_host_abort)");
        return DCUDA_ERR_ABORTED;
    default:
        break;
    }
    if (atomic_load_explicit(&h->ranks_returned, memory_order_acquire)) {
        snprintf(why, why_size, "this process's ranks returned");
        return DCUDA_ERR_DEADLOCK;
    }
    if (!atomic_load_explicit(&h->run_live, memory_order_acquire)) {
        snprintf(why, why_size, "the run ended");
        return DCUDA_ERR_DEADLOCK;
    }
    return DCUDA_OK;
}

/* The checks of both calls, under the API lock. */
static dcuda_status_t check_call(dcuda_host_h h, const char *call, int tag, int count)
{
    dcuda_status_t st = dcu_host_check(h, call);
    if (st != DCUDA_OK)
        return st;
    if (tag < 0 || tag >= DCUDA_TAG_COUNT) {
        dcu_msg_error("%s: tag %d not in 0..%d", call, tag, DCUDA_TAG_COUNT - 1);
        return DCUDA_ERR_TAG;
    }
    if (count < 1) {
        dcu_msg_error("%s: count %d is not positive", call, count);
        return DCUDA_ERR_INVALID_ARG;
    }
    if (!atomic_load_explicit(&h->run_live, memory_order_acquire)) {
        dcu_msg_error("%s: no run is in flight (the ranks' notifications are taken from the "
                      "call that starts their run, dcuda_host_run_start or dcuda_host_run on "
                      "another thread, until it is concluded)",
                      call);
        return DCUDA_ERR_INVALID_ARG;
    }
    return DCUDA_OK;
}

/* Consumes count of tag if they are there: 1, else 0. */
static int take(dcuda_host_h h, int tag, int count)
{
    if (ready(h, tag) < (uint32_t)count)
        return 0;
    atomic_fetch_add_explicit(&h->to_host_taken[tag], (uint32_t)count, memory_order_release);
    return 1;
}

/* count of tag can no longer come: the reason, printed, as a status. */
static dcuda_status_t hopeless(dcuda_host_h h, const char *call, int tag, int count,
                               dcuda_status_t st, const char *why)
{
    dcu_msg_error("%s: %u of the %d notification(s) of tag %d arrived, and no more can: %s (%s)",
                  call, ready(h, tag), count, tag, why, dcuda_status_name(st));
    return st;
}

/* The waiting thread's record: its slot (-1: none free). */
static int enter_wait(dcuda_host_h h, int tag, int count)
{
    atomic_fetch_add(&h->host_waiters, 1);
    for (int i = 0; i < DCU_HOST_WAIT_SLOTS; i++) {
        int free_tag = -1;
        atomic_store(&h->host_waits[i].count, count);
        if (atomic_compare_exchange_strong(&h->host_waits[i].tag, &free_tag, tag))
            return i;
    }
    return -1;
}

static void leave_wait(dcuda_host_h h, int slot)
{
    if (slot >= 0)
        atomic_store(&h->host_waits[slot].tag, -1);
    atomic_fetch_sub(&h->host_waiters, 1);
}

/* One look of a waiting thread: 1 when it is done (*st says how). */
static int look_once(dcuda_host_h h, const char *call, int tag, int count, dcuda_status_t *st)
{
    char why[160];
    dcu_host_lock();
    int done = take(h, tag, count);
    *st = DCUDA_OK;
    if (!done) {
        *st = no_more(h, why, sizeof why);
        done = *st != DCUDA_OK;
        if (done && take(h, tag, count)) /* what the ranks stored before they ended is there */
            *st = DCUDA_OK;
        else if (done)
            *st = hopeless(h, call, tag, count, *st, why);
    }
    dcu_host_unlock();
    return done;
}

dcuda_status_t dcuda_host_wait_notifications(dcuda_host_h h, int tag, int count)
{
    static const char call[] = "dcuda_host_wait_notifications";
    dcu_host_lock();
    dcuda_status_t st = check_call(h, call, tag, count);
    int slot = st == DCUDA_OK ? enter_wait(h, tag, count) : -1;
    dcu_host_unlock();
    if (st != DCUDA_OK)
        return st;
    uint64_t start = dcu_clock_ns(), pause = WAIT_SLEEP_MIN_NS;
    while (!look_once(h, call, tag, count, &st)) {
        if (dcu_clock_ns() - start < WAIT_SPIN_NS) {
            sched_yield();
            continue;
        }
        dcu_clock_sleep_ns(pause);
        pause = pause < WAIT_SLEEP_MAX_NS / 2 ? 2 * pause : WAIT_SLEEP_MAX_NS;
    }
    leave_wait(h, slot);
    return st;
}

dcuda_status_t dcuda_host_test_notifications(dcuda_host_h h, int tag, int count, int *done)
{
    static const char call[] = "dcuda_host_test_notifications";
    dcu_host_lock();
    dcuda_status_t st = check_call(h, call, tag, count);
    if (st == DCUDA_OK && !done) {
        dcu_msg_error("%s: done is NULL", call);
        st = DCUDA_ERR_INVALID_ARG;
    }
    if (st == DCUDA_OK) {
        char why[160];
        *done = take(h, tag, count);
        dcuda_status_t ended = *done ? DCUDA_OK : no_more(h, why, sizeof why);
        if (ended != DCUDA_OK) /* the ranks' last stores are there */
            *done = take(h, tag, count);
        if (ended != DCUDA_OK && !*done)
            st = hopeless(h, call, tag, count, ended, why);
    }
    dcu_host_unlock();
    return st;
}

int dcu_host_may_notify(dcuda_host_h h)
{
    return atomic_load(&h->host_free) && atomic_load(&h->host_waiters) == 0;
}

int dcu_host_wait_satisfied(dcuda_host_h h)
{
    if (atomic_load(&h->host_waiters) > DCU_HOST_WAIT_SLOTS)
        return 1; /* some wait is not recorded: it may be */
    int satisfied = 0;
    for (int i = 0; i < DCU_HOST_WAIT_SLOTS && !satisfied; i++) {
        int tag = atomic_load(&h->host_waits[i].tag);
        satisfied = tag >= 0 && ready(h, tag) >= (uint32_t)atomic_load(&h->host_waits[i].count);
    }
    return satisfied;
}

/* "; ready for the host: tag 7 x4, ..." (the first few tags that have
 * notifications ready), or "; nothing else ready for the host". */
static void ready_text(dcuda_host_h h, char *text, size_t size)
{
    size_t used = 0;
    int listed = 0;
    for (int tag = 0; tag < DCUDA_TAG_COUNT && used < size; tag++) {
        uint32_t n = ready(h, tag);
        if (n == 0)
            continue;
        int w = listed < 6 ? snprintf(text + used, size - used, "%s tag %d x%u",
                                      listed ? "," : "; ready for the host:", tag, n)
                           : snprintf(text + used, size - used, ", ...");
        used += w > 0 ? (size_t)w : 0u;
        if (++listed > 6)
            break;
    }
    if (!listed)
        snprintf(text, size, "; nothing is ready for the host");
}

int dcu_host_wait_text(dcuda_host_h h, char *text, size_t size)
{
    int waiters = atomic_load(&h->host_waiters), shown = 0;
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < DCU_HOST_WAIT_SLOTS && used < size; i++) {
        int tag = atomic_load(&h->host_waits[i].tag);
        if (tag < 0)
            continue;
        int n = snprintf(text + used, size - used, "%s%d notification(s) of tag %d (%u ready)",
                         shown ? "; " : "", atomic_load(&h->host_waits[i].count), tag,
                         h->to_host_h ? ready(h, tag) : 0u);
        used += n > 0 ? (size_t)n : 0u;
        shown++;
    }
    if (waiters > shown && used < size) {
        int n = snprintf(text + used, size - used, "%s%d wait(s) more", shown ? "; " : "",
                         waiters - shown);
        used += n > 0 ? (size_t)n : 0u;
    }
    if (waiters > 0 && h->to_host_h)
        ready_text(h, text + (used < size ? used : size - 1),
                   size - (used < size ? used : size - 1));
    return waiters > 0;
}
