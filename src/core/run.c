/*
 * A run of the kernel: the host side prepares it with the other processes
 * (tables reset, peers' memory mapped, a barrier), launches the ranks,
 * serves their commands and watches them until every rank returned, then
 * hands back the user data, the timers and the outcome every process
 * agrees on.
 *
 * dcuda_host_run does all of that on the calling thread. dcuda_host_run_start
 * prepares and launches on the calling thread (so that the launch is
 * ordered on the application's stream when it returns) and leaves the
 * serving to a thread of the runtime; dcuda_host_run_wait joins that thread
 * and hands back what dcuda_host_run would have.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/boot.h"
#include "core.h"
#include "node/node.h"
#include "proxy/trace.h"
#include "util/clock.h"
#include "util/logfmt.h"
#include "util/msg.h"
#include "util/nvtx.h"

/* How long an exit() while the ranks run waits for the host thread to tell
 * the processes on the network path. */
#define HOST_LEAVE_NS (2 * DCU_NS_PER_S)

/* After work (a command or a log line) the host keeps polling without sleep
 * for a while, since more usually follows; then it sleeps between polls.
 * Beside CPU ranks or proxy lanes it yields between polls that found
 * nothing: mpirun binds a process of one or two to one core, where a host
 * thread that spun for its 2 ms held the ranks off the core (a WORLD
 * barrier of two processes took 2 ms instead of 13 us) or the lanes (a
 * WORLD barrier between two lanes of GPU ranks, 2.2 ms). */
#define HOST_BUSY_NS (2 * DCU_NS_PER_MS)
#define HOST_IDLE_SLEEP_NS (200 * DCU_NS_PER_US)
/* While busy, ask whether the ranks are done every this many rounds only
 * (the question costs a few microseconds on a GPU). */
#define HOST_FINISHED_EVERY 256u

/* The host whose ranks run now (launched, not yet joined). */
static _Atomic(dcuda_host_h) running_host;
/* The NVTX range of the run in flight (one at a time a process): from
 * prepare to conclude, which may be another thread's. */
static uint64_t run_range;

/* At exit() while ranks run (a thread of the program calls it, or main
 * returns from a dcuda_host_run_start it did not wait for): the peers learn
 * that this process left their run, and its ranks' waits end
 * (DCUDA_ERR_ABORTED). Without that, the GPU's exit handler, which waits
 * for the kernel, would wait for ranks that wait forever, and the process
 * would neither end nor tell its peers. Registered at the first launch,
 * after the backend started CUDA, so that it runs before CUDA's handler
 * (exit handlers run in the reverse order of their registration). */
static void run_at_exit(void)
{
    dcuda_host_h h = atomic_load_explicit(&running_host, memory_order_acquire);
    if (!h)
        return;
    atomic_store_explicit(&h->exiting, 1, memory_order_release);
    dcu_node_mark_exit();
    uint32_t none = DCUDA_CANCEL_NONE;
    atomic_compare_exchange_strong_explicit(h->cancel_h, &none, DCUDA_CANCEL_PEER,
                                            memory_order_acq_rel, memory_order_acquire);
    if (!h->net_peers)
        return; /* the node's processes see the mark */
    /* The host thread (another one: this thread is in exit()) tells the
     * processes on the network path, which would otherwise wait for ranks
     * that are gone while this process waits for them. */
    atomic_store_explicit(&h->leaving, 1, memory_order_release);
    uint64_t until = dcu_clock_ns() + HOST_LEAVE_NS;
    while (!atomic_load_explicit(&h->left_told, memory_order_acquire) && dcu_clock_ns() < until)
        dcu_clock_sleep_ns(HOST_IDLE_SLEEP_NS);
}

static void watch_exit(dcuda_host_h h)
{
    static atomic_flag registered = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&registered))
        atexit(run_at_exit);
    atomic_store_explicit(&running_host, h, memory_order_release);
}

/* A proxy that cannot go on ends the run as a lost peer would (unless the
 * run was cancelled already: then its failure is a consequence). */
static void check_proxy(dcuda_host_h h)
{
    const char *left = dcu_proxies_left(h->proxy), *why = dcu_proxies_failure(h->proxy);
    if (left) /* a lost process named, by my manager or another process: that one */
        why = left;
    if (!why || h->lost[0] || atomic_load_explicit(h->cancel_h, memory_order_acquire))
        return;
    snprintf(h->lost, sizeof h->lost, "%s", why);
    atomic_store_explicit(&h->lost_known, 1, memory_order_release);
    atomic_store_explicit(h->cancel_h, DCUDA_CANCEL_PEER, memory_order_release);
}

/* Every process is ready for the run: tables reset, peers' memory mapped,
 * the context copied to the ranks, a barrier passed; the user struct is
 * remembered for the copy back. */
static dcuda_status_t prepare(dcuda_host_h h, void *user_data, size_t user_size, const char *call)
{
    if (user_size && !user_data) {
        dcu_msg_error("%s: user_data is NULL but user_size is %zu", call, user_size);
        return DCUDA_ERR_INVALID_ARG;
    }
    run_range = dcu_nvtx_start(DCU_NVTX_RUN);
    dcu_nvtx_push(DCU_NVTX_RUN_PREPARE);
    dcu_boot_enter(DCU_CALL_RUN);
    h->last_error[0] = '\0';
    h->timing_count = 0;
    h->lost[0] = '\0';
    atomic_store(&h->lost_known, 0);
    h->abort_why[0] = '\0';
    h->deadlocked = 0;
    atomic_store(&h->exiting, 0);
    atomic_store(&h->leaving, 0);
    atomic_store(&h->left_told, 0);
    atomic_store(&h->abort_claimed, 0);
    atomic_store(&h->abort_asked, 0);
    /* From here until the ranks are done, leaving the process loses it to
     * the peers' run. */
    dcu_node_run_begin();
    dcuda_status_t st = dcu_context_reset(h, user_data, user_size);
    if (st == DCUDA_OK)
        st = dcu_peers_exchange(h);
    if (st == DCUDA_OK)
        st = h->ops->copy_in(h->backend, h->dev_ctx, &h->image, sizeof h->image);
    /* Every process is ready: no rank can reach tables still being reset. */
    if (st == DCUDA_OK)
        st = dcu_boot_barrier();
    if (st == DCUDA_ERR_PEER)
        snprintf(h->last_error, sizeof h->last_error, "%s: %s", call, dcu_boot_why());
    if (st != DCUDA_OK)
        dcu_node_run_end();
    h->run.user = user_data; /* copied back when the run ends */
    h->run.user_size = user_size;
    dcu_nvtx_pop();
    if (st != DCUDA_OK)
        dcu_nvtx_end(run_range); /* no run */
    return st;
}

static dcuda_status_t serve(dcuda_host_h h);

/* Starts the ranks (after the application's earlier work on `stream`). A
 * failure is reported to the peers, whose ranks would wait for these. */
static dcuda_status_t launch(dcuda_host_h h, void *stream)
{
    dcu_nvtx_push(DCU_NVTX_RUN_LAUNCH);
    h->run.t0 = dcu_clock_ns();
    dcu_host_notes_open(h); /* first: a request the open run lets in names this run */
    atomic_store(&h->rma_closed, 0);
    dcu_monitor_start(h);
    dcu_deadlock_start(h);
    dcu_proxies_reset(h->proxy);
    if (dcu_proxies_start(h->proxy) != DCUDA_OK) /* the host thread then polls every lane */
        dcu_msg_warn("the proxy lanes' threads did not start: one thread serves them all");
    watch_exit(h);
    dcuda_status_t st = h->ops->launch(h->backend, h->dev_ctx, stream);
    if (st != DCUDA_OK) {
        char why[128];
        snprintf(why, sizeof why, "process %d, whose ranks could not start (%s)",
                 h->info.process_index, dcuda_status_name(st));
        dcu_monitor_end_run(h, why, "the ranks could not start");
        /* Ranks that did start end (their waits were cancelled): they are
         * served until then (their log lines, the news leaving), joined. */
        (void)serve(h);
    }
    dcu_nvtx_pop();
    return st;
}

/* Serves and monitors until every rank returned, joins. */
static dcuda_status_t serve(dcuda_host_h h)
{
    dcu_nvtx_push(DCU_NVTX_RUN_SERVE);
    uint64_t last_work = 0;
    for (unsigned round = 0;; round++) {
        int busy = dcu_clock_ns() - last_work <= HOST_BUSY_NS;
        if ((!busy || round % HOST_FINISHED_EVERY == 0) && h->ops->finished(h->backend))
            break;
        uint64_t pass_start = dcu_trace_now();
        int worked = dcu_proxies_poll(h->proxy);
        worked |= dcu_host_notes_poll(h);
        worked |= dcu_monitor_poll(h);
        check_proxy(h);
        dcu_trace_pass(dcu_trace_now() - pass_start, worked);
        if (worked)
            last_work = dcu_clock_ns();
        else if (!busy)
            dcu_notes_sleep(h->notes, HOST_IDLE_SLEEP_NS); /* a host's notification wakes it */
        else if (h->ops->kind == DCU_BACKEND_CPU || dcu_proxies_count(h->proxy) > 1)
            sched_yield(); /* ranks or lanes that share this core (mpirun binds it) go first */
    }
    atomic_store(&h->rma_closed, 1); /* before the proxies drain: what came is ended there */
    dcu_host_notes_close(h);
    dcu_proxies_stop(h->proxy); /* from here the host thread polls every lane */
    dcu_proxies_ranks_done(h->proxy);
    dcuda_status_t st = h->ops->join(h->backend);
    atomic_store_explicit(&h->ranks_returned, 1, memory_order_release); /* their counts are in */
    atomic_store_explicit(&running_host, NULL, memory_order_release);
    /* The ranks may have ended on an abort (or a rank's error) before the
     * loop's last round saw it: its news leaves with the drain. */
    dcu_monitor_news(h);
    while (dcu_proxies_poll(h->proxy) > 0) { /* what the ranks queued last */
    }
    dcu_proxies_drain(h->proxy);
    check_proxy(h);
    dcu_monitor_drain(h);
    h->run.t1 = dcu_clock_ns();
    dcu_node_run_end();
    dcu_nvtx_pop();
    return st;
}

/* While the processes agree on a run: a WORLD barrier this process
 * entered may still be open, its later rounds owed to a process that
 * entered late (whose ranks reached dcuda_rank_finish after the watchdog
 * cancelled this one's), so the proxies serve it until it completes. */
static void serve_open_barrier(void *arg)
{
    dcuda_host_h h = arg;
    if (dcu_proxies_barrier_open(h->proxy))
        (void)dcu_proxies_poll(h->proxy);
}

/* After a run, every process learns whether any failed: a run fails in
 * every process or in none (a process whose ranks did nothing wrong
 * returns DCUDA_ERR_ABORTED, naming the one that failed), so that an SPMD
 * program takes the same branch everywhere. Not after a peer was lost: it
 * cannot take part. */
static dcuda_status_t agree_on_run(dcuda_host_h h, dcuda_status_t mine)
{
    if (h->info.process_count <= 1 || h->lost[0])
        return mine;
    int who = -1;
    dcu_boot_while_waiting(serve_open_barrier, h);
    dcuda_status_t all = dcu_boot_agree(mine, &who);
    dcu_boot_while_waiting(NULL, NULL);
    if (mine != DCUDA_OK || all == DCUDA_OK)
        return mine;
    if (who < 0) { /* the agreement itself failed (reported): a peer is gone */
        snprintf(h->last_error, sizeof h->last_error,
                 "a peer process ended before the processes agreed on the run's outcome");
        return all;
    }
    snprintf(h->last_error, sizeof h->last_error, "the run failed in process %d (%s)", who,
             dcuda_status_name(all));
    return DCUDA_ERR_ABORTED;
}

/* What the run left: user data, timers, the first rank error or why the
 * run ended early, agreed with the other processes. */
static dcuda_status_t conclude_run(dcuda_host_h h, dcuda_status_t st, double *elapsed_ms)
{
    if (st == DCUDA_OK && h->run.user_size)
        st = h->ops->copy_out(h->backend, h->run.user, h->user_dev, h->run.user_size);
    if (st == DCUDA_OK)
        st = dcu_context_collect_timers(h);
    if (elapsed_ms)
        *elapsed_ms = (double)(h->run.t1 - h->run.t0) / DCU_NS_PER_MS;
    if (atomic_load_explicit(&h->exiting, memory_order_acquire)) {
        /* Lost to the run as the peers see it; the device may already be
         * gone (CUDA's own exit handler runs meanwhile): its errors are
         * a consequence. */
        snprintf(h->last_error, sizeof h->last_error,
                 "this process left (exit() or a return from main) while its ranks ran");
        return DCUDA_ERR_PEER;
    }
    if (h->lost[0]) {
        snprintf(h->last_error, sizeof h->last_error, "%s", h->lost);
        return DCUDA_ERR_PEER;
    }
    dcuda_error_record_t err;
    if (st == DCUDA_OK)
        st = h->ops->copy_out(h->backend, &err, h->image.error, sizeof err);
    if (st == DCUDA_OK && err.status != 0) {
        char text[sizeof h->last_error - 32];
        dcu_log_entry_text(&err.first, text, sizeof text);
        snprintf(h->last_error, sizeof h->last_error, "rank %d: %s", (int)err.rank, text);
        dcu_msg_info("kernel %s: %u rank call(s) failed; first: %s", h->kernel.name,
                     (unsigned)err.count, h->last_error);
        st = (dcuda_status_t)err.status;
    } else if (st == DCUDA_OK && h->deadlocked) {
        snprintf(h->last_error, sizeof h->last_error,
                 "deadlock: every rank of every process was blocked and nothing was in flight "
                 "(the report on stderr says what each rank waited for)");
        st = DCUDA_ERR_DEADLOCK;
    } else if (st == DCUDA_OK && h->abort_why[0]) {
        /* Ended by another process; no rank of this one failed. */
        snprintf(h->last_error, sizeof h->last_error, "the run was ended by %s", h->abort_why);
        st = DCUDA_ERR_ABORTED;
    }
    return agree_on_run(h, st);
}

/* conclude_run in its NVTX range; the run's range ends with it. */
static dcuda_status_t conclude(dcuda_host_h h, dcuda_status_t st, double *elapsed_ms)
{
    dcu_nvtx_push(DCU_NVTX_RUN_CONCLUDE);
    st = conclude_run(h, st, elapsed_ms);
    dcu_nvtx_pop();
    dcu_nvtx_end(run_range);
    return st;
}

static dcuda_status_t host_run(dcuda_host_h h, void *user_data, size_t user_size,
                               double *elapsed_ms)
{
    dcuda_status_t st = prepare(h, user_data, user_size, "dcuda_host_run");
    if (st != DCUDA_OK)
        return st;
    st = launch(h, NULL);
    /* A launch that failed is still agreed on: the peers' ranks ran. */
    return conclude(h, st == DCUDA_OK ? serve(h) : st, elapsed_ms);
}

/* The run holds no API lock while it runs: the host is marked busy, and
 * other threads' calls fail with DCUDA_ERR_IN_PROGRESS meanwhile. */
dcuda_status_t dcuda_host_run(dcuda_host_h h, void *user_data, size_t user_size, double *elapsed_ms)
{
    dcu_host_lock();
    dcuda_status_t st = dcu_host_idle(h, "dcuda_host_run");
    if (st == DCUDA_OK) {
        h->run.active = 1;
        dcu_host_wait_run_begin(h); /* another thread may wait for the ranks' notifications */
    }
    dcu_host_unlock();
    if (st != DCUDA_OK)
        return st;
    st = host_run(h, user_data, user_size, elapsed_ms);
    dcu_host_lock();
    dcu_rma_settle(h);
    h->run.active = 0;
    dcu_host_wait_run_end(h);
    dcu_host_unlock();
    return st;
}

/* ---- runs that do not block the host ------------------------------------- */

static void *progress_main(void *arg)
{
    dcuda_host_h h = arg;
    dcuda_status_t st = h->ops->bind_thread ? h->ops->bind_thread(h->backend) : DCUDA_OK;
    if (st != DCUDA_OK) { /* the ranks run: end them, and wait for them all the same */
        dcu_monitor_end_run(h, "a process whose host thread could not drive its device",
                            "the host thread could not drive the device");
    }
    dcuda_status_t served = serve(h);
    h->run.status = st != DCUDA_OK ? st : served;
    atomic_store_explicit(&h->run.done, 1, memory_order_release);
    return NULL;
}

/* The network manager must let the runtime's thread drive it. */
static dcuda_status_t check_net_threads(dcuda_host_h h)
{
    char why[200];
    if (!h->net_ops || !h->net_ops->serialized || h->net_ops->serialized(why, sizeof why))
        return DCUDA_OK;
    dcu_msg_error("dcuda_host_run_start: the %s network manager cannot be driven by the "
                  "runtime's thread: %s (or use dcuda_host_run)",
                  h->net_ops->name, why);
    return DCUDA_ERR_UNSUPPORTED;
}

static dcuda_status_t host_run_start(dcuda_host_h h, void *user_data, size_t user_size,
                                     void *stream)
{
    dcuda_status_t st = dcu_host_idle(h, "dcuda_host_run_start");
    if (st == DCUDA_OK)
        st = check_net_threads(h);
    if (st == DCUDA_OK)
        st = prepare(h, user_data, user_size, "dcuda_host_run_start");
    if (st != DCUDA_OK)
        return st;
    /* Until it waits for the run, this thread may notify a rank that waits
     * (the deadlock detector holds its report meanwhile). */
    atomic_store(&h->host_free, 1);
    dcu_host_wait_run_begin(h);
    st = launch(h, stream);
    if (st != DCUDA_OK) { /* the run ended here: agreed on as dcuda_host_run's */
        atomic_store(&h->host_free, 0);
        dcu_host_wait_run_end(h);
        return conclude(h, st, NULL);
    }
    atomic_store_explicit(&h->run.done, 0, memory_order_relaxed);
    int err = pthread_create(&h->run.thread, NULL, progress_main, h);
    if (err) {
        /* The ranks run already: serve them here rather than lose them. */
        dcu_msg_warn("dcuda_host_run_start: cannot start the runtime's thread (%s); serving the "
                     "run on this thread until it ends",
                     strerror(err));
        h->run.status = serve(h);
        atomic_store_explicit(&h->run.done, 1, memory_order_release);
        h->run.threaded = 0;
    } else {
        h->run.threaded = 1;
    }
    h->run.started = 1;
    return DCUDA_OK;
}

dcuda_status_t dcuda_host_run_start(dcuda_host_h h, void *user_data, size_t user_size, void *stream)
{
    dcu_host_lock();
    dcuda_status_t st = host_run_start(h, user_data, user_size, stream);
    dcu_host_unlock();
    return st;
}

/* A run of dcuda_host_run_start is in flight: DCUDA_OK; otherwise a message. */
static dcuda_status_t check_started(dcuda_host_h h, const char *call)
{
    if (dcu_host_check(h, call) != DCUDA_OK)
        return DCUDA_ERR_NOT_INITIALIZED;
    if (h->run.started)
        return DCUDA_OK;
    dcu_msg_error("%s: no run was started (call dcuda_host_run_start first)", call);
    return DCUDA_ERR_INVALID_ARG;
}

dcuda_status_t dcuda_host_run_test(dcuda_host_h h, int *done)
{
    dcu_host_lock();
    dcuda_status_t st = check_started(h, "dcuda_host_run_test");
    if (st == DCUDA_OK && !done)
        st = DCUDA_ERR_INVALID_ARG;
    if (st == DCUDA_OK)
        *done = atomic_load_explicit(&h->run.done, memory_order_acquire);
    dcu_host_unlock();
    return st;
}

/* The runtime's thread is joined without the API lock (test may be called
 * meanwhile); the run is concluded under it. */
dcuda_status_t dcuda_host_run_wait(dcuda_host_h h, double *elapsed_ms)
{
    dcu_host_lock();
    dcuda_status_t st = check_started(h, "dcuda_host_run_wait");
    int joining = st == DCUDA_OK && h->run.threaded && !h->run.joining;
    if (st == DCUDA_OK)
        atomic_store(&h->host_free, 0); /* notifies no more: a deadlock may be reported */
    if (joining)
        h->run.joining = 1;
    else if (st == DCUDA_OK && h->run.joining)
        st = DCUDA_ERR_IN_PROGRESS; /* another thread waits for it */
    dcu_host_unlock();
    if (st != DCUDA_OK) {
        if (st == DCUDA_ERR_IN_PROGRESS)
            dcu_msg_error("dcuda_host_run_wait: another thread waits for this run already");
        return st;
    }
    if (joining)
        pthread_join(h->run.thread, NULL);
    dcu_host_lock();
    dcu_rma_settle(h);
    h->run.started = 0;
    h->run.threaded = 0;
    h->run.joining = 0;
    dcu_boot_enter(DCU_CALL_RUN);
    st = conclude(h, h->run.status, elapsed_ms);
    dcu_host_wait_run_end(h);
    dcu_host_unlock();
    return st;
}

/* ---- ending a run from the application ---------------------------------------- */

/* No API lock: it may be called while the run's own call waits in it. The
 * monitor of the host thread tells every process (abort_check). */
dcuda_status_t dcuda_host_abort(dcuda_host_h h, const char *reason)
{
    if (!h || atomic_load_explicit(&running_host, memory_order_acquire) != h) {
        dcu_msg_error("dcuda_host_abort: no run of %p is in flight", (void *)h);
        return DCUDA_ERR_INVALID_ARG;
    }
    if (atomic_exchange_explicit(&h->abort_claimed, 1, memory_order_acq_rel))
        return DCUDA_OK; /* asked already */
    snprintf(h->abort_text, sizeof h->abort_text, "%s", reason ? reason : "");
    atomic_store_explicit(&h->abort_asked, 1, memory_order_release);
    uint32_t none = DCUDA_CANCEL_NONE;
    atomic_compare_exchange_strong_explicit(h->cancel_h, &none, DCUDA_CANCEL_ERROR,
                                            memory_order_acq_rel, memory_order_acquire);
    return DCUDA_OK;
}
