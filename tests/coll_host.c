/*
 * Host driver of the collectives' randomized test (coll.h, coll_kernels.c):
 *
 *   dcuda_test_coll coll|split|small [seed [runs [steps]]]
 *
 * `split` adds steps on a split of WORLD by parity (window D); `small`
 * takes every step of the small sizes (none of the large ones that most
 * reductions and gathers take in `coll`): the forms of small calls
 * (pushed, reads of parts, through the devices) on both sides of their
 * thresholds, many times a run.
 * Each run zeroes this process's regions, runs the seeded steps, and
 * checks, for every rank this process owns, what its ranks report (every
 * step done, none wrong, no failed call) and, seen from the host, the
 * result of the last step on each communicator against a serial
 * computation of its own.
 *
 *   dcuda_test_coll coll_unreachable
 *
 * CPU ranks of several processes of one node without a network path:
 * a WORLD window whose parts lie, in every process but the first, in
 * memory from malloc (no other process maps it), and one allreduce on it.
 * The collective cannot read those parts across processes and its puts
 * cannot reach them: every process's run must fail, none hang, and each
 * must say a part is not in memory from dcuda_host_alloc. (Every
 * process must judge the parts alike: one that read while another took
 * the tree would hang or corrupt.)
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_rank.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(coll);
DCUDA_KERNEL_DECLARE(coll_unreachable);

#define COLL_RUNS 2
/* Runs of `small` (its calls are quick; a run of 24 steps has about two
 * WORLD allreduces small enough for the reads or the devices). */
#define COLL_SMALL_RUNS 8

typedef struct coll_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    coll_data_t d;
    size_t buf_bytes;
    unsigned char *buf; /* host copy of d.buf */
    int64_t *res;
    int64_t steps;
} coll_run_t;

/* Step s as WORLD rank me sees it. */
static coll_step_t coll_step_of(const coll_data_t *d, int s, int me)
{
    return coll_step(d->seed, s, d->world, d->device, d->split, coll_split_group(me, d->world).size,
                     d->small);
}

/* The last step of WORLD rank me on `on` (COLL_ON_*), or -1. */
static int last_step_on(const coll_data_t *d, int on, int me)
{
    for (int s = d->steps - 1; s >= 0; s--)
        if (coll_step_of(d, s, me).comm == on)
            return s;
    return -1;
}

/* Rank dr's result of the last step on `on`, seen from the host. */
static void coll_check_last(coll_run_t *m, int dr, int on)
{
    const coll_data_t *d = &m->d;
    int me = m->info.rank_start + dr, s = last_step_on(d, on, me);
    if (s < 0)
        return;
    coll_step_t t = coll_step_of(d, s, me);
    const unsigned char *data = m->buf + (size_t)dr * coll_rank_bytes(d->world, d->split) +
                                coll_part_offset(d->world, on) + t.offset;
    coll_group_t g = on == COLL_ON_WORLD    ? (coll_group_t){ 0, 1, d->world }
                     : on == COLL_ON_DEVICE ? (coll_group_t){ m->info.rank_start, 1, d->device }
                                            : coll_split_group(me, d->world);
    int crank = coll_group_rank(&g, me);
    uint64_t units = coll_units(&t, g.size, crank);
    for (uint64_t u = 0; u < units; u++)
        if (!coll_unit_ok(&t, d->seed, s, &g, crank, u, data)) {
            TEST_CHECK(0,
                       "seed %u, rank %d: unit %" PRIu64 " of %s step %d (type %d, op %d, "
                       "count %" PRIu64 ") differs from the serial result",
                       d->seed, me, u, coll_name(t.kind), s, t.type, t.op, t.count);
            return;
        }
}

static void coll_check_rank(coll_run_t *m, int dr)
{
    const coll_data_t *d = &m->d;
    int me = m->info.rank_start + dr;
    const int64_t *res = m->res + (size_t)dr * COLL_SLOTS;
    TEST_CHECK(res[COLL_RES_STATUS] == 0, "seed %u, rank %d: a call failed with %s", d->seed, me,
               dcuda_status_name((dcuda_status_t)res[COLL_RES_STATUS]));
    TEST_CHECK(res[COLL_RES_BAD] == 0 && res[COLL_RES_STEPS] == d->steps,
               "seed %u, rank %d: %" PRId64 " wrong steps (see its log), %" PRId64 " done of %d",
               d->seed, me, res[COLL_RES_BAD], res[COLL_RES_STEPS], d->steps);
    m->steps += res[COLL_RES_STEPS];
    for (int on = 0; on < (d->split ? COLL_ONS : COLL_ON_SPLIT); on++)
        coll_check_last(m, dr, on);
}

/* One run with `seed`; checks this process's ranks. */
static void coll_one(coll_run_t *m, uint32_t seed)
{
    coll_data_t *d = &m->d;
    int mine = m->info.rank_responsible;
    d->seed = seed;
    test_buffers_t b = { m->buf, d->buf, m->buf_bytes,
                         m->res, d->res, (size_t)mine * COLL_SLOTS * sizeof *m->res };
    if (!test_run_buffers(m->h, d, sizeof *d, &b, seed, DCUDA_OK))
        return;
    for (int dr = 0; dr < mine; dr++)
        coll_check_rank(m, dr);
}

static int coll_main(int argc, char **argv, int split, int small)
{
    coll_run_t m;
    memset(&m, 0, sizeof m);
    uint32_t seed = (uint32_t)test_arg(argc, argv, 2, 1);
    long runs = test_arg(argc, argv, 3, small ? COLL_SMALL_RUNS : COLL_RUNS);
    int steps = (int)test_arg(argc, argv, 4, COLL_STEPS);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(coll), 64, &m.h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(m.h, &m.info);
    test_check_rank_setting(&m.info);
    int mine = m.info.rank_responsible;
    m.d = (coll_data_t){ 0, steps, split, small, m.info.rank_count, mine, NULL, NULL, NULL };
    int ok = steps >= 1 && steps <= COLL_STEPS;
    TEST_CHECK(ok, "%d steps (1..%d)", steps, COLL_STEPS);
    m.buf_bytes = (size_t)mine * (size_t)coll_rank_bytes(m.d.world, split);
    if (ok && test_alloc_both(m.h, m.buf_bytes, (void **)&m.buf, (void **)&m.d.buf) &&
        test_alloc_both(m.h, (size_t)mine * COLL_SLOTS * sizeof *m.res, (void **)&m.res,
                        (void **)&m.d.res))
        for (long run = 0; run < runs && test_failures == 0; run++)
            coll_one(&m, seed + (uint32_t)run);
    printf("%scoll%s: seeds %u..%u, %d ranks (%d here), %d steps: this process's ranks did "
           "%" PRId64 " steps\n",
           test_who,
           split   ? " with a split"
           : small ? " of small sizes"
                   : "",
           seed, seed + (uint32_t)runs - 1u, m.d.world, mine, steps, m.steps);
    test_free_both(m.h, m.buf, m.d.buf);
    test_free_both(m.h, m.res, m.d.res);
    TEST_STATUS(dcuda_host_finish(m.h), DCUDA_OK);
    return 0;
}

static int run_coll(int argc, char **argv) { return coll_main(argc, argv, 0, 0); }
static int run_split(int argc, char **argv) { return coll_main(argc, argv, 1, 0); }
static int run_small(int argc, char **argv) { return coll_main(argc, argv, 0, 1); }

/* See the top. */
static int run_unreachable(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(coll_unreachable), 1, &h),
                     DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(h, &info);
    test_check_rank_setting(&info);
    if (info.process_count < 2 || info.node_count != 1 || strcmp(info.backend, "cpu") != 0) {
        printf("%sSKIP coll_unreachable: needs CPU ranks of 2+ processes on one node without "
               "the network path (%d processes, %d nodes, backend %s)\n",
               test_who, info.process_count, info.node_count, info.backend);
        dcuda_host_finish(h);
        return TEST_SKIP;
    }
    int mine = info.rank_responsible;
    size_t res_bytes = (size_t)mine * COLL_SLOTS * sizeof(int64_t);
    coll_data_t d = { 0, 1, 0, 0, info.rank_count, mine, NULL, NULL, NULL };
    int64_t *res = NULL;
    unsigned char *plain = NULL;
    int ok = TEST_STATUS(dcuda_host_alloc(h, (size_t)mine * COLL_PLAIN_BYTES, (void **)&d.buf),
                         DCUDA_OK) &&
             test_alloc_both(h, res_bytes, (void **)&res, (void **)&d.res);
    if (ok && info.process_index > 0) {
        plain = calloc((size_t)mine, COLL_PLAIN_BYTES);
        d.plain = plain;
        ok = plain != NULL;
        TEST_CHECK(ok, "no memory");
    }
    if (ok) {
        dcuda_status_t st = dcuda_host_run(h, &d, sizeof d, NULL);
        const char *why = dcuda_host_last_error(h);
        printf("%srun returned %s: %s\n", test_who, dcuda_status_name(st), why ? why : "");
        TEST_CHECK(st != DCUDA_OK, "the allreduce over unreachable parts succeeded");
        TEST_CONTAINS(why, "dcuda_host_alloc"); /* the first failure, or the run it ended */
    }
    free(plain);
    test_free_both(h, res, d.res);
    dcuda_host_free(h, d.buf);
    dcuda_host_finish(h); /* after a failed run, whatever it says */
    return test_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = { { "coll", run_coll },
                                         { "split", run_split },
                                         { "small", run_small },
                                         { "coll_unreachable", run_unreachable } };
    return test_main(argc, argv, cases, 4);
}
