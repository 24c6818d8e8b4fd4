/*
 * Host driver of the test of remote atomics:
 *   dcuda_test_atomics model [seed [runs]]
 *   dcuda_test_atomics misuse|net
 *
 * model: seeded runs of the plan in atomics.h (every rank's atomics on
 * drawn counters of drawn ranks: adds of distinct bits, swaps of values
 * of their own, compare-swap increments; some notified after a put); the
 * ranks check every fetched value and their counters' final values
 * against the plan, and notified payloads; the host checks their findings
 * and that every kind of op ran.
 *
 * misuse: a bad op, width, alignment, offset, operand, tag, window and
 * rank, each refused with its status, *fetched 0 and the word unchanged;
 * then a good add and a failing compare-swap. net: atomics on a rank
 * reached through the network path (a word not aligned there refused,
 * an add, a notified swap, a compare-swap) with the values they fetch and
 * leave.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomics.h"
#include "dcuda/dcuda_host.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(atomics);

typedef struct atom_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    atom_data_t d;
    test_words_t w; /* the ranks' findings (d.words) */
} atom_run_t;

/* Starts the runtime and the memory of case c; 0, or TEST_SKIP / 1. */
static int atom_open(atom_run_t *r, int argc, char **argv, int c)
{
    memset(r, 0, sizeof *r);
    if (!test_open_host(argc, argv, DCUDA_KERNEL_REF(atomics), ATOM_THREADS, &r->h, &r->info))
        return 1;
    r->d.test_case = c;
    r->d.part = ATOM_SLOTS + (uint64_t)r->info.rank_count * ATOM_OPS * ATOM_PAYLOAD;
    if (!test_words_alloc(&r->w, r->h, &r->info, ATOM_WORDS) ||
        !TEST_STATUS(dcuda_host_alloc(r->h, (size_t)r->w.n * r->d.part, (void **)&r->d.parts),
                     DCUDA_OK))
        return 1;
    r->d.words = r->w.ranks;
    return 0;
}

static void atom_close(atom_run_t *r)
{
    TEST_STATUS(dcuda_host_free(r->h, r->d.parts), DCUDA_OK);
    test_words_free(&r->w);
    TEST_STATUS(dcuda_host_finish(r->h), DCUDA_OK);
}

static const char *atom_bad_name(int64_t bad)
{
    static const char *const names[] = { "",
                                         "an add found its own bit set already",
                                         "an add missed a bit this rank added before",
                                         "a fetched value nobody stored",
                                         "a compare-swap loop never succeeded",
                                         "a notified op's payload was not there",
                                         "a counter's final value is not the plan's",
                                         "a refused call's fetched value is not 0",
                                         "an atomic fetched or changed a word outside the live "
                                         "window" };
    int what = (int)(bad % 100);
    return what > 0 && what < 9 ? names[what] : "?";
}

/* One seeded run of the model and the ranks' findings. */
static void atom_model_run(atom_run_t *r, uint32_t seed)
{
    r->d.seed = seed;
    test_words_clear(&r->w);
    if (!TEST_STATUS(dcuda_host_run(r->h, &r->d, sizeof r->d, NULL), DCUDA_OK))
        return;
    test_words_fetch(&r->w);
    int64_t done[4] = { 0, 0, 0, 0 };
    for (int dr = 0; dr < r->info.rank_responsible; dr++) {
        int rank = r->info.rank_start + dr;
        int64_t bad = test_words_get(&r->w, dr, ATOM_BAD);
        TEST_CHECK(test_words_get(&r->w, dr, ATOM_FIRST_ERROR) == 0,
                   "seed %u: rank %d: a call failed: %s", seed, rank,
                   dcuda_status_name((dcuda_status_t)test_words_get(&r->w, dr, ATOM_FIRST_ERROR)));
        TEST_CHECK(bad == 0, "seed %u: rank %d, step %lld: %s", seed, rank, (long long)(bad / 100),
                   atom_bad_name(bad));
        for (int k = 0; k < 4; k++)
            done[k] += test_words_get(&r->w, dr, ATOM_DONE + k);
    }
    printf("%sseed %u: %d ranks here of %d: %lld adds, %lld swaps, %lld compare-swap increments, "
           "%lld notified\n",
           test_who, seed, r->info.rank_responsible, r->info.rank_count, (long long)done[0],
           (long long)done[1], (long long)done[2], (long long)done[3]);
    /* Every kind ran somewhere (the plan draws enough of each with 4 ranks
     * or more in a process). */
    if (r->info.rank_responsible >= 4)
        for (int k = 0; k < 4; k++)
            TEST_CHECK(done[k] > 0, "seed %u: no op of kind %d ran", seed, k);
}

static int case_model(int argc, char **argv)
{
    atom_run_t r;
    uint32_t seed = (uint32_t)test_arg(argc, argv, 2, 1);
    long runs = test_arg(argc, argv, 3, 3);
    int rc = atom_open(&r, argc, argv, ATOM_MODEL);
    if (rc)
        return rc;
    for (long i = 0; i < runs && !test_failures; i++)
        atom_model_run(&r, seed + (uint32_t)i);
    atom_close(&r);
    return 0;
}

static int case_misuse(int argc, char **argv)
{
    atom_run_t r;
    setenv("DCUDA_ON_ERROR", "continue", 1);
    int rc = atom_open(&r, argc, argv, ATOM_MISUSE);
    if (rc)
        return rc;
    TEST_STATUS(dcuda_host_run(r.h, &r.d, sizeof r.d, NULL), DCUDA_ERR_INVALID_ARG); /* the first */
    test_words_fetch(&r.w);
    static const int64_t want[ATOM_CALL_WORDS] = {
        DCUDA_ERR_INVALID_ARG, /* op 7 */
        DCUDA_ERR_INVALID_ARG, /* width 2 */
        DCUDA_ERR_INVALID_ARG, /* offset 4 of an 8-byte word */
        DCUDA_ERR_BOUNDS,      /* offset at the part's end */
        DCUDA_ERR_INVALID_ARG, /* 2^32 into a 4-byte word */
        DCUDA_ERR_TAG,         /* tag 300 */
        DCUDA_ERR_WIN,         /* a window never created */
        DCUDA_ERR_RANK,        /* rank n */
        DCUDA_ERR_OVERFLOW,    /* an offset that wraps */
        DCUDA_OK,              /* 5 + 3 */
        DCUDA_OK,              /* compare 4 fails: nothing stored */
        8                      /* what it fetched */
    };
    char what[32];
    for (int i = 0; i < ATOM_CALL_WORDS; i++) {
        snprintf(what, sizeof what, "call %d", i);
        test_words_check(&r.w, ATOM_CALLS + i, want[i], what);
    }
    test_words_check(&r.w, ATOM_BAD, 0, "its finding");
    test_words_check(&r.w, ATOM_FIRST_ERROR, 0, "its calls' first error");
    atom_close(&r);
    return 0;
}

static int case_net(int argc, char **argv)
{
    atom_run_t r;
    setenv("DCUDA_ON_ERROR", "continue", 1);
    int rc = atom_open(&r, argc, argv, ATOM_NET);
    if (rc)
        return rc;
    if (!getenv("DCUDA_NET_FORCE") && !getenv("DCUDA_NET_LOOPBACK")) {
        atom_close(&r);
        printf(
            "SKIP: the net case needs the network path (DCUDA_NET_FORCE or DCUDA_NET_LOOPBACK)\n");
        return TEST_SKIP;
    }
    TEST_STATUS(dcuda_host_run(r.h, &r.d, sizeof r.d, NULL), DCUDA_ERR_INVALID_ARG); /* the first */
    test_words_fetch(&r.w);
    static const int64_t want[ATOM_CALL_WORDS] = {
        DCUDA_ERR_INVALID_ARG, /* offset 4 of an 8-byte word */
        DCUDA_OK,
        5, /* add 1: the start value */
        DCUDA_OK,
        9,        /* notified swap of 77 into the 4-byte word */
        DCUDA_OK, /* its notification */
        6,
        77, /* my counters once all are in */
        DCUDA_OK,
        6, /* compare 6, swap 100 */
        100,
        0 /* my counter after it */
    };
    char what[32];
    for (int i = 0; i < ATOM_CALL_WORDS; i++) {
        snprintf(what, sizeof what, "call %d", i);
        test_words_check(&r.w, ATOM_CALLS + i, want[i], what);
    }
    test_words_check(&r.w, ATOM_FIRST_ERROR, 0, "its calls' first error");
    atom_close(&r);
    return 0;
}

/* Atomics to the same rank across windows freed and made again over
 * other memory (atom_rewindow): every value fetched and left as counted. */
static int case_rewindow(int argc, char **argv)
{
    atom_run_t r;
    int rc = atom_open(&r, argc, argv, ATOM_REWINDOW);
    if (rc)
        return rc;
    if (TEST_STATUS(dcuda_host_run(r.h, &r.d, sizeof r.d, NULL), DCUDA_OK)) {
        test_words_fetch(&r.w);
        for (int dr = 0; dr < r.info.rank_responsible; dr++) {
            int64_t bad = test_words_get(&r.w, dr, ATOM_BAD);
            TEST_CHECK(bad == 0, "rank %d, step %lld: %s", r.info.rank_start + dr,
                       (long long)(bad / 100), atom_bad_name(bad));
        }
        test_words_check(&r.w, ATOM_DONE, ATOM_REWINDOW_STEPS, "its atomics");
        test_words_check(&r.w, ATOM_FIRST_ERROR, 0, "its calls' first error");
    }
    atom_close(&r);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "model", case_model },
        { "misuse", case_misuse },
        { "net", case_net },
        { "rewindow", case_rewindow },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
