/*
 * Rank code of the flood test of the network path's credits
 * (dcuda_test_flood, see flood.h): each round every rank sends all its
 * puts before it consumes anything, then waits for what it was sent and
 * checks it. Written once for CPU and GPU ranks: the rank API only, fills
 * and checks shared among the threads of a rank, thread 0 counts.
 */
#include "dcuda/dcuda_rank.h"
#include "flood.h"
#include "test_rank.h"

typedef struct flood_rank {
    dcuda_state_t *st;
    const flood_data_t *d;
    int me, world;
    uint32_t seed;
    unsigned char *region; /* the staging area, then the slots */
    int32_t *flag;         /* shared by the rank's threads */
    dcuda_win_t win;
    int64_t status, bad, received;
} flood_rank_t;

TEST_RANK_FN void flood_ok(flood_rank_t *c, int status) { test_note(&c->status, status); }

/* Put k of this rank in round r, from the staging area. */
TEST_RANK_FN void flood_put(flood_rank_t *c, int r, int k)
{
    int t = flood_target(c->seed, r, c->me, k, c->world);
    uint64_t n = flood_size(c->seed, r, c->me, k);
    for (uint64_t i = (uint64_t)dcuda_thread_index(); i < n; i += (uint64_t)dcuda_thread_count())
        c->region[i] = flood_byte(c->seed, r, c->me, k, i);
    dcuda_rank_sync();
    flood_ok(c, dcuda_put_notify(c->st, c->win, t, flood_slot(c->me, k), n, c->region, FLOOD_TAG));
}

/* The wrong bytes of slot (s, k) after round r (the threads share them). */
TEST_RANK_FN void flood_check_slot(flood_rank_t *c, int r, int s, int k)
{
    uint64_t n = flood_size(c->seed, r, s, k);
    const unsigned char *slot = c->region + flood_slot(s, k);
    int64_t bad = 0;
    for (uint64_t i = (uint64_t)dcuda_thread_index(); i < n; i += (uint64_t)dcuda_thread_count())
        bad += slot[i] != flood_byte(c->seed, r, s, k, i);
    if (test_rank_any(c->flag, bad != 0) && dcuda_thread_index() == 0) {
        if (c->bad == 0)
            dcuda_log(c->st, "flood: rank %d, round %d: put %d of rank %d (%llu bytes) is wrong",
                      c->me, r, k, s, (unsigned long long)n);
        c->bad++;
    }
}

/* Round r: all my puts, then what came to me. */
TEST_RANK_FN void flood_round(flood_rank_t *c, int r)
{
    int incoming = 0;
    for (int k = 0; k < FLOOD_PUTS; k++)
        flood_put(c, r, k);
    for (int s = 0; s < c->world; s++)
        for (int k = 0; k < FLOOD_PUTS; k++)
            incoming += s != c->me && flood_target(c->seed, r, s, k, c->world) == c->me;
    if (incoming)
        flood_ok(c, dcuda_wait_notifications(c->st, FLOOD_TAG, incoming));
    c->received += incoming;
    for (int s = 0; s < c->world; s++)
        for (int k = 0; k < FLOOD_PUTS; k++)
            if (s != c->me && flood_target(c->seed, r, s, k, c->world) == c->me)
                flood_check_slot(c, r, s, k);
    /* Nobody writes a slot of the next round before its target checked it. */
    flood_ok(c, dcuda_comm_barrier(c->st, DCUDA_COMM_WORLD));
}

DCUDA_KERNEL(flood, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    DCUDA_SHARED int32_t flag;
    flood_rank_t c;
    int drank = 0;
    c.st = &st;
    c.flag = &flag;
    c.status = c.bad = c.received = 0;
    flood_ok(&c, dcuda_rank_init(ctx, &st));
    flood_ok(&c, dcuda_get_data(&st, (void **)&c.d));
    flood_ok(&c, dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &c.me));
    flood_ok(&c, dcuda_comm_size(&st, DCUDA_COMM_WORLD, &c.world));
    flood_ok(&c, dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank));
    c.seed = c.d->seed;
    int sane = c.world == c.d->world && c.world >= 2;
    flood_ok(&c, sane ? DCUDA_OK : DCUDA_ERR_INVALID_ARG);
    c.region = c.d->buf + (uint64_t)drank * flood_bytes(c.world);
    flood_ok(&c, dcuda_win_create(&st, DCUDA_COMM_WORLD, c.region, flood_bytes(c.world), &c.win));
    for (int r = 0; sane && r < c.d->rounds; r++)
        flood_round(&c, r);
    flood_ok(&c, dcuda_win_free(&st, c.win));
    flood_ok(&c, dcuda_rank_finish(&st));
    if (dcuda_thread_index() == 0) {
        int64_t *res = c.d->res + (int64_t)drank * FLOOD_SLOTS;
        res[FLOOD_RES_STATUS] = c.status;
        res[FLOOD_RES_BAD] = c.bad;
        res[FLOOD_RES_RECEIVED] = c.received;
    }
}
