/*
 * Host driver of the endings suite: dcuda_test_endings <case>. How a run
 * ends when something goes wrong in it, rather than hanging or flooding
 * the terminal:
 *   first_error   with ON_ERROR=abort (the default) a rank's first error
 *                 ends the run in every process: blocked waits end quietly
 *                 with DCUDA_ERR_ABORTED, one line says why, and the next
 *                 run is clean;
 *   every_error   with ON_ERROR=continue the same mistake on every rank is
 *                 shown three times per process, then counted;
 *   watch_counts  the watchdog lists what is ready per tag exactly (not
 *                 what was consumed long ago);
 *   early_return  a rank that returns without dcuda_rank_finish ends the
 *                 run, naming it, instead of leaving the others waiting;
 *   thread_exit   the same for a CPU rank whose thread calls pthread_exit;
 *   threads_fail  ranks that cannot start (no memory for their threads)
 *                 end the run with DCUDA_ERR_SYSTEM, and the other
 *                 processes' runs with DCUDA_ERR_ABORTED;
 *   many_ranks    a CPU rank count no process can run is refused at init,
 *                 and thousands of ranks still run.
 * The watchdog is off unless a case needs it, so only the behaviour under
 * test can end a blocked wait.
 */
#define _GNU_SOURCE

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "faults_run.h"

/* The rank that misbehaves: the last one, so that with several processes
 * it lives in another process than rank 0. */
static int culprit(const fault_run_t *r) { return r->n - 1; }

static int on_cpu(const fault_run_t *r) { return strcmp(r->info.backend, "cpu") == 0; }

/* Every rank this process owns, the culprit excepted, ended its call with
 * `want`. */
static void expect_calls(const fault_run_t *r, dcuda_status_t want, int except)
{
    for (int k = test_first_rank(&r->info); k < test_end_rank(&r->info); k++)
        if (k != except && !TEST_STATUS(res(r, k, FAULT_RES_CALL), want))
            fprintf(stderr, "     (rank %d)\n", k);
}

/* The status this process's run must end with when rank `bad` failed with
 * `own`: its own error where it lives, DCUDA_ERR_ABORTED elsewhere. */
static dcuda_status_t run_status_for(const fault_run_t *r, int bad, dcuda_status_t own)
{
    return test_owns(&r->info, bad) ? own : DCUDA_ERR_ABORTED;
}

/* After an ended run, the next one is clean. */
static void expect_clean_run(fault_run_t *r)
{
    r->d.test_case = FAULT_NONE;
    TEST_STATUS(fault_exec(r), DCUDA_OK);
    TEST_CHECK(r->out && !strstr(r->out, "dcuda: error:"), "a clean run after it printed errors");
}

/* ---- the first error ends the run ------------------------------------------------ */

static int case_first_error(int argc, char **argv)
{
    setenv("DCUDA_WATCHDOG", "0", 1);
    setenv("DCUDA_DEADLOCK", "0", 1); /* only the fault may end the run */
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    if (!test_have_ranks(&r.info, 2, argv[1])) {
        fault_close(&r);
        return TEST_SKIP;
    }
    int bad = culprit(&r);
    r.d.test_case = FAULT_FIRST_ERROR;
    r.d.culprit = bad;
    TEST_STATUS(fault_exec(&r), run_status_for(&r, bad, DCUDA_ERR_TAG));
    expect_calls(&r, DCUDA_ERR_ABORTED, -1);
    char who[64];
    snprintf(who, sizeof who, "rank %d", bad);
    if (test_owns(&r.info, bad)) {
        TEST_STATUS(res(&r, bad, FAULT_RES_VALUE), DCUDA_ERR_TAG);
        TEST_CHECK(count_lines(r.out, "dcuda: error: rank", "dcuda_notify") == 1,
                   "expected one error line for the bad notify");
        TEST_CHECK(test_find_line(r.out, "dcuda: error:", "the run ends"),
                   "no line says that the run ends");
        TEST_CONTAINS(dcuda_host_last_error(r.h), "dcuda_notify");
    } else {
        TEST_CHECK(test_find_line(r.out, "dcuda: error:", who),
                   "no line names %s as the one that ended the run", who);
        TEST_CONTAINS(dcuda_host_last_error(r.h), who);
    }
    /* The waits the end released say nothing of their own. */
    TEST_CHECK(count_lines(r.out, "dcuda: error:", "dcuda_wait_notifications") == 0,
               "a released wait printed an error line");
    expect_clean_run(&r);
    fault_close(&r);
    return 0;
}

/* ---- the same mistake on every rank is shown a few times ------------------------- */

#define SHOWN_PER_CALL 3 /* the monitor's MONITOR_REPEATS_SHOWN */

static int case_every_error(int argc, char **argv)
{
    setenv("DCUDA_ON_ERROR", "continue", 1);
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    r.d.test_case = FAULT_EVERY_ERROR;
    TEST_STATUS(fault_exec(&r), DCUDA_ERR_TAG);
    expect_calls(&r, DCUDA_OK, -1); /* the run went on: every rank met in the barrier */
    int owned = r.info.rank_responsible, lines = count_lines(r.out, "dcuda: error: rank", NULL);
    int shown = owned < SHOWN_PER_CALL ? owned : SHOWN_PER_CALL;
    TEST_CHECK(lines == shown, "%d error lines of ranks for %d bad calls, expected %d", lines,
               owned, shown);
    if (owned > SHOWN_PER_CALL) {
        char more[64];
        snprintf(more, sizeof more, "%d more error line(s) of dcuda_notify", owned - shown);
        TEST_CHECK(test_find_line(r.out, "dcuda: error:", more), "no line says '%s'", more);
    }
    fault_close(&r);
    return 0;
}

/* ---- the watchdog's counts per tag ----------------------------------------------- */

static int case_watch_counts(int argc, char **argv)
{
    setenv("DCUDA_WATCHDOG", "0.5", 1);
    setenv("DCUDA_WATCHDOG_CANCEL", "1", 1);
    setenv("DCUDA_DEADLOCK", "0", 1); /* a deadlock: the watchdog's case */
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    if (!test_have_ranks(&r.info, 2, argv[1])) {
        fault_close(&r);
        return TEST_SKIP;
    }
    int last = r.n - 1;
    r.d.test_case = FAULT_WATCH_COUNTS;
    r.d.count = 26;
    /* Elsewhere the watchdog may cancel too, or the run ends there first
     * and learns that it failed here. */
    TEST_RUN_STATUS(&r.info, fault_exec(&r), DCUDA_ERR_TIMEOUT, last);
    if (test_owns(&r.info, last)) {
        char waits[64];
        snprintf(waits, sizeof waits, "rank %d waits", last);
        const char *line = test_find_line(r.out, "dcuda: watchdog:", waits);
        TEST_CHECK(line != NULL, "the watchdog did not report %s", waits);
        if (line) {
            const char *end = strchr(line, '\n');
            char text[512];
            snprintf(text, sizeof text, "%.*s", end ? (int)(end - line) : 511, line);
            TEST_CONTAINS(text, "of tag 1; ready since its last consume: tag 2 x1");
            TEST_CHECK(!strstr(text, "tag 0"), "consumed notifications reported ready: %s", text);
        }
        TEST_STATUS(res(&r, last, FAULT_RES_CALL), DCUDA_ERR_TIMEOUT);
    }
    fault_close(&r);
    return 0;
}

/* ---- ranks that leave the kernel early ------------------------------------------- */

/* The culprit leaves (how: test_case); every other rank's dcuda_rank_finish
 * ends with DCUDA_ERR_ABORTED instead of waiting for it forever. */
static int leave_early(int argc, char **argv, int how, const char *says)
{
    setenv("DCUDA_WATCHDOG", "0", 1);
    setenv("DCUDA_DEADLOCK", "0", 1); /* only the fault may end the run */
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    if (how == FAULT_THREAD_EXIT && !on_cpu(&r)) {
        printf("SKIP %s: only CPU ranks are threads (backend %s)\n", argv[1], r.info.backend);
        fault_close(&r);
        return TEST_SKIP;
    }
    if (!test_have_ranks(&r.info, 2, argv[1])) {
        fault_close(&r);
        return TEST_SKIP;
    }
    int bad = culprit(&r);
    r.d.test_case = how;
    r.d.culprit = bad;
    TEST_STATUS(fault_exec(&r), run_status_for(&r, bad, DCUDA_ERR_RANK_LEFT));
    expect_calls(&r, DCUDA_ERR_ABORTED, bad);
    char who[64];
    snprintf(who, sizeof who, "rank %d", bad);
    const char *error = dcuda_host_last_error(r.h);
    TEST_CONTAINS(error, who);
    if (test_owns(&r.info, bad))
        TEST_CONTAINS(error, says);
    expect_clean_run(&r);
    fault_close(&r);
    return 0;
}

static int case_early_return(int argc, char **argv)
{
    return leave_early(argc, argv, FAULT_EARLY_RETURN, "without calling dcuda_rank_finish");
}

static int case_thread_exit(int argc, char **argv)
{
    return leave_early(argc, argv, FAULT_THREAD_EXIT, "pthread_exit");
}

/* ---- ranks that cannot start ----------------------------------------------------- */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#else
#define UNDER_SANITIZER 0
#endif

/* Bytes of address space this process has mapped (VmSize). */
static long long mapped_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %lld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

static struct rlimit address_space; /* before the case lowered it */

static void restore_address_space(void) { setrlimit(RLIMIT_AS, &address_space); }

/* Lowers the address-space limit of the last process so that about
 * `room_mb` rank threads (a megabyte of stack each) can start, and runs
 * case c: its launch fails, and every process's run must end. */
static int threads_fail(int argc, char **argv, long long room_mb, int min_ranks, int c)
{
    setenv("DCUDA_WATCHDOG", "0", 1);
    setenv("DCUDA_DEADLOCK", "0", 1); /* only the fault may end the run */
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    const char *net = getenv("DCUDA_NET");
    const char *why = !on_cpu(&r)       ? "only CPU ranks are threads"
                      : UNDER_SANITIZER ? "a sanitizer reserves address space of its own"
                      : r.info.rank_responsible < min_ranks ? "needs more ranks a process"
                      : net && strcmp(net, "ucx") == 0
                          ? "the address-space limit that stops the threads would also stop "
                            "UCX's TCP transport from allocating buffers"
                          : NULL;
    if (why) {
        printf("SKIP %s: %s\n", argv[1], why);
        fault_close(&r);
        return TEST_SKIP;
    }
    /* The last process may map little more than it has: a rank thread's
     * stack is a megabyte, so a few start and the others cannot. */
    int last = r.info.process_index == r.info.process_count - 1;
    getrlimit(RLIMIT_AS, &address_space);
    long long now = mapped_bytes();
    if (last && now > 0) {
        struct rlimit tight = { (rlim_t)(now + (room_mb << 20)), address_space.rlim_max };
        TEST_CHECK(setrlimit(RLIMIT_AS, &tight) == 0, "cannot lower the address-space limit");
        r.after_run = restore_address_space;
    }
    r.d.test_case = c;
    dcuda_status_t st = fault_exec_loose(&r);
    r.after_run = NULL;
    if (last) {
        TEST_STATUS(st, DCUDA_ERR_SYSTEM);
        TEST_CHECK(test_find_line(r.out, "dcuda: error:", "cannot start CPU rank"),
                   "no line says which rank could not start");
    } else if (c == FAULT_MISUSE_AFTER) { /* its own ranks' reports come first */
        TEST_STATUS(st, DCUDA_ERR_WIN);
    } else {
        TEST_STATUS(st, DCUDA_ERR_ABORTED);
        TEST_CONTAINS(dcuda_host_last_error(r.h), "whose ranks could not start");
    }
    expect_clean_run(&r);
    fault_close(&r);
    return 0;
}

static int case_threads_fail(int argc, char **argv)
{
    return threads_fail(argc, argv, 3, 4, FAULT_NONE);
}

/* More ranks start than the log ring has entries, and each reports a
 * misuse once its rank_init failed: the host must print their lines while
 * they end, not join them first (it once waited for ranks that waited for
 * room in the log ring). */
static int case_threads_fail_log(int argc, char **argv)
{
    setenv("DCUDA_LOG_ENTRIES", "16", 1);
    return threads_fail(argc, argv, 48, 64, FAULT_MISUSE_AFTER);
}

/* ---- many ranks ------------------------------------------------------------------ */

static int case_many_ranks(int argc, char **argv)
{
    dcuda_host_h h;
    const char *backend = getenv("DCUDA_BACKEND");
    if (backend && strcmp(backend, "cuda") == 0) {
        printf("SKIP %s: GPU ranks take RANKS as an upper bound (refused when more than fit)\n",
               argv[1]);
        return TEST_SKIP;
    }
    setenv("DCUDA_RANKS", "100000", 1);
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    dcuda_status_t st = dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(faults), 64, &h);
    char *out = test_capture_end(&cap);
    printf("%s", out ? out : "");
    if (st == DCUDA_OK)
        dcuda_host_finish(h);
    TEST_STATUS(st, DCUDA_ERR_SETTING);
    TEST_CHECK(out && test_find_line(out, "dcuda: error:", "at most 8192"),
               "the refusal does not say how many ranks a process can run");
    free(out);
    /* Thousands of ranks on a few cores still run (their waits sleep longer). */
    setenv("DCUDA_RANKS", UNDER_SANITIZER ? "512" : "3000", 1);
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    r.d.test_case = FAULT_NONE;
    TEST_STATUS(fault_exec(&r), DCUDA_OK);
    fault_close(&r);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "first_error", case_first_error },           { "every_error", case_every_error },
        { "watch_counts", case_watch_counts },         { "early_return", case_early_return },
        { "thread_exit", case_thread_exit },           { "threads_fail", case_threads_fail },
        { "threads_fail_log", case_threads_fail_log }, { "many_ranks", case_many_ranks },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
