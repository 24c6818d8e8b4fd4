/*
 * Host driver of the semantics suite: dcuda_test_semantics <case>. Each case
 * runs the semantics kernel (semantics_kernels.c), then checks the result
 * slots and the rank-visible buffer of every rank this process owns against
 * values computed here (from the WORLD size). The rank count comes from
 * DCUDA_RANKS (per process); every case works with >= 2 ranks, in one
 * process or several (DCUDA_PROCESSES, mpirun), each checking its ranks.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_rank.h"
#include "semantics.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(semantics);

/* Written by the host into result slots; ranks overwrite it. */
#define SEM_UNSET INT64_C(0x7e57000000000000)

typedef struct sem_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    int n;              /* ranks in WORLD */
    int first, end;     /* the WORLD ranks this process owns: [first, end) */
    sem_data_t d;       /* host copy of the user struct */
    unsigned char *buf; /* host mirror of d.buf */
    int64_t *res;       /* host mirror of d.res */
    size_t buf_bytes;
} sem_run_t;

/* Starts the runtime, allocates buf (filled with a canary pattern) and the
 * result slots. Returns 0, TEST_SKIP or 1. */
static int sem_open(sem_run_t *r, int argc, char **argv, int test_case, int iters)
{
    memset(r, 0, sizeof *r);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(semantics), 64, &r->h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(r->h, &r->info);
    test_check_rank_setting(&r->info);
    r->n = r->info.rank_count;
    r->first = test_first_rank(&r->info);
    r->end = test_end_rank(&r->info);
    if (!test_have_ranks(&r->info, 2, argv[1])) {
        TEST_STATUS(dcuda_host_finish(r->h), DCUDA_OK);
        return TEST_SKIP;
    }
    r->d.test_case = test_case;
    r->d.iters = iters;
    r->d.region = sem_region_bytes(test_case, r->n, iters);
    r->d.first = r->first;
    r->buf_bytes =
        (size_t)(sem_world_buffer(test_case) ? r->n : r->end - r->first) * (size_t)r->d.region;
    r->buf = malloc(r->buf_bytes);
    r->res = malloc((size_t)r->n * SEM_SLOTS * sizeof *r->res);
    if (!r->buf || !r->res ||
        !TEST_STATUS(dcuda_host_alloc(r->h, r->buf_bytes, (void **)&r->d.buf), DCUDA_OK) ||
        !TEST_STATUS(
            dcuda_host_alloc(r->h, (size_t)r->n * SEM_SLOTS * sizeof *r->res, (void **)&r->d.res),
            DCUDA_OK))
        return 1;
    uint32_t base = sem_world_buffer(test_case) ? 0u : (uint32_t)r->first;
    for (size_t i = 0; i < r->buf_bytes; i++)
        r->buf[i] = test_byte(0xca, base + (uint32_t)(i / r->d.region), i % r->d.region);
    return 0;
}

static void sem_close(sem_run_t *r)
{
    TEST_STATUS(dcuda_host_free(r->h, r->d.buf), DCUDA_OK);
    TEST_STATUS(dcuda_host_free(r->h, r->d.res), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(r->h), DCUDA_OK);
    free(r->buf);
    free(r->res);
}

/* Copies buf in, runs, copies buf and slots out. The run must return `want`
 * if `culprit` is -1 or a rank of this process; with a culprit elsewhere,
 * DCUDA_OK or `want` (see test_run_status_at). Returns 1 if it returned
 * `want`. */
static int sem_exec_by(sem_run_t *r, dcuda_status_t want, int culprit)
{
    size_t slots = (size_t)r->n * SEM_SLOTS;
    for (size_t i = 0; i < slots; i++)
        r->res[i] = SEM_UNSET;
    TEST_STATUS(dcuda_host_copy_in(r->h, r->d.buf, r->buf, r->buf_bytes), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_in(r->h, r->d.res, r->res, slots * sizeof *r->res), DCUDA_OK);
    double ms = 0;
    dcuda_status_t st = dcuda_host_run(r->h, &r->d, sizeof r->d, &ms);
    int good = TEST_RUN_STATUS(&r->info, st, want, culprit);
    if (st != DCUDA_OK)
        printf("%srun returned %s: %s\n", test_who, dcuda_status_name(st),
               dcuda_host_last_error(r->h));
    TEST_STATUS(dcuda_host_copy_out(r->h, r->buf, r->d.buf, r->buf_bytes), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_out(r->h, r->res, r->d.res, slots * sizeof *r->res), DCUDA_OK);
    return good;
}

static int sem_exec(sem_run_t *r, dcuda_status_t want) { return sem_exec_by(r, want, -1); }

static int64_t slot(const sem_run_t *r, int rank, int s) { return r->res[rank * SEM_SLOTS + s]; }

/* Every rank of this process: no failed call, no failed check, exactly
 * `checked(rank)` checks made. */
static void sem_check_ranks(const sem_run_t *r, int64_t (*checked)(const sem_run_t *, int))
{
    for (int k = r->first; k < r->end; k++) {
        TEST_CHECK(slot(r, k, SEM_RES_STATUS) == 0, "rank %d: a call failed with %s", k,
                   dcuda_status_name((dcuda_status_t)slot(r, k, SEM_RES_STATUS)));
        TEST_CHECK(slot(r, k, SEM_RES_BAD) == 0,
                   "rank %d: %" PRId64 " checks failed, first at %" PRId64, k,
                   slot(r, k, SEM_RES_BAD), slot(r, k, SEM_RES_FIRST_BAD));
        TEST_CHECK(slot(r, k, SEM_RES_CHECKED) == checked(r, k),
                   "rank %d: made %" PRId64 " checks, expected %" PRId64, k,
                   slot(r, k, SEM_RES_CHECKED), checked(r, k));
    }
}

/* WORLD rank `rank`'s region in this process's buffer: one of its own
 * ranks (or any rank in the cases of sem_world_buffer). */
static unsigned char *part(const sem_run_t *r, int rank)
{
    int held = sem_world_buffer(r->d.test_case) || (rank >= r->first && rank < r->end);
    TEST_CHECK(held, "rank %d's region is not held by this process", rank);
    return held ? r->buf + sem_region_index(&r->d, rank) * r->d.region : r->buf;
}
static int prev(const sem_run_t *r, int rank) { return (rank + r->n - 1) % r->n; }

/* Host-side comparisons; each counts one failure at most. */
static void expect_bytes(const unsigned char *p, uint64_t first, uint64_t n, uint32_t a, uint32_t b,
                         const char *what, int rank)
{
    for (uint64_t i = 0; i < n; i++)
        if (p[i] != test_byte(a, b, first + i)) {
            TEST_CHECK(0, "rank %d: %s: byte %" PRIu64 " is %u, expected %u", rank, what, i, p[i],
                       test_byte(a, b, first + i));
            return;
        }
}

static void expect_words(const unsigned char *p, uint64_t lo, uint64_t hi, uint32_t a, uint32_t b,
                         const char *what, int rank)
{
    const uint64_t *w = (const uint64_t *)p;
    for (uint64_t i = lo; i < hi; i++)
        if (w[i] != test_word(a, b, i)) {
            TEST_CHECK(0, "rank %d: %s: word %" PRIu64 " wrong", rank, what, i);
            return;
        }
}

/* ---- cases ------------------------------------------------------------ */

#define VIS_ITERS 24
static int64_t vis_checked(const sem_run_t *r, int k)
{
    (void)k;
    return (int64_t)r->d.iters * SEM_VIS_BYTES + 1;
}
static int run_visibility(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_VISIBILITY, VIS_ITERS);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, vis_checked);
    for (int k = r.first; k < r.end; k++) {
        expect_bytes(part(&r, k), 0, SEM_VIS_BYTES, (uint32_t)prev(&r, k), VIS_ITERS - 1,
                     "received", k);
        expect_bytes(part(&r, k) + SEM_VIS_BYTES, 0, SEM_VIS_BYTES, (uint32_t)k, VIS_ITERS - 1,
                     "sent", k);
    }
    sem_close(&r);
    return 0;
}

/* Same as visibility, but the receiver signals "buffer consumed" with
 * dcuda_notify: ThreadSanitizer shows whether that orders its reads before
 * the sender's next put. */
#define ACK_ITERS 64
static int64_t ack_checked(const sem_run_t *r, int k)
{
    (void)k;
    return (int64_t)r->d.iters * SEM_ACK_BYTES + 1;
}
static int run_ack(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_ACK, ACK_ITERS);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, ack_checked);
    for (int k = r.first; k < r.end; k++)
        expect_bytes(part(&r, k), 0, SEM_ACK_BYTES, (uint32_t)prev(&r, k), ACK_ITERS - 1,
                     "received", k);
    sem_close(&r);
    return 0;
}

#define NR_ITERS 64
static int64_t nr_checked(const sem_run_t *r, int k)
{
    (void)k;
    return r->d.iters + 2;
}
static int run_notify_release(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_NOTIFY_RELEASE, NR_ITERS);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, nr_checked);
    for (int k = r.first; k < r.end; k++)
        expect_words(part(&r, k), 0, NR_ITERS, (uint32_t)prev(&r, k), 12, "received", k);
    sem_close(&r);
    return 0;
}

#define MIX_ROUNDS 3
static int64_t mix_checked(const sem_run_t *r, int k)
{
    (void)k;
    return (int64_t)r->d.iters * (SEM_MIX_ZONE + SEM_MIX_DATA) + 1;
}
static int run_mix(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_MIX, MIX_ROUNDS);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, mix_checked);
    /* The last round's largest put, seen from the host too. */
    uint64_t last = SEM_MIX_ROUND * (MIX_ROUNDS - 1) + SEM_MIX_ZONE + SEM_MIX_DATA - 70000u;
    for (int k = r.first; k < r.end; k++)
        expect_bytes(part(&r, k) + last, sem_mix_src(MIX_ROUNDS - 1, SEM_MIX_SIZES - 1), 70000u,
                     (uint32_t)prev(&r, k), 7, "the last round's largest put", k);
    sem_close(&r);
    return 0;
}

#define BURST_ROUNDS 3
static int64_t burst_checked(const sem_run_t *r, int k)
{
    (void)k;
    /* per round: the last few of each wait (1, 1+2, 1+2+3, then four
     * puts), then the whole burst; one test at the end */
    int64_t each = 0, all = 0;
    for (uint64_t i = 0; i < SEM_BURST_PUTS; i++) {
        for (uint64_t j = i < 3 ? 0 : i - 3; j <= i; j++)
            each += (int64_t)(1u + j % SEM_BURST_SPAN);
        all += (int64_t)(1u + i % SEM_BURST_SPAN);
    }
    return (int64_t)r->d.iters * (each + all) + 1;
}
static int run_burst(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_BURST, BURST_ROUNDS);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, burst_checked);
    /* The last round's last put, seen from the host too. */
    uint64_t last = (SEM_BURST_PUTS - 1u) * SEM_BURST_SPAN;
    for (int k = r.first; k < r.end; k++)
        expect_bytes(part(&r, k) + last, last, 1u + (SEM_BURST_PUTS - 1u) % SEM_BURST_SPAN,
                     (uint32_t)prev(&r, k), 20u + BURST_ROUNDS - 1u, "the last round's last put",
                     k);
    sem_close(&r);
    return 0;
}

#define STALE_ROUNDS 200
static int64_t stale_checked(const sem_run_t *r, int k)
{
    (void)k;
    return (int64_t)r->d.iters * SEM_STALE_BYTES + 1;
}
static int run_stale(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_STALE, STALE_ROUNDS);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, stale_checked);
    /* The last round's newer bytes, seen from the host too. */
    for (int k = r.first; k < r.end; k++)
        expect_bytes(part(&r, k), 0, SEM_STALE_BYTES, (uint32_t)prev(&r, k),
                     41u + 2u * (STALE_ROUNDS - 1u), "the last round's second put", k);
    sem_close(&r);
    return 0;
}

#define TINY_ROUNDS 4
static int64_t tiny_checked(const sem_run_t *r, int k)
{
    (void)k;
    int64_t bytes = 0;
    for (uint64_t i = 0; i < SEM_TINY_PUTS; i++)
        bytes += (int64_t)sem_tiny_size(i);
    return (int64_t)r->d.iters * bytes + 1;
}
static int run_tiny(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_TINY, TINY_ROUNDS);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, tiny_checked);
    /* Every put of every round, seen from the host too. */
    for (int k = r.first; k < r.end; k++)
        for (uint64_t put = 0; put < (uint64_t)TINY_ROUNDS * SEM_TINY_PUTS; put++) {
            uint64_t i = put % SEM_TINY_PUTS, skew = sem_tiny_skew(i);
            expect_bytes(part(&r, k) + put * SEM_TINY_SLOT + skew, skew, sem_tiny_size(i),
                         (uint32_t)prev(&r, k), 30u + (uint32_t)put, "a tiny put", k);
        }
    sem_close(&r);
    return 0;
}

static int64_t large_checked(const sem_run_t *r, int k)
{
    (void)r;
    (void)k;
    return 2 * (int64_t)SEM_LARGE_BYTES;
}
static int run_large(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_LARGE, 1);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, large_checked);
    /* The second put's last bytes, seen from the host too. */
    for (int k = r.first; k < r.end; k++)
        expect_bytes(part(&r, k) + 2u * SEM_LARGE_BYTES - 4096u, 1u + SEM_LARGE_BYTES - 4096u,
                     4096u, (uint32_t)prev(&r, k), 9, "the end of the second large put", k);
    sem_close(&r);
    return 0;
}

static int64_t gets_checked(const sem_run_t *r, int k)
{
    (void)r;
    (void)k;
    return (int64_t)SEM_GETS_COUNT * (int64_t)SEM_GETS_BYTES;
}
static int run_gets(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_GETS, 1);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, gets_checked);
    sem_close(&r);
    return 0;
}

#define ORDER_ITERS 48
static int64_t order_checked(const sem_run_t *r, int k)
{
    (void)k;
    int64_t n = r->d.iters;
    return n * (n + 1) / 2 + SEM_ORDER_ROUNDS * SEM_ORDER_MSGS + 2;
}
static int run_order(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_ORDER, ORDER_ITERS);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, order_checked);
    for (int k = r.first; k < r.end; k++) {
        expect_words(part(&r, k), 0, ORDER_ITERS, (uint32_t)prev(&r, k), 1, "notified slots", k);
        expect_words(part(&r, k) + 8 * ORDER_ITERS, 0, SEM_ORDER_ROUNDS * SEM_ORDER_MSGS,
                     (uint32_t)prev(&r, k), 2, "plain-put slots", k);
    }
    sem_close(&r);
    return 0;
}

static int64_t tags_checked(const sem_run_t *r, int k)
{
    (void)r, (void)k;
    return (DCUDA_TAG_COUNT - 1) + 2 + 3 + 2 + DCUDA_TAG_COUNT;
}
static int run_tags(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_TAGS, 1);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, tags_checked);
    sem_close(&r);
    return 0;
}

#define MANY_ITERS 40
static int64_t many_checked(const sem_run_t *r, int k)
{
    return k == r->n / 2 ? (int64_t)r->n * r->d.iters + 2 : 1;
}
static int run_many(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_MANY, MANY_ITERS);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, many_checked);
    const uint64_t *slots =
        test_owns(&r.info, r.n / 2) ? (const uint64_t *)part(&r, r.n / 2) : NULL;
    for (uint64_t j = 0; slots && j < (uint64_t)r.n * MANY_ITERS; j++)
        if (slots[j] != test_word((uint32_t)(j / MANY_ITERS), 3, j % MANY_ITERS)) {
            TEST_CHECK(0, "target slot %" PRIu64 " (from rank %" PRIu64 ") wrong", j,
                       j / MANY_ITERS);
            break;
        }
    sem_close(&r);
    return 0;
}

#define WRAP_ITERS 300
static int64_t wrap_checked(const sem_run_t *r, int k)
{
    (void)k;
    return 3 * (int64_t)r->d.iters + 3;
}
static int run_wrap(int argc, char **argv)
{
    /* 2^32 - 256: every counter crosses 2^32 after 256 notifications. */
    const uint32_t start = (uint32_t)((UINT64_C(1) << 32) - 256);
    char text[32];
    snprintf(text, sizeof text, "%" PRIu32, start);
    setenv("DCUDA_NOTIF_START", text, 1);
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_WRAP, WRAP_ITERS);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, wrap_checked);
    for (int k = r.first; k < r.end; k++) {
        uint32_t before = (uint32_t)slot(&r, k, SEM_RES_A),
                 after = (uint32_t)slot(&r, k, SEM_RES_B);
        TEST_CHECK(before == start, "rank %d: counters started at %" PRIu32 ", not %" PRIu32, k,
                   before, start);
        TEST_CHECK(after == (uint32_t)(start + WRAP_ITERS) && after < before,
                   "rank %d: consumed count %" PRIu32 " after %d from %" PRIu32 " did not wrap", k,
                   after, WRAP_ITERS, before);
        expect_words(part(&r, k), 0, SEM_WRAP_TAGS * WRAP_ITERS, (uint32_t)prev(&r, k), 4,
                     "received", k);
    }
    sem_close(&r);
    return 0;
}

static int64_t overlap_checked(const sem_run_t *r, int k)
{
    (void)r, (void)k;
    return SEM_OV_BYTES + 3;
}
static int run_overlap(int argc, char **argv)
{
    const uint64_t q = SEM_OV_BYTES / 4;
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_OVERLAP, 1);
    if (rc)
        return rc;
    for (int k = 0; k < r.n; k++)
        for (uint64_t i = 0; i < SEM_OV_BYTES; i++)
            part(&r, k)[i] = i < q ? test_byte((uint32_t)k, 5, i) : test_byte((uint32_t)k, 6, i);
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, overlap_checked);
    /* Every chunk of this process's buffer: quarter 0 as written; quarter 1
     * holds quarter 0 if the WORLD put of the chunk's rank landed here (its
     * right neighbour is mine); quarter 2 if the chunk's rank is mine (its
     * DEVICE put); the rest as written. With one process: quarters 0-2 of
     * every chunk hold quarter 0. */
    for (int k = 0; k < r.n; k++) {
        int world_here = test_owns(&r.info, (k + 1) % r.n), device_here = test_owns(&r.info, k);
        expect_bytes(part(&r, k), 0, q, (uint32_t)k, 5, "quarter 0", k);
        if (world_here)
            expect_bytes(part(&r, k) + q, 0, q, (uint32_t)k, 5, "quarter 1 (WORLD put)", k);
        else
            expect_bytes(part(&r, k) + q, q, q, (uint32_t)k, 6, "quarter 1 (no put here)", k);
        if (device_here)
            expect_bytes(part(&r, k) + 2 * q, 0, q, (uint32_t)k, 5, "quarter 2 (DEVICE put)", k);
        else
            expect_bytes(part(&r, k) + 2 * q, 2 * q, q, (uint32_t)k, 6, "quarter 2 (no put here)",
                         k);
        expect_bytes(part(&r, k) + 3 * q, 3 * q, q, (uint32_t)k, 6, "untouched quarter", k);
    }
    sem_close(&r);
    return 0;
}

#define FLUSH_ITERS 8
static int64_t flush_checked(const sem_run_t *r, int k)
{
    (void)k;
    return (int64_t)r->d.iters * 2 * SEM_FLUSH_BYTES + 2;
}
static int run_flush(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_FLUSH, FLUSH_ITERS);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, flush_checked);
    for (int k = r.first; k < r.end; k++) {
        uint32_t from = (uint32_t)prev(&r, k), last = 2 * (FLUSH_ITERS - 1);
        expect_bytes(part(&r, k), 0, SEM_FLUSH_BYTES, from, last, "pre-flush data", k);
        expect_bytes(part(&r, k) + SEM_FLUSH_BYTES, 0, SEM_FLUSH_BYTES, from, last + 1,
                     "post-flush data", k);
    }
    sem_close(&r);
    return 0;
}

#define BARRIER_ITERS 200
static int64_t barrier_checked(const sem_run_t *r, int k)
{
    (void)k;
    /* the slots of my device every round, a notification test every WORLD round */
    return (int64_t)r->d.iters * r->info.rank_responsible + (r->d.iters + 1) / 2;
}
static int run_barrier(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_BARRIER, BARRIER_ITERS);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, barrier_checked);
    /* The last two rounds: WORLD (slots of my ranks by WORLD rank), then
     * DEVICE (by DEVICE rank). */
    const uint64_t *rows = (const uint64_t *)r.buf;
    for (int round = BARRIER_ITERS - 2; round < BARRIER_ITERS; round++) {
        int world = round % 2 == 0, first = world ? r.first : 0;
        for (int j = first; j < first + r.info.rank_responsible; j++)
            TEST_CHECK(rows[(round % 2) * r.n + j] == test_word((uint32_t)j, 7, (uint64_t)round),
                       "round %d (%s) slot %d wrong", round, world ? "WORLD" : "DEVICE", j);
    }
    sem_close(&r);
    return 0;
}

static int64_t size0_checked(const sem_run_t *r, int k)
{
    (void)r;
    return k % 2 ? SEM_ZERO_BYTES + 1 : 1;
}
static int run_size0(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_SIZE0, 1);
    if (rc)
        return rc;
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, size0_checked);
    for (int k = r.first; k < r.end; k++) {
        if (k % 2)
            expect_bytes(part(&r, k), 0, SEM_ZERO_BYTES, (uint32_t)prev(&r, k), 8, "received", k);
        else /* the empty part's memory keeps the host's canary */
            expect_bytes(part(&r, k), 0, SEM_ZERO_BYTES, 0xca, (uint32_t)k,
                         "memory behind an empty part", k);
    }
    sem_close(&r);
    return 0;
}

#define RING_ITERS 4
static int64_t ring_checked(const sem_run_t *r, int k)
{
    return r->d.iters + 1 + (k == 0 ? r->n + 1 : 0);
}
static int run_ring(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_RING, RING_ITERS);
    if (rc)
        return rc;
    printf("ring and all-to-one with %d ranks\n", r.n);
    sem_exec(&r, DCUDA_OK);
    sem_check_ranks(&r, ring_checked);
    const uint64_t *all = test_owns(&r.info, 0) ? (const uint64_t *)part(&r, 0) + RING_ITERS : NULL;
    for (int j = 0; all && j < r.n; j++)
        TEST_CHECK(all[j] == test_word((uint32_t)j, 9, RING_ITERS), "rank 0: slot of rank %d wrong",
                   j);
    for (int k = r.first; k < r.end; k++)
        expect_words(part(&r, k), 0, RING_ITERS, (uint32_t)prev(&r, k), 9, "ring slots", k);
    sem_close(&r);
    return 0;
}

#define WINDOWS_ITERS 100
static int64_t windows_checked(const sem_run_t *r, int k)
{
    (void)k;
    int64_t sum = 1;
    for (int it = 0; it < r->d.iters; it++)
        sum += 1 + it % SEM_WIN_MAXLIVE;
    return sum;
}
static int run_windows(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_WINDOWS, WINDOWS_ITERS);
    if (rc)
        return rc;
    /* Rank 0 uses stale handles: the run reports DCUDA_ERR_WIN (in rank 0's
     * process; others may pass it on). */
    int reported = sem_exec_by(&r, DCUDA_ERR_WIN, 0);
    sem_check_ranks(&r, windows_checked);
    TEST_CHECK(windows_checked(&r, 0) - 1 > DCUDA_MAX_WINDOWS, "too few windows to reuse slots");
    if (!test_owns(&r.info, 0)) {
        const char *err = dcuda_host_last_error(r.h);
        if (reported) {
            TEST_CONTAINS(err, "rank 0:");
            TEST_CONTAINS(err, "dcuda_put");
        }
        sem_close(&r);
        return 0;
    }
    TEST_STATUS(slot(&r, 0, SEM_RES_A), DCUDA_ERR_WIN);
    TEST_STATUS(slot(&r, 0, SEM_RES_B), DCUDA_ERR_WIN);
    TEST_STATUS(slot(&r, 0, SEM_RES_C), DCUDA_ERR_WIN);
    uint32_t first = (uint32_t)slot(&r, 0, SEM_RES_D), stale = (uint32_t)slot(&r, 0, SEM_RES_E);
    uint32_t fresh = (uint32_t)slot(&r, 0, SEM_RES_F);
    uint32_t slot_mask = (1u << DCUDA_WIN_SLOT_BITS) - 1u;
    TEST_CHECK((stale & slot_mask) == (fresh & slot_mask) && stale != fresh,
               "stale 0x%08x and fresh 0x%08x should share a slot", stale, fresh);
    char want[64];
    snprintf(want, sizeof want, "0x%08x", first);
    const char *err = dcuda_host_last_error(r.h);
    TEST_CONTAINS(err, "rank 0:");
    TEST_CONTAINS(err, "dcuda_put");
    TEST_CONTAINS(err, want);
    sem_close(&r);
    return 0;
}

static int64_t user_checked(const sem_run_t *r, int k)
{
    (void)r, (void)k;
    return 0;
}
static int run_user(int argc, char **argv)
{
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_USER, 1);
    if (rc)
        return rc;
    const int pairs[] = { 3, DCUDA_MAX_TIMERS, 0 };
    uint64_t in = (uint64_t)getpid() * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)time(NULL);
    for (int run = 0; run < 3; run++) {
        sem_data_t before;
        in = in * UINT64_C(6364136223846793005) + 1442695040888963407u;
        r.d.user_in = in;
        r.d.user_out = 0;
        r.d.ranks_seen = r.d.first_seen = r.d.device_seen = -1;
        r.d.timer_pairs = pairs[run];
        before = r.d;
        sem_exec(&r, DCUDA_OK);
        sem_check_ranks(&r, user_checked);
        TEST_CHECK(r.d.user_out == in * 3u + (uint64_t)r.n, "run %d: user_out not copied back",
                   run);
        TEST_CHECK(r.d.ranks_seen == r.n, "run %d: ranks_seen %d", run, r.d.ranks_seen);
        TEST_CHECK(r.d.first_seen == r.first && r.d.device_seen == r.info.rank_responsible,
                   "run %d: DEVICE rank 0 is WORLD rank %d of %d on DEVICE, expected %d of %d", run,
                   r.d.first_seen, r.d.device_seen, r.first, r.info.rank_responsible);
        TEST_CHECK(r.d.user_in == before.user_in && r.d.buf == before.buf &&
                       r.d.res == before.res && r.d.timer_pairs == before.timer_pairs &&
                       r.d.test_case == before.test_case,
                   "run %d: fields the ranks did not write changed", run);
        uint64_t acc = in;
        for (int p = 0; p < pairs[run]; p++)
            for (int i = 0; i < 1000; i++)
                acc = test_mix((uint32_t)acc + (uint32_t)i);
        for (int k = r.first; k < r.end; k++) {
            TEST_CHECK((uint64_t)slot(&r, k, SEM_RES_A) == in,
                       "run %d rank %d: saw other user data", run, k);
            TEST_CHECK((uint64_t)slot(&r, k, SEM_RES_B) == acc, "run %d rank %d: timed work wrong",
                       run, k);
        }
        const double *t = NULL;
        int count = -1;
        TEST_STATUS(dcuda_host_get_timings(r.h, &t, &count), DCUDA_OK);
        TEST_CHECK(count == pairs[run], "run %d: %d timings, expected %d", run, count, pairs[run]);
    }
    sem_close(&r);
    return 0;
}

/* The status named `name` (0 if this build has none). */
static dcuda_status_t status_named(const char *name)
{
    for (int v = -1; v >= -64; v--)
        if (strcmp(dcuda_status_name((dcuda_status_t)v), name) == 0)
            return (dcuda_status_t)v;
    return DCUDA_OK;
}

/* Several processes only: the last one dies (_exit(3), no dcuda_host_finish)
 * after dcuda_host_init; the others' run must end with DCUDA_ERR_PEER rather
 * than hang with their ranks waiting for its ranks. The program's exit
 * status is then 1 (a process died), so ctest judges this case by its
 * output: PASSED from a surviving process, no FAIL from any. */
static int run_peer_exit(int argc, char **argv)
{
    dcuda_status_t peer = status_named("DCUDA_ERR_PEER");
    if (peer == DCUDA_OK) {
        printf("SKIP peer_exit: this build of dcuda has no DCUDA_ERR_PEER\n");
        return TEST_SKIP;
    }
    sem_run_t r;
    int rc = sem_open(&r, argc, argv, SEM_RING, RING_ITERS);
    if (rc)
        return rc;
    if (r.info.process_count < 2) {
        printf("SKIP peer_exit: needs several processes (DCUDA_PROCESSES), have 1\n");
        sem_close(&r);
        return TEST_SKIP;
    }
    if (r.info.process_index == r.info.process_count - 1) {
        printf("%sdying without dcuda_host_finish\n", test_who);
        fflush(stdout);
        _exit(3);
    }
    double ms = 0;
    dcuda_status_t st = dcuda_host_run(r.h, &r.d, sizeof r.d, &ms);
    printf("%srun returned %s after %.0f ms: %s\n", test_who, dcuda_status_name(st), ms,
           dcuda_host_last_error(r.h));
    TEST_STATUS(st, peer);
    dcuda_status_t fin = dcuda_host_finish(r.h);
    TEST_CHECK(fin == DCUDA_OK || fin == peer, "dcuda_host_finish returned %s",
               dcuda_status_name(fin));
    free(r.buf);
    free(r.res);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "visibility", run_visibility },
        { "order", run_order },
        { "tags", run_tags },
        { "many", run_many },
        { "wrap", run_wrap },
        { "overlap", run_overlap },
        { "flush", run_flush },
        { "barrier", run_barrier },
        { "size0", run_size0 },
        { "ranks256", run_ring },
        { "windows", run_windows },
        { "user", run_user },
        { "ack", run_ack },
        { "notify_release", run_notify_release },
        { "mix", run_mix },
        { "large", run_large },
        { "gets", run_gets },
        { "burst", run_burst },
        { "tiny", run_tiny },
        { "stale", run_stale },
        { "peer_exit", run_peer_exit },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
