/*
 * Rank code of the misuse suite (dcuda_test_misuse). Kernel `misuse` sets up
 * windows of every kind, then rank 0 makes the one offending call the host
 * describes in mis_data_t.probe (every rank for collective probes) and stores
 * what it returned. Kernel `misuse_before_init` calls the API on a zeroed,
 * never initialised state. Rank API only, no libc; written once for CPU and
 * GPU ranks.
 */
#include "dcuda/dcuda_rank.h"
#include "misuse.h"

typedef struct mis_rank {
    dcuda_state_t *st;
    mis_data_t *d;
    int rank;
    unsigned char *mine;
    dcuda_win_t w, dw, zw, sw, freed;
    int64_t setup; /* first failing call outside the probe */
} mis_rank_t;

TEST_RANK_FN void zero_state(dcuda_state_t *s)
{
    unsigned char *p = (unsigned char *)s;
    for (uint64_t i = (uint64_t)dcuda_thread_index(); i < sizeof *s;
         i += (uint64_t)dcuda_thread_count())
        p[i] = 0;
    dcuda_rank_sync();
}

TEST_RANK_FN dcuda_win_t probe_win(const mis_rank_t *c, int which)
{
    switch (which) {
    case MW_WORLD:
        return c->w;
    case MW_DEVICE:
        return c->dw;
    case MW_ZERO:
        return c->zw;
    case MW_SHARED:
        return c->sw;
    case MW_FREED:
        return c->freed;
    case MW_NEVER:
        return (dcuda_win_t)MIS_NEVER_SLOT | (1u << DCUDA_WIN_GEN_SHIFT);
    default:
        return DCUDA_WIN_NONE;
    }
}

TEST_RANK_FN const unsigned char *probe_src(const mis_rank_t *c, int which)
{
    const unsigned char *source = c->mine + MIS_TARGET_BYTES;
    switch (which) {
    case MS_TARGET:
        return c->mine;
    case MS_GAP:
        return source + MIS_SOURCE_BYTES;
    case MS_DEVPART:
        return source + MIS_SOURCE_BYTES + MIS_GAP_BYTES;
    case MS_OTHER:
        return c->d->buf + MIS_REGION + MIS_TARGET_BYTES;
    case MS_SHARED:
        return c->d->shared;
    default:
        return source;
    }
}

/* Makes the probe's call; *value gets what the report must name. */
TEST_RANK_FN int64_t probe_call(mis_rank_t *c, const mis_probe_t *p, int64_t *value)
{
    dcuda_state_t *st = c->st;
    dcuda_win_t win = probe_win(c, p->win), made;
    const void *src = probe_src(c, p->src) + p->src_off;
    int n;
    int64_t rc;
    *value = (int64_t)win;
    switch (p->op) {
    case MIS_PUT:
        return dcuda_put(st, win, p->rank, (size_t)p->offset, (size_t)p->size, src);
    case MIS_PUT_NOTIFY:
        return dcuda_put_notify(st, win, p->rank, (size_t)p->offset, (size_t)p->size, src, p->tag);
    case MIS_NOTIFY:
        return dcuda_notify(st, p->rank, p->comm, p->tag);
    case MIS_GET:
        return dcuda_get(st, win, p->rank, (size_t)p->offset, (size_t)p->size, (void *)src);
    case MIS_GET_NOTIFY:
        return dcuda_get_notify(st, win, p->rank, (size_t)p->offset, (size_t)p->size, (void *)src,
                                p->tag);
    case MIS_WAIT:
        return dcuda_wait_notifications(st, p->tag, p->count);
    case MIS_TEST:
        return dcuda_test_notifications(st, p->tag, p->count);
    case MIS_FLUSH:
        return dcuda_win_flush(st, win);
    case MIS_BROADCAST:
        return dcuda_broadcast(st, win, (size_t)p->offset, (size_t)p->size, p->rank);
    case MIS_ALLGATHER:
        return dcuda_allgather(st, win, (size_t)p->offset, (size_t)p->size);
    case MIS_ALLREDUCE:
        return dcuda_allreduce(st, win, (size_t)p->offset, (size_t)p->size,
                               (dcuda_datatype_t)p->tag, (dcuda_op_t)p->count);
    case MIS_REDUCE:
        return dcuda_reduce(st, win, (size_t)p->offset, (size_t)p->size, (dcuda_datatype_t)p->tag,
                            (dcuda_op_t)p->count, p->rank);
    case MIS_REDUCE_SCATTER:
        return dcuda_reduce_scatter(st, win, (size_t)p->offset, (size_t)p->size,
                                    (dcuda_datatype_t)p->tag, (dcuda_op_t)p->count);
    case MIS_ALLTOALL:
        return dcuda_alltoall(st, win, (size_t)p->offset, (size_t)p->size);
    case MIS_FREE:
        return dcuda_win_free(st, win);
    case MIS_BARRIER:
        return dcuda_comm_barrier(st, p->comm);
    case MIS_COMM_SIZE:
        return dcuda_comm_size(st, p->comm, &n);
    case MIS_COMM_RANK:
        return dcuda_comm_rank(st, p->comm, &n);
    case MIS_WIN_CREATE:
        return dcuda_win_create(st, p->comm, c->mine, 8, &made);
    case MIS_TIMER_STOP:
        return dcuda_stop_cpu_timer(st);
    case MIS_TIMER_START2:
        test_note(&c->setup, dcuda_start_cpu_timer(st));
        return dcuda_start_cpu_timer(st);
    case MIS_TIMER_MANY:
        for (int i = 0; i < DCUDA_MAX_TIMERS; i++) {
            test_note(&c->setup, dcuda_start_cpu_timer(st));
            test_note(&c->setup, dcuda_stop_cpu_timer(st));
        }
        return dcuda_start_cpu_timer(st);
    default:
        rc = DCUDA_ERR_INVALID_ARG;
        test_note(&c->setup, (int)rc);
        return rc;
    }
}

/* Every rank: DEVICE windows until creation fails; then frees them. */
TEST_RANK_FN void win_limit(mis_rank_t *c, int64_t *res)
{
    dcuda_win_t extra[DCUDA_MAX_WINDOWS], h = 0;
    unsigned char *part = c->mine + MIS_TARGET_BYTES + MIS_SOURCE_BYTES + MIS_GAP_BYTES;
    int made = 0;
    int64_t rc = DCUDA_OK;
    while (made < DCUDA_MAX_WINDOWS) {
        rc = dcuda_win_create(c->st, DCUDA_COMM_DEVICE, part, MIS_DEV_BYTES, &h);
        if (rc != DCUDA_OK)
            break;
        extra[made++] = h;
    }
    if (dcuda_thread_index() == 0) {
        res[MIS_RES_CALL] = rc;
        res[MIS_RES_COUNT] = made;
        res[MIS_RES_WIN] = (int64_t)h;
    }
    while (made > 0)
        test_note(&c->setup, dcuda_win_free(c->st, extra[--made]));
}

DCUDA_KERNEL(misuse, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    mis_rank_t c;
    int64_t call = 0, value = 0;
    int probed = 0;
    c.st = &st;
    c.setup = 0;
    test_note(&c.setup, dcuda_rank_init(ctx, &st));
    if (dcuda_get_data(&st, (void **)&c.d) != DCUDA_OK) {
        dcuda_rank_finish(&st);
        return;
    }
    const mis_probe_t *p = &c.d->probe;
    test_note(&c.setup, dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &c.rank));
    int64_t *res = c.d->res + c.rank * MIS_SLOTS;
    c.mine = c.d->buf + (uint64_t)c.rank * MIS_REGION;
    unsigned char *devpart = c.mine + MIS_TARGET_BYTES + MIS_SOURCE_BYTES + MIS_GAP_BYTES;
    int odd = c.rank % 2;
    test_note(&c.setup, dcuda_win_create(&st, DCUDA_COMM_WORLD, c.mine,
                                         MIS_TARGET_BYTES + MIS_SOURCE_BYTES, &c.w));
    test_note(&c.setup, dcuda_win_create(&st, DCUDA_COMM_DEVICE, devpart, MIS_DEV_BYTES, &c.dw));
    test_note(&c.setup, dcuda_win_create(&st, DCUDA_COMM_WORLD, odd ? (void *)0 : c.mine,
                                         odd ? 0 : MIS_TARGET_BYTES, &c.zw));
    test_note(&c.setup,
              dcuda_win_create(&st, DCUDA_COMM_WORLD, c.d->shared, MIS_SHARED_BYTES, &c.sw));
    test_note(&c.setup,
              dcuda_win_create(&st, DCUDA_COMM_WORLD, c.mine, MIS_TARGET_BYTES, &c.freed));
    test_note(&c.setup, dcuda_win_free(&st, c.freed));
    /* From this barrier on, rank 0's error may end the run before a call
     * of another rank returns (rank 0 leaves the barrier first, and under
     * the network path the news can overtake the barrier's last round). */
    test_note_unless_aborted(&c.setup, dcuda_comm_barrier(&st, DCUDA_COMM_WORLD));

    if (p->op == MIS_WIN_LIMIT) {
        win_limit(&c, res);
    } else if (p->op != MIS_AFTER_FINISH && c.rank == 0) {
        call = probe_call(&c, p, &value);
        probed = 1;
    }

    test_note_unless_aborted(&c.setup, dcuda_comm_barrier(&st, DCUDA_COMM_WORLD));
    test_note_unless_aborted(&c.setup, dcuda_win_free(&st, c.sw));
    test_note_unless_aborted(&c.setup, dcuda_win_free(&st, c.zw));
    test_note_unless_aborted(&c.setup, dcuda_win_free(&st, c.dw));
    test_note_unless_aborted(&c.setup, dcuda_win_free(&st, c.w));
    test_note_unless_aborted(&c.setup, dcuda_rank_finish(&st));
    if (p->op == MIS_AFTER_FINISH && c.rank == 0) {
        call = dcuda_notify(&st, 0, DCUDA_COMM_WORLD, 0);
        value = (int64_t)(uintptr_t)&st;
        probed = 1;
    }
    if (dcuda_thread_index() == 0) {
        if (probed) {
            res[MIS_RES_CALL] = call;
            res[MIS_RES_VALUE] = value;
        }
        res[MIS_RES_SETUP] = c.setup;
    }
}

/* Calls on a zeroed state that dcuda_rank_init never saw, then initialises
 * a real one to report what they returned and where the state was. */
DCUDA_KERNEL(misuse_before_init, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    DCUDA_SHARED dcuda_state_t bad;
    mis_data_t *d = 0;
    void *none = 0;
    int rank = -1;
    int64_t setup = 0;
    zero_state(&bad);
    int64_t a = dcuda_put(&bad, 0, 1, 0, 8, &bad);
    int64_t b = dcuda_notify(&bad, 0, DCUDA_COMM_WORLD, 0);
    int64_t w = dcuda_wait_notifications(&bad, 0, 1);
    int64_t g = dcuda_get_data(&bad, &none);
    test_note(&setup, dcuda_rank_init(ctx, &st));
    test_note(&setup, dcuda_get_data(&st, (void **)&d));
    test_note(&setup, dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank));
    if (d && rank >= 0 && dcuda_thread_index() == 0) {
        int64_t *res = d->res + rank * MIS_SLOTS;
        res[MIS_RES_CALL] = a;
        res[MIS_RES_CALL2] = b;
        res[MIS_RES_CALL3] = w;
        res[MIS_RES_CALL4] = g;
        res[MIS_RES_VALUE] = (int64_t)(uintptr_t)&bad;
        res[MIS_RES_SETUP] = setup;
    }
    dcuda_rank_sync();
    dcuda_rank_finish(&st);
}
