/*
 * Host driver of the randomized window-parts test (parts.h,
 * parts_kernels.c):
 *
 *   dcuda_test_parts model [seed [runs [rounds]]]
 *
 * Each run fills this process's regions with a canary, runs the seeded
 * rounds with DCUDA_ON_ERROR=continue (puts outside a part must fail
 * without ending the run), and then checks, for every rank this process
 * owns, what its ranks report (puts issued, puts refused and bytes
 * checked, each recomputed here from the seed) and every byte of its
 * region against a replay of the last round.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_rank.h"
#include "parts.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(parts);

#define PARTS_BYTES (PARTS_REGION + PARTS_STAGE) /* a rank's share of buf */
#define PARTS_ROUNDS 6
#define PARTS_RUNS 2

typedef struct parts_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    parts_data_t d;
    size_t buf_bytes;
    unsigned char *buf; /* host copy of d.buf */
    int64_t *res;
    int64_t total_ops, total_refused;
} parts_run_t;

/* Puts rank t refuses over the whole run. */
static int64_t parts_expect_refused(const parts_data_t *d, int t)
{
    int64_t refused = 0;
    for (int r = 0; r < d->rounds; r++)
        for (int j = 0; j < PARTS_OPS; j++)
            refused += !parts_op(d->seed, r, j, t, d->world).inside;
    return refused;
}

static void parts_check_rank(parts_run_t *m, int dr)
{
    const parts_data_t *d = &m->d;
    int t = m->info.rank_start + dr, last = d->rounds - 1;
    const int64_t *res = m->res + (size_t)dr * PARTS_SLOTS;
    int64_t ops = (int64_t)d->rounds * PARTS_OPS, refused = parts_expect_refused(d, t);
    int64_t bytes = (int64_t)d->rounds * PARTS_REGION;
    TEST_CHECK(res[PARTS_RES_STATUS] == 0, "seed %u, rank %d: a call failed with %s", d->seed, t,
               dcuda_status_name((dcuda_status_t)res[PARTS_RES_STATUS]));
    TEST_CHECK(res[PARTS_RES_BAD] == 0, "seed %u, rank %d: %" PRId64 " checks failed (see its log)",
               d->seed, t, res[PARTS_RES_BAD]);
    TEST_CHECK(res[PARTS_RES_OPS] == ops && res[PARTS_RES_REFUSED] == refused &&
                   res[PARTS_RES_BYTES] == bytes,
               "seed %u, rank %d: issued %" PRId64 " puts, %" PRId64 " refused, checked %" PRId64
               " bytes; expected %" PRId64 ", %" PRId64 ", %" PRId64,
               d->seed, t, res[PARTS_RES_OPS], res[PARTS_RES_REFUSED], res[PARTS_RES_BYTES], ops,
               refused, bytes);
    m->total_ops += res[PARTS_RES_OPS];
    m->total_refused += res[PARTS_RES_REFUSED];
    const unsigned char *region = m->buf + (size_t)dr * PARTS_BYTES;
    for (uint64_t pos = 0; last >= 0 && pos < PARTS_REGION; pos++) {
        uint8_t want = parts_want(d->seed, last, t, pos, d->world);
        if (region[pos] != want) {
            TEST_CHECK(0,
                       "seed %u, rank %d: byte %" PRIu64 " of its region is %u after the "
                       "last round, the replay says %u",
                       d->seed, t, pos, region[pos], want);
            break;
        }
    }
}

/* One run with `seed`; checks this process's ranks. */
static void parts_one(parts_run_t *m, uint32_t seed)
{
    parts_data_t *d = &m->d;
    int mine = m->info.rank_responsible;
    d->seed = seed;
    test_buffers_t b = { m->buf, d->buf, m->buf_bytes,
                         m->res, d->res, (size_t)mine * PARTS_SLOTS * sizeof *m->res };
    /* With ON_ERROR=continue the run reports the first refused put, if any. */
    if (!test_run_buffers(m->h, d, sizeof *d, &b, seed, DCUDA_ERR_BOUNDS))
        return;
    for (int dr = 0; dr < mine; dr++)
        parts_check_rank(m, dr);
}

static int run_model(int argc, char **argv)
{
    parts_run_t m;
    memset(&m, 0, sizeof m);
    uint32_t seed = (uint32_t)test_arg(argc, argv, 2, 1);
    long runs = test_arg(argc, argv, 3, PARTS_RUNS);
    int rounds = (int)test_arg(argc, argv, 4, PARTS_ROUNDS);
    setenv("DCUDA_ON_ERROR", "continue", 1);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(parts), 64, &m.h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(m.h, &m.info);
    test_check_rank_setting(&m.info);
    int mine = m.info.rank_responsible;
    m.d = (parts_data_t){ 0, rounds, m.info.rank_count, NULL, NULL };
    m.buf_bytes = (size_t)mine * PARTS_BYTES;
    TEST_CHECK(rounds >= 1, "%d rounds", rounds);
    if (rounds >= 1 && test_alloc_both(m.h, m.buf_bytes, (void **)&m.buf, (void **)&m.d.buf) &&
        test_alloc_both(m.h, (size_t)mine * PARTS_SLOTS * sizeof *m.res, (void **)&m.res,
                        (void **)&m.d.res))
        for (long run = 0; run < runs && test_failures == 0; run++)
            parts_one(&m, seed + (uint32_t)run);
    printf("%sparts: seeds %u..%u, %d ranks, %d rounds: this process's ranks issued %" PRId64
           " puts, %" PRId64 " refused as outside their target's part\n",
           test_who, seed, seed + (uint32_t)runs - 1u, m.d.world, rounds, m.total_ops,
           m.total_refused);
    test_free_both(m.h, m.buf, m.d.buf);
    test_free_both(m.h, m.res, m.d.res);
    TEST_STATUS(dcuda_host_finish(m.h), DCUDA_OK);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = { { "model", run_model } };
    return test_main(argc, argv, cases, 1);
}
