/*
 * Rank code of the collectives' randomized test (dcuda_test_coll, see
 * coll.h): each step fills, sends a user put, calls the collective and
 * checks everything against a serial computation. Written once for CPU and
 * GPU ranks: fills and checks spread over the threads of a rank, thread 0
 * counts.
 */
#include "coll.h"
#include "dcuda/dcuda_rank.h"
#include "test_rank.h"

typedef struct coll_rank {
    dcuda_state_t *st;
    const coll_data_t *d;
    int me, world, drank, dsize;
    uint32_t seed;
    unsigned char *region;         /* parts of A, B, C (and D) */
    int32_t *flag;                 /* shared by the rank's threads */
    dcuda_win_t win[COLL_ONS];     /* A (WORLD), B (DEVICE), D (the split): by COLL_ON_* */
    dcuda_win_t user;              /* C */
    int split;                     /* the split's id (DCUDA_COMM_NULL: none) */
    coll_group_t groups[COLL_ONS]; /* the ranks of each, in their order */
    int64_t status, bad, steps;
} coll_rank_t;

TEST_RANK_FN void coll_ok(coll_rank_t *c, int status) { test_note(&c->status, status); }

TEST_RANK_FN unsigned char *coll_part(coll_rank_t *c, int on)
{
    return c->region + coll_part_offset(c->world, on);
}

/* My rank in the group of `on`. */
TEST_RANK_FN int coll_crank(const coll_rank_t *c, int on)
{
    return coll_group_rank(&c->groups[on], c->me);
}

/* My data before the call, and the guard after the room it may use. */
TEST_RANK_FN void coll_fill(coll_rank_t *c, const coll_step_t *t, int s, int size)
{
    unsigned char *data = coll_part(c, t->comm) + t->offset;
    uint64_t room = coll_room(t, size), elem = dcuda_datatype_bytes((dcuda_datatype_t)t->type);
    int crank = coll_crank(c, t->comm); /* mine in t->comm */
    int i0 = dcuda_thread_index(), n = dcuda_thread_count();
    if (t->kind == COLL_BROADCAST)
        for (uint64_t i = (uint64_t)i0; i < t->count; i += (uint64_t)n)
            data[i] = crank == t->root ? coll_root_byte(c->seed, s, i)
                                       : coll_noise_byte(c->seed, s, c->me, i);
    else if (t->kind == COLL_ALLGATHER) /* my block, noise in the others */
        for (uint64_t i = (uint64_t)i0; i < room; i += (uint64_t)n)
            data[i] = i / t->count == (uint64_t)crank
                          ? coll_block_byte(c->seed, s, c->me, i % t->count)
                          : coll_noise_byte(c->seed, s, c->me, i);
    else if (t->kind == COLL_ALLTOALL) /* my blocks for each rank, noise where blocks land */
        for (uint64_t i = (uint64_t)i0; i < room; i += (uint64_t)n)
            data[i] = i < room / 2u
                          ? coll_a2a_byte(c->seed, s, c->me, (int)(i / t->count), i % t->count)
                          : coll_noise_byte(c->seed, s, c->me, i);
    else
        for (uint64_t j = (uint64_t)i0; j < coll_inputs(t, size); j += (uint64_t)n)
            coll_store(t, c->seed, s, c->me, j, data + j * elem);
    for (uint64_t i = (uint64_t)i0; i < COLL_GUARD; i += (uint64_t)n)
        data[room + i] = COLL_GUARD_BYTE;
    unsigned char *src = c->region + coll_user_offset(c->world) + COLL_USER * COLL_STEPS;
    for (uint64_t i = (uint64_t)i0; i < COLL_USER; i += (uint64_t)n)
        src[i] = coll_user_byte(c->seed, s, c->me, i);
    dcuda_rank_sync();
}

/* 1 if this thread saw a wrong element, guard byte or user byte. */
TEST_RANK_FN int coll_wrong(coll_rank_t *c, const coll_step_t *t, int s, int size)
{
    const unsigned char *data = coll_part(c, t->comm) + t->offset;
    uint64_t room = coll_room(t, size);
    int crank = coll_crank(c, t->comm); /* mine in t->comm */
    int i0 = dcuda_thread_index(), n = dcuda_thread_count(), bad = 0;
    uint64_t units = coll_units(t, size, crank);
    for (uint64_t u = (uint64_t)i0; u < units && !bad; u += (uint64_t)n)
        bad |= !coll_unit_ok(t, c->seed, s, &c->groups[t->comm], crank, u, data);
    for (uint64_t i = (uint64_t)i0; i < COLL_GUARD; i += (uint64_t)n)
        bad |= data[room + i] != COLL_GUARD_BYTE;
    int from = (c->me + c->world - 1) % c->world;
    const unsigned char *got = c->region + coll_user_offset(c->world) + COLL_USER * (uint64_t)s;
    for (uint64_t i = (uint64_t)i0; i < COLL_USER; i += (uint64_t)n)
        bad |= got[i] != coll_user_byte(c->seed, s, from, i);
    return bad;
}

/* The step's collective. */
TEST_RANK_FN dcuda_status_t coll_call(coll_rank_t *c, const coll_step_t *t)
{
    dcuda_win_t w = c->win[t->comm];
    dcuda_datatype_t type = (dcuda_datatype_t)t->type;
    dcuda_op_t op = (dcuda_op_t)t->op;
    switch (t->kind) {
    case COLL_BROADCAST:
        return dcuda_broadcast(c->st, w, t->offset, t->count, t->root);
    case COLL_ALLGATHER:
        return dcuda_allgather(c->st, w, t->offset, t->count);
    case COLL_REDUCE:
        return dcuda_reduce(c->st, w, t->offset, t->count, type, op, t->root);
    case COLL_REDUCE_SCATTER:
        return dcuda_reduce_scatter(c->st, w, t->offset, t->count, type, op);
    case COLL_ALLTOALL:
        return dcuda_alltoall(c->st, w, t->offset, t->count);
    default:
        return dcuda_allreduce(c->st, w, t->offset, t->count, type, op);
    }
}

TEST_RANK_FN void coll_one_step(coll_rank_t *c, int s)
{
    coll_step_t t = coll_step(c->seed, s, c->world, c->dsize, c->d->split,
                              c->groups[COLL_ON_SPLIT].size, c->d->small);
    int size = c->groups[t.comm].size;
    coll_fill(c, &t, s, size);
    const unsigned char *src = c->region + coll_user_offset(c->world) + COLL_USER * COLL_STEPS;
    coll_ok(c, dcuda_put_notify(c->st, c->user, (c->me + 1) % c->world, COLL_USER * (uint64_t)s,
                                COLL_USER, src, COLL_USER_TAG));
    coll_ok(c, coll_call(c, &t));
    coll_ok(c, dcuda_wait_notifications(c->st, COLL_USER_TAG, 1));
    coll_ok(c, dcuda_win_flush(c->st, c->user)); /* the source is rewritten next step */
    if (test_rank_any(c->flag, coll_wrong(c, &t, s, size)) && dcuda_thread_index() == 0) {
        if (c->bad == 0)
            dcuda_log(c->st, "coll: rank %d, step %d: %s on %s (count %llu, offset %llu) is wrong",
                      c->me, s, coll_name(t.kind),
                      t.comm == COLL_ON_WORLD    ? "WORLD"
                      : t.comm == COLL_ON_DEVICE ? "DEVICE"
                                                 : "the split",
                      (unsigned long long)t.count, (unsigned long long)t.offset);
        c->bad++;
    }
    c->steps++;
}

DCUDA_KERNEL(coll, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    DCUDA_SHARED int32_t flag;
    coll_rank_t c;
    c.st = &st;
    c.flag = &flag;
    c.status = c.bad = c.steps = 0;
    coll_ok(&c, dcuda_rank_init(ctx, &st));
    coll_ok(&c, dcuda_get_data(&st, (void **)&c.d));
    coll_ok(&c, dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &c.me));
    coll_ok(&c, dcuda_comm_size(&st, DCUDA_COMM_WORLD, &c.world));
    coll_ok(&c, dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &c.drank));
    coll_ok(&c, dcuda_comm_size(&st, DCUDA_COMM_DEVICE, &c.dsize));
    c.seed = c.d->seed;
    int sane = c.world == c.d->world && c.dsize == c.d->device;
    coll_ok(&c, sane ? DCUDA_OK : DCUDA_ERR_INVALID_ARG);
    uint64_t part = coll_part_bytes(c.world);
    c.region = c.d->buf + (uint64_t)c.drank * coll_rank_bytes(c.world, c.d->split);
    c.groups[COLL_ON_WORLD] = (coll_group_t){ 0, 1, c.world };
    c.groups[COLL_ON_DEVICE] = (coll_group_t){ c.me - c.drank, 1, c.dsize };
    c.groups[COLL_ON_SPLIT] = coll_split_group(c.me, c.world);
    coll_ok(&c, dcuda_win_create(&st, DCUDA_COMM_WORLD, c.region, part, &c.win[COLL_ON_WORLD]));
    coll_ok(&c, dcuda_win_create(&st, DCUDA_COMM_DEVICE, c.region + part, part,
                                 &c.win[COLL_ON_DEVICE]));
    coll_ok(&c, dcuda_win_create(&st, DCUDA_COMM_WORLD, c.region + 2u * part, coll_user_bytes(),
                                 &c.user));
    c.split = DCUDA_COMM_NULL;
    if (c.d->split) { /* its exchange through A, before any step uses it */
        coll_ok(&c, dcuda_comm_split(&st, DCUDA_COMM_WORLD, c.me % 2, -c.me, c.win[COLL_ON_WORLD],
                                     0, &c.split));
        coll_ok(&c, dcuda_win_create(&st, c.split, coll_part(&c, COLL_ON_SPLIT), part,
                                     &c.win[COLL_ON_SPLIT]));
    }
    for (int s = 0; sane && s < c.d->steps; s++)
        coll_one_step(&c, s);
    if (c.d->split) {
        coll_ok(&c, dcuda_win_free(&st, c.win[COLL_ON_SPLIT]));
        coll_ok(&c, dcuda_comm_free(&st, c.split));
    }
    coll_ok(&c, dcuda_win_free(&st, c.user));
    coll_ok(&c, dcuda_win_free(&st, c.win[COLL_ON_DEVICE]));
    coll_ok(&c, dcuda_win_free(&st, c.win[COLL_ON_WORLD]));
    coll_ok(&c, dcuda_rank_finish(&st));
    if (dcuda_thread_index() == 0) {
        int64_t *res = c.d->res + (int64_t)c.drank * COLL_SLOTS;
        res[COLL_RES_STATUS] = c.status;
        res[COLL_RES_BAD] = c.bad;
        res[COLL_RES_STEPS] = c.steps;
    }
}

/* coll_unreachable: one WORLD allreduce of 8 bytes on a window whose parts
 * lie, in every process but the first, in memory other processes cannot
 * map. Each rank records the call's status (COLL_RES_STATUS). */
DCUDA_KERNEL(coll_unreachable, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    const coll_data_t *d = 0;
    dcuda_win_t win = DCUDA_WIN_NONE;
    int drank = 0;
    dcuda_status_t s = dcuda_rank_init(ctx, &st);
    if (s == DCUDA_OK)
        s = dcuda_get_data(&st, (void **)&d);
    if (s == DCUDA_OK)
        s = dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank);
    unsigned char *part = d && d->plain ? d->plain + (size_t)drank * COLL_PLAIN_BYTES
                          : d           ? d->buf + (size_t)drank * COLL_PLAIN_BYTES
                                        : 0;
    if (s == DCUDA_OK)
        s = dcuda_win_create(&st, DCUDA_COMM_WORLD, part, COLL_PLAIN_BYTES, &win);
    if (s == DCUDA_OK)
        s = dcuda_allreduce(&st, win, 0, 1, DCUDA_INT64, DCUDA_SUM);
    if (win != DCUDA_WIN_NONE)
        dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
    if (d && dcuda_thread_index() == 0)
        d->res[(int64_t)drank * COLL_SLOTS + COLL_RES_STATUS] = (int64_t)s;
}
