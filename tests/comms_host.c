/*
 * Host driver of the communicators' suite (comms.h, comms_kernels.c):
 *
 *   dcuda_test_comms split|barrier|misuse [seed [runs]]
 *
 * split: every communicator the ranks made (of WORLD, of a split, of NODE,
 * of DEVICE) and NODE itself, as each rank this process owns reports it,
 * against a serial reference: the ranks of one colour sorted by key, then
 * by rank in the parent. barrier: the ranks' checks of what their senders
 * put before each barrier of a split or of NODE (the model in comms.h).
 * misuse: the refused calls' statuses, the id limit and the ids' agreement.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comms.h"
#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_rank.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(comms);

#define COMMS_RUNS 2

typedef struct comms_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    comms_data_t d;
    size_t buf_bytes;
    unsigned char *buf;
    int64_t *res;
} comms_run_t;

/* A communicator as the reference computes it: WORLD ranks in order. */
typedef struct comms_list {
    int n;
    int w[COMMS_MAX_MEMBERS];
} comms_list_t;

/* A member of a split as the reference sorts them. */
typedef struct comms_member {
    int key, pos, w; /* pos: its rank in the parent */
} comms_member_t;

static int comms_before(const void *a, const void *b)
{
    const comms_member_t *x = a, *y = b;
    return x->key != y->key ? (x->key < y->key ? -1 : 1) : (x->pos > y->pos) - (x->pos < y->pos);
}

/* The communicator of WORLD rank w among `parent` split by colour and key
 * (n = 0: w gave no colour): the ranks of w's colour, by key, then by
 * their rank in the parent. */
static comms_list_t comms_expect_split(const comms_list_t *parent, int w,
                                       int (*colour)(int, void *), int (*key)(int, void *),
                                       void *arg)
{
    comms_list_t l = { 0, { 0 } };
    comms_member_t m[COMMS_MAX_MEMBERS];
    int mine = colour(w, arg);
    if (mine < 0)
        return l;
    for (int i = 0; i < parent->n; i++)
        if (colour(parent->w[i], arg) == mine)
            m[l.n++] = (comms_member_t){ key(parent->w[i], arg), i, parent->w[i] };
    qsort(m, (size_t)l.n, sizeof *m, comms_before);
    for (int i = 0; i < l.n; i++)
        l.w[i] = m[i].w;
    return l;
}

static int comms_world_colour(int w, void *seed)
{
    return comms_colour(*(uint32_t *)seed, COMMS_OF_WORLD, w);
}
static int comms_world_key(int w, void *seed)
{
    return comms_key(*(uint32_t *)seed, COMMS_OF_WORLD, w);
}
static int comms_split_colour(int w, void *seed)
{
    return comms_colour(*(uint32_t *)seed, COMMS_OF_SPLIT, w);
}
static int comms_split_key(int w, void *seed)
{
    return comms_key(*(uint32_t *)seed, COMMS_OF_SPLIT, w);
}
static int comms_parity(int w, void *arg) { return (void)arg, w % 2; }
static int comms_reverse(int w, void *arg) { return (void)arg, -w; }
static int comms_device_colour(int w, void *first) { return (w - *(int *)first) % 3; }
static int comms_zero(int w, void *arg) { return (void)arg, (void)w, 0; }

/* WORLD: every rank in order. */
static comms_list_t comms_world(const dcuda_rank_info_t *info)
{
    comms_list_t l = { info->rank_count, { 0 } };
    for (int w = 0; w < l.n; w++)
        l.w[w] = w;
    return l;
}

/* NODE as the reference knows it: WORLD when the job is one node, my
 * process's ranks when each process is a node of its own (the network
 * path forced); n = -1 when it cannot tell. */
static comms_list_t comms_node(const dcuda_rank_info_t *info)
{
    comms_list_t l = { -1, { 0 } };
    int first = 0, end = info->rank_count;
    if (info->node_count == info->process_count && info->process_count > 1) {
        first = test_first_rank(info);
        end = test_end_rank(info);
    } else if (info->node_count != 1) {
        return l;
    }
    l.n = 0;
    for (int w = first; w < end; w++)
        l.w[l.n++] = w;
    return l;
}

/* Rank w's record of one round against the reference `want`. */
static void comms_check_round(uint32_t seed, int w, int round, const int64_t *slot,
                              const comms_list_t *want)
{
    if (want->n < 0)
        return;
    if (want->n == 0) {
        TEST_CHECK(slot[COMMS_ID] == DCUDA_COMM_NULL,
                   "seed %u, rank %d, round %d: id %" PRId64 " where it gave no colour", seed, w,
                   round, slot[COMMS_ID]);
        return;
    }
    int rank = -1;
    for (int i = 0; i < want->n; i++)
        rank = want->w[i] == w ? i : rank;
    int ok = slot[COMMS_SIZE] == want->n && slot[COMMS_RANK] == rank;
    for (int i = 0; ok && i < want->n; i++)
        ok = slot[COMMS_MEMBERS + i] == want->w[i];
    TEST_CHECK(ok,
               "seed %u, rank %d, round %d: size %" PRId64 ", rank %" PRId64
               " (expected %d, %d), or its members differ",
               seed, w, round, slot[COMMS_SIZE], slot[COMMS_RANK], want->n, rank);
    if (round != COMMS_NODE)
        TEST_CHECK(slot[COMMS_ID] >= 3 && slot[COMMS_ID] <= 7,
                   "seed %u, rank %d, round %d: id %" PRId64, seed, w, round, slot[COMMS_ID]);
}

/* The communicators the reference says rank w made, round by round. */
static void comms_check_split_rank(const comms_run_t *m, int w, const int64_t *res)
{
    uint32_t seed = m->d.seed;
    comms_list_t world = comms_world(&m->info), device = { 0, { 0 } };
    int first = test_first_rank(&m->info);
    for (int i = first; i < test_end_rank(&m->info); i++)
        device.w[device.n++] = i;
    comms_list_t want[COMMS_ROUNDS], node = comms_node(&m->info);
    want[COMMS_OF_WORLD] =
        comms_expect_split(&world, w, comms_world_colour, comms_world_key, &seed);
    want[COMMS_OF_SPLIT] =
        comms_expect_split(&want[COMMS_OF_WORLD], w, comms_split_colour, comms_split_key, &seed);
    want[COMMS_OF_NODE] =
        node.n < 0 ? node : comms_expect_split(&node, w, comms_parity, comms_reverse, NULL);
    want[COMMS_OF_DEVICE] = comms_expect_split(&device, w, comms_device_colour, comms_zero, &first);
    want[COMMS_NODE] = node;
    for (int r = 0; r < COMMS_ROUNDS; r++)
        comms_check_round(seed, w, r, res + COMMS_ROUND0 + r * COMMS_ROUND_SLOTS, &want[r]);
    /* The live splits of one rank have different ids. */
    for (int a = 0; a < COMMS_NODE; a++)
        for (int b = a + 1; b < COMMS_NODE; b++) {
            int64_t ia = res[COMMS_ROUND0 + a * COMMS_ROUND_SLOTS + COMMS_ID];
            int64_t ib = res[COMMS_ROUND0 + b * COMMS_ROUND_SLOTS + COMMS_ID];
            TEST_CHECK(ia < 0 || ia != ib,
                       "seed %u, rank %d: rounds %d and %d both got id %" PRId64, seed, w, a, b,
                       ia);
        }
}

static int comms_colour_or_0(int w, void *seed)
{
    int colour = comms_world_colour(w, seed);
    return colour < 0 ? 0 : colour;
}

/* The checks rank w makes in the barrier case (-1: NODE unknown here):
 * one a step of a communicator of 2 or more, and one more when its sender
 * notified. */
static int64_t comms_barrier_checks(const comms_run_t *m, int w)
{
    uint32_t seed = m->d.seed;
    comms_list_t world = comms_world(&m->info), node = comms_node(&m->info);
    comms_list_t split = comms_expect_split(&world, w, comms_colour_or_0, comms_world_key, &seed);
    int64_t checks = 0;
    for (int it = 0; it < COMMS_ITERS; it++) {
        const comms_list_t *c = it % 3 == 2 ? &node : &split;
        if (c->n < 0)
            return -1;
        int i = 0;
        while (i < c->n && c->w[i] != w)
            i++;
        int step = comms_put_step(seed, it, 0, c->n);
        if (step > 0)
            checks += 1 + comms_put_notifies(seed, it, (i - step + c->n) % c->n);
    }
    return checks;
}

static void comms_check_rank(const comms_run_t *m, int dr)
{
    const int64_t *res = m->res + (size_t)dr * COMMS_SLOTS;
    int w = m->info.rank_start + dr;
    TEST_CHECK(res[COMMS_STATUS] == 0, "seed %u, rank %d: a call failed with %s", m->d.seed, w,
               dcuda_status_name((dcuda_status_t)res[COMMS_STATUS]));
    TEST_CHECK(res[COMMS_BAD] == 0,
               "seed %u, rank %d: %" PRId64 " of %" PRId64 " checks failed, the first at %" PRId64,
               m->d.seed, w, res[COMMS_BAD], res[COMMS_CHECKED], res[COMMS_FIRST_BAD]);
    if (m->d.test_case == COMMS_SPLIT)
        comms_check_split_rank(m, w, res);
    if (m->d.test_case == COMMS_BARRIER) {
        int64_t want = comms_barrier_checks(m, w);
        TEST_CHECK(want < 0 || res[COMMS_CHECKED] == want,
                   "seed %u, rank %d: %" PRId64 " checks made, expected %" PRId64, m->d.seed, w,
                   res[COMMS_CHECKED], want);
    }
    if (m->d.test_case == COMMS_MISUSE)
        TEST_CHECK(res[COMMS_CHECKED] == (m->info.rank_count > 1 ? 26 : 25),
                   "seed %u, rank %d: %" PRId64 " checks made", m->d.seed, w, res[COMMS_CHECKED]);
}

static int comms_run_case(int argc, char **argv, int which, dcuda_status_t also_ok)
{
    comms_run_t m;
    memset(&m, 0, sizeof m);
    uint32_t seed = (uint32_t)test_arg(argc, argv, 2, 1);
    long runs = test_arg(argc, argv, 3, COMMS_RUNS);
    setenv("DCUDA_ON_ERROR", "continue", 1);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(comms), 64, &m.h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(m.h, &m.info);
    test_check_rank_setting(&m.info);
    if (m.info.rank_count > COMMS_MAX_MEMBERS) {
        printf("SKIP comms: at most %d ranks, have %d\n", COMMS_MAX_MEMBERS, m.info.rank_count);
        TEST_STATUS(dcuda_host_finish(m.h), DCUDA_OK);
        return TEST_SKIP;
    }
    int mine = m.info.rank_responsible;
    m.d.test_case = which;
    m.d.region = dcuda_comm_split_room(m.info.rank_count) + 3u * COMMS_PUT_MAX;
    m.buf_bytes = (size_t)mine * m.d.region;
    if (test_alloc_both(m.h, m.buf_bytes, (void **)&m.buf, (void **)&m.d.buf) &&
        test_alloc_both(m.h, (size_t)mine * COMMS_SLOTS * sizeof *m.res, (void **)&m.res,
                        (void **)&m.d.res))
        for (long run = 0; run < runs && test_failures == 0; run++) {
            m.d.seed = seed + (uint32_t)run;
            test_buffers_t b = { m.buf, m.d.buf, m.buf_bytes,
                                 m.res, m.d.res, (size_t)mine * COMMS_SLOTS * sizeof *m.res };
            if (!test_run_buffers(m.h, &m.d, sizeof m.d, &b, m.d.seed, also_ok))
                break;
            for (int dr = 0; dr < mine; dr++)
                comms_check_rank(&m, dr);
        }
    printf("%scomms: seeds %u..%u, %d ranks in %d process(es), %d node(s)\n", test_who, seed,
           seed + (uint32_t)runs - 1u, m.info.rank_count, m.info.process_count, m.info.node_count);
    test_free_both(m.h, m.buf, m.d.buf);
    test_free_both(m.h, m.res, m.d.res);
    TEST_STATUS(dcuda_host_finish(m.h), DCUDA_OK);
    return 0;
}

static int run_split(int argc, char **argv)
{
    return comms_run_case(argc, argv, COMMS_SPLIT, DCUDA_OK);
}
static int run_barrier(int argc, char **argv)
{
    return comms_run_case(argc, argv, COMMS_BARRIER, DCUDA_OK);
}
static int run_misuse(int argc, char **argv)
{
    return comms_run_case(argc, argv, COMMS_MISUSE, DCUDA_ERR_COMM);
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = { { "split", run_split },
                                         { "barrier", run_barrier },
                                         { "misuse", run_misuse } };
    return test_main(argc, argv, cases, 3);
}
