/*
 * Host driver of the deadlock suite: dcuda_test_deadlock <case>. With the
 * watchdog off, only the deadlock detector can end a run in which every
 * rank of every process is blocked: each case must end with
 * DCUDA_ERR_DEADLOCK in every process, every blocked call of this
 * process's ranks return it, and the report name each blocked rank and
 * what it waits for (wrong_tag: the tag, and the tag that did arrive). The
 * slow cases are not deadlocks (a rank, or a whole process, keeps busy for
 * a while before the others can go on) and must end normally. Each
 * process checks its own ranks; the elapsed time of a run is printed.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "deadlock.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(deadlock);

/* Steps a slow rank computes (DCUDA_TEST_WORK overrides): about half a
 * second of one CPU core, a second of one GPU thread. */
#define DL_WORK 400000000ull

typedef struct dl_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    dl_data_t d;
    int64_t *res;
    char *out;
    dcuda_status_t status;
    double ms;
} dl_run_t;

static int64_t res(const dl_run_t *r, int k, int slot)
{
    return r->res[(k - r->info.rank_start) * DL_SLOTS + slot];
}

/* Runs case `c` with the watchdog off, capturing the output. 0, or
 * TEST_SKIP / 1. */
static int dl_exec(dl_run_t *r, int argc, char **argv, int c, int need_procs)
{
    memset(r, 0, sizeof *r);
    setenv("DCUDA_WATCHDOG", "off", 1);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(deadlock), 64, &r->h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(r->h, &r->info);
    test_check_rank_setting(&r->info);
    if (r->info.rank_count < 2 || r->info.process_count < need_procs) {
        printf("SKIP %s: needs 2 ranks and %d process(es), has %d and %d\n", argv[1], need_procs,
               r->info.rank_count, r->info.process_count);
        TEST_STATUS(dcuda_host_finish(r->h), DCUDA_OK);
        return TEST_SKIP;
    }
    size_t bytes = (size_t)r->info.rank_responsible * DL_SLOTS * sizeof *r->res;
    const char *work = getenv("DCUDA_TEST_WORK");
    r->d.test_case = c;
    r->d.work = work ? strtoull(work, NULL, 10) : DL_WORK;
    r->res = malloc(bytes);
    if (!r->res || !TEST_STATUS(dcuda_host_alloc(r->h, bytes, (void **)&r->d.res), DCUDA_OK))
        return 1;
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    r->status = dcuda_host_run(r->h, &r->d, sizeof r->d, &r->ms);
    r->out = test_capture_end(&cap);
    TEST_STATUS(dcuda_host_copy_out(r->h, r->res, r->d.res, bytes), DCUDA_OK);
    printf("%s---- captured output ----\n%s---- end of captured output ----\n", test_who,
           r->out ? r->out : "");
    printf("%s%s: the run returned %s after %.0f ms\n", test_who, argv[1],
           dcuda_status_name(r->status), r->ms);
    for (int k = r->info.rank_start; k < r->info.rank_start + r->info.rank_responsible; k++)
        TEST_CHECK(res(r, k, DL_RES_SETUP) == 0, "rank %d: a call failed: %s", k,
                   dcuda_status_name((dcuda_status_t)res(r, k, DL_RES_SETUP)));
    return r->out ? 0 : 1;
}

static void dl_close(dl_run_t *r)
{
    TEST_STATUS(dcuda_host_free(r->h, r->d.res), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(r->h), DCUDA_OK);
    free(r->res);
    free(r->out);
}

/* A deadlocked run: DCUDA_ERR_DEADLOCK everywhere, every rank's blocked
 * call ended with it, the report's header, and each rank's line. */
static int check_deadlock(int argc, char **argv, int c)
{
    dl_run_t r;
    int rc = dl_exec(&r, argc, argv, c, 1);
    if (rc)
        return rc;
    TEST_STATUS(r.status, DCUDA_ERR_DEADLOCK);
    TEST_CONTAINS(dcuda_host_last_error(r.h), "deadlock");
    TEST_CHECK(test_find_line(r.out, "deadlock: every rank of every process is blocked", NULL),
               "no report of the deadlock");
    for (int k = r.info.rank_start; k < r.info.rank_start + r.info.rank_responsible; k++) {
        char rank[32], what[96];
        TEST_STATUS(res(&r, k, DL_RES_CALL), DCUDA_ERR_DEADLOCK);
        TEST_CHECK(res(&r, k, DL_RES_FINISH) == DCUDA_OK ||
                       res(&r, k, DL_RES_FINISH) == DCUDA_ERR_DEADLOCK,
                   "rank %d: dcuda_rank_finish returned %s", k,
                   dcuda_status_name((dcuda_status_t)res(&r, k, DL_RES_FINISH)));
        snprintf(rank, sizeof rank, "rank %d waits ", k);
        if (c == DL_WRONG_TAG)
            snprintf(what, sizeof what,
                     "for 1 notification(s) of tag %d; ready since its last consume: tag %d x1",
                     DL_TAG_WAITED, DL_TAG_SENT);
        else if (c == DL_MISSING_NOTIFY)
            snprintf(what, sizeof what,
                     "for 2 notification(s) of tag %d; ready since its last consume: tag %d x1",
                     DL_TAG_COUNT, DL_TAG_COUNT);
        else
            snprintf(what, sizeof what, "%s", k == 0 || c == DL_DEVICE_BARRIER ? "" : "barrier");
        TEST_CHECK(test_find_line(r.out, "dcuda: deadlock:", rank) &&
                       strstr(test_find_line(r.out, "dcuda: deadlock:", rank), what),
                   "the report has no line '%s%s'", rank, what);
    }
    dl_close(&r);
    return 0;
}

/* Not a deadlock: the run ends normally, nothing reported. */
static int check_slow(int argc, char **argv, int c)
{
    dl_run_t r;
    int rc = dl_exec(&r, argc, argv, c, c == DL_SLOW_PROCESS ? 2 : 1);
    if (rc)
        return rc;
    TEST_STATUS(r.status, DCUDA_OK);
    TEST_CHECK(!strstr(r.out, "deadlock"), "a run that could go on was reported deadlocked");
    for (int k = r.info.rank_start; k < r.info.rank_start + r.info.rank_responsible; k++) {
        TEST_STATUS(res(&r, k, DL_RES_CALL), DCUDA_OK);
        TEST_STATUS(res(&r, k, DL_RES_FINISH), DCUDA_OK);
    }
    dl_close(&r);
    return 0;
}

/* The last process's ranks returned; every other rank waits for nobody: a
 * deadlock all the same, found and reported although one process has no
 * rank left (its proxy still answers), and the run fails in every
 * process. */
static int check_process_ends(int argc, char **argv)
{
    dl_run_t r;
    int rc = dl_exec(&r, argc, argv, DL_PROCESS_ENDS, 1);
    if (rc)
        return rc;
    if (r.info.process_count < 2) {
        printf("SKIP process_ends: needs 2 or more processes, have 1\n");
        dl_close(&r);
        return TEST_SKIP;
    }
    int last = r.info.rank_start + r.info.rank_responsible == r.info.rank_count;
    if (last)
        TEST_CHECK(r.status == DCUDA_ERR_DEADLOCK || r.status == DCUDA_ERR_ABORTED,
                   "the run returned %s", dcuda_status_name(r.status));
    else
        TEST_STATUS(r.status, DCUDA_ERR_DEADLOCK);
    for (int k = r.info.rank_start; k < r.info.rank_start + r.info.rank_responsible; k++)
        TEST_STATUS(res(&r, k, DL_RES_CALL), last ? DCUDA_OK : DCUDA_ERR_DEADLOCK);
    if (!last)
        TEST_CHECK(test_find_line(r.out, "deadlock: every rank of every process is blocked", NULL),
                   "no report of the deadlock");
    dl_close(&r);
    return 0;
}

static int case_wrong_tag(int argc, char **argv)
{
    return check_deadlock(argc, argv, DL_WRONG_TAG);
}
static int case_missing_notify(int argc, char **argv)
{
    return check_deadlock(argc, argv, DL_MISSING_NOTIFY);
}
static int case_missing_barrier(int argc, char **argv)
{
    return check_deadlock(argc, argv, DL_MISSING_BARRIER);
}
static int case_device_barrier(int argc, char **argv)
{
    return check_deadlock(argc, argv, DL_DEVICE_BARRIER);
}
static int case_process_ends(int argc, char **argv) { return check_process_ends(argc, argv); }
static int case_slow(int argc, char **argv) { return check_slow(argc, argv, DL_SLOW); }
static int case_slow_process(int argc, char **argv)
{
    return check_slow(argc, argv, DL_SLOW_PROCESS);
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "wrong_tag", case_wrong_tag },
        { "missing_notify", case_missing_notify },
        { "missing_barrier", case_missing_barrier },
        { "device_barrier", case_device_barrier },
        { "process_ends", case_process_ends },
        { "slow", case_slow },
        { "slow_process", case_slow_process },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
