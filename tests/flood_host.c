/*
 * Host driver of the flood test of the network path's credits (flood.h,
 * flood_kernels.c):
 *
 *   dcuda_test_flood flood [seed [runs [rounds]]]
 *
 * Each run zeroes this process's regions, runs the seeded rounds, and
 * checks, for every rank this process owns, what its ranks report (the
 * puts received, recomputed here from the seed; no wrong byte, no failed
 * call) and every slot of its region against a replay of all rounds.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_rank.h"
#include "flood.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(flood);

#define FLOOD_ROUNDS 3
#define FLOOD_RUNS 2

typedef struct flood_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    flood_data_t d;
    size_t buf_bytes;
    unsigned char *buf, *want; /* host copy of d.buf, and the replay of one rank's region */
    int64_t *res;
    int64_t received;
} flood_run_t;

/* Rank t's region after every round: the last put into each slot. */
static void flood_replay(const flood_data_t *d, int t, unsigned char *want)
{
    memset(want, 0, (size_t)flood_bytes(d->world));
    for (int r = 0; r < d->rounds; r++)
        for (int s = 0; s < d->world; s++)
            for (int k = 0; k < FLOOD_PUTS; k++) {
                if (s == t || flood_target(d->seed, r, s, k, d->world) != t)
                    continue;
                uint64_t n = flood_size(d->seed, r, s, k);
                for (uint64_t i = 0; i < n; i++)
                    want[flood_slot(s, k) + i] = flood_byte(d->seed, r, s, k, i);
            }
}

static void flood_check_rank(flood_run_t *m, int dr)
{
    const flood_data_t *d = &m->d;
    int t = m->info.rank_start + dr;
    const int64_t *res = m->res + (size_t)dr * FLOOD_SLOTS;
    int64_t received = 0;
    for (int r = 0; r < d->rounds; r++)
        for (int s = 0; s < d->world; s++)
            for (int k = 0; k < FLOOD_PUTS; k++)
                received += s != t && flood_target(d->seed, r, s, k, d->world) == t;
    TEST_CHECK(res[FLOOD_RES_STATUS] == 0, "seed %u, rank %d: a call failed with %s", d->seed, t,
               dcuda_status_name((dcuda_status_t)res[FLOOD_RES_STATUS]));
    TEST_CHECK(res[FLOOD_RES_BAD] == 0 && res[FLOOD_RES_RECEIVED] == received,
               "seed %u, rank %d: %" PRId64 " wrong puts seen (see its log), %" PRId64
               " received of %" PRId64,
               d->seed, t, res[FLOOD_RES_BAD], res[FLOOD_RES_RECEIVED], received);
    m->received += res[FLOOD_RES_RECEIVED];
    size_t bytes = (size_t)flood_bytes(d->world);
    const unsigned char *region = m->buf + (size_t)dr * bytes;
    flood_replay(d, t, m->want);
    for (size_t pos = FLOOD_MAX; pos < bytes; pos++)
        if (region[pos] != m->want[pos]) {
            TEST_CHECK(0, "seed %u, rank %d: byte %zu of its region is %u, the replay says %u",
                       d->seed, t, pos, region[pos], m->want[pos]);
            break;
        }
}

/* One run with `seed`; checks this process's ranks. */
static void flood_one(flood_run_t *m, uint32_t seed)
{
    flood_data_t *d = &m->d;
    int mine = m->info.rank_responsible;
    d->seed = seed;
    test_buffers_t b = { m->buf, d->buf, m->buf_bytes,
                         m->res, d->res, (size_t)mine * FLOOD_SLOTS * sizeof *m->res };
    if (!test_run_buffers(m->h, d, sizeof *d, &b, seed, DCUDA_OK))
        return;
    for (int dr = 0; dr < mine; dr++)
        flood_check_rank(m, dr);
}

static int run_flood(int argc, char **argv)
{
    flood_run_t m;
    memset(&m, 0, sizeof m);
    uint32_t seed = (uint32_t)test_arg(argc, argv, 2, 1);
    long runs = test_arg(argc, argv, 3, FLOOD_RUNS);
    int rounds = (int)test_arg(argc, argv, 4, FLOOD_ROUNDS);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(flood), 64, &m.h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(m.h, &m.info);
    test_check_rank_setting(&m.info);
    int mine = m.info.rank_responsible;
    m.d = (flood_data_t){ 0, rounds, m.info.rank_count, NULL, NULL };
    m.buf_bytes = (size_t)mine * (size_t)flood_bytes(m.d.world);
    m.want = malloc((size_t)flood_bytes(m.d.world));
    int ok = m.want && rounds >= 1 && m.d.world >= 2;
    TEST_CHECK(ok, "out of memory, %d rounds or %d ranks", rounds, m.d.world);
    if (ok && test_alloc_both(m.h, m.buf_bytes, (void **)&m.buf, (void **)&m.d.buf) &&
        test_alloc_both(m.h, (size_t)mine * FLOOD_SLOTS * sizeof *m.res, (void **)&m.res,
                        (void **)&m.d.res))
        for (long run = 0; run < runs && test_failures == 0; run++)
            flood_one(&m, seed + (uint32_t)run);
    printf("%sflood: seeds %u..%u, %d ranks, %d rounds: this process's ranks received %" PRId64
           " puts\n",
           test_who, seed, seed + (uint32_t)runs - 1u, m.d.world, rounds, m.received);
    test_free_both(m.h, m.buf, m.d.buf);
    test_free_both(m.h, m.res, m.d.res);
    TEST_STATUS(dcuda_host_finish(m.h), DCUDA_OK);
    free(m.want);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = { { "flood", run_flood } };
    return test_main(argc, argv, cases, 1);
}
