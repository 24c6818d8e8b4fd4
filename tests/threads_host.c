/*
 * Host driver of the host-thread suite: dcuda_test_threads <case>. The
 * host API's rules for threads (dcuda_host.h) and dcuda_host_abort:
 *
 *   init        two threads call dcuda_host_init at once: one runtime is
 *               live, the other call is refused (one process)
 *   init_thread a thread other than main's calls dcuda_host_init where it
 *               would fork the other processes: refused, with why (a forked
 *               child would hold that thread alone)
 *   alloc       four threads allocate, copy, check and free at once; every
 *               call succeeds and every block holds what its thread wrote
 *   busy        while dcuda_host_run runs on one thread (its ranks hold until
 *               the other thread copies in a release word), the other's
 *               allocation, free, finish and run are DCUDA_ERR_IN_PROGRESS,
 *               its copies and queries work; released, the run ends by itself
 *   abort       every rank waits for a notification nobody sends; a thread
 *               of process 0 (or of the last process: abort_last) calls
 *               dcuda_host_abort; the run ends with DCUDA_ERR_ABORTED in
 *               every process, naming that process and its reason
 *   abort_every a thread of every process calls dcuda_host_abort at once: the
 *               run ends with DCUDA_ERR_ABORTED everywhere, naming one of
 *               them (a call that comes after the run ended is refused)
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcuda/dcuda_host.h"
#include "test_util.h"
#include "threads.h"

DCUDA_KERNEL_DECLARE(threads);

#define ALLOC_THREADS 4
#define ALLOC_ROUNDS 200

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* ---- init from two threads ---------------------------------------------------- */

typedef struct init_arg {
    pthread_barrier_t *go;
    int argc;
    char **argv;
    dcuda_host_h h;
    dcuda_status_t st;
} init_arg_t;

static void *init_main(void *p)
{
    init_arg_t *a = p;
    pthread_barrier_wait(a->go);
    a->st = dcuda_host_init(a->argc, a->argv, DCUDA_KERNEL_REF(threads), 32, &a->h);
    return NULL;
}

static int case_init(int argc, char **argv)
{
    pthread_barrier_t go;
    pthread_t t[2];
    init_arg_t a[2];
    pthread_barrier_init(&go, NULL, 2);
    for (int i = 0; i < 2; i++) {
        a[i] = (init_arg_t){ &go, argc, argv, NULL, DCUDA_OK };
        pthread_create(&t[i], NULL, init_main, &a[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&go);
    int live = (a[0].st == DCUDA_OK) + (a[1].st == DCUDA_OK);
    TEST_CHECK(live == 1, "%d of two concurrent dcuda_host_init succeeded (%s, %s)", live,
               dcuda_status_name(a[0].st), dcuda_status_name(a[1].st));
    for (int i = 0; i < 2; i++) {
        if (a[i].st == DCUDA_OK)
            TEST_STATUS(dcuda_host_finish(a[i].h), DCUDA_OK);
        else
            TEST_STATUS(a[i].st, DCUDA_ERR_INVALID_ARG);
    }
    return 0;
}

/* A first init from another thread that would fork (DCUDA_PROCESSES=2). */
static int case_init_thread(int argc, char **argv)
{
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 1);
    init_arg_t a = { &go, argc, argv, NULL, DCUDA_OK };
    pthread_t t;
    pthread_create(&t, NULL, init_main, &a);
    pthread_join(t, NULL);
    pthread_barrier_destroy(&go);
    TEST_STATUS(a.st, DCUDA_ERR_UNSUPPORTED);
    if (a.st == DCUDA_OK)
        dcuda_host_finish(a.h);
    if (!test_failures) /* the entry also looks for the refusal's reason */
        printf("PASSED init_thread\n");
    return 0;
}

/* ---- allocations from four threads ---------------------------------------------- */

typedef struct alloc_arg {
    dcuda_host_h h;
    int index;
    int bad; /* calls that failed or blocks that did not hold what was written */
} alloc_arg_t;

static void *alloc_main(void *p)
{
    alloc_arg_t *a = p;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(a->index + 1);
    unsigned char in[4096], out[4096];
    for (int round = 0; round < ALLOC_ROUNDS; round++) {
        size_t size = 1 + (size_t)(test_rng(&rng) % sizeof in);
        void *mem = NULL;
        if (dcuda_host_alloc(a->h, size, &mem) != DCUDA_OK || !mem) {
            a->bad++;
            continue;
        }
        for (size_t i = 0; i < size; i++)
            in[i] = test_byte((uint32_t)a->index, (uint32_t)round, i);
        a->bad += dcuda_host_copy_in(a->h, mem, in, size) != DCUDA_OK;
        a->bad += dcuda_host_copy_out(a->h, out, mem, size) != DCUDA_OK;
        a->bad += memcmp(in, out, size) != 0;
        a->bad += dcuda_host_free(a->h, mem) != DCUDA_OK;
    }
    return NULL;
}

static int case_alloc(int argc, char **argv)
{
    dcuda_host_h h;
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(threads), 32, &h), DCUDA_OK))
        return 1;
    pthread_t t[ALLOC_THREADS];
    alloc_arg_t a[ALLOC_THREADS];
    for (int i = 0; i < ALLOC_THREADS; i++) {
        a[i] = (alloc_arg_t){ h, i, 0 };
        pthread_create(&t[i], NULL, alloc_main, &a[i]);
    }
    for (int i = 0; i < ALLOC_THREADS; i++) {
        pthread_join(t[i], NULL);
        TEST_CHECK(a[i].bad == 0, "thread %d: %d of %d rounds went wrong", i, a[i].bad,
                   ALLOC_ROUNDS);
    }
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    return 0;
}

/* ---- runs and the other threads -------------------------------------------------- */

typedef struct run_arg {
    dcuda_host_h h;
    threads_data_t *d;
    dcuda_status_t st;
} run_arg_t;

static void *run_main(void *p)
{
    run_arg_t *a = p;
    a->st = dcuda_host_run(a->h, a->d, sizeof *a->d, NULL);
    return NULL;
}

/* The runtime, its rank info and a result slot per rank; 0 or TEST_SKIP. */
static int open_runtime(int argc, char **argv, dcuda_host_h *h, dcuda_rank_info_t *info,
                        threads_data_t *d)
{
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(threads), 32, h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(*h, info);
    test_check_rank_setting(info);
    memset(d, 0, sizeof *d);
    size_t bytes = (size_t)info->rank_responsible * sizeof *d->res;
    return TEST_STATUS(dcuda_host_alloc(*h, bytes, (void **)&d->res), DCUDA_OK) ? 0 : 1;
}

/* Every rank of this process ended its wait or barrier with `expected`. */
static void check_results(dcuda_host_h h, const dcuda_rank_info_t *info, const threads_data_t *d,
                          dcuda_status_t expected)
{
    int64_t res[512];
    int n = info->rank_responsible < 512 ? info->rank_responsible : 512;
    TEST_STATUS(dcuda_host_copy_out(h, res, d->res, (size_t)n * sizeof *res), DCUDA_OK);
    for (int r = 0; r < n; r++)
        TEST_CHECK(res[r] == expected, "rank %d's call returned %s", info->rank_start + r,
                   dcuda_status_name((dcuda_status_t)res[r]));
}

/* Whether a run is in flight: dcuda_host_get_timings says so, and changes
 * nothing. Waits at most 10 s for it. */
static int wait_for_run(dcuda_host_h h)
{
    const double *t;
    int n;
    for (int i = 0; i < 10000; i++) {
        if (dcuda_host_get_timings(h, &t, &n) == DCUDA_ERR_IN_PROGRESS)
            return 1;
        sleep_ms(1);
    }
    return 0;
}

/* The run on another thread holds its ranks until this thread, done with
 * its calls, releases them (a word it copies in): the run then ends by
 * itself, in every process once every process's checks are done. */
static int case_busy(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_rank_info_t info, seen;
    threads_data_t d;
    setenv("DCUDA_WATCHDOG", "0", 1);
    if (open_runtime(argc, argv, &h, &info, &d))
        return 1;
    int64_t word = 42, *probe = NULL, *release = NULL; /* memory the ranks only read */
    TEST_STATUS(dcuda_host_alloc(h, sizeof word, (void **)&probe), DCUDA_OK);
    TEST_STATUS(dcuda_host_alloc(h, sizeof word, (void **)&release), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_in(h, probe, &word, sizeof word), DCUDA_OK);
    word = 0;
    TEST_STATUS(dcuda_host_copy_in(h, release, &word, sizeof word), DCUDA_OK);
    d.hold = 1;
    d.release = release;
    threads_data_t other = d; /* the run's own struct is the other thread's now */
    run_arg_t a = { h, &d, DCUDA_OK };
    pthread_t t;
    pthread_create(&t, NULL, run_main, &a);
    TEST_CHECK(wait_for_run(h), "the run did not start within 10 s");
    void *mem = NULL;
    TEST_STATUS(dcuda_host_alloc(h, 64, &mem), DCUDA_ERR_IN_PROGRESS);
    TEST_STATUS(dcuda_host_free(h, other.res), DCUDA_ERR_IN_PROGRESS);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_ERR_IN_PROGRESS);
    TEST_STATUS(dcuda_host_run(h, &other, sizeof other, NULL), DCUDA_ERR_IN_PROGRESS);
    TEST_STATUS(dcuda_host_copy_out(h, &word, probe, sizeof word), DCUDA_OK);
    TEST_CHECK(word == 42, "a copy during the run read %lld", (long long)word);
    TEST_STATUS(dcuda_host_get_rank_info(h, &seen), DCUDA_OK);
    TEST_CHECK(seen.process_index == info.process_index, "rank info during the run changed");
    word = 1;
    TEST_STATUS(dcuda_host_copy_in(h, release, &word, sizeof word), DCUDA_OK);
    pthread_join(t, NULL);
    TEST_STATUS(a.st, DCUDA_OK);
    check_results(h, &info, &d, DCUDA_OK);
    TEST_STATUS(dcuda_host_free(h, probe), DCUDA_OK);
    TEST_STATUS(dcuda_host_free(h, release), DCUDA_OK);
    TEST_STATUS(dcuda_host_free(h, d.res), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    return 0;
}

typedef struct abort_arg {
    dcuda_host_h h;
    const char *reason;
    dcuda_status_t st;
} abort_arg_t;

static void *abort_main(void *p)
{
    abort_arg_t *a = p;
    sleep_ms(300);
    a->st = dcuda_host_abort(a->h, a->reason);
    return NULL;
}

enum { ABORT_FIRST, ABORT_LAST, ABORT_EVERY };

/* The run's ending names an aborting process and its reason. */
static void check_abort_named(dcuda_host_h h, int aborter, const char *reason)
{
    const char *why = dcuda_host_last_error(h);
    TEST_CONTAINS(why, "dcuda_host_abort");
    if (aborter < 0) { /* any of them: each gave its own reason */
        TEST_CONTAINS(why, "the test's reason");
        return;
    }
    char who[48];
    snprintf(who, sizeof who, "process %d", aborter);
    TEST_CONTAINS(why, reason);
    TEST_CONTAINS(why, who);
}

static int run_abort(int argc, char **argv, int mode)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    threads_data_t d;
    setenv("DCUDA_WATCHDOG", "0", 1);
    setenv("DCUDA_DEADLOCK", "0", 1); /* only the abort may end the run */
    if (open_runtime(argc, argv, &h, &info, &d))
        return 1;
    int aborter = mode == ABORT_EVERY ? -1 : mode == ABORT_LAST ? info.process_count - 1 : 0;
    int aborts = aborter < 0 || info.process_index == aborter;
    char reason[64];
    snprintf(reason, sizeof reason, "the test's reason %d",
             4242 + (aborter < 0 ? info.process_index : aborter));
    TEST_STATUS(dcuda_host_abort(h, reason), DCUDA_ERR_INVALID_ARG); /* no run in flight */
    d.wait_forever = 1;
    abort_arg_t a = { h, reason, DCUDA_OK };
    pthread_t t;
    if (aborts)
        pthread_create(&t, NULL, abort_main, &a);
    TEST_STATUS(dcuda_host_run(h, &d, sizeof d, NULL), DCUDA_ERR_ABORTED);
    if (aborts) {
        pthread_join(t, NULL);
        /* With every process aborting, another's abort may have ended this
         * run before this call: then no run is in flight. */
        TEST_CHECK(a.st == DCUDA_OK || (aborter < 0 && a.st == DCUDA_ERR_INVALID_ARG),
                   "dcuda_host_abort returned %s", dcuda_status_name(a.st));
    }
    check_abort_named(h, aborter, reason);
    check_results(h, &info, &d, DCUDA_ERR_ABORTED);
    /* The next run is not affected. */
    d.wait_forever = 0;
    d.work = 1000;
    TEST_STATUS(dcuda_host_run(h, &d, sizeof d, NULL), DCUDA_OK);
    TEST_STATUS(dcuda_host_free(h, d.res), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    return 0;
}

static int case_abort(int argc, char **argv) { return run_abort(argc, argv, ABORT_FIRST); }
static int case_abort_last(int argc, char **argv) { return run_abort(argc, argv, ABORT_LAST); }
static int case_abort_every(int argc, char **argv) { return run_abort(argc, argv, ABORT_EVERY); }

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "init", case_init },
        { "init_thread", case_init_thread },
        { "alloc", case_alloc },
        { "busy", case_busy },
        { "abort", case_abort },
        { "abort_last", case_abort_last },
        { "abort_every", case_abort_every },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
