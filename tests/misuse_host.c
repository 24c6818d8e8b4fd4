/*
 * Host driver of the misuse suite: dcuda_test_misuse <case>. Each rank-side
 * case runs several probes (one kernel run each, misuse_kernels.c): the
 * offending call must return its documented status, dcuda_host_run must
 * return that status, dcuda_host_last_error must name the call and the
 * offending value, and no byte of rank memory may change. Host-side cases
 * check the host API's own argument and setting errors. With several
 * processes, each checks its own ranks and memory; the process of rank 0
 * (which makes the offending call unless the probe is collective) checks the
 * call and its report, the others that their run succeeded or passed the
 * error on. Probe lists depend only on what every process knows alike.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_rank.h" /* DCUDA_COMM_WORLD, DCUDA_COMM_DEVICE */
#include "misuse.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(misuse);
DCUDA_KERNEL_DECLARE(misuse_before_init);

#define MIS_UNSET INT64_C(0x7e57000000000000)

/* What a probe must produce. `value` names a result slot value the report
 * must contain: none, a window handle or a state address. */
enum { VAL_NONE, VAL_HANDLE, VAL_STATE };
typedef struct mis_expect {
    mis_probe_t probe;
    dcuda_status_t status;
    const char *call; /* "dcuda_put" etc. */
    char detail[200]; /* another substring of the report */
    int value;
    int collective; /* every rank makes the call */
} mis_expect_t;

typedef struct mis_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    int n;          /* ranks in WORLD */
    int first, end; /* the WORLD ranks this process owns: [first, end) */
    int dsize;      /* ranks in DEVICE (of this process) */
    mis_data_t d;
    unsigned char *buf, *shared;
    int64_t *res;
    size_t buf_bytes;
} mis_run_t;

static unsigned char canary(size_t i) { return test_byte(0xbad, 0xca, i); }

static int mis_open(mis_run_t *r, int argc, char **argv, dcuda_kernel_t kernel)
{
    memset(r, 0, sizeof *r);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, kernel, 64, &r->h), DCUDA_OK))
        return 1;
    TEST_STATUS(dcuda_host_get_rank_info(r->h, &r->info), DCUDA_OK);
    test_check_rank_setting(&r->info);
    r->n = r->info.rank_count;
    r->first = test_first_rank(&r->info);
    r->end = test_end_rank(&r->info);
    r->dsize = r->info.rank_responsible;
    if (!test_have_ranks(&r->info, 2, argv[1])) {
        TEST_STATUS(dcuda_host_finish(r->h), DCUDA_OK);
        return TEST_SKIP;
    }
    r->buf_bytes = (size_t)r->n * MIS_REGION;
    r->buf = malloc(r->buf_bytes);
    r->shared = malloc(MIS_SHARED_BYTES);
    r->res = malloc((size_t)r->n * MIS_SLOTS * sizeof *r->res);
    if (!r->buf || !r->shared || !r->res ||
        !TEST_STATUS(dcuda_host_alloc(r->h, r->buf_bytes, (void **)&r->d.buf), DCUDA_OK) ||
        !TEST_STATUS(dcuda_host_alloc(r->h, MIS_SHARED_BYTES, (void **)&r->d.shared), DCUDA_OK) ||
        !TEST_STATUS(
            dcuda_host_alloc(r->h, (size_t)r->n * MIS_SLOTS * sizeof *r->res, (void **)&r->d.res),
            DCUDA_OK))
        return 1;
    return 0;
}

static void mis_close(mis_run_t *r)
{
    TEST_STATUS(dcuda_host_free(r->h, r->d.buf), DCUDA_OK);
    TEST_STATUS(dcuda_host_free(r->h, r->d.shared), DCUDA_OK);
    TEST_STATUS(dcuda_host_free(r->h, r->d.res), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(r->h), DCUDA_OK);
    free(r->buf);
    free(r->shared);
    free(r->res);
}

static int64_t res(const mis_run_t *r, int rank, int s) { return r->res[rank * MIS_SLOTS + s]; }

/* One run: canaries in, run, expect `want` (from the process of `culprit`,
 * -1: from every process; see test_run_status_at), canaries unchanged.
 * Returns 1 if the run returned `want`. */
static int mis_exec(mis_run_t *r, dcuda_status_t want, int culprit, const char *what)
{
    size_t slots = (size_t)r->n * MIS_SLOTS;
    for (size_t i = 0; i < r->buf_bytes; i++)
        r->buf[i] = canary(i);
    for (size_t i = 0; i < MIS_SHARED_BYTES; i++)
        r->shared[i] = canary(r->buf_bytes + i);
    for (size_t i = 0; i < slots; i++)
        r->res[i] = MIS_UNSET;
    TEST_STATUS(dcuda_host_copy_in(r->h, r->d.buf, r->buf, r->buf_bytes), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_in(r->h, r->d.shared, r->shared, MIS_SHARED_BYTES), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_in(r->h, r->d.res, r->res, slots * sizeof *r->res), DCUDA_OK);
    int failures = test_failures;
    dcuda_status_t st = dcuda_host_run(r->h, &r->d, sizeof r->d, NULL);
    int reported = TEST_RUN_STATUS(&r->info, st, want, culprit);
    if (test_failures != failures)
        fprintf(stderr, "     (%s)\n", what);
    TEST_STATUS(dcuda_host_copy_out(r->h, r->buf, r->d.buf, r->buf_bytes), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_out(r->h, r->shared, r->d.shared, MIS_SHARED_BYTES), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_out(r->h, r->res, r->d.res, slots * sizeof *r->res), DCUDA_OK);
    size_t i = 0;
    while (i < r->buf_bytes && r->buf[i] == canary(i))
        i++;
    TEST_CHECK(i == r->buf_bytes, "%s: rank memory changed at byte %zu (rank %zu)", what, i,
               i / MIS_REGION);
    i = 0;
    while (i < MIS_SHARED_BYTES && r->shared[i] == canary(r->buf_bytes + i))
        i++;
    TEST_CHECK(i == MIS_SHARED_BYTES, "%s: shared buffer changed at byte %zu", what, i);
    return reported;
}

/* Runs every probe of a case: status, report and untouched memory. The
 * report is checked where the run returned the error; the detail and the
 * value (which name rank 0's part, device and state) in rank 0's process. */
static void run_probes(mis_run_t *r, const mis_expect_t *e, int count)
{
    for (int k = 0; k < count; k++, e++) {
        char what[300];
        snprintf(what, sizeof what, "probe %d: %s ... %s", k, e->call, e->detail);
        r->d.probe = e->probe;
        int reported = mis_exec(r, e->status, e->collective ? -1 : 0, what);
        for (int rank = r->first; rank < r->end; rank++) {
            TEST_CHECK(res(r, rank, MIS_RES_SETUP) == 0, "%s: rank %d: a setup call failed: %s",
                       what, rank, dcuda_status_name((dcuda_status_t)res(r, rank, MIS_RES_SETUP)));
            if (rank == 0 || e->collective)
                if (!TEST_STATUS(res(r, rank, MIS_RES_CALL), e->status))
                    fprintf(stderr, "     (%s, rank %d)\n", what, rank);
        }
        if (!reported)
            continue;
        const char *err = dcuda_host_last_error(r->h);
        char call[64], value[64] = "";
        snprintf(call, sizeof call, "%s: ", e->call);
        if (e->value == VAL_HANDLE)
            snprintf(value, sizeof value, "window 0x%08x", (unsigned)res(r, 0, MIS_RES_VALUE));
        else if (e->value == VAL_STATE)
            snprintf(value, sizeof value, "state %p", (void *)(uintptr_t)res(r, 0, MIS_RES_VALUE));
        if (!e->collective)
            TEST_CONTAINS(err, "rank 0: ");
        TEST_CONTAINS(err, call);
        if (!e->collective && !test_owns(&r->info, 0))
            continue;
        TEST_CONTAINS(err, e->detail);
        if (value[0])
            TEST_CONTAINS(err, value);
    }
}

/* Shorthands for building probes. */
static mis_probe_t put(int op, int win, int rank, uint64_t offset, uint64_t size, int src,
                       uint64_t src_off, int tag)
{
    mis_probe_t p = { 0 };
    p.op = op;
    p.win = win;
    p.rank = rank;
    p.offset = offset;
    p.size = size;
    p.src = src;
    p.src_off = src_off;
    p.tag = tag;
    return p;
}

static mis_probe_t call(int op, int rank, int comm, int tag, int count, int win)
{
    mis_probe_t p = { 0 };
    p.op = op;
    p.rank = rank;
    p.comm = comm;
    p.tag = tag;
    p.count = count;
    p.win = win;
    return p;
}

#define MAX_PROBES 24

#define EXPECT(list, n, pr, st, name, ...)                                                         \
    do {                                                                                           \
        if ((n) >= MAX_PROBES) {                                                                   \
            fprintf(stderr, "misuse: a case lists more than %d probes\n", MAX_PROBES);             \
            abort();                                                                               \
        }                                                                                          \
        mis_expect_t *x_ = &(list)[(n)++];                                                         \
        memset(x_, 0, sizeof *x_);                                                                 \
        x_->probe = (pr);                                                                          \
        x_->status = (st);                                                                         \
        x_->call = (name);                                                                         \
        snprintf(x_->detail, sizeof x_->detail, __VA_ARGS__);                                      \
    } while (0)

/* Opens the runtime, lets `build` list the probes, runs them. */
static int probe_case(int argc, char **argv, int (*build)(const mis_run_t *, mis_expect_t *))
{
    mis_run_t r;
    mis_expect_t e[MAX_PROBES];
    int rc = mis_open(&r, argc, argv, DCUDA_KERNEL_REF(misuse));
    if (rc)
        return rc;
    run_probes(&r, e, build(&r, e));
    mis_close(&r);
    return 0;
}

static const char *PUT = "dcuda_put", *PUTN = "dcuda_put_notify", *NOTIFY = "dcuda_notify";
static const char *WAIT = "dcuda_wait_notifications", *TEST = "dcuda_test_notifications";

static int build_rank(const mis_run_t *r, mis_expect_t *e)
{
    int k = 0, n = r->n, dn = r->dsize; /* dn: of this process; rank 0's process checks */
    EXPECT(e, k, put(MIS_PUT, MW_WORLD, -1, 0, 8, MS_SOURCE, 0, 0), DCUDA_ERR_RANK, PUT,
           "target rank -1 not in 0..%d of WORLD", n - 1);
    EXPECT(e, k, put(MIS_PUT, MW_WORLD, n, 0, 8, MS_SOURCE, 0, 0), DCUDA_ERR_RANK, PUT,
           "target rank %d not in 0..%d of WORLD", n, n - 1);
    EXPECT(e, k, put(MIS_PUT_NOTIFY, MW_WORLD, n + 5, 0, 8, MS_SOURCE, 0, 0), DCUDA_ERR_RANK, PUTN,
           "target rank %d not in", n + 5);
    EXPECT(e, k, put(MIS_PUT, MW_DEVICE, n, 0, 8, MS_DEVPART, 0, 0), DCUDA_ERR_RANK, PUT,
           "target rank %d not in 0..%d of DEVICE", n, dn - 1);
    EXPECT(e, k, call(MIS_NOTIFY, -1, DCUDA_COMM_WORLD, 0, 0, 0), DCUDA_ERR_RANK, NOTIFY,
           "target rank -1 not in 0..%d of WORLD", n - 1);
    EXPECT(e, k, call(MIS_NOTIFY, n, DCUDA_COMM_WORLD, 0, 0, 0), DCUDA_ERR_RANK, NOTIFY,
           "target rank %d not in", n);
    EXPECT(e, k, call(MIS_NOTIFY, n, DCUDA_COMM_DEVICE, 0, 0, 0), DCUDA_ERR_RANK, NOTIFY,
           "target rank %d not in 0..%d of DEVICE", n, dn - 1);
    if (r->info.process_count > 1) {
        /* A rank of WORLD that DEVICE does not have (same count in every process). */
        EXPECT(e, k, put(MIS_PUT, MW_DEVICE, dn, 0, 8, MS_DEVPART, 0, 0), DCUDA_ERR_RANK, PUT,
               "target rank %d not in 0..%d of DEVICE", dn, dn - 1);
        EXPECT(e, k, call(MIS_NOTIFY, dn, DCUDA_COMM_DEVICE, 0, 0, 0), DCUDA_ERR_RANK, NOTIFY,
               "target rank %d not in 0..%d of DEVICE", dn, dn - 1);
    }
    return k;
}

static int build_tag(const mis_run_t *r, mis_expect_t *e)
{
    int k = 0, top = DCUDA_TAG_COUNT - 1;
    (void)r;
    EXPECT(e, k, put(MIS_PUT_NOTIFY, MW_WORLD, 1, 0, 8, MS_SOURCE, 0, top + 1), DCUDA_ERR_TAG, PUTN,
           "tag %d not in 0..%d", top + 1, top);
    EXPECT(e, k, put(MIS_PUT_NOTIFY, MW_WORLD, 1, 0, 8, MS_SOURCE, 0, -1), DCUDA_ERR_TAG, PUTN,
           "tag -1 not in 0..%d", top);
    EXPECT(e, k, call(MIS_NOTIFY, 1, DCUDA_COMM_WORLD, top + 45, 0, 0), DCUDA_ERR_TAG, NOTIFY,
           "tag %d not in", top + 45);
    EXPECT(e, k, call(MIS_NOTIFY, 1, DCUDA_COMM_WORLD, -7, 0, 0), DCUDA_ERR_TAG, NOTIFY,
           "tag -7 not in");
    EXPECT(e, k, call(MIS_WAIT, 0, 0, top + 1, 1, 0), DCUDA_ERR_TAG, WAIT, "tag %d not in",
           top + 1);
    EXPECT(e, k, call(MIS_TEST, 0, 0, -1, 1, 0), DCUDA_ERR_TAG, TEST, "tag -1 not in");
    return k;
}

/* A collective called by one rank with arguments that are wrong on it
 * alone: refused before it sends anything, so nobody waits for it. */
static mis_probe_t coll(int op, int win, int root, uint64_t offset, uint64_t size, int type,
                        int red)
{
    mis_probe_t p = put(op, win, root, offset, size, MS_SOURCE, 0, type);
    p.count = red;
    return p;
}

/* Where the ranks of WORLD read each other's parts (one process of more
 * ranks than the pushed form takes, no loopback path: impl/coll_local.h),
 * every rank checks every part before the reads: rank 0's broadcast on Z
 * (odd ranks expose nothing) is refused for rank 1's part, before it
 * waits for anyone. (Through the tree, or pushed, it would wait for the
 * others until the run ends: a call they never make.) misuse.coll.wide
 * runs it. */
static int build_coll_local(const mis_run_t *r, mis_expect_t *e, int k)
{
    const char *loop = getenv("DCUDA_NET_LOOPBACK");
    if (r->info.process_count != 1 || r->n <= DCUDA_PUSH_MAX_RANKS ||
        (loop && strcmp(loop, "0") != 0))
        return k;
    EXPECT(e, k, coll(MIS_BROADCAST, MW_ZERO, 0, 0, 8, 0, 0), DCUDA_ERR_BOUNDS, "dcuda_broadcast",
           "rank 1's 0-byte part of window");
    return k;
}

/* Reduce, reduce-scatter and alltoall: after build_coll's k probes. */
static int build_coll_more(const mis_run_t *r, mis_expect_t *e, int k)
{
    const unsigned part = MIS_TARGET_BYTES + MIS_SOURCE_BYTES;
    const char *RD = "dcuda_reduce", *RS = "dcuda_reduce_scatter", *AA = "dcuda_alltoall";
    int n = r->n;
    EXPECT(e, k, coll(MIS_REDUCE, MW_WORLD, n, 0, 1, DCUDA_INT32, DCUDA_SUM), DCUDA_ERR_RANK, RD,
           "root %d not in 0..%d of WORLD", n, n - 1);
    EXPECT(e, k, coll(MIS_REDUCE, MW_DEVICE, 0, 0, 1, 9, DCUDA_SUM), DCUDA_ERR_INVALID_ARG, RD,
           "datatype 9 is none of");
    EXPECT(e, k, coll(MIS_REDUCE_SCATTER, MW_DEVICE, 0, 0, 1, DCUDA_INT64, 256 + DCUDA_MAX),
           DCUDA_ERR_INVALID_ARG, RS, "op %d is none of", 256 + DCUDA_MAX);
    unsigned count = part / 8u / (unsigned)n + 1u; /* n blocks are more than the part */
    unsigned room = (unsigned)dcuda_reduce_scatter_room(n, count, DCUDA_INT64);
    EXPECT(e, k, coll(MIS_REDUCE_SCATTER, MW_WORLD, 0, 0, count, DCUDA_INT64, DCUDA_MAX),
           DCUDA_ERR_BOUNDS, RS, "offset 0 + %u bytes outside my %u-byte part", room, part);
    EXPECT(e, k, coll(MIS_REDUCE_SCATTER, MW_WORLD, 0, 0, SIZE_MAX / 2, DCUDA_INT32, DCUDA_SUM),
           DCUDA_ERR_OVERFLOW, RS, "count %llu x %d ranks overflows",
           (unsigned long long)(SIZE_MAX / 2), n);
    unsigned block = part / 2u / (unsigned)n + 1u;
    EXPECT(e, k, coll(MIS_ALLTOALL, MW_WORLD, 0, 0, block, 0, 0), DCUDA_ERR_BOUNDS, AA,
           "offset 0 + %u bytes outside my %u-byte part", 2u * block * (unsigned)n, part);
    EXPECT(e, k, coll(MIS_ALLTOALL, MW_FREED, 0, 0, 8, 0, 0), DCUDA_ERR_WIN, AA,
           "is not a live window");
    return build_coll_local(r, e, k);
}

static int build_coll(const mis_run_t *r, mis_expect_t *e)
{
    const unsigned part = MIS_TARGET_BYTES + MIS_SOURCE_BYTES;
    const char *BC = "dcuda_broadcast", *AR = "dcuda_allreduce", *AG = "dcuda_allgather";
    int k = 0, n = r->n;
    EXPECT(e, k, coll(MIS_BROADCAST, MW_WORLD, n, 0, 8, 0, 0), DCUDA_ERR_RANK, BC,
           "root %d not in 0..%d of WORLD", n, n - 1);
    EXPECT(e, k, coll(MIS_BROADCAST, MW_WORLD, -1, 0, 8, 0, 0), DCUDA_ERR_RANK, BC,
           "root -1 not in 0..%d of WORLD", n - 1);
    EXPECT(e, k, coll(MIS_BROADCAST, MW_WORLD, 0, part - 4, 8, 0, 0), DCUDA_ERR_BOUNDS, BC,
           "offset %u + 8 bytes outside my %u-byte part", part - 4, part);
    EXPECT(e, k, coll(MIS_BROADCAST, MW_FREED, 0, 0, 8, 0, 0), DCUDA_ERR_WIN, BC,
           "is not a live window");
    EXPECT(e, k, coll(MIS_ALLREDUCE, MW_WORLD, 0, 0, 4, 9, DCUDA_SUM), DCUDA_ERR_INVALID_ARG, AR,
           "datatype 9 is none of");
    EXPECT(e, k, coll(MIS_ALLREDUCE, MW_WORLD, 0, 0, 4, DCUDA_INT32, 3), DCUDA_ERR_INVALID_ARG, AR,
           "op 3 is none of");
    /* A type or op that is a valid one plus 256: every form refuses it (the
     * pushed and the local forms pack both in a byte). */
    EXPECT(e, k, coll(MIS_ALLREDUCE, MW_WORLD, 0, 0, 4, 256 + DCUDA_FLOAT, DCUDA_SUM),
           DCUDA_ERR_INVALID_ARG, AR, "datatype %d is none of", 256 + DCUDA_FLOAT);
    EXPECT(e, k, coll(MIS_ALLREDUCE, MW_WORLD, 0, 0, 4, DCUDA_INT32, 256 + DCUDA_SUM),
           DCUDA_ERR_INVALID_ARG, AR, "op %d is none of", 256 + DCUDA_SUM);
    EXPECT(e, k, coll(MIS_ALLREDUCE, MW_WORLD, 0, 0, SIZE_MAX / 4, DCUDA_DOUBLE, DCUDA_MAX),
           DCUDA_ERR_OVERFLOW, AR, "count %llu overflows", (unsigned long long)(SIZE_MAX / 4));
    EXPECT(e, k, coll(MIS_ALLREDUCE, MW_WORLD, 0, 4, 2, DCUDA_DOUBLE, DCUDA_SUM),
           DCUDA_ERR_INVALID_ARG, AR, "not aligned to its 8-byte elements");
    unsigned count = part / 8u, room = (unsigned)dcuda_allreduce_room(n, count, DCUDA_INT64);
    EXPECT(e, k, coll(MIS_ALLREDUCE, MW_WORLD, 0, 0, count, DCUDA_INT64, DCUDA_MIN),
           DCUDA_ERR_BOUNDS, AR, "offset 0 + %u bytes outside my %u-byte part", room, part);
    unsigned block = part / (unsigned)n + 1u; /* n blocks are more than the part */
    EXPECT(e, k, coll(MIS_ALLGATHER, MW_WORLD, 0, 0, block, 0, 0), DCUDA_ERR_BOUNDS, AG,
           "offset 0 + %u bytes outside my %u-byte part", block * (unsigned)n, part);
    EXPECT(e, k, coll(MIS_ALLGATHER, MW_WORLD, 0, 0, SIZE_MAX / 2, 0, 0), DCUDA_ERR_OVERFLOW, AG,
           "size %llu x %d ranks overflows", (unsigned long long)(SIZE_MAX / 2), n);
    EXPECT(e, k, coll(MIS_ALLGATHER, MW_NEVER, 0, 0, 8, 0, 0), DCUDA_ERR_WIN, AG,
           "is not a live window");
    return build_coll_more(r, e, k);
}

static int build_count(const mis_run_t *r, mis_expect_t *e)
{
    int k = 0;
    (void)r;
    EXPECT(e, k, call(MIS_WAIT, 0, 0, 3, 0, 0), DCUDA_ERR_COUNT, WAIT, "count 0 for tag 3");
    EXPECT(e, k, call(MIS_WAIT, 0, 0, 3, -1, 0), DCUDA_ERR_COUNT, WAIT, "count -1 for tag 3");
    EXPECT(e, k, call(MIS_TEST, 0, 0, 5, 0, 0), DCUDA_ERR_COUNT, TEST, "count 0 for tag 5");
    EXPECT(e, k, call(MIS_TEST, 0, 0, 5, -100, 0), DCUDA_ERR_COUNT, TEST, "count -100 for tag 5");
    return k;
}

static int build_bounds(const mis_run_t *r, mis_expect_t *e)
{
    const unsigned part = MIS_TARGET_BYTES + MIS_SOURCE_BYTES;
    int k = 0;
    (void)r;
    EXPECT(e, k, put(MIS_PUT, MW_WORLD, 1, part + 8, 8, MS_SOURCE, 0, 0), DCUDA_ERR_BOUNDS, PUT,
           "offset %u + size 8 outside the %u-byte part of rank 1", part + 8, part);
    EXPECT(e, k, put(MIS_PUT, MW_WORLD, 1, part - 4, 8, MS_SOURCE, 0, 0), DCUDA_ERR_BOUNDS, PUT,
           "offset %u + size 8 outside the %u-byte part", part - 4, part);
    EXPECT(e, k, put(MIS_PUT_NOTIFY, MW_WORLD, 1, part, 1, MS_SOURCE, 0, 0), DCUDA_ERR_BOUNDS, PUTN,
           "offset %u + size 1 outside", part);
    EXPECT(e, k, put(MIS_PUT, MW_WORLD, 1, part + 1, 0, MS_SOURCE, 0, 0), DCUDA_ERR_BOUNDS, PUT,
           "offset %u + size 0 outside", part + 1);
    /* Rank 1 exposes 0 bytes in Z. */
    EXPECT(e, k, put(MIS_PUT, MW_ZERO, 1, 0, 1, MS_SOURCE, 0, 0), DCUDA_ERR_BOUNDS, PUT,
           "offset 0 + size 1 outside the 0-byte part of rank 1");
    EXPECT(e, k, put(MIS_PUT_NOTIFY, MW_ZERO, 1, 1, 0, MS_SOURCE, 0, 9), DCUDA_ERR_BOUNDS, PUTN,
           "offset 1 + size 0 outside the 0-byte part");
    return k;
}

static int build_overflow(const mis_run_t *r, mis_expect_t *e)
{
    int k = 0;
    (void)r;
    EXPECT(e, k, put(MIS_PUT, MW_WORLD, 1, SIZE_MAX - 3, 8, MS_SOURCE, 0, 0), DCUDA_ERR_OVERFLOW,
           PUT, "offset %llu + size 8", (unsigned long long)(SIZE_MAX - 3));
    EXPECT(e, k, put(MIS_PUT, MW_WORLD, 1, 8, SIZE_MAX, MS_SOURCE, 0, 0), DCUDA_ERR_OVERFLOW, PUT,
           "offset 8 + size %llu", (unsigned long long)SIZE_MAX);
    EXPECT(e, k, put(MIS_PUT_NOTIFY, MW_WORLD, 1, SIZE_MAX, 1, MS_SOURCE, 0, 0), DCUDA_ERR_OVERFLOW,
           PUTN, "offset %llu + size 1", (unsigned long long)SIZE_MAX);
    return k;
}

static int build_source(const mis_run_t *r, mis_expect_t *e)
{
    const unsigned char *mine = r->d.buf, *source = mine + MIS_TARGET_BYTES;
    const unsigned char *gap = source + MIS_SOURCE_BYTES,
                        *other = r->d.buf + MIS_REGION + MIS_TARGET_BYTES;
    int k = 0;
    EXPECT(e, k, put(MIS_PUT, MW_WORLD, 1, 0, 8, MS_GAP, 0, 0), DCUDA_ERR_SOURCE, PUT,
           "source %p..+8 is not inside any window", (const void *)gap);
    EXPECT(e, k, put(MIS_PUT, MW_WORLD, 1, 0, 8, MS_SOURCE, MIS_SOURCE_BYTES - 4, 0),
           DCUDA_ERR_SOURCE, PUT, "source %p..+8 is not inside",
           (const void *)(source + MIS_SOURCE_BYTES - 4));
    EXPECT(e, k, put(MIS_PUT, MW_WORLD, 1, 0, 8, MS_OTHER, 0, 0), DCUDA_ERR_SOURCE, PUT,
           "source %p..+8 is not inside", (const void *)other);
    EXPECT(e, k, put(MIS_PUT_NOTIFY, MW_WORLD, 1, 0, 16, MS_GAP, 8, 0), DCUDA_ERR_SOURCE, PUTN,
           "source %p..+16", (const void *)(gap + 8));
    return k;
}

static int build_win_comm(const mis_run_t *r, mis_expect_t *e)
{
    const unsigned char *source = r->d.buf + MIS_TARGET_BYTES;
    const unsigned char *devpart = source + MIS_SOURCE_BYTES + MIS_GAP_BYTES;
    int k = 0;
    EXPECT(e, k, put(MIS_PUT, MW_WORLD, 1, 0, 8, MS_DEVPART, 0, 0), DCUDA_ERR_WIN_COMM, PUT,
           "source %p..+8 is only in windows of another communicator", (const void *)devpart);
    EXPECT(e, k, put(MIS_PUT_NOTIFY, MW_DEVICE, 1, 0, 8, MS_SOURCE, 0, 0), DCUDA_ERR_WIN_COMM, PUTN,
           "source %p..+8 is only in windows of another", (const void *)source);
    return k;
}

static int build_overlap(const mis_run_t *r, mis_expect_t *e)
{
    const unsigned char *mine = r->d.buf, *shared = r->d.shared;
    int k = 0;
    EXPECT(e, k, put(MIS_PUT, MW_WORLD, 0, 0, 16, MS_TARGET, 8, 0), DCUDA_ERR_OVERLAP, PUT,
           "source %p and target %p overlap in 16 bytes", (const void *)(mine + 8),
           (const void *)mine);
    EXPECT(e, k, put(MIS_PUT, MW_SHARED, 1, 0, 16, MS_SHARED, 4, 0), DCUDA_ERR_OVERLAP, PUT,
           "source %p and target %p overlap", (const void *)(shared + 4), (const void *)shared);
    EXPECT(e, k, put(MIS_PUT_NOTIFY, MW_SHARED, 1, 8, 16, MS_SHARED, 0, 0), DCUDA_ERR_OVERLAP, PUTN,
           "source %p and target %p overlap", (const void *)shared, (const void *)(shared + 8));
    return k;
}

/* Gets: the put's checks, the destination worded as such; nothing is
 * written anywhere. */
static int build_get(const mis_run_t *r, mis_expect_t *e)
{
    const unsigned part = MIS_TARGET_BYTES + MIS_SOURCE_BYTES;
    const unsigned char *mine = r->d.buf, *source = mine + MIS_TARGET_BYTES;
    const unsigned char *gap = source + MIS_SOURCE_BYTES, *devpart = gap + MIS_GAP_BYTES;
    const char *GET = "dcuda_get", *GETN = "dcuda_get_notify";
    int k = 0, n = r->n, top = DCUDA_TAG_COUNT - 1;
    EXPECT(e, k, put(MIS_GET, MW_WORLD, n, 0, 8, MS_SOURCE, 0, 0), DCUDA_ERR_RANK, GET,
           "target rank %d not in 0..%d of WORLD", n, n - 1);
    EXPECT(e, k, put(MIS_GET_NOTIFY, MW_WORLD, -1, 0, 8, MS_SOURCE, 0, 3), DCUDA_ERR_RANK, GETN,
           "target rank -1 not in 0..%d of WORLD", n - 1);
    EXPECT(e, k, put(MIS_GET_NOTIFY, MW_WORLD, 1, 0, 8, MS_SOURCE, 0, top + 1), DCUDA_ERR_TAG, GETN,
           "tag %d not in 0..%d", top + 1, top);
    EXPECT(e, k, put(MIS_GET_NOTIFY, MW_WORLD, 1, 0, 8, MS_SOURCE, 0, -2), DCUDA_ERR_TAG, GETN,
           "tag -2 not in 0..%d", top);
    EXPECT(e, k, put(MIS_GET, MW_WORLD, 1, part - 4, 8, MS_SOURCE, 0, 0), DCUDA_ERR_BOUNDS, GET,
           "offset %u + size 8 outside the %u-byte part of rank 1", part - 4, part);
    EXPECT(e, k, put(MIS_GET_NOTIFY, MW_ZERO, 1, 0, 1, MS_SOURCE, 0, 3), DCUDA_ERR_BOUNDS, GETN,
           "offset 0 + size 1 outside the 0-byte part of rank 1");
    EXPECT(e, k, put(MIS_GET, MW_WORLD, 1, 8, SIZE_MAX, MS_SOURCE, 0, 0), DCUDA_ERR_OVERFLOW, GET,
           "offset 8 + size %llu", (unsigned long long)SIZE_MAX);
    EXPECT(e, k, put(MIS_GET, MW_WORLD, 1, 0, 8, MS_GAP, 0, 0), DCUDA_ERR_SOURCE, GET,
           "destination %p..+8 is not inside any window of this rank", (const void *)gap);
    EXPECT(e, k, put(MIS_GET_NOTIFY, MW_WORLD, 1, 0, 8, MS_SOURCE, MIS_SOURCE_BYTES - 4, 3),
           DCUDA_ERR_SOURCE, GETN, "destination %p..+8 is not inside",
           (const void *)(source + MIS_SOURCE_BYTES - 4));
    EXPECT(e, k, put(MIS_GET, MW_WORLD, 1, 0, 8, MS_DEVPART, 0, 0), DCUDA_ERR_WIN_COMM, GET,
           "destination %p..+8 is only in windows of another communicator", (const void *)devpart);
    EXPECT(e, k, put(MIS_GET, MW_WORLD, 0, 0, 16, MS_TARGET, 8, 0), DCUDA_ERR_OVERLAP, GET,
           "destination %p and target %p overlap in 16 bytes", (const void *)(mine + 8),
           (const void *)mine);
    EXPECT(e, k, put(MIS_GET_NOTIFY, MW_FREED, 1, 0, 8, MS_SOURCE, 0, 3), DCUDA_ERR_WIN, GETN,
           "is not a live window");
    EXPECT(e, k, put(MIS_GET, MW_NONE, 1, 0, 8, MS_SOURCE, 0, 0), DCUDA_ERR_WIN, GET,
           "is not a live window");
    return k;
}

static int build_comm(const mis_run_t *r, mis_expect_t *e)
{
    int k = 0;
    (void)r;
    EXPECT(e, k, call(MIS_NOTIFY, 0, 7, 0, 0, 0), DCUDA_ERR_COMM, NOTIFY, "communicator 7 ");
    EXPECT(e, k, call(MIS_COMM_SIZE, 0, 7, 0, 0, 0), DCUDA_ERR_COMM, "dcuda_comm_size",
           "communicator 7 ");
    EXPECT(e, k, call(MIS_COMM_RANK, 0, -1, 0, 0, 0), DCUDA_ERR_COMM, "dcuda_comm_rank",
           "communicator -1 ");
    EXPECT(e, k, call(MIS_BARRIER, 0, 7, 0, 0, 0), DCUDA_ERR_COMM, "dcuda_comm_barrier",
           "communicator 7 ");
    EXPECT(e, k, call(MIS_WIN_CREATE, 0, 5, 0, 0, 0), DCUDA_ERR_COMM, "dcuda_win_create",
           "communicator 5 ");
    return k;
}

static int build_win(const mis_run_t *r, mis_expect_t *e)
{
    int k = 0;
    (void)r;
    EXPECT(e, k, put(MIS_PUT, MW_FREED, 1, 0, 8, MS_SOURCE, 0, 0), DCUDA_ERR_WIN, PUT,
           "is not a live window");
    EXPECT(e, k, put(MIS_PUT_NOTIFY, MW_NEVER, 1, 0, 8, MS_SOURCE, 0, 0), DCUDA_ERR_WIN, PUTN,
           "is not a live window");
    EXPECT(e, k, call(MIS_FLUSH, 0, 0, 0, 0, MW_FREED), DCUDA_ERR_WIN, "dcuda_win_flush",
           "is not a live window");
    EXPECT(e, k, call(MIS_FREE, 0, 0, 0, 0, MW_FREED), DCUDA_ERR_WIN, "dcuda_win_free",
           "is not a live window");
    EXPECT(e, k, call(MIS_FREE, 0, 0, 0, 0, MW_NEVER), DCUDA_ERR_WIN, "dcuda_win_free",
           "is not a live window");
    EXPECT(e, k, put(MIS_PUT, MW_NONE, 1, 0, 8, MS_SOURCE, 0, 0), DCUDA_ERR_WIN, PUT,
           "window 0x%08x", DCUDA_WIN_NONE);
    for (int i = 0; i < k; i++)
        e[i].value = VAL_HANDLE;
    return k;
}

static int build_timer(const mis_run_t *r, mis_expect_t *e)
{
    int k = 0;
    (void)r;
    EXPECT(e, k, call(MIS_TIMER_STOP, 0, 0, 0, 0, 0), DCUDA_ERR_TIMER, "dcuda_stop_cpu_timer",
           "no timer is running (0 started)");
    EXPECT(e, k, call(MIS_TIMER_START2, 0, 0, 0, 0, 0), DCUDA_ERR_TIMER, "dcuda_start_cpu_timer",
           "timer 0 is still running");
    EXPECT(e, k, call(MIS_TIMER_MANY, 0, 0, 0, 0, 0), DCUDA_ERR_TIMER, "dcuda_start_cpu_timer",
           "more than %d timers", DCUDA_MAX_TIMERS);
    return k;
}

static int build_after_finish(const mis_run_t *r, mis_expect_t *e)
{
    int k = 0;
    (void)r;
    EXPECT(e, k, call(MIS_AFTER_FINISH, 0, 0, 0, 0, 0), DCUDA_ERR_NOT_INITIALIZED, NOTIFY,
           "used before dcuda_rank_init");
    e[0].value = VAL_STATE;
    return k;
}

/* Every rank creates DEVICE windows until the limit; D is already live.
 * The ranks then free what they made, collectively, after their error: that
 * needs DCUDA_ON_ERROR=continue. Under the default the first rank's error
 * ends the run, and a rank still blocked in a free when it does returns
 * DCUDA_ERR_ABORTED (as documented), which would depend on timing. */
static int run_win_limit(int argc, char **argv)
{
    mis_run_t r;
    mis_expect_t e[1];
    setenv("DCUDA_ON_ERROR", "continue", 1);
    int k = 0, rc = mis_open(&r, argc, argv, DCUDA_KERNEL_REF(misuse));
    if (rc)
        return rc;
    EXPECT(e, k, call(MIS_WIN_LIMIT, 0, 0, 0, 0, 0), DCUDA_ERR_WIN_LIMIT, "dcuda_win_create",
           "%d windows already live on DEVICE", DCUDA_MAX_WINDOWS);
    e[0].collective = 1;
    run_probes(&r, e, k);
    for (int rank = r.first; rank < r.end; rank++) {
        TEST_CHECK(res(&r, rank, MIS_RES_COUNT) + 1 == DCUDA_MAX_WINDOWS,
                   "rank %d: created %" PRId64 " windows next to one live one, limit %d", rank,
                   res(&r, rank, MIS_RES_COUNT), DCUDA_MAX_WINDOWS);
        TEST_CHECK((uint32_t)res(&r, rank, MIS_RES_WIN) == DCUDA_WIN_NONE,
                   "rank %d: failed creation returned handle 0x%08x", rank,
                   (unsigned)res(&r, rank, MIS_RES_WIN));
    }
    mis_close(&r);
    return 0;
}

/* Calls on a zeroed state before dcuda_rank_init, by every rank; then the
 * same after dcuda_rank_finish. Every rank's init must then succeed, which
 * needs DCUDA_ON_ERROR=continue: under the default the first report ends
 * the run, and a rank whose init comes after the end fails it (seen on GPU
 * ranks of the loopback path), which would depend on timing. */
static int run_not_init(int argc, char **argv)
{
    mis_run_t r;
    setenv("DCUDA_ON_ERROR", "continue", 1);
    int rc = mis_open(&r, argc, argv, DCUDA_KERNEL_REF(misuse_before_init));
    if (rc)
        return rc;
    mis_exec(&r, DCUDA_ERR_NOT_INITIALIZED, -1, "calls before dcuda_rank_init");
    static const int slots[] = { MIS_RES_CALL, MIS_RES_CALL2, MIS_RES_CALL3, MIS_RES_CALL4 };
    for (int rank = r.first; rank < r.end; rank++) {
        TEST_CHECK(res(&r, rank, MIS_RES_SETUP) == 0, "rank %d: init failed", rank);
        for (int i = 0; i < 4; i++)
            if (!TEST_STATUS(res(&r, rank, slots[i]), DCUDA_ERR_NOT_INITIALIZED))
                fprintf(stderr, "     (rank %d, call %d)\n", rank, i);
    }
    /* The first report names a rank (of this process: every rank erred),
     * its call (dcuda_put comes first) and that rank's state. */
    const char *err = dcuda_host_last_error(r.h);
    int named = -1;
    char state[64] = "(none)";
    if (sscanf(err, "rank %d:", &named) == 1 && test_owns(&r.info, named))
        snprintf(state, sizeof state, "state %p", (void *)(uintptr_t)res(&r, named, MIS_RES_VALUE));
    TEST_CHECK(test_owns(&r.info, named), "report names no rank of this process: %s", err);
    TEST_CONTAINS(err, "dcuda_put: ");
    TEST_CONTAINS(err, state);
    TEST_CONTAINS(err, "used before dcuda_rank_init");
    mis_close(&r);
    return probe_case(argc, argv, build_after_finish);
}

static int run_rank(int argc, char **argv) { return probe_case(argc, argv, build_rank); }
static int run_tag(int argc, char **argv) { return probe_case(argc, argv, build_tag); }
static int run_count(int argc, char **argv) { return probe_case(argc, argv, build_count); }
static int run_coll(int argc, char **argv) { return probe_case(argc, argv, build_coll); }
static int run_bounds(int argc, char **argv) { return probe_case(argc, argv, build_bounds); }
static int run_overflow(int argc, char **argv) { return probe_case(argc, argv, build_overflow); }
static int run_source(int argc, char **argv) { return probe_case(argc, argv, build_source); }
static int run_win_comm(int argc, char **argv) { return probe_case(argc, argv, build_win_comm); }
static int run_overlap(int argc, char **argv) { return probe_case(argc, argv, build_overlap); }
static int run_comm(int argc, char **argv) { return probe_case(argc, argv, build_comm); }
static int run_get(int argc, char **argv) { return probe_case(argc, argv, build_get); }
static int run_win(int argc, char **argv) { return probe_case(argc, argv, build_win); }
static int run_timer(int argc, char **argv) { return probe_case(argc, argv, build_timer); }

/* ---- host-side misuse --------------------------------------------------- */

static int run_host_null(int argc, char **argv)
{
    const double *t;
    int count;
    void *p = NULL;
    char byte = 0;
    dcuda_rank_info_t info;
    (void)argc, (void)argv;
    TEST_STATUS(dcuda_host_run(NULL, NULL, 0, NULL), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_get_timings(NULL, &t, &count), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_get_rank_info(NULL, &info), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_alloc(NULL, 16, &p), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_copy_in(NULL, &byte, &byte, 1), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_copy_out(NULL, &byte, &byte, 1), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_finish(NULL), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_free(NULL, p), DCUDA_ERR_NOT_INITIALIZED);
    TEST_CHECK(strcmp(dcuda_host_last_error(NULL), "") == 0, "last error of no host");
    /* A live host: user data NULL with a size. */
    dcuda_host_h h;
    if (TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(misuse), 64, &h), DCUDA_OK)) {
        TEST_STATUS(dcuda_host_run(h, NULL, 8, NULL), DCUDA_ERR_INVALID_ARG);
        TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    }
    return 0;
}

/* dcuda_host_init with argv = {"prog", arg}; returns its status. */
static dcuda_status_t init_with(const char *arg, dcuda_kernel_t k, dcuda_host_h *h)
{
    char prog[] = "dcuda_test_misuse", a[128];
    snprintf(a, sizeof a, "%s", arg);
    char *argv[] = { prog, a, NULL };
    return dcuda_host_init(arg[0] ? 2 : 1, argv, k, 64, h);
}

static int run_settings(int argc, char **argv)
{
    dcuda_kernel_t k = DCUDA_KERNEL_REF(misuse);
    dcuda_host_h h;
    dcuda_rank_info_t info;
    (void)argc, (void)argv;
    static const char *bad_args[] = { "--dcuda-ranks=abc",      "--dcuda-foo=1",
                                      "--dcuda-ranks",          "--dcuda-ranks=-3",
                                      "--dcuda-watchdog=-1",    "--dcuda-log-entries=100",
                                      "--dcuda-notif-start=-1", "--dcuda-backend=gpu",
                                      "--dcuda-processes=abc",  "--dcuda-processes=-1" };
    for (size_t i = 0; i < sizeof bad_args / sizeof bad_args[0]; i++)
        if (!TEST_STATUS(init_with(bad_args[i], k, &h), DCUDA_ERR_SETTING))
            fprintf(stderr, "     (argument %s)\n", bad_args[i]);
    setenv("DCUDA_RANKS", "abc", 1);
    TEST_STATUS(init_with("", k, &h), DCUDA_ERR_SETTING);
    /* Arguments win over the environment. */
    setenv("DCUDA_RANKS", "7", 1);
    /* Ranks per process. */
    if (TEST_STATUS(init_with("--dcuda-ranks=5", k, &h), DCUDA_OK)) {
        dcuda_host_get_rank_info(h, &info);
        TEST_CHECK(info.rank_responsible == 5 && info.rank_count == 5 * info.process_count,
                   "--dcuda-ranks=5 gave %d ranks of %d", info.rank_responsible, info.rank_count);
        TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    }
    if (TEST_STATUS(init_with("", k, &h), DCUDA_OK)) {
        dcuda_host_get_rank_info(h, &info);
        TEST_CHECK(info.rank_responsible == 7 && info.rank_count == 7 * info.process_count,
                   "DCUDA_RANKS=7 gave %d ranks of %d", info.rank_responsible, info.rank_count);
        TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    }
    return 0;
}

static int run_backend(int argc, char **argv)
{
    dcuda_host_h h;
    static const int fake_gpu_kernel = 1;
    dcuda_kernel_t cpu_only = dcuda_kernel_ref("misuse", dcuda_cpu_kernel_misuse, NULL);
    dcuda_kernel_t gpu_only = dcuda_kernel_ref("fake", NULL, NULL);
    dcuda_kernel_t neither = gpu_only;
    gpu_only.gpu = &fake_gpu_kernel;
    (void)argc, (void)argv;
    setenv("DCUDA_BACKEND", "cuda", 1);
    TEST_STATUS(init_with("", cpu_only, &h), DCUDA_ERR_BACKEND);
    TEST_STATUS(init_with("--dcuda-backend=cuda", cpu_only, &h), DCUDA_ERR_BACKEND);
    setenv("DCUDA_BACKEND", "cpu", 1);
    TEST_STATUS(init_with("", gpu_only, &h), DCUDA_ERR_BACKEND);
    TEST_STATUS(init_with("", neither, &h), DCUDA_ERR_INVALID_ARG);
    /* auto falls back to CPU ranks for a kernel with only a CPU form; with
     * GPUs here it warns and names the fix. */
    setenv("DCUDA_BACKEND", "auto", 1);
    int gpus_here = dcuda_host_backend_available("cuda", NULL, 0);
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    dcuda_status_t st = init_with("", cpu_only, &h);
    char *out = test_capture_end(&cap);
    printf("%s", out ? out : "");
    if (TEST_STATUS(st, DCUDA_OK)) {
        dcuda_rank_info_t info;
        dcuda_host_get_rank_info(h, &info);
        TEST_CHECK(strcmp(info.backend, "cpu") == 0, "auto chose %s", info.backend);
        TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    }
    int warned = out && test_find_line(out, "dcuda: warning:", "has no GPU form") &&
                 test_find_line(out, "dcuda: warning:", "dcuda_add_rank_code");
    TEST_CHECK(warned == gpus_here, "with%s GPUs here, auto %s about CPU ranks",
               gpus_here ? "" : "out", warned ? "warned" : "said nothing");
    free(out);
    /* Where no backend can run a kernel, the error gives every backend's reason. */
    if (!gpus_here) {
        if (!test_capture_begin(&cap))
            return 1;
        st = init_with("", gpu_only, &h);
        out = test_capture_end(&cap);
        printf("%s", out ? out : "");
        TEST_STATUS(st, DCUDA_ERR_BACKEND);
        TEST_CHECK(out && test_find_line(out, "no backend can run", "cuda: ") &&
                       test_find_line(out, "no backend can run", "cpu: "),
                   "the error does not give each backend's reason");
        free(out);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "rank", run_rank },
        { "tag", run_tag },
        { "coll", run_coll },
        { "count", run_count },
        { "bounds", run_bounds },
        { "overflow", run_overflow },
        { "source", run_source },
        { "win_comm", run_win_comm },
        { "overlap", run_overlap },
        { "not_init", run_not_init },
        { "comm", run_comm },
        { "get", run_get },
        { "win", run_win },
        { "timer", run_timer },
        { "win_limit", run_win_limit },
        { "host_null", run_host_null },
        { "settings", run_settings },
        { "backend", run_backend },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
