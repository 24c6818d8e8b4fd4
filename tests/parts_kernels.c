/*
 * Rank code of the randomized window-parts test (dcuda_test_parts, see
 * parts.h): every rank runs its part of the seeded rounds, checks the
 * status of each put against the model of the parts, and its region after
 * each round's notifications. Written once for CPU and GPU ranks: the
 * rank API only, fills and checks shared among the threads of a rank,
 * thread 0 counts.
 */
#include "dcuda/dcuda_rank.h"
#include "parts.h"

typedef struct parts_rank {
    dcuda_state_t *st;
    const parts_data_t *d;
    int me, world;
    uint32_t seed;
    unsigned char *region, *stage;
    int32_t *flag;                          /* shared by the rank's threads */
    dcuda_win_t win[PARTS_MAX_WINDOWS + 1]; /* 0: the long-lived window */
    int64_t status, bad, ops, refused, bytes;
} parts_rank_t;

TEST_RANK_FN void parts_ok(parts_rank_t *c, int status) { test_note(&c->status, status); }

/* Fills the region with round r's canary (every thread a share). */
TEST_RANK_FN void parts_fill(parts_rank_t *c, int r)
{
    for (uint64_t pos = (uint64_t)dcuda_thread_index(); pos < PARTS_REGION;
         pos += (uint64_t)dcuda_thread_count())
        c->region[pos] = parts_canary(c->seed, r, c->me, pos);
    dcuda_rank_sync();
}

/* Put j of this rank in round r, its status checked against the model. */
TEST_RANK_FN void parts_put(parts_rank_t *c, int r, int j)
{
    parts_op_t op = parts_op(c->seed, r, j, c->me, c->world);
    if (op.inside) {
        uint64_t at = parts_part(c->seed, r, op.win, op.target).off + op.offset;
        for (uint64_t i = (uint64_t)dcuda_thread_index(); i < op.size;
             i += (uint64_t)dcuda_thread_count())
            c->stage[i] = parts_byte(c->seed, r, op.target, at + i);
        dcuda_rank_sync();
    }
    int s =
        dcuda_put_notify(c->st, c->win[op.win], op.target, op.offset, op.size, c->stage, PARTS_TAG);
    int want = op.inside ? DCUDA_OK : DCUDA_ERR_BOUNDS;
    if (s != want) {
        c->bad++;
        if (s != DCUDA_OK && s != DCUDA_ERR_BOUNDS)
            parts_ok(c, s);
    }
    c->ops++;
    c->refused += !op.inside;
}

/* The wrong bytes of my region after round r, of those from `start` every
 * `stride`; the first at *at. */
TEST_RANK_FN int64_t parts_scan(const parts_rank_t *c, int r, uint64_t start, uint64_t stride,
                                uint64_t *at)
{
    int64_t bad = 0;
    for (uint64_t pos = start; pos < PARTS_REGION; pos += stride) {
        if (c->region[pos] != parts_want(c->seed, r, c->me, pos, c->world) && bad++ == 0)
            *at = pos;
    }
    return bad;
}

/* After round r's notifications: every byte of my region (the threads
 * share them; thread 0 counts and reports). */
TEST_RANK_FN void parts_check(parts_rank_t *c, int r)
{
    uint64_t at = 0;
    if (dcuda_thread_index() == 0)
        *c->flag = 0;
    dcuda_rank_sync();
    if (parts_scan(c, r, (uint64_t)dcuda_thread_index(), (uint64_t)dcuda_thread_count(), &at))
        *c->flag = 1;
    dcuda_rank_sync();
    int any = *c->flag;
    dcuda_rank_sync(); /* every thread read it before thread 0 clears it again */
    if (dcuda_thread_index() != 0)
        return;
    c->bytes += PARTS_REGION;
    if (!any)
        return;
    int64_t bad = parts_scan(c, r, 0, 1, &at);
    if (c->bad == 0)
        dcuda_log(c->st, "parts: rank %d, round %d: byte %llu of its region holds %u, expected %u",
                  c->me, r, (unsigned long long)at, (unsigned)c->region[at],
                  (unsigned)parts_want(c->seed, r, c->me, at, c->world));
    c->bad += bad;
}

/* Round r: my windows of the round, my puts, then what came to me. */
TEST_RANK_FN void parts_round(parts_rank_t *c, int r)
{
    int n = parts_windows(c->seed, r), incoming = 0;
    parts_fill(c, r);
    for (int w = 1; w <= n; w++) {
        parts_part_t p = parts_part(c->seed, r, w, c->me);
        parts_ok(c,
                 dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->region + p.off, p.size, &c->win[w]));
    }
    for (int j = 0; j < PARTS_OPS; j++) {
        parts_put(c, r, j);
        incoming += parts_incoming(c->seed, r, j, c->me, c->world).inside;
    }
    if (incoming)
        parts_ok(c, dcuda_wait_notifications(c->st, PARTS_TAG, incoming));
    parts_check(c, r);
    for (int i = 0; i < n; i++)
        parts_ok(c, dcuda_win_free(c->st, c->win[parts_freed(c->seed, r, i)]));
}

DCUDA_KERNEL(parts, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    DCUDA_SHARED int32_t flag;
    parts_rank_t c;
    int drank = 0;
    c.st = &st;
    c.flag = &flag;
    c.status = c.bad = c.ops = c.refused = c.bytes = 0;
    parts_ok(&c, dcuda_rank_init(ctx, &st));
    parts_ok(&c, dcuda_get_data(&st, (void **)&c.d));
    parts_ok(&c, dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &c.me));
    parts_ok(&c, dcuda_comm_size(&st, DCUDA_COMM_WORLD, &c.world));
    parts_ok(&c, dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank));
    c.seed = c.d->seed;
    c.region = c.d->buf + (uint64_t)drank * (PARTS_REGION + PARTS_STAGE);
    c.stage = c.region + PARTS_REGION;
    int sane = c.world == c.d->world;
    parts_ok(&c, sane ? DCUDA_OK : DCUDA_ERR_INVALID_ARG);
    dcuda_win_t stage_win = DCUDA_WIN_NONE;
    parts_part_t kept = parts_part(c.seed, 0, 0, c.me);
    parts_ok(&c, dcuda_win_create(&st, DCUDA_COMM_WORLD, c.stage, PARTS_STAGE, &stage_win));
    parts_ok(&c,
             dcuda_win_create(&st, DCUDA_COMM_WORLD, c.region + kept.off, kept.size, &c.win[0]));
    for (int r = 0; sane && r < c.d->rounds; r++)
        parts_round(&c, r);
    parts_ok(&c, dcuda_win_free(&st, c.win[0]));
    parts_ok(&c, dcuda_win_free(&st, stage_win));
    parts_ok(&c, dcuda_rank_finish(&st));
    if (dcuda_thread_index() == 0) {
        int64_t *res = c.d->res + (int64_t)drank * PARTS_SLOTS;
        res[PARTS_RES_STATUS] = c.status;
        res[PARTS_RES_BAD] = c.bad;
        res[PARTS_RES_OPS] = c.ops;
        res[PARTS_RES_REFUSED] = c.refused;
        res[PARTS_RES_BYTES] = c.bytes;
    }
}
