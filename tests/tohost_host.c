/*
 * Host driver of the rank-to-host notification test:
 *   dcuda_test_tohost model [seed [runs]]
 *   dcuda_test_tohost wrong_tag|returned|abort|barrier_free|late_ack|misuse|thread
 *
 * model: a seeded run (tohost.h plans it) started with dcuda_host_run_start.
 * The host takes its own ranks' notifications in random amounts, by
 * blocking waits and by polling tests, never more than the ranks can send
 * before the next step at which the host answers; after each take it
 * reads the rank's step word (by a copy or a host get) and it must be at
 * least the step taken; at the answered steps it checks the rank's part
 * exactly (the step, and the bytes the left neighbour put: seen by the
 * rank before it notified, so seen by the host after) and then notifies
 * the ranks. The shared tag is taken in random amounts of what must have
 * been sent, and at the end exactly. Each further run uses the next seed
 * (the counts start from 0 each run).
 *
 * The other cases: a host waiting for a tag no rank sends while the ranks
 * wait for it (both DCUDA_ERR_DEADLOCK, the report names the host's
 * wait); ranks that return without sending enough; an abort while the
 * host waits; a free host whose ranks are stuck in a barrier (a deadlock
 * all the same); a host that answers late (no deadlock); bad arguments on
 * both sides; and a wait on another thread while dcuda_host_run runs.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcuda/dcuda_host.h"
#include "test_util.h"
#include "tohost.h"

DCUDA_KERNEL_DECLARE(tohost);

typedef struct th_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    tohost_data_t d;
    int64_t *words; /* host copy of d.words */
    size_t words_bytes;
} th_run_t;

static void th_sleep_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&ts, NULL);
}

/* Starts the runtime and the memory of case c; 0, or TEST_SKIP / 1. */
static int th_open(th_run_t *r, int argc, char **argv, int c)
{
    memset(r, 0, sizeof *r);
    if (!test_open_host(argc, argv, DCUDA_KERNEL_REF(tohost), 32, &r->h, &r->info))
        return 1;
    int n = r->info.rank_responsible;
    r->d.test_case = c;
    r->d.steps = TH_STEPS;
    r->words_bytes = (size_t)n * TH_WORDS * sizeof(int64_t);
    if (!test_alloc_both(r->h, r->words_bytes, (void **)&r->words, (void **)&r->d.words))
        return 1;
    memset(r->words, 0, r->words_bytes);
    if (c == TH_MODEL &&
        !TEST_STATUS(dcuda_host_alloc(r->h, (size_t)n * TH_PART, (void **)&r->d.parts), DCUDA_OK))
        return 1;
    return 0;
}

/* Zeroes the ranks' findings before a run. */
static void th_clear(th_run_t *r)
{
    memset(r->words, 0, r->words_bytes);
    TEST_STATUS(dcuda_host_copy_in(r->h, r->d.words, r->words, r->words_bytes), DCUDA_OK);
}

static int64_t th_word(th_run_t *r, int drank, int w) { return r->words[drank * TH_WORDS + w]; }

static void th_fetch(th_run_t *r)
{
    TEST_STATUS(dcuda_host_copy_out(r->h, r->words, r->d.words, r->words_bytes), DCUDA_OK);
}

static void th_close(th_run_t *r)
{
    if (r->d.parts)
        TEST_STATUS(dcuda_host_free(r->h, r->d.parts), DCUDA_OK);
    test_free_both(r->h, r->words, r->d.words);
    TEST_STATUS(dcuda_host_finish(r->h), DCUDA_OK);
}

/* ---- the model ------------------------------------------------------------------- */

typedef struct th_model {
    th_run_t *r;
    uint64_t rng;
    int next[64];    /* per device rank: the first step whose notification is not taken */
    int64_t win[64]; /* per device rank: its window's handle (-1: not read yet) */
    uint32_t shared_taken;
} th_model_t;

/* Takes count of tag: a blocking wait, or polling tests. */
static void th_take(th_model_t *m, int tag, int count)
{
    dcuda_host_h h = m->r->h;
    if (test_rng(&m->rng) % 3u != 0) {
        TEST_STATUS(dcuda_host_wait_notifications(h, tag, count), DCUDA_OK);
        return;
    }
    int done = 0;
    for (long spins = 0; !done && spins < 400000; spins++) {
        if (!TEST_STATUS(dcuda_host_test_notifications(h, tag, count, &done), DCUDA_OK))
            return;
        if (!done)
            th_sleep_us(50);
    }
    TEST_CHECK(done, "tag %d: %d notification(s) never arrived (polling)", tag, count);
}

/* size bytes at offset of device rank dr's part: a copy, or, while its
 * window surely lives (`live`: the rank will wait for the host before it
 * frees it), a host get (blocking, or with a request). */
static void th_read(th_model_t *m, int dr, uint64_t offset, void *dst, size_t size, int live)
{
    th_run_t *r = m->r;
    unsigned char *part = r->d.parts + (size_t)dr * TH_PART;
    uint64_t how = live ? test_rng(&m->rng) % 3u : 0u;
    if (m->win[dr] < 0) {
        int64_t header[2];
        TEST_STATUS(dcuda_host_copy_out(r->h, header, part, sizeof header), DCUDA_OK);
        m->win[dr] = header[TH_WIN_WORD];
    }
    if (how == 0) {
        TEST_STATUS(dcuda_host_copy_out(r->h, dst, part + offset, size), DCUDA_OK);
        return;
    }
    dcuda_gptr_t at = dcuda_gptr((uint32_t)m->win[dr], r->info.rank_start + dr, offset);
    dcuda_host_req_t req = NULL;
    TEST_STATUS(dcuda_host_get(r->h, dst, at, size, how == 1 ? NULL : &req), DCUDA_OK);
    if (req)
        TEST_STATUS(dcuda_host_req_wait(r->h, &req), DCUDA_OK);
}

static int64_t th_step_word(th_model_t *m, int dr, int live)
{
    int64_t step = -1;
    th_read(m, dr, TH_STEP_WORD * sizeof(int64_t), &step, sizeof step, live);
    return step;
}

/* At an answered step: the part exactly as the rank left it. */
static void th_check_exact(th_model_t *m, int dr, int step)
{
    th_run_t *r = m->r;
    int me = r->info.rank_start + dr, n = r->info.rank_count, left = (me + n - 1) % n;
    uint32_t in = th_size(r->d.seed, left, step);
    unsigned char *got = malloc(in);
    int64_t word = th_step_word(m, dr, 1);
    TEST_CHECK(word == step, "rank %d: step word %lld at the answered step %d", me, (long long)word,
               step);
    th_read(m, dr, TH_RECV, got, in, 1);
    for (uint32_t i = 0; i < in; i++)
        if (got[i] != test_byte((uint32_t)left, (uint32_t)step, i)) {
            TEST_CHECK(0, "rank %d, step %d: byte %u of %u from rank %d is %u, not %u", me, step, i,
                       in, left, got[i], test_byte((uint32_t)left, (uint32_t)step, i));
            break;
        }
    free(got);
}

/* Shared notifications that must have been sent: those of the steps whose
 * own notification was taken (a rank sends the shared one first). */
static uint32_t th_shared_sent(th_model_t *m, int upto_all)
{
    th_run_t *r = m->r;
    uint32_t sent = 0;
    for (int dr = 0; dr < r->info.rank_responsible; dr++) {
        int last = upto_all ? r->d.steps : m->next[dr] - 1;
        for (int s = 1; s <= last; s++)
            sent += (uint32_t)th_shared(r->d.seed, r->info.rank_start + dr, s);
    }
    return sent;
}

/* Takes a random amount of rank dr's own notifications, up to `end`. */
static void th_take_own(th_model_t *m, int dr, int end)
{
    int live = th_sync(m->r->d.seed, end, m->r->d.steps);
    int k = 1 + (int)(test_rng(&m->rng) % (uint64_t)(end - m->next[dr] + 1));
    th_take(m, th_own_tag(dr), k);
    m->next[dr] += k;
    int64_t word = th_step_word(m, dr, live);
    TEST_CHECK(word >= m->next[dr] - 1, "rank %d: step word %lld after its step %d was notified",
               m->r->info.rank_start + dr, (long long)word, m->next[dr] - 1);
    uint32_t avail = th_shared_sent(m, 0) - m->shared_taken;
    if (avail && test_rng(&m->rng) % 4u == 0) {
        uint32_t take = 1u + (uint32_t)(test_rng(&m->rng) % avail);
        th_take(m, TH_SHARED_TAG, (int)take);
        m->shared_taken += take;
    }
}

/* Every own rank up to step `end`, in random order and amounts. */
static void th_segment(th_model_t *m, int end)
{
    int n = m->r->info.rank_responsible;
    for (;;) {
        int open[64], count = 0;
        for (int dr = 0; dr < n; dr++)
            if (m->next[dr] <= end)
                open[count++] = dr;
        if (count == 0 || test_failures)
            return;
        th_take_own(m, open[test_rng(&m->rng) % (uint64_t)count], end);
    }
}

static void th_model_run(th_run_t *r, uint32_t seed)
{
    th_model_t m;
    memset(&m, 0, sizeof m);
    m.r = r;
    m.rng = seed * 0x9e3779b97f4a7c15ull + (uint64_t)r->info.process_index + 1;
    r->d.seed = seed;
    int n = r->info.rank_responsible, steps = r->d.steps;
    for (int dr = 0; dr < n; dr++) {
        m.next[dr] = 1;
        m.win[dr] = -1;
    }
    th_clear(r);
    if (!TEST_STATUS(dcuda_host_run_start(r->h, &r->d, sizeof r->d, NULL), DCUDA_OK))
        return;
    for (int from = 1, end; from <= steps && !test_failures; from = end + 1) {
        end = from;
        while (end < steps && !th_sync(seed, end, steps))
            end++;
        th_segment(&m, end);
        if (!th_sync(seed, end, steps))
            continue;
        for (int dr = 0; dr < n && !test_failures; dr++) {
            th_check_exact(&m, dr, end);
            TEST_STATUS(dcuda_host_notify(r->h, r->info.rank_start + dr, TH_ACK_TAG, NULL),
                        DCUDA_OK);
        }
    }
    uint32_t rest = th_shared_sent(&m, 1) - m.shared_taken;
    if (rest && !test_failures)
        th_take(&m, TH_SHARED_TAG, (int)rest);
    int done = 1;
    dcuda_status_t extra = dcuda_host_test_notifications(r->h, TH_SHARED_TAG, 1, &done);
    TEST_CHECK(done == 0 && (extra == DCUDA_OK || extra == DCUDA_ERR_DEADLOCK),
               "a shared notification more than the ranks sent (done %d, %s)", done,
               dcuda_status_name(extra));
    TEST_STATUS(dcuda_host_run_wait(r->h, NULL), DCUDA_OK);
    th_fetch(r);
    for (int dr = 0; dr < n; dr++) {
        int rank = r->info.rank_start + dr;
        TEST_CHECK(th_word(r, dr, TH_FIRST_ERROR) == 0, "rank %d: a call failed: %s", rank,
                   dcuda_status_name((dcuda_status_t)th_word(r, dr, TH_FIRST_ERROR)));
        TEST_CHECK(th_word(r, dr, TH_BAD_STEP) == 0,
                   "rank %d: its left neighbour's put of "
                   "step %lld was wrong",
                   rank, (long long)th_word(r, dr, TH_BAD_STEP));
        int64_t word = -1;
        TEST_STATUS(
            dcuda_host_copy_out(r->h, &word, r->d.parts + (size_t)dr * TH_PART, sizeof word),
            DCUDA_OK);
        TEST_CHECK(word == steps, "rank %d: step word %lld at the end", rank, (long long)word);
    }
}

static int case_model(int argc, char **argv)
{
    th_run_t r;
    uint32_t seed = (uint32_t)test_arg(argc, argv, 2, 1);
    long runs = test_arg(argc, argv, 3, 2);
    int rc = th_open(&r, argc, argv, TH_MODEL);
    if (rc)
        return rc;
    if (r.info.rank_responsible > 64) {
        printf("SKIP model: more than 64 ranks a device (%d)\n", r.info.rank_responsible);
        th_close(&r);
        return TEST_SKIP;
    }
    for (long i = 0; i < runs && !test_failures; i++) {
        printf("%smodel: seed %u\n", test_who, seed + (uint32_t)i);
        th_model_run(&r, seed + (uint32_t)i);
    }
    th_close(&r);
    return 0;
}

/* ---- runs that go wrong on purpose ------------------------------------------------ */

/* Every own rank's call `w` returned want. */
static void th_check_calls(th_run_t *r, int w, dcuda_status_t want)
{
    th_fetch(r);
    for (int dr = 0; dr < r->info.rank_responsible; dr++)
        TEST_CHECK(th_word(r, dr, w) == want, "rank %d: call %d returned %s, not %s",
                   r->info.rank_start + dr, w - TH_CALL_A,
                   dcuda_status_name((dcuda_status_t)th_word(r, dr, w)), dcuda_status_name(want));
}

/* The host waits for tag 8 while its ranks sent tag 7 and wait for it: a
 * deadlock, reported with the host's wait. */
static int case_wrong_tag(int argc, char **argv)
{
    th_run_t r;
    setenv("DCUDA_WATCHDOG", "off", 1);
    int rc = th_open(&r, argc, argv, TH_WRONG_TAG);
    if (rc)
        return rc;
    int n = r.info.rank_responsible;
    th_clear(&r);
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    dcuda_status_t run = dcuda_host_run_start(r.h, &r.d, sizeof r.d, NULL), wait = run;
    if (run == DCUDA_OK) {
        wait = dcuda_host_wait_notifications(r.h, 8, 1);
        run = dcuda_host_run_wait(r.h, NULL);
    }
    char *out = test_capture_end(&cap);
    printf("%s---- captured ----\n%s---- end ----\n", test_who, out ? out : "");
    TEST_STATUS(wait, DCUDA_ERR_DEADLOCK);
    TEST_STATUS(run, DCUDA_ERR_DEADLOCK);
    char line[160];
    snprintf(line, sizeof line,
             "dcuda_host_wait_notifications for 1 notification(s) of tag 8 "
             "(0 ready); ready for the host: tag 7 x%d",
             n);
    TEST_CHECK(out && test_find_line(out, "deadlock:", line),
               "the deadlock report does not name the host's wait (%s)", line);
    TEST_CHECK(out && test_find_line(out,
                                     "dcuda_host_wait_notifications: 0 of the 1 "
                                     "notification(s) of tag 8 arrived",
                                     "DCUDA_ERR_DEADLOCK"),
               "the host's wait did not say why it failed");
    th_check_calls(&r, TH_CALL_A, DCUDA_OK);
    th_check_calls(&r, TH_CALL_B, DCUDA_ERR_DEADLOCK);
    free(out);
    th_close(&r);
    return 0;
}

/* The ranks return after one notification each; the host wants one more:
 * DCUDA_ERR_DEADLOCK, taking nothing, so the ones sent are still there. */
static int case_returned(int argc, char **argv)
{
    th_run_t r;
    int rc = th_open(&r, argc, argv, TH_RETURNED);
    if (rc)
        return rc;
    int n = r.info.rank_responsible, done = 0;
    th_clear(&r);
    if (!TEST_STATUS(dcuda_host_run_start(r.h, &r.d, sizeof r.d, NULL), DCUDA_OK))
        return 1;
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    dcuda_status_t wait = dcuda_host_wait_notifications(r.h, 3, n + 1);
    char *out = test_capture_end(&cap);
    printf("%s", out ? out : "");
    TEST_STATUS(wait, DCUDA_ERR_DEADLOCK);
    TEST_CHECK(out && test_find_line(out, "dcuda_host_wait_notifications:", "ranks returned"),
               "the failed wait did not say why");
    free(out);
    TEST_STATUS(dcuda_host_test_notifications(r.h, 3, n, &done), DCUDA_OK);
    TEST_CHECK(done == 1, "the %d notifications sent were lost to the failed wait", n);
    TEST_STATUS(dcuda_host_test_notifications(r.h, 3, 1, &done), DCUDA_ERR_DEADLOCK);
    TEST_CHECK(done == 0, "a notification more than the ranks sent");
    TEST_STATUS(dcuda_host_run_wait(r.h, NULL), DCUDA_OK);
    th_check_calls(&r, TH_CALL_A, DCUDA_OK);
    th_close(&r);
    return 0;
}

static void *th_abort_later(void *arg)
{
    th_sleep_us(200000);
    dcuda_host_abort((dcuda_host_h)arg, "the test ends the run");
    return NULL;
}

/* The host waits; another thread aborts the run: DCUDA_ERR_ABORTED. */
static int case_abort(int argc, char **argv)
{
    th_run_t r;
    setenv("DCUDA_DEADLOCK", "0", 1);
    int rc = th_open(&r, argc, argv, TH_ABORT);
    if (rc)
        return rc;
    th_clear(&r);
    if (!TEST_STATUS(dcuda_host_run_start(r.h, &r.d, sizeof r.d, NULL), DCUDA_OK))
        return 1;
    pthread_t t;
    pthread_create(&t, NULL, th_abort_later, r.h);
    TEST_STATUS(dcuda_host_wait_notifications(r.h, 9, 1), DCUDA_ERR_ABORTED);
    pthread_join(t, NULL);
    TEST_STATUS(dcuda_host_run_wait(r.h, NULL), DCUDA_ERR_ABORTED);
    th_check_calls(&r, TH_CALL_A, DCUDA_ERR_ABORTED);
    th_close(&r);
    return 0;
}

/* The host is free (it polls the run) but its ranks wait in a barrier
 * that WORLD rank 0 never joins: no host can release that. */
static int case_barrier_free(int argc, char **argv)
{
    th_run_t r;
    setenv("DCUDA_WATCHDOG", "off", 1);
    int rc = th_open(&r, argc, argv, TH_BARRIER_FREE);
    if (rc)
        return rc;
    if (r.info.rank_count < 2) {
        printf("SKIP barrier_free: needs 2 ranks\n");
        th_close(&r);
        return TEST_SKIP;
    }
    th_clear(&r);
    if (!TEST_STATUS(dcuda_host_run_start(r.h, &r.d, sizeof r.d, NULL), DCUDA_OK))
        return 1;
    int done = 0;
    for (long i = 0; !done && i < 6000; i++) { /* 30 s at most */
        TEST_STATUS(dcuda_host_run_test(r.h, &done), DCUDA_OK);
        if (!done)
            th_sleep_us(5000);
    }
    TEST_CHECK(done, "the stuck run did not end while the host polled it");
    TEST_STATUS(dcuda_host_run_wait(r.h, NULL), DCUDA_ERR_DEADLOCK);
    /* (Rank 0's dcuda_rank_finish meets the others' barrier: they are
     * stuck in theirs or in their own dcuda_rank_finish.) */
    th_close(&r);
    return 0;
}

/* The ranks wait for a host that answers after 300 ms (several of the
 * detector's rounds): a free host is no deadlock. */
static int case_late_ack(int argc, char **argv)
{
    th_run_t r;
    int rc = th_open(&r, argc, argv, TH_LATE_ACK);
    if (rc)
        return rc;
    int n = r.info.rank_responsible;
    th_clear(&r);
    if (!TEST_STATUS(dcuda_host_run_start(r.h, &r.d, sizeof r.d, NULL), DCUDA_OK))
        return 1;
    TEST_STATUS(dcuda_host_wait_notifications(r.h, 4, n), DCUDA_OK);
    th_sleep_us(300000);
    for (int dr = 0; dr < n; dr++)
        TEST_STATUS(dcuda_host_notify(r.h, r.info.rank_start + dr, TH_ACK_TAG, NULL), DCUDA_OK);
    TEST_STATUS(dcuda_host_run_wait(r.h, NULL), DCUDA_OK);
    th_check_calls(&r, TH_CALL_B, DCUDA_OK);
    th_close(&r);
    return 0;
}

/* Bad tags, counts and pointers on the host; bad tags on the ranks. */
static int case_misuse(int argc, char **argv)
{
    th_run_t r;
    setenv("DCUDA_ON_ERROR", "continue", 1);
    int rc = th_open(&r, argc, argv, TH_MISUSE);
    if (rc)
        return rc;
    int n = r.info.rank_responsible, done = 0;
    th_clear(&r);
    TEST_STATUS(dcuda_host_wait_notifications(r.h, 5, 1), DCUDA_ERR_INVALID_ARG); /* no run */
    TEST_STATUS(dcuda_host_test_notifications(r.h, 5, 1, &done), DCUDA_ERR_INVALID_ARG);
    if (!TEST_STATUS(dcuda_host_run_start(r.h, &r.d, sizeof r.d, NULL), DCUDA_OK))
        return 1;
    TEST_STATUS(dcuda_host_wait_notifications(r.h, 256, 1), DCUDA_ERR_TAG);
    TEST_STATUS(dcuda_host_wait_notifications(r.h, -1, 1), DCUDA_ERR_TAG);
    TEST_STATUS(dcuda_host_test_notifications(r.h, 256, 1, &done), DCUDA_ERR_TAG);
    TEST_STATUS(dcuda_host_wait_notifications(r.h, 5, 0), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_test_notifications(r.h, 5, -3, &done), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_test_notifications(r.h, 5, 1, NULL), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_wait_notifications(r.h, 5, n), DCUDA_OK);
    TEST_STATUS(dcuda_host_run_wait(r.h, NULL), DCUDA_ERR_TAG); /* the ranks' first error */
    TEST_STATUS(dcuda_host_wait_notifications(r.h, 5, 1), DCUDA_ERR_INVALID_ARG); /* over */
    th_check_calls(&r, TH_CALL_A, DCUDA_ERR_TAG);
    th_check_calls(&r, TH_CALL_B, DCUDA_ERR_TAG);
    th_check_calls(&r, TH_FIRST_ERROR, DCUDA_OK);
    th_close(&r);
    return 0;
}

typedef struct th_waiter {
    th_run_t *r;
    dcuda_status_t status;
} th_waiter_t;

/* Another thread: waits for every notification of the ranks (retrying
 * until the run is in flight), then answers them (the ranks wait for it,
 * so the run cannot end before). */
static void *th_wait_elsewhere(void *arg)
{
    th_waiter_t *w = arg;
    th_run_t *r = w->r;
    int want = r->info.rank_responsible * TH_THREAD_NOTES;
    w->status = DCUDA_ERR_INVALID_ARG;
    for (int tries = 0; w->status == DCUDA_ERR_INVALID_ARG && tries < 20000; tries++) {
        w->status = dcuda_host_wait_notifications(r->h, 6, want);
        if (w->status == DCUDA_ERR_INVALID_ARG)
            th_sleep_us(500);
    }
    for (int dr = 0; dr < r->info.rank_responsible && w->status == DCUDA_OK; dr++)
        w->status = dcuda_host_notify(r->h, r->info.rank_start + dr, TH_ACK_TAG, NULL);
    return NULL;
}

/* dcuda_host_run on this thread, the wait on another (which also
 * notifies the ranks: the detector does not know of it, so it is off). */
static int case_thread(int argc, char **argv)
{
    th_run_t r;
    setenv("DCUDA_DEADLOCK", "0", 1);
    int rc = th_open(&r, argc, argv, TH_THREAD);
    if (rc)
        return rc;
    th_clear(&r);
    th_waiter_t w = { &r, DCUDA_OK };
    pthread_t t;
    pthread_create(&t, NULL, th_wait_elsewhere, &w);
    TEST_STATUS(dcuda_host_run(r.h, &r.d, sizeof r.d, NULL), DCUDA_OK);
    pthread_join(t, NULL);
    TEST_STATUS(w.status, DCUDA_OK);
    th_check_calls(&r, TH_FIRST_ERROR, DCUDA_OK);
    th_check_calls(&r, TH_CALL_A, DCUDA_OK);
    th_close(&r);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "model", case_model },
        { "wrong_tag", case_wrong_tag },
        { "returned", case_returned },
        { "abort", case_abort },
        { "barrier_free", case_barrier_free },
        { "late_ack", case_late_ack },
        { "misuse", case_misuse },
        { "thread", case_thread },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
