/*
 * Rank code of the communicators' suite (dcuda_test_comms, see comms.h).
 * Written once for CPU and GPU ranks: the rank API only, fills and checks
 * shared among the threads of a rank, thread 0 counts and writes results.
 *
 * Each rank's region of buf: its split room (16 bytes a WORLD rank), then
 * the barrier case's receiving areas (of splits, of NODE) and sending area
 * (COMMS_PUT_MAX each).
 */
#include "comms.h"
#include "dcuda/dcuda_rank.h"
#include "test_rank.h"

typedef struct comms_rank {
    dcuda_state_t *st;
    const comms_data_t *d;
    int me, world, drank;
    unsigned char *part;         /* my region */
    uint64_t recv_off, send_off; /* the barrier case's: splits' area (NODE's follows) */
    int32_t *flag;
    int64_t *res; /* my result slots */
    int64_t status, bad, checked, first_bad;
} comms_rank_t;

TEST_RANK_FN void comms_ok(comms_rank_t *c, int status) { test_note(&c->status, status); }

/* A check: counted, and where the first failed (`what` names it). */
TEST_RANK_FN void comms_expect(comms_rank_t *c, int ok, int64_t what)
{
    c->checked++;
    if (!ok && c->bad++ == 0)
        c->first_bad = what;
}

/* Round r's slots: the communicator as this rank sees it (id -1: none). */
TEST_RANK_FN void comms_record(comms_rank_t *c, int round, int comm)
{
    int64_t *slot = c->res + COMMS_ROUND0 + round * COMMS_ROUND_SLOTS;
    int n = 0, r = -1;
    if (comm != DCUDA_COMM_NULL) {
        comms_ok(c, dcuda_comm_size(c->st, comm, &n));
        comms_ok(c, dcuda_comm_rank(c->st, comm, &r));
    }
    for (int i = 0; i < n && i < COMMS_MAX_MEMBERS; i++) {
        int w = -1;
        comms_ok(c, dcuda_comm_world_rank(c->st, comm, i, &w));
        if (dcuda_thread_index() == 0)
            slot[COMMS_MEMBERS + i] = w;
    }
    if (dcuda_thread_index() == 0) {
        slot[COMMS_ID] = comm;
        slot[COMMS_SIZE] = n;
        slot[COMMS_RANK] = r;
    }
}

/* Notifications round comm's ring (to my right, from my left), then its
 * barrier: a notification that went to the wrong rank leaves a wait
 * unanswered (the watchdog fails it) or one unconsumed (a warning the
 * host looks for). */
TEST_RANK_FN void comms_ring(comms_rank_t *c, int comm)
{
    int n = 0, r = 0;
    comms_ok(c, dcuda_comm_size(c->st, comm, &n));
    comms_ok(c, dcuda_comm_rank(c->st, comm, &r));
    comms_ok(c, dcuda_notify(c->st, (r + 1) % n, comm, COMMS_TAG));
    comms_ok(c, dcuda_wait_notifications(c->st, COMMS_TAG, 1));
    comms_ok(c, dcuda_comm_barrier(c->st, comm));
}

TEST_RANK_FN void comms_split_case(comms_rank_t *c, dcuda_win_t win, dcuda_win_t dwin)
{
    const uint32_t seed = c->d->seed;
    int c0 = DCUDA_COMM_NULL, c1 = DCUDA_COMM_NULL, c2 = DCUDA_COMM_NULL, c3 = DCUDA_COMM_NULL;
    int colour = comms_colour(seed, COMMS_OF_WORLD, c->me);
    comms_ok(c, dcuda_comm_split(c->st, DCUDA_COMM_WORLD, colour < 0 ? DCUDA_UNDEFINED : colour,
                                 comms_key(seed, COMMS_OF_WORLD, c->me), win, 0, &c0));
    comms_record(c, COMMS_OF_WORLD, c0);
    if (c0 != DCUDA_COMM_NULL) { /* odd seeds: through a window of c0 (its allgather) */
        int n0 = 0;
        dcuda_win_t via = win;
        comms_ok(c, dcuda_comm_size(c->st, c0, &n0));
        if (seed % 2u)
            comms_ok(c, dcuda_win_create(c->st, c0, c->part, dcuda_comm_split_room(n0), &via));
        colour = comms_colour(seed, COMMS_OF_SPLIT, c->me);
        comms_ok(c, dcuda_comm_split(c->st, c0, colour < 0 ? DCUDA_UNDEFINED : colour,
                                     comms_key(seed, COMMS_OF_SPLIT, c->me), via, 0, &c1));
        if (via != win)
            comms_ok(c, dcuda_win_free(c->st, via));
    }
    comms_record(c, COMMS_OF_SPLIT, c1);
    comms_ok(c, dcuda_comm_split(c->st, DCUDA_COMM_NODE, c->me % 2, -c->me, win, 0, &c2));
    comms_record(c, COMMS_OF_NODE, c2);
    comms_ok(c, dcuda_comm_split(c->st, DCUDA_COMM_DEVICE, c->drank % 3, 0, dwin, 0, &c3));
    comms_record(c, COMMS_OF_DEVICE, c3);
    comms_record(c, COMMS_NODE, DCUDA_COMM_NODE);
    const int made[4] = { c0, c1, c2, c3 };
    for (int i = 0; i < 4; i++)
        if (made[i] != DCUDA_COMM_NULL)
            comms_ring(c, made[i]);
    comms_ring(c, DCUDA_COMM_NODE);
    for (int i = 3; i >= 0; i--)
        if (made[i] != DCUDA_COMM_NULL)
            comms_ok(c, dcuda_comm_free(c->st, made[i]));
}

/* The barrier case, iteration it on comm: my put (and notification) to my
 * target, the barrier, then what my sender put here, checked against the
 * model. */
TEST_RANK_FN void comms_barrier_step(comms_rank_t *c, dcuda_win_t win, int comm, int it)
{
    const uint32_t seed = c->d->seed;
    int n = 0, i = 0, to = 0, from = 0;
    comms_ok(c, dcuda_comm_size(c->st, comm, &n));
    comms_ok(c, dcuda_comm_rank(c->st, comm, &i));
    int step = comms_put_step(seed, it, 0, n);
    if (step == 0)
        return;
    int sender = (i - step + n) % n;
    comms_ok(c, dcuda_comm_world_rank(c->st, comm, (i + step) % n, &to));
    comms_ok(c, dcuda_comm_world_rank(c->st, comm, sender, &from));
    uint32_t mine = comms_put_bytes(seed, it, i), theirs = comms_put_bytes(seed, it, sender);
    /* The iterations of one communicator are ordered by its barriers, not
     * those of two: each lands in an area of its own. */
    uint64_t recv_off = c->recv_off + (comm == DCUDA_COMM_NODE ? COMMS_PUT_MAX : 0u);
    unsigned char *send = c->part + c->send_off, *recv = c->part + recv_off;
    for (uint32_t k = (uint32_t)dcuda_thread_index(); k < mine; k += (uint32_t)dcuda_thread_count())
        send[k] = test_byte((uint32_t)c->me, (uint32_t)it, k);
    dcuda_rank_sync();
    comms_ok(c, dcuda_put(c->st, win, to, recv_off, mine, send));
    if (comms_put_notifies(seed, it, i))
        comms_ok(c, dcuda_notify(c->st, (i + step) % n, comm, COMMS_TAG));
    comms_ok(c, dcuda_comm_barrier(c->st, comm));
    int wrong = 0;
    for (uint32_t k = (uint32_t)dcuda_thread_index(); k < theirs;
         k += (uint32_t)dcuda_thread_count())
        wrong |= recv[k] != test_byte((uint32_t)from, (uint32_t)it, k);
    int any = test_rank_any(c->flag, wrong);
    if (any && c->bad == 0 && dcuda_thread_index() == 0) {
        uint32_t bad = 0, at = 0;
        for (uint32_t k = 0; k < theirs; k++)
            if (recv[k] != test_byte((uint32_t)from, (uint32_t)it, k) && bad++ == 0)
                at = k;
        dcuda_log(
            c->st,
            "comms: rank %d, iteration %d: %u of the %u bytes from rank %d differ, from byte %u",
            c->me, it, bad, (unsigned)theirs, from, at);
    }
    if (dcuda_thread_index() == 0)
        comms_expect(c, !any, it * 10 + 1);
    if (comms_put_notifies(seed, it, sender)) {
        int ready = dcuda_test_notifications(c->st, COMMS_TAG, 1);
        if (dcuda_thread_index() == 0)
            comms_expect(c, ready == 1, it * 10 + 2);
    }
    comms_ok(c, dcuda_comm_barrier(c->st, comm)); /* checked before the next puts land */
}

TEST_RANK_FN void comms_barrier_case(comms_rank_t *c, dcuda_win_t win)
{
    int split = DCUDA_COMM_NULL, colour = comms_colour(c->d->seed, COMMS_OF_WORLD, c->me);
    comms_ok(c, dcuda_comm_split(c->st, DCUDA_COMM_WORLD, colour < 0 ? 0 : colour,
                                 comms_key(c->d->seed, COMMS_OF_WORLD, c->me), win, 0, &split));
    for (int it = 0; it < COMMS_ITERS && split != DCUDA_COMM_NULL; it++)
        comms_barrier_step(c, win, it % 3 == 2 ? DCUDA_COMM_NODE : split, it);
    comms_ok(c, dcuda_comm_free(c->st, split));
}

/* Refused calls: each status is a check (what: its line). */
/* A split's windows: DCUDA_COMM_WINDOWS of them, then none more, and
 * the split is not freed while it has one. */
TEST_RANK_FN void comms_window_limit(comms_rank_t *c, int comm)
{
    dcuda_win_t w[DCUDA_COMM_WINDOWS + 1];
    for (int k = 0; k < DCUDA_COMM_WINDOWS; k++)
        comms_ok(c, dcuda_win_create(c->st, comm, c->part + k, 1, &w[k]));
    comms_expect(
        c, dcuda_win_create(c->st, comm, c->part, 8, &w[DCUDA_COMM_WINDOWS]) == DCUDA_ERR_WIN_LIMIT,
        23);
    comms_expect(c, dcuda_comm_free(c->st, comm) == DCUDA_ERR_COMM, 24);
    for (int k = 0; k < DCUDA_COMM_WINDOWS; k++)
        comms_ok(c, dcuda_win_free(c->st, w[k]));
}

/* A window slot reused with a larger part: a put past the first part's end
 * must reach my right neighbour (a proxy that kept the first part's size
 * would refuse it), and its bytes must be there. Bytes 0..63 of my region
 * are the split room, which no split uses meanwhile. */
TEST_RANK_FN void comms_window_reuse(comms_rank_t *c, int comm)
{
    int n = 1, r = 0;
    dcuda_win_t w = DCUDA_WIN_NONE;
    comms_ok(c, dcuda_comm_size(c->st, comm, &n));
    comms_ok(c, dcuda_comm_rank(c->st, comm, &r));
    if (dcuda_thread_index() == 0)
        for (int k = 0; k < 8; k++)
            c->part[k] = (unsigned char)(c->me * 7 + k);
    dcuda_rank_sync();
    for (int round = 0; round < 2; round++) {
        const size_t at = round ? 40u : 8u;
        comms_ok(c, dcuda_win_create(c->st, comm, c->part, round ? 64u : 16u, &w));
        int s = dcuda_put_notify(c->st, w, (r + 1) % n, at, 8, c->part, COMMS_TAG);
        if (round)
            comms_expect(c, s == DCUDA_OK, 25);
        else
            comms_ok(c, s);
        comms_ok(c, dcuda_wait_notifications(c->st, COMMS_TAG, 1));
        if (round) { /* before the free's barrier lets a split write here */
            int left = 0, bad = 0;
            comms_ok(c, dcuda_comm_world_rank(c->st, comm, (r + n - 1) % n, &left));
            for (int k = 0; k < 8; k++)
                bad |= c->part[40 + k] != (unsigned char)(left * 7 + k);
            comms_expect(c, !bad, 26);
        }
        comms_ok(c, dcuda_win_free(c->st, w));
    }
}

TEST_RANK_FN void comms_misuse_case(comms_rank_t *c, dcuda_win_t win)
{
    int n = 0, w = 0, ids[6];
    dcuda_win_t nwin = 0;
    comms_expect(c, dcuda_comm_size(c->st, 5, &n) == DCUDA_ERR_COMM, 1);
    comms_expect(c, dcuda_comm_size(c->st, DCUDA_COMM_NULL, &n) == DCUDA_ERR_COMM, 2);
    /* A window of NODE over my first 64 bytes: a root past NODE's ranks is
     * refused, and a source past it lies only in WORLD's window. */
    comms_ok(c, dcuda_win_create(c->st, DCUDA_COMM_NODE, c->part, 64, &nwin));
    comms_ok(c, dcuda_comm_size(c->st, DCUDA_COMM_NODE, &n));
    comms_expect(c, dcuda_broadcast(c->st, nwin, 0, 8, n) == DCUDA_ERR_RANK, 3);
    comms_expect(c, dcuda_put(c->st, nwin, 0, 0, 8, c->part + 64) == DCUDA_ERR_WIN_COMM, 21);
    comms_ok(c, dcuda_win_free(c->st, nwin));
    comms_expect(c, dcuda_put(c->st, nwin, 0, 0, 8, c->part) == DCUDA_ERR_WIN, 22);
    comms_expect(c, dcuda_comm_free(c->st, DCUDA_COMM_NODE) == DCUDA_ERR_COMM, 4);
    comms_expect(c, dcuda_comm_free(c->st, DCUDA_COMM_WORLD) == DCUDA_ERR_COMM, 5);
    comms_expect(c, dcuda_comm_world_rank(c->st, DCUDA_COMM_NODE, n, &w) == DCUDA_ERR_RANK, 6);
    comms_expect(c,
                 dcuda_comm_split(c->st, DCUDA_COMM_WORLD, -5, 0, win, 0, &ids[0]) ==
                     DCUDA_ERR_INVALID_ARG,
                 7);
    comms_expect(c,
                 dcuda_comm_split(c->st, DCUDA_COMM_WORLD, 0, 0, win, c->d->region - 8u, &ids[0]) ==
                     DCUDA_ERR_BOUNDS,
                 8);
    comms_expect(c, dcuda_comm_split(c->st, 6, 0, 0, win, 0, &ids[0]) == DCUDA_ERR_COMM, 9);
    /* Five splits take ids 3 to 7, the sixth finds none free. */
    for (int k = 0; k < 5; k++) {
        comms_ok(c, dcuda_comm_split(c->st, DCUDA_COMM_WORLD, 0, 0, win, 0, &ids[k]));
        comms_expect(c, ids[k] == 3 + k, 10 + k);
    }
    comms_expect(
        c, dcuda_comm_split(c->st, DCUDA_COMM_WORLD, 0, 0, win, 0, &ids[5]) == DCUDA_ERR_COMM_LIMIT,
        15);
    comms_expect(c, ids[5] == DCUDA_COMM_NULL, 16);
    comms_expect(c, dcuda_notify(c->st, c->world, ids[0], COMMS_TAG) == DCUDA_ERR_RANK, 17);
    comms_window_limit(c, ids[0]);
    comms_window_reuse(c, ids[0]);
    /* Id 5 freed at WORLD rank 0 only: free there, not elsewhere, so the
     * next split finds no id free at every rank; freed everywhere, it
     * takes id 5 again. */
    int again = 0;
    if (c->me == 0)
        comms_ok(c, dcuda_comm_free(c->st, ids[2]));
    int limit = dcuda_comm_split(c->st, DCUDA_COMM_WORLD, 0, 0, win, 0, &again);
    if (c->world > 1) /* alone, rank 0 is every rank */
        comms_expect(c, limit == DCUDA_ERR_COMM_LIMIT, 18);
    else if (limit == DCUDA_OK)
        comms_ok(c, dcuda_comm_free(c->st, again));
    if (c->me != 0)
        comms_ok(c, dcuda_comm_free(c->st, ids[2]));
    comms_ok(c, dcuda_comm_split(c->st, DCUDA_COMM_WORLD, c->me % 2, 0, win, 0, &ids[2]));
    comms_expect(c, ids[2] == 5, 19);
    for (int k = 0; k < 5; k++)
        if (ids[k] != DCUDA_COMM_NULL)
            comms_ok(c, dcuda_comm_free(c->st, ids[k]));
    comms_expect(c, dcuda_comm_barrier(c->st, ids[0]) == DCUDA_ERR_COMM, 20);
}

DCUDA_KERNEL(comms, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    DCUDA_SHARED int32_t flag;
    comms_rank_t c;
    c.st = &st;
    c.flag = &flag;
    c.status = c.bad = c.checked = c.first_bad = 0;
    c.me = c.world = c.drank = 0;
    comms_ok(&c, dcuda_rank_init(ctx, &st));
    comms_ok(&c, dcuda_get_data(&st, (void **)&c.d));
    comms_ok(&c, dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &c.me));
    comms_ok(&c, dcuda_comm_size(&st, DCUDA_COMM_WORLD, &c.world));
    comms_ok(&c, dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &c.drank));
    c.part = c.d->buf + (uint64_t)c.drank * c.d->region;
    c.recv_off = dcuda_comm_split_room(c.world);
    c.send_off = c.recv_off + 2u * COMMS_PUT_MAX;
    c.res = c.d->res + (int64_t)c.drank * COMMS_SLOTS;
    dcuda_win_t win = DCUDA_WIN_NONE, dwin = DCUDA_WIN_NONE;
    comms_ok(&c, dcuda_win_create(&st, DCUDA_COMM_WORLD, c.part, c.d->region, &win));
    comms_ok(&c, dcuda_win_create(&st, DCUDA_COMM_DEVICE, c.part, c.d->region, &dwin));
    if (c.d->test_case == COMMS_SPLIT)
        comms_split_case(&c, win, dwin);
    else if (c.d->test_case == COMMS_BARRIER)
        comms_barrier_case(&c, win);
    else if (c.d->test_case == COMMS_MISUSE)
        comms_misuse_case(&c, win);
    comms_ok(&c, dcuda_win_free(&st, dwin));
    comms_ok(&c, dcuda_win_free(&st, win));
    comms_ok(&c, dcuda_rank_finish(&st));
    if (dcuda_thread_index() == 0) {
        c.res[COMMS_STATUS] = c.status;
        c.res[COMMS_BAD] = c.bad;
        c.res[COMMS_CHECKED] = c.checked;
        c.res[COMMS_FIRST_BAD] = c.first_bad;
    }
}
