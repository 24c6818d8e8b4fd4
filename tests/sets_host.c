/*
 * Host driver of the test of sets of tags:
 *   dcuda_test_sets model [seed [runs]]
 *   dcuda_test_sets misuse|deadlock|host|watchdog
 *
 * model: seeded runs of the plan in sets.h (every tag of a pool sent to
 * every rank by one drawn rank, 0 to 2 notified puts of drawn sizes a
 * step); the ranks consume by a seeded mix of set waits (any, some,
 * all), set tests, takes and plain waits and check each answer against
 * what is still to come and each consumed put's bytes; the host checks
 * their findings, and that every kind of call ran.
 *
 * The others: bad sets and tags, each refused with its status and nothing
 * taken, then a good set; a set of two tags, all wanted, of which one is
 * never sent (DCUDA_ERR_DEADLOCK; the report names the set's tags); a set
 * only the host completes, 300 ms late (no deadlock: the host may still
 * notify); the deadlock's set with the detector off, which the watchdog
 * reports and cancels.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcuda/dcuda_host.h"
#include "sets.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(sets);

typedef struct sets_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    sets_data_t d;
    test_words_t w; /* the ranks' findings (d.words) */
} sets_run_t;

/* Starts the runtime and the memory of case c; 0, or TEST_SKIP / 1. */
static int sets_open(sets_run_t *r, int argc, char **argv, int c)
{
    memset(r, 0, sizeof *r);
    if (!test_open_host(argc, argv, DCUDA_KERNEL_REF(sets), SETS_THREADS, &r->h, &r->info))
        return 1;
    r->d.test_case = c;
    r->d.steps = SETS_STEPS;
    if (!test_words_alloc(&r->w, r->h, &r->info, SETS_WORDS))
        return 1;
    r->d.words = r->w.ranks;
    if (c == SETS_MODEL &&
        !TEST_STATUS(dcuda_host_alloc(r->h, (size_t)r->w.n * SETS_PART, (void **)&r->d.parts),
                     DCUDA_OK))
        return 1;
    return 0;
}

static void sets_close(sets_run_t *r)
{
    if (r->d.parts)
        TEST_STATUS(dcuda_host_free(r->h, r->d.parts), DCUDA_OK);
    test_words_free(&r->w);
    TEST_STATUS(dcuda_host_finish(r->h), DCUDA_OK);
}

static const char *sets_bad_name(int64_t bad)
{
    static const char *const names[] = { "",
                                         "took a tag with nothing left to come",
                                         "took a tag outside the set",
                                         "took fewer tags than it needed",
                                         "a consumed notification's put was not there",
                                         "a notification nobody sent was there after the step",
                                         "its calls never consumed everything",
                                         "a test's answer and what it took disagree" };
    int what = (int)(bad % 100);
    return what > 0 && what < 8 ? names[what] : "?";
}

/* One seeded run of the model and the ranks' findings. */
static void sets_model_run(sets_run_t *r, uint32_t seed)
{
    r->d.seed = seed;
    test_words_clear(&r->w);
    if (!TEST_STATUS(dcuda_host_run(r->h, &r->d, sizeof r->d, NULL), DCUDA_OK))
        return;
    test_words_fetch(&r->w);
    int64_t ops[5] = { 0, 0, 0, 0, 0 };
    for (int dr = 0; dr < r->info.rank_responsible; dr++) {
        int rank = r->info.rank_start + dr;
        int64_t bad = test_words_get(&r->w, dr, SETS_BAD);
        TEST_CHECK(test_words_get(&r->w, dr, SETS_FIRST_ERROR) == 0,
                   "seed %u: rank %d: a call failed: %s", seed, rank,
                   dcuda_status_name((dcuda_status_t)test_words_get(&r->w, dr, SETS_FIRST_ERROR)));
        TEST_CHECK(bad == 0, "seed %u: rank %d, step %lld: %s", seed, rank, (long long)(bad / 100),
                   sets_bad_name(bad));
        for (int k = 0; k < 5; k++)
            ops[k] += test_words_get(&r->w, dr, SETS_OPS + k);
    }
    printf("%sseed %u: calls: %lld set waits (some), %lld (all), %lld set tests, %lld takes, "
           "%lld plain waits\n",
           test_who, seed, (long long)ops[0], (long long)ops[1], (long long)ops[2],
           (long long)ops[3], (long long)ops[4]);
    for (int k = 0; k < 5; k++)
        TEST_CHECK(ops[k] > 0, "seed %u: no call of kind %d ran", seed, k);
}

static int case_model(int argc, char **argv)
{
    sets_run_t r;
    uint32_t seed = (uint32_t)test_arg(argc, argv, 2, 1);
    long runs = test_arg(argc, argv, 3, 2);
    int rc = sets_open(&r, argc, argv, SETS_MODEL);
    if (rc)
        return rc;
    for (long i = 0; i < runs && !test_failures; i++)
        sets_model_run(&r, seed + (uint32_t)i);
    sets_close(&r);
    return 0;
}

static int case_misuse(int argc, char **argv)
{
    sets_run_t r;
    setenv("DCUDA_ON_ERROR", "continue", 1);
    int rc = sets_open(&r, argc, argv, SETS_MISUSE);
    if (rc)
        return rc;
    TEST_STATUS(dcuda_host_run(r.h, &r.d, sizeof r.d, NULL), DCUDA_ERR_TAG); /* the first */
    test_words_fetch(&r.w);
    static const int64_t want[SETS_CALL_WORDS] = { DCUDA_ERR_TAG,
                                                   DCUDA_ERR_TAG,
                                                   DCUDA_ERR_INVALID_ARG,
                                                   DCUDA_ERR_INVALID_ARG,
                                                   DCUDA_ERR_INVALID_ARG,
                                                   DCUDA_ERR_TAG,
                                                   DCUDA_ERR_TAG,
                                                   DCUDA_OK,
                                                   DCUDA_OK,
                                                   DCUDA_ERR_TAG,
                                                   DCUDA_ERR_INVALID_ARG,
                                                   DCUDA_ERR_INVALID_ARG,
                                                   0 /* nothing left */,
                                                   DCUDA_OK,
                                                   1 /* consumed */,
                                                   DCUDA_OK };
    char what[32];
    for (int i = 0; i < SETS_CALL_WORDS; i++) {
        snprintf(what, sizeof what, "call %d", i);
        test_words_check(&r.w, SETS_CALLS + i, want[i], what);
    }
    test_words_check(&r.w, SETS_TAKEN, 0xa, "the good set's taken");
    test_words_check(&r.w, SETS_TAKEN + 1, 0x80000000, "the set of tag 255's taken");
    test_words_check(&r.w, SETS_TAKEN + 2, 0xa, "a need of 1's taken (both tags had one)");
    test_words_check(&r.w, SETS_BAD, 0, "its finding");
    test_words_check(&r.w, SETS_FIRST_ERROR, 0, "its calls' first error");
    sets_close(&r);
    return 0;
}

/* A run whose set waits cannot complete, its output captured (*out, for
 * the caller to free) and printed: 1 once it ran, with `want` checked. */
static int sets_run_captured(sets_run_t *r, dcuda_status_t want, char **out)
{
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 0;
    dcuda_status_t run = dcuda_host_run(r->h, &r->d, sizeof r->d, NULL);
    *out = test_capture_end(&cap);
    printf("%s---- captured ----\n%s---- end ----\n", test_who, *out ? *out : "");
    TEST_STATUS(run, want);
    return 1;
}

/* After such a run: every rank's set wait returned `want` and took nothing. */
static void sets_end_failed(sets_run_t *r, dcuda_status_t want)
{
    test_words_fetch(&r->w);
    test_words_check(&r->w, SETS_CALLS, want, "the set wait");
    test_words_check(&r->w, SETS_TAKEN, 0, "the failed wait's taken");
    sets_close(r);
}

static int case_deadlock(int argc, char **argv)
{
    sets_run_t r;
    setenv("DCUDA_WATCHDOG", "off", 1);
    int rc = sets_open(&r, argc, argv, SETS_DEADLOCK);
    if (rc)
        return rc;
    char *out = NULL;
    if (!sets_run_captured(&r, DCUDA_ERR_DEADLOCK, &out))
        return 1;
    TEST_CHECK(out && test_find_line(out, "deadlock:",
                                     "for notifications of 2 of the tags {60, 62} (one each); "
                                     "ready since its last consume: tag 60 x1"),
               "the deadlock report does not name the set");
    free(out);
    sets_end_failed(&r, DCUDA_ERR_DEADLOCK);
    return 0;
}

/* The deadlock case with the detector off: the watchdog reports the set
 * and cancels the waits (DCUDA_ERR_TIMEOUT, nothing taken). */
static int case_watchdog(int argc, char **argv)
{
    sets_run_t r;
    setenv("DCUDA_DEADLOCK", "0", 1);
    setenv("DCUDA_WATCHDOG", "0.5", 1);
    setenv("DCUDA_WATCHDOG_CANCEL", "1", 1);
    int rc = sets_open(&r, argc, argv, SETS_WATCHDOG);
    if (rc)
        return rc;
    char *out = NULL;
    if (!sets_run_captured(&r, DCUDA_ERR_TIMEOUT, &out))
        return 1;
    TEST_CHECK(out && test_find_line(out, "watchdog:",
                                     "for notifications of 2 of the tags {60, 62} (one each)"),
               "the watchdog's report does not name the set");
    TEST_CHECK(out && test_find_line(out, "dcuda_wait_notification_set",
                                     "waiting for notifications of 2 of the tags from 60 by "
                                     "mask 0x5"),
               "the cancelled wait's report does not name the set");
    free(out);
    sets_end_failed(&r, DCUDA_ERR_TIMEOUT);
    return 0;
}

static int case_host(int argc, char **argv)
{
    sets_run_t r;
    int rc = sets_open(&r, argc, argv, SETS_HOST);
    if (rc)
        return rc;
    if (!TEST_STATUS(dcuda_host_run_start(r.h, &r.d, sizeof r.d, NULL), DCUDA_OK))
        return 1;
    struct timespec ts = { 0, 300000000L }; /* several of the detector's rounds */
    nanosleep(&ts, NULL);
    for (int dr = 0; dr < r.info.rank_responsible; dr++)
        TEST_STATUS(dcuda_host_notify(r.h, r.info.rank_start + dr, SETS_HOST_TAG, NULL), DCUDA_OK);
    TEST_STATUS(dcuda_host_run_wait(r.h, NULL), DCUDA_OK);
    test_words_fetch(&r.w);
    test_words_check(&r.w, SETS_CALLS, DCUDA_OK, "the set wait");
    test_words_check(&r.w, SETS_TAKEN, 0x4, "its taken");
    sets_close(&r);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "model", case_model }, { "misuse", case_misuse },     { "deadlock", case_deadlock },
        { "host", case_host },   { "watchdog", case_watchdog },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
