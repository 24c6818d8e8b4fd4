/*
 * Rank code of the randomized model test (dcuda_test_model, see model.h):
 * every rank runs its part of the seeded program, consumes each source's
 * notifications in order and checks after each one what that source's
 * earlier puts must have left in its slot, and checks what each of its
 * gets brought. Written once for CPU and GPU
 * ranks: the rank API only, fills and checks shared among the threads of
 * a rank, thread 0 reports.
 */
#include "dcuda/dcuda_rank.h"
#include "model.h"

/* What one thread of a rank knows. Every thread computes the same program;
 * thread 0's counts are written out. */
typedef struct model_rank {
    dcuda_state_t *st;
    const model_data_t *d;
    int me, world, phases, steps;
    uint32_t seed;
    uint64_t region;
    int comm;            /* the communicator of the program (me, world: my rank and its size) */
    dcuda_win_t win;     /* my part's window on it */
    unsigned char *part; /* my window part: staging, then a slot per rank */
    int32_t *flag;       /* shared by the rank's threads */
    int cursor[MODEL_MAX_RANKS];  /* per source: its next step to look at */
    int checked[MODEL_MAX_RANKS]; /* per source: its steps before this are checked */
    int pending_step;             /* a notified get not yet checked (-1: none) */
    int64_t status, bad, notes, bytes, ops, gets, got;
} model_rank_t;

TEST_RANK_FN void model_ok(model_rank_t *c, int status) { test_note(&c->status, status); }

TEST_RANK_FN unsigned char *model_slot_mem(const model_rank_t *c, int q)
{
    return c->part + (uint64_t)(1 + q) * c->region;
}

/* Source s's writing operations to me in phase f. */
TEST_RANK_FN void model_list_mine(const model_rank_t *c, int s, int f, model_list_t *l)
{
    model_list(c->seed, s, c->me, f, c->steps, c->world, c->region, l);
}

/* The bytes of entries of steps [from, upto] that are wrong, of those no
 * later entry rewrites, scanned from `start` every `stride` bytes of each;
 * the first in *at (entry, byte). */
TEST_RANK_FN int64_t model_scan(const model_rank_t *c, const model_list_t *l, int s, int f,
                                int from, int upto, uint64_t start, uint64_t stride, int *at_entry,
                                uint64_t *at_pos, uint8_t *got, uint8_t *want)
{
    const unsigned char *slot = model_slot_mem(c, model_slot(s, c->me, f, c->world));
    int64_t bad = 0;
    for (int i = 0; i < l->count; i++) {
        if (l->step[i] < from || l->step[i] > upto)
            continue;
        for (uint64_t k = start; k < l->size[i]; k += stride) {
            uint64_t pos = l->offset[i] + k;
            if (model_rewritten(l, upto, pos))
                continue;
            int last = model_last_writer(l, i, upto, pos);
            uint8_t w = model_byte(c->seed, s, f, l->step[last], pos);
            if (slot[pos] == w)
                continue;
            if (bad++ == 0) {
                *at_entry = last;
                *at_pos = pos;
                *got = slot[pos];
                *want = w;
            }
        }
    }
    return bad;
}

/* After the notification of source s's step `upto` (the end of the phase
 * when upto is the last step): its operations of steps [from, upto] must
 * be in place. The rank's threads share the bytes; thread 0 counts and
 * reports. */
TEST_RANK_FN void model_check(model_rank_t *c, int s, int f, int from, int upto)
{
    model_list_t l;
    int entry = 0;
    uint64_t pos = 0;
    uint8_t got = 0, want = 0;
    model_list_mine(c, s, f, &l);
    if (dcuda_thread_index() == 0)
        *c->flag = 0;
    dcuda_rank_sync();
    int64_t bad = model_scan(c, &l, s, f, from, upto, (uint64_t)dcuda_thread_index(),
                             (uint64_t)dcuda_thread_count(), &entry, &pos, &got, &want);
    if (bad)
        *c->flag = 1;
    dcuda_rank_sync();
    int any = *c->flag;
    dcuda_rank_sync(); /* every thread read it before thread 0 clears it again */
    if (dcuda_thread_index() != 0)
        return;
    c->bytes += model_check_bytes(&l, from, upto);
    if (!any)
        return;
    (void)model_scan(c, &l, s, f, from, upto, 0, 1, &entry, &pos, &got, &want);
    if (c->bad++ == 0)
        dcuda_log(c->st,
                  "model: rank %d, phase %d: after rank %d's step %d, byte %llu of its slot "
                  "holds %u, expected %u (its step %d wrote it)",
                  c->me, f, s, upto, (unsigned long long)pos, (unsigned)got, (unsigned)want,
                  l.step[entry]);
}

/* Waits for one notification of `tag`: by tests first, now and then. */
TEST_RANK_FN void model_wait(model_rank_t *c, int tag, uint32_t h)
{
    if (h % 4u == 0u)
        for (int k = 0; k < 32; k++) {
            int r = dcuda_test_notifications(c->st, tag, 1);
            model_ok(c, r);
            if (r != 0)
                return;
        }
    model_ok(c, dcuda_wait_notifications(c->st, tag, 1));
}

/* Consumes source s's notifications to me of its steps before `limit`,
 * checking after each. */
TEST_RANK_FN void model_consume(model_rank_t *c, int s, int f, int limit)
{
    int tag = model_slot(s, c->me, f, c->world);
    for (; c->cursor[s] < limit; c->cursor[s]++) {
        int step = c->cursor[s];
        model_op_t op = model_op(c->seed, s, f, step, c->world, c->region);
        if (op.target != c->me || !model_notifies(&op))
            continue;
        model_wait(c, tag, model_hash(c->seed, (uint32_t)c->me, (uint32_t)s, (uint32_t)step));
        c->notes++;
        model_check(c, s, f, c->checked[s], step);
        c->checked[s] = step + 1;
    }
}

/* The first byte at or after lo that this thread paints: those at off +
 * me + k * stride are its. */
TEST_RANK_FN uint64_t model_first_mine(uint64_t off, uint64_t lo, uint64_t me, uint64_t stride)
{
    uint64_t base = off + me;
    return base >= lo ? base : base + (lo - base + stride - 1u) / stride * stride;
}

/* What my get of step `step` in phase f (op) must have brought, painted
 * into out: the canary of the slot it reads (q, mine in phase f), then
 * each phase's writes to it by that phase's owner in order, in phase f
 * (where I own it) those of my steps before this one. Each thread paints
 * its own bytes (the strided ones), so no thread waits for another. */
TEST_RANK_FN void model_paint_get(const model_rank_t *c, int f, int step, const model_op_t *op,
                                  unsigned char *out)
{
    const uint64_t me = (uint64_t)dcuda_thread_index(), stride = (uint64_t)dcuda_thread_count();
    const uint64_t off = op->offset, n = op->size;
    const int t = op->target, q = model_slot(c->me, t, f, c->world);
    for (uint64_t i = me; i < n; i += stride)
        out[i] = model_canary(c->seed, t, q, off + i);
    for (int g = 0; g <= f; g++) {
        int o = model_owner(q, t, g, c->world); /* me in phase f */
        model_list_t l;
        model_list(c->seed, o, t, g, c->steps, c->world, c->region, &l);
        for (int j = 0; j < l.count && (g < f || l.step[j] < step); j++) {
            uint64_t lo = l.offset[j] > off ? l.offset[j] : off;
            uint64_t hi = l.offset[j] + l.size[j] < off + n ? l.offset[j] + l.size[j] : off + n;
            for (uint64_t pos = model_first_mine(off, lo, me, stride); pos < hi; pos += stride)
                out[pos - off] = model_byte(c->seed, o, g, l.step[j], pos);
        }
    }
}

/* Checks what my get of step `step` brought into the landing area. */
TEST_RANK_FN void model_check_get(model_rank_t *c, int f, int step)
{
    model_op_t op = model_op(c->seed, c->me, f, step, c->world, c->region);
    const unsigned char *got = c->part + model_landing(c->world, c->region) + op.src;
    unsigned char *want = c->part + model_expected(c->world, c->region);
    model_paint_get(c, f, step, &op, want);
    if (dcuda_thread_index() == 0)
        *c->flag = 0;
    dcuda_rank_sync();
    for (uint64_t i = (uint64_t)dcuda_thread_index(); i < op.size;
         i += (uint64_t)dcuda_thread_count())
        if (got[i] != want[i])
            *c->flag = 1;
    dcuda_rank_sync();
    int any = *c->flag;
    dcuda_rank_sync();
    if (dcuda_thread_index() != 0)
        return;
    c->gets++;
    c->got += (int64_t)op.size;
    if (!any)
        return;
    uint64_t i = 0;
    while (got[i] == want[i])
        i++;
    if (c->bad++ == 0)
        dcuda_log(c->st,
                  "model: rank %d, phase %d: the get of step %d from rank %d brought %u at byte "
                  "%llu of slot %d, expected %u",
                  c->me, f, step, op.target, (unsigned)got[i], (unsigned long long)(op.offset + i),
                  model_slot(c->me, op.target, f, c->world), (unsigned)want[i]);
}

/* The notified get still pending, if any: its notification, then its check. */
TEST_RANK_FN void model_finish_get(model_rank_t *c, int f)
{
    if (c->pending_step < 0)
        return;
    model_wait(c, MODEL_GET_TAG, (uint32_t)c->pending_step);
    model_check_get(c, f, c->pending_step);
    c->pending_step = -1;
}

/* A get of this step (a notified one waits for the one before it). */
TEST_RANK_FN void model_issue_get(model_rank_t *c, int f, int step, const model_op_t *op)
{
    int q = model_slot(c->me, op->target, f, c->world);
    uint64_t from = (uint64_t)(1 + q) * c->region + op->offset;
    unsigned char *dst = c->part + model_landing(c->world, c->region) + op->src;
    model_finish_get(c, f);
    if (op->kind == MODEL_GET) {
        model_ok(c, dcuda_get(c->st, c->win, op->target, from, op->size, dst));
        model_check_get(c, f, step);
        return;
    }
    model_ok(c, dcuda_get_notify(c->st, c->win, op->target, from, op->size, dst, MODEL_GET_TAG));
    c->pending_step = step;
}

/* My operation of this step, its source filled first. */
TEST_RANK_FN void model_issue(model_rank_t *c, int f, int step)
{
    model_op_t op = model_op(c->seed, c->me, f, step, c->world, c->region);
    if (op.kind == MODEL_NONE)
        return;
    int q = model_slot(c->me, op.target, f, c->world);
    uint64_t dst = (uint64_t)(1 + q) * c->region + op.offset;
    unsigned char *src = c->part + op.src;
    c->ops++;
    if (model_gets(&op)) {
        model_issue_get(c, f, step, &op);
        return;
    }
    const int pending = c->pending_step; /* checked once this operation is on its way */
    if (op.kind == MODEL_NOTIFY) {
        model_ok(c, dcuda_notify(c->st, op.target, c->comm, q));
        if (pending >= 0)
            model_finish_get(c, f);
        return;
    }
    for (uint64_t i = (uint64_t)dcuda_thread_index(); i < op.size;
         i += (uint64_t)dcuda_thread_count())
        src[i] = model_byte(c->seed, c->me, f, step, op.offset + i);
    dcuda_rank_sync();
    if (op.kind == MODEL_PUT)
        model_ok(c, dcuda_put(c->st, c->win, op.target, dst, op.size, src));
    else
        model_ok(c, dcuda_put_notify(c->st, c->win, op.target, dst, op.size, src, q));
    if (pending >= 0)
        model_finish_get(c, f);
}

TEST_RANK_FN void model_phase(model_rank_t *c, int f)
{
    for (int s = 0; s < c->world; s++)
        c->cursor[s] = c->checked[s] = 0;
    c->pending_step = -1;
    for (int step = 0; step < c->steps; step++) {
        /* Notifications of steps at least `lag` behind: never of this
         * step or later, so no rank waits for one that waits for it. */
        int lag = 1 + (int)(model_hash(c->seed, (uint32_t)c->me, (uint32_t)f, (uint32_t)step) % 4u);
        for (int k = 0; k < c->world; k++) {
            int s = (k + step) % c->world;
            if (model_targets(c->seed, s, c->me, f, c->world))
                model_consume(c, s, f, step - lag + 1);
        }
        model_issue(c, f, step);
    }
    model_finish_get(c, f);
    /* The end of the phase: one more notification to each of my targets. */
    for (int k = 0; k < 3; k++)
        if (model_first_candidate(c->seed, c->me, f, k, c->world)) {
            int t = model_candidate(c->seed, c->me, f, k, c->world);
            model_ok(c, dcuda_notify(c->st, t, c->comm, model_slot(c->me, t, f, c->world)));
        }
    for (int s = 0; s < c->world; s++) {
        if (!model_targets(c->seed, s, c->me, f, c->world))
            continue;
        model_consume(c, s, f, c->steps);
        model_ok(c, dcuda_wait_notifications(c->st, model_slot(s, c->me, f, c->world), 1));
        c->notes++;
        model_check(c, s, f, c->checked[s], c->steps - 1); /* what came since the last */
        model_check(c, s, f, 0, c->steps - 1);             /* and all of it, exactly */
    }
    model_ok(c, dcuda_comm_barrier(c->st, c->comm));
}

/* Off WORLD: the communicator (a split through `world_win`, whose
 * landing area holds its room; or NODE), my rank and its size there, its
 * program's seed, and my window on it. */
TEST_RANK_FN void model_leave_world(model_rank_t *c, dcuda_win_t world_win)
{
    if (c->d->comm == MODEL_ON_SPLIT) {
        int colour = model_colour(c->seed, c->me);
        model_ok(c, dcuda_comm_split(c->st, DCUDA_COMM_WORLD, colour, model_key(c->seed, c->me),
                                     world_win, model_landing(c->world, c->region), &c->comm));
        c->seed = model_comm_seed(c->seed, colour);
    } else {
        c->comm = DCUDA_COMM_NODE;
    }
    model_ok(c, dcuda_comm_rank(c->st, c->comm, &c->me));
    model_ok(c, dcuda_comm_size(c->st, c->comm, &c->world));
    model_ok(c, dcuda_win_create(c->st, c->comm, c->part, model_part_bytes(c->world, c->region),
                                 &c->win));
}

DCUDA_KERNEL(model, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    DCUDA_SHARED int32_t flag;
    model_rank_t c;
    int drank = 0;
    c.st = &st;
    c.flag = &flag;
    c.status = c.bad = c.notes = c.bytes = c.ops = c.gets = c.got = 0;
    c.pending_step = -1;
    model_ok(&c, dcuda_rank_init(ctx, &st));
    model_ok(&c, dcuda_get_data(&st, (void **)&c.d));
    model_ok(&c, dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &c.me));
    model_ok(&c, dcuda_comm_size(&st, DCUDA_COMM_WORLD, &c.world));
    model_ok(&c, dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank));
    c.seed = c.d->seed;
    c.phases = c.d->phases;
    c.steps = c.d->steps;
    c.region = c.d->region;
    c.part = c.d->buf + (uint64_t)drank * model_part_bytes(c.world, c.region);
    int sane = c.world == c.d->world && c.world <= MODEL_MAX_RANKS && c.steps <= MODEL_MAX_STEPS;
    model_ok(&c, sane ? DCUDA_OK : DCUDA_ERR_INVALID_ARG);
    dcuda_win_t world_win = DCUDA_WIN_NONE;
    model_ok(&c, dcuda_win_create(&st, DCUDA_COMM_WORLD, c.part,
                                  model_part_bytes(c.world, c.region), &world_win));
    c.comm = DCUDA_COMM_WORLD;
    c.win = world_win;
    if (sane && c.d->comm != MODEL_ON_WORLD)
        model_leave_world(&c, world_win);
    for (int f = 0; sane && f < c.phases; f++)
        model_phase(&c, f);
    if (c.comm != DCUDA_COMM_WORLD)
        model_ok(&c, dcuda_win_free(&st, c.win));
    if (c.d->comm == MODEL_ON_SPLIT && c.comm != DCUDA_COMM_WORLD)
        model_ok(&c, dcuda_comm_free(&st, c.comm));
    model_ok(&c, dcuda_win_free(&st, world_win));
    model_ok(&c, dcuda_rank_finish(&st));
    if (dcuda_thread_index() == 0) {
        int64_t *res = c.d->res + (int64_t)drank * MODEL_SLOTS;
        res[MODEL_RES_STATUS] = c.status;
        res[MODEL_RES_BAD] = c.bad;
        res[MODEL_RES_NOTES] = c.notes;
        res[MODEL_RES_BYTES] = c.bytes;
        res[MODEL_RES_OPS] = c.ops;
        res[MODEL_RES_GETS] = c.gets;
        res[MODEL_RES_GOT] = c.got;
    }
}
