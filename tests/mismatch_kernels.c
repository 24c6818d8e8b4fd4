/*
 * Rank code of the mismatch suite (mismatch.h): a window on the case's
 * communicator, the case's calls (the culprit's differ), a check of every
 * collective that returned DCUDA_OK against a serial reference for its
 * own arguments, then the window freed and the finish. Written once for
 * CPU and GPU ranks: thread 0 fills, calls in step with the others, and
 * checks.
 */
#include "dcuda/dcuda_rank.h"
#include "mismatch.h"

/* What a rank calls in a case, one call a step. */
enum mm_kind {
    MM_NONE = 0,
    MM_BARRIER,
    MM_BCAST,
    MM_ALLREDUCE,
    MM_REDUCE,
    MM_RS,
    MM_ALLGATHER,
    MM_ALLTOALL,
    MM_WIN_FREE,
    MM_SPLIT
};

typedef struct mm_call {
    int kind;
    uint64_t n; /* bytes (broadcast, a block of a gather), elements (a reduction's, a block's) */
    int type, op, root;
    uint64_t offset;
} mm_call_t;

typedef struct mm_rank {
    dcuda_state_t *st;
    const mm_data_t *d;
    unsigned char *part;
    dcuda_win_t world_win, win; /* the split's WORLD window; the case's window */
    int comm, crank, csize;
} mm_rank_t;

/* Is a call of this kind a collective (whose result is checked)? */
DCUDA_RANK_FN int mm_is_collective(int kind)
{
    return kind == MM_BCAST || kind == MM_ALLREDUCE || kind == MM_REDUCE || kind == MM_RS ||
           kind == MM_ALLGATHER || kind == MM_ALLTOALL;
}

DCUDA_RANK_FN mm_call_t mm_make(int kind, uint64_t n, int type, int op, int root)
{
    mm_call_t c;
    c.kind = kind;
    c.n = n;
    c.type = type;
    c.op = op;
    c.root = root;
    c.offset = 0;
    return c;
}

/* Step `step` (0 or 1) of case c, as the culprit or the others call it. */
DCUDA_RANK_FN mm_call_t mm_call_of(int c, int step, int culprit, int csize)
{
    const mm_call_t none = mm_make(MM_NONE, 0, 0, 0, 0);
    const mm_call_t sum16 = mm_make(MM_ALLREDUCE, 16, DCUDA_INT32, DCUDA_SUM, 0);
    const mm_call_t bcast64 = mm_make(MM_BCAST, 64, 0, 0, 0);
    mm_call_t x = step == 0 ? sum16 : none;
    switch (c) {
    case MM_OTHER_CALL:
        return step == 0 && culprit ? bcast64 : x;
    case MM_OTHER_GATHER:
        return step ? none : mm_make(culprit ? MM_ALLTOALL : MM_ALLGATHER, 8, 0, 0, 0);
    case MM_TWO_BARRIERS:
        return step == 0 || culprit ? mm_make(MM_BARRIER, 0, 0, 0, 0) : sum16;
    case MM_ROOT:
        x = bcast64;
        x.root = culprit ? 1 % csize : 0;
        return step ? none : x;
    case MM_SIZE_UP:
    case MM_SIZE_DOWN:
        x = bcast64;
        x.n = !culprit ? 64u : c == MM_SIZE_UP ? 128u : 32u;
        return step ? none : x;
    case MM_TYPE:
        x.type = culprit ? DCUDA_FLOAT : DCUDA_INT32;
        return step ? none : x;
    case MM_OP:
        x.op = culprit ? DCUDA_MAX : DCUDA_SUM;
        return step ? none : x;
    case MM_COUNT:
        x.n = culprit ? 8u : 16u;
        return step ? none : x;
    case MM_OFFSET:
        x.offset = culprit ? MM_OFFSET_OTHER : 0u;
        return step ? none : x;
    case MM_REDUCE_ROOT:
        return step ? none
                    : mm_make(MM_REDUCE, 16, DCUDA_INT32, DCUDA_SUM, culprit ? csize - 1 : 0);
    case MM_RS_COUNT:
        return step ? none : mm_make(MM_RS, culprit ? 2u : 4u, DCUDA_INT32, DCUDA_SUM, 0);
    case MM_SKIP:
        return step ? none : culprit ? mm_make(MM_WIN_FREE, 0, 0, 0, 0) : sum16;
    case MM_REFUSED:
        if (culprit)
            return step == 0 ? mm_make(MM_ALLREDUCE, 16, DCUDA_INT32, 99, 0)
                             : mm_make(MM_WIN_FREE, 0, 0, 0, 0);
        return x;
    case MM_SPLIT_SKIP:
        return step ? none : mm_make(culprit ? MM_BARRIER : MM_SPLIT, 0, 0, 0, 0);
    case MM_SPLIT_OFFSET:
        x = mm_make(MM_SPLIT, 0, 0, 0, 0);
        x.offset = culprit ? 2048u : 0u;
        return step ? none : x;
    default:
        return none;
    }
}

/* Byte k of the block member m sends member j in an alltoall. */
TEST_FN unsigned char mm_a2a_byte(int m, int j, uint64_t k)
{
    return mm_byte(m * MM_MAX_RANKS + j, k);
}

/* My data for call x (thread 0). */
DCUDA_RANK_FN void mm_fill(const mm_rank_t *r, const mm_call_t *x)
{
    unsigned char *data = r->part + MM_DATA_AT + x->offset;
    uint64_t elems = x->kind == MM_RS ? x->n * (uint64_t)r->csize : x->n;
    if (x->kind == MM_ALLREDUCE || x->kind == MM_REDUCE || x->kind == MM_RS) {
        for (uint64_t i = 0; i < elems; i++) {
            if (x->type == DCUDA_FLOAT)
                ((float *)data)[i] = (float)mm_value(r->crank, i);
            else
                ((int32_t *)data)[i] = mm_value(r->crank, i);
        }
    } else if (x->kind == MM_BCAST) {
        for (uint64_t i = 0; i < x->n; i++)
            data[i] = mm_byte(r->crank, i);
    } else if (x->kind == MM_ALLGATHER) {
        for (uint64_t k = 0; k < x->n; k++)
            data[(uint64_t)r->crank * x->n + k] = mm_byte(r->crank, k);
    } else if (x->kind == MM_ALLTOALL) {
        for (int j = 0; j < r->csize; j++)
            for (uint64_t k = 0; k < x->n; k++)
                data[(uint64_t)j * x->n + k] = mm_a2a_byte(r->crank, j, k);
    }
}

/* The reduction of element i over the members (sum or max). */
TEST_FN int64_t mm_reduced(int csize, int op, uint64_t i)
{
    int64_t acc = mm_value(0, i);
    for (int m = 1; m < csize; m++)
        acc =
            op == DCUDA_MAX ? (mm_value(m, i) > acc ? mm_value(m, i) : acc) : acc + mm_value(m, i);
    return acc;
}

/* Does what an OK call x left in my data match its serial reference? */
DCUDA_RANK_FN int mm_right(const mm_rank_t *r, const mm_call_t *x)
{
    const unsigned char *data = r->part + MM_DATA_AT + x->offset;
    const int P = r->csize, me = r->crank;
    int ok = 1;
    if (x->kind == MM_BCAST)
        for (uint64_t i = 0; i < x->n; i++)
            ok &= data[i] == mm_byte(x->root, i);
    else if (x->kind == MM_ALLREDUCE || (x->kind == MM_REDUCE && me == x->root) || x->kind == MM_RS)
        for (uint64_t i = 0; i < x->n; i++) {
            uint64_t at = x->kind == MM_RS ? (uint64_t)me * x->n + i : i;
            int64_t want = mm_reduced(P, x->op, at);
            int64_t got = x->type == DCUDA_FLOAT ? (int64_t)((const float *)data)[i]
                                                 : (int64_t)((const int32_t *)data)[i];
            ok &= got == want;
        }
    else if (x->kind == MM_ALLGATHER)
        for (int j = 0; j < P; j++)
            for (uint64_t k = 0; k < x->n; k++)
                ok &= data[(uint64_t)j * x->n + k] == mm_byte(j, k);
    else if (x->kind == MM_ALLTOALL)
        for (int j = 0; j < P; j++)
            for (uint64_t k = 0; k < x->n; k++)
                ok &= data[((uint64_t)P + (uint64_t)j) * x->n + k] == mm_a2a_byte(j, me, k);
    return ok;
}

/* Makes call x; a collective that returns DCUDA_OK is checked. */
DCUDA_RANK_FN int mm_do(mm_rank_t *r, const mm_call_t *x, int64_t *bad, int64_t *oks)
{
    dcuda_state_t *st = r->st;
    int s = DCUDA_OK;
    dcuda_comm_t made = DCUDA_COMM_NULL;
    switch (x->kind) {
    case MM_BARRIER:
        return dcuda_comm_barrier(st, r->comm);
    case MM_WIN_FREE:
        return dcuda_win_free(st, r->win);
    case MM_SPLIT:
        s = dcuda_comm_split(st, r->comm, r->crank % 2, 0, r->world_win, MM_SPLIT_AT + x->offset,
                             &made);
        if (s == DCUDA_OK && made != DCUDA_COMM_NULL)
            (void)dcuda_comm_free(st, made);
        return s;
    case MM_BCAST:
        s = dcuda_broadcast(st, r->win, x->offset, x->n, x->root);
        break;
    case MM_ALLREDUCE:
        s = dcuda_allreduce(st, r->win, x->offset, x->n, (dcuda_datatype_t)x->type,
                            (dcuda_op_t)x->op);
        break;
    case MM_REDUCE:
        s = dcuda_reduce(st, r->win, x->offset, x->n, (dcuda_datatype_t)x->type, (dcuda_op_t)x->op,
                         x->root);
        break;
    case MM_RS:
        s = dcuda_reduce_scatter(st, r->win, x->offset, x->n, (dcuda_datatype_t)x->type,
                                 (dcuda_op_t)x->op);
        break;
    case MM_ALLGATHER:
        s = dcuda_allgather(st, r->win, x->offset, x->n);
        break;
    case MM_ALLTOALL:
        s = dcuda_alltoall(st, r->win, x->offset, x->n);
        break;
    default:
        break;
    }
    if (mm_is_collective(x->kind) && s == DCUDA_OK && dcuda_thread_index() == 0) {
        (*oks)++;
        if (!mm_right(r, x))
            (*bad)++;
    }
    return s;
}

/* Before the case, every member makes its first call as the others make
 * it, twice, when that call is a collective (whose results are checked):
 * the culprit's call then follows a run of agreeing ones, which a pushed
 * call's memo of checked arguments (impl/coll_push.h) serves. */
DCUDA_RANK_FN void mm_warm(mm_rank_t *r, int c, int64_t *setup, int64_t *bad, int64_t *oks)
{
    mm_call_t x = mm_call_of(c, 0, 0, r->csize);
    if (!mm_is_collective(x.kind))
        return;
    for (int i = 0; i < 2 && *setup == 0; i++) {
        if (dcuda_thread_index() == 0)
            mm_fill(r, &x);
        dcuda_rank_sync();
        test_note(setup, mm_do(r, &x, bad, oks));
    }
}

/* The case's windows and communicator: the case's window on WORLD, DEVICE
 * or the split of WORLD by parity (its members ranked as in WORLD). */
DCUDA_RANK_FN void mm_setup(mm_rank_t *r, int world_rank, int64_t *setup)
{
    dcuda_state_t *st = r->st;
    test_note(setup, dcuda_win_create(st, DCUDA_COMM_WORLD, r->part, MM_PART_BYTES, &r->world_win));
    r->comm = r->d->on == MM_ON_DEVICE ? DCUDA_COMM_DEVICE : DCUDA_COMM_WORLD;
    if (r->d->on == MM_ON_SPLIT)
        test_note(setup, dcuda_comm_split(st, DCUDA_COMM_WORLD, world_rank % 2, 0, r->world_win,
                                          MM_SPLIT_AT, &r->comm));
    test_note(setup, dcuda_win_create(st, r->comm, r->part + MM_DATA_AT, MM_DATA_BYTES, &r->win));
    test_note(setup, dcuda_comm_rank(st, r->comm, &r->crank));
    test_note(setup, dcuda_comm_size(st, r->comm, &r->csize));
}

DCUDA_KERNEL(mismatch, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    mm_data_t *d;
    int64_t setup = 0, call = 0, bad = 0, oks = 0;
    int world_rank = 0, drank = 0;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    test_note(&setup, dcuda_get_data(&st, (void **)&d));
    test_note(&setup, dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &world_rank));
    test_note(&setup, dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank));
    mm_rank_t r;
    r.st = &st;
    r.d = d;
    r.part = d->buf + (uint64_t)drank * MM_PART_BYTES;
    mm_setup(&r, world_rank, &setup);
    const int culprit = r.crank == r.csize - 1;
    int freed = 0;
    mm_warm(&r, d->test_case, &setup, &bad, &oks);
    for (int step = 0; step < 2 && setup == 0; step++) {
        mm_call_t x = mm_call_of(d->test_case, step, culprit, r.csize);
        if (x.kind == MM_NONE)
            break;
        if (dcuda_thread_index() == 0)
            mm_fill(&r, &x);
        dcuda_rank_sync();
        test_note(&call, mm_do(&r, &x, &bad, &oks));
        freed |= x.kind == MM_WIN_FREE;
    }
    /* The run ends here once a call failed: what follows is aborted. */
    if (!freed)
        test_note_unless_aborted(&setup, dcuda_win_free(&st, r.win));
    if (r.comm != DCUDA_COMM_WORLD && r.comm != DCUDA_COMM_DEVICE)
        test_note_unless_aborted(&setup, dcuda_comm_free(&st, r.comm));
    test_note_unless_aborted(&setup, dcuda_win_free(&st, r.world_win));
    test_note_unless_aborted(&setup, dcuda_rank_finish(&st));
    if (dcuda_thread_index() == 0) {
        int64_t *res = d->res + (int64_t)drank * MM_SLOTS;
        res[MM_RES_CALL] = call;
        res[MM_RES_BAD] = bad;
        res[MM_RES_SETUP] = setup;
        res[MM_RES_OKS] = oks;
    }
}
