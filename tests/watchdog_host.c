/*
 * Host driver of the watchdog suite: dcuda_test_watchdog <case>. With
 * DCUDA_WATCHDOG=0.5 and DCUDA_WATCHDOG_CANCEL=1 (set here; and the
 * deadlock detector off, DCUDA_DEADLOCK=0, which would end these runs
 * first), ranks block in
 * a wait or barrier that cannot complete; the driver captures stdout and
 * stderr in one file and checks that the watchdog's report names the rank
 * and what it waits for, that the cancelled call fails with
 * DCUDA_ERR_TIMEOUT, and that rank log lines are printed while ranks run.
 * With several processes each checks its own ranks and output: the barrier
 * case blocks ranks of every process, the wait case only rank 0, whose
 * process checks the report (the others' ranks wait for it in
 * dcuda_rank_finish, which their own watchdog may cancel).
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dcuda/dcuda_host.h"
#include "test_util.h"
#include "watchdog.h"

DCUDA_KERNEL_DECLARE(watchdog);

typedef struct wd_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    int n;          /* ranks in WORLD */
    int first, end; /* the WORLD ranks this process owns: [first, end) */
    wd_data_t d;
    int64_t *res;
    char *out; /* captured stdout + stderr of the run */
    dcuda_status_t status;
} wd_run_t;

static int64_t res(const wd_run_t *r, int rank, int s) { return r->res[rank * WD_SLOTS + s]; }

/* Runs the watchdog kernel with the given case, capturing its output. */
static int wd_run(wd_run_t *r, int argc, char **argv, int test_case, int marker)
{
    memset(r, 0, sizeof *r);
    setenv("DCUDA_WATCHDOG", "0.5", 1);
    setenv("DCUDA_WATCHDOG_CANCEL", "1", 1);
    /* These runs are deadlocks: the detector would end them first. */
    setenv("DCUDA_DEADLOCK", "0", 1);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(watchdog), 64, &r->h), DCUDA_OK))
        return 1;
    TEST_STATUS(dcuda_host_get_rank_info(r->h, &r->info), DCUDA_OK);
    test_check_rank_setting(&r->info);
    r->n = r->info.rank_count;
    r->first = test_first_rank(&r->info);
    r->end = test_end_rank(&r->info);
    if (test_case == WD_BARRIER && r->info.rank_responsible < 2) {
        printf("SKIP %s: needs at least 2 ranks per device, have %d (set DCUDA_RANKS)\n", argv[1],
               r->info.rank_responsible);
        TEST_STATUS(dcuda_host_finish(r->h), DCUDA_OK);
        return TEST_SKIP;
    }
    size_t bytes = (size_t)r->n * WD_SLOTS * sizeof *r->res;
    r->res = malloc(bytes);
    if (!r->res || !TEST_STATUS(dcuda_host_alloc(r->h, bytes, (void **)&r->d.res), DCUDA_OK))
        return 1;
    for (size_t i = 0; i < (size_t)r->n * WD_SLOTS; i++)
        r->res[i] = INT64_MIN;
    TEST_STATUS(dcuda_host_copy_in(r->h, r->d.res, r->res, bytes), DCUDA_OK);
    /* Values the output must name, different in every run. */
    uint32_t seed = (uint32_t)getpid() * 2654435761u ^ (uint32_t)time(NULL);
    r->d.test_case = test_case;
    r->d.tag = 100 + (int)(seed % 150u);
    r->d.log_marker = marker;
    r->d.nonce = test_mix(seed);

    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    r->status = dcuda_host_run(r->h, &r->d, sizeof r->d, NULL);
    r->out = test_capture_end(&cap);
    TEST_STATUS(dcuda_host_copy_out(r->h, r->res, r->d.res, bytes), DCUDA_OK);
    if (!r->out)
        return 1;
    printf("%s---- captured output ----\n%s---- end of captured output ----\n", test_who, r->out);
    TEST_RUN_STATUS(&r->info, r->status, DCUDA_ERR_TIMEOUT, test_case == WD_WAIT ? 0 : -1);
    for (int k = r->first; k < r->end; k++)
        TEST_CHECK(res(r, k, WD_RES_SETUP) == 0, "rank %d: a call failed: %s", k,
                   dcuda_status_name((dcuda_status_t)res(r, k, WD_RES_SETUP)));
    return 0;
}

static void wd_close(wd_run_t *r)
{
    TEST_STATUS(dcuda_host_free(r->h, r->d.res), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(r->h), DCUDA_OK);
    free(r->res);
    free(r->out);
}

/* Rank 0 waits for a tag nobody sends; with `marker`, it logs a line first,
 * which must be printed before the watchdog's report. */
static int check_wait(int argc, char **argv, int marker)
{
    wd_run_t r;
    int rc = wd_run(&r, argc, argv, WD_WAIT, marker);
    if (rc)
        return rc;
    if (!test_owns(&r.info, 0)) {
        wd_close(&r);
        return 0;
    }
    char tag[64], error[160];
    snprintf(tag, sizeof tag, "notification(s) of tag %d", r.d.tag);
    snprintf(error, sizeof error,
             "dcuda: error: rank 0: dcuda_wait_notifications: waiting for 1 notification(s) of "
             "tag %d",
             r.d.tag);
    TEST_STATUS(res(&r, 0, WD_RES_CALL), DCUDA_ERR_TIMEOUT);
    TEST_STATUS(res(&r, 0, WD_RES_FINISH), DCUDA_OK);
    const char *first = test_find_line(r.out, "dcuda: watchdog:", NULL);
    const char *line = test_find_line(r.out, "dcuda: watchdog:", "rank 0 waits");
    const char *err = test_find_line(r.out, error, NULL);
    TEST_CHECK(first != NULL, "no watchdog report");
    TEST_CHECK(line != NULL && test_find_line(line, tag, NULL) == line,
               "the report does not say that rank 0 waits for %s", tag);
    TEST_CHECK(test_find_line(r.out, "dcuda: watchdog:", "cancelling") != NULL,
               "the report does not say that it cancels");
    TEST_CHECK(err != NULL, "no error line '%s'", error);
    TEST_CHECK(!first || !err || first < err, "the cancelled wait failed before the report");
    if (marker) {
        char text[96];
        snprintf(text, sizeof text, "[rank 0] watchdog-marker %u: rank 0 starts to wait",
                 (unsigned)r.d.nonce);
        const char *mark = test_find_line(r.out, text, NULL);
        TEST_CHECK(mark != NULL, "marker line '%s' not printed", text);
        TEST_CHECK(!mark || !first || mark < first,
                   "the marker was printed after the watchdog report, not while rank 0 ran");
    }
    wd_close(&r);
    return 0;
}

static int run_wait(int argc, char **argv) { return check_wait(argc, argv, 0); }
static int run_log_order(int argc, char **argv) { return check_wait(argc, argv, 1); }

/* The last rank of each device skips a DEVICE barrier: the others' barrier
 * fails after the watchdog reports them as blocked in a barrier. */
static int run_barrier(int argc, char **argv)
{
    wd_run_t r;
    int rc = wd_run(&r, argc, argv, WD_BARRIER, 0);
    if (rc)
        return rc;
    for (int k = r.first; k < r.end - 1; k++)
        if (!TEST_STATUS(res(&r, k, WD_RES_CALL), DCUDA_ERR_TIMEOUT))
            fprintf(stderr, "     (rank %d)\n", k);
    TEST_STATUS(res(&r, r.end - 1, WD_RES_CALL), DCUDA_OK);
    const char *first = test_find_line(r.out, "dcuda: watchdog:", NULL);
    const char *line = test_find_line(r.out, "dcuda: watchdog:   rank", "in a barrier on DEVICE");
    const char *err = test_find_line(r.out, "dcuda_comm_barrier: in a barrier on DEVICE", NULL);
    TEST_CHECK(line != NULL, "the report names no rank blocked in a DEVICE barrier");
    TEST_CHECK(err != NULL, "no error line for the cancelled barrier");
    TEST_CHECK(!first || !err || first < err, "the cancelled barrier failed before the report");
    TEST_CONTAINS(dcuda_host_last_error(r.h), "in a barrier on");
    wd_close(&r);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "wait", run_wait },
        { "log_order", run_log_order },
        { "barrier", run_barrier },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
