/*
 * Rank code of the semantics suite (dcuda_test_semantics): one kernel whose
 * case is chosen by sem_data_t.test_case. Written once for CPU and GPU ranks:
 * rank API only, no libc, work-shared fills, thread 0 does the checking and
 * writes the rank's result slots, which the host copies out and checks.
 */
#include "dcuda/dcuda_rank.h"
#include "semantics.h"

/* What one thread of a rank knows and has counted. Only thread 0's counts
 * are written out; checks of API results are made by every thread alike. */
typedef struct sem_rank {
    dcuda_state_t *st;
    sem_data_t *d;
    int rank, size;   /* in WORLD */
    int drank, dsize; /* in DEVICE */
    int wfirst;       /* WORLD rank of DEVICE rank 0 (WORLD numbers a device's ranks in order) */
    int to, from;     /* ring neighbours in WORLD */
    unsigned char *mine;
    int64_t status, bad, checked, first_bad;
} sem_rank_t;

TEST_RANK_FN void ok(sem_rank_t *c, int status) { test_note(&c->status, status); }

TEST_RANK_FN void expect(sem_rank_t *c, int cond, int64_t where)
{
    c->checked++;
    if (!cond && c->bad++ == 0)
        c->first_bad = where;
}

TEST_RANK_FN void fill_bytes(unsigned char *p, uint64_t n, uint32_t a, uint32_t b)
{
    for (uint64_t i = (uint64_t)dcuda_thread_index(); i < n; i += (uint64_t)dcuda_thread_count())
        p[i] = test_byte(a, b, i);
    dcuda_rank_sync();
}

TEST_RANK_FN void fill_words(uint64_t *p, uint64_t n, uint32_t a, uint32_t b)
{
    for (uint64_t i = (uint64_t)dcuda_thread_index(); i < n; i += (uint64_t)dcuda_thread_count())
        p[i] = test_word(a, b, i);
    dcuda_rank_sync();
}

/* Thread 0 compares n bytes with pattern (a, b) starting at index `first`. */
TEST_RANK_FN void check_bytes(sem_rank_t *c, const unsigned char *p, uint64_t first, uint64_t n,
                              uint32_t a, uint32_t b, int64_t where)
{
    if (dcuda_thread_index() == 0) {
        uint64_t bad = 0, at = 0;
        for (uint64_t i = 0; i < n; i++)
            if (p[i] != test_byte(a, b, first + i)) {
                if (bad++ == 0)
                    at = i;
            }
        c->checked += (int64_t)n;
        if (bad && c->bad == 0)
            c->first_bad = where + (int64_t)at;
        c->bad += (int64_t)bad;
    }
    dcuda_rank_sync();
}

/* Thread 0 compares words [lo, hi) of p with pattern (a, b). */
TEST_RANK_FN void check_words(sem_rank_t *c, const uint64_t *p, uint64_t lo, uint64_t hi,
                              uint32_t a, uint32_t b, int64_t where)
{
    if (dcuda_thread_index() == 0)
        for (uint64_t i = lo; i < hi; i++)
            expect(c, p[i] == test_word(a, b, i), where + (int64_t)i);
    dcuda_rank_sync();
}

/* Tells `rank` that its data in my part of win has been consumed, so that
 * it may overwrite it. The signal must order my reads of that data before
 * the sender's next put. dcuda_notify is a release as well (every
 * notification is, see docs/design.md; case ack uses it); this variant
 * signals with an empty put_notify, so that both ways of saying "free"
 * are tested. */
TEST_RANK_FN int consumed_signal(sem_rank_t *c, dcuda_win_t win, int rank, int tag)
{
    return dcuda_put_notify(c->st, win, rank, 0, 0, c->mine, tag);
}

/* A large put per iteration around the ring; the receiver checks every byte
 * once the notification is seen, then lets the sender reuse its buffer
 * (with a releasing signal, or with plain dcuda_notify for case ack). */
TEST_RANK_FN void case_visibility(sem_rank_t *c, uint64_t s, int plain_notify)
{
    unsigned char *recv = c->mine, *send = c->mine + s;
    dcuda_win_t win;
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, 2 * s, &win));
    for (int it = 0; it < c->d->iters; it++) {
        if (it > 0)
            ok(c, dcuda_wait_notifications(c->st, SEM_TAG_ACK, 1));
        fill_bytes(send, s, (uint32_t)c->rank, (uint32_t)it);
        ok(c, dcuda_put_notify(c->st, win, c->to, 0, s, send, SEM_TAG_DATA));
        ok(c, dcuda_win_flush(c->st, win));
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_DATA, 1));
        check_bytes(c, recv, 0, s, (uint32_t)c->from, (uint32_t)it, (int64_t)it * (int64_t)s);
        if (plain_notify)
            ok(c, dcuda_notify(c->st, c->from, DCUDA_COMM_WORLD, SEM_TAG_ACK));
        else
            ok(c, consumed_signal(c, win, c->from, SEM_TAG_ACK));
    }
    ok(c, dcuda_wait_notifications(c->st, SEM_TAG_ACK, 1));
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_DATA, 1) == 0, -1);
    ok(c, dcuda_win_free(c->st, win));
}

/* A plain put, a notification to myself, then one to the put's target:
 * when the target sees its notification, the put must be visible (every
 * earlier put of a rank to a target is, when a notification is seen). */
TEST_RANK_FN void case_notify_release(sem_rank_t *c)
{
    const uint64_t k = (uint64_t)c->d->iters;
    uint64_t *recv = (uint64_t *)c->mine, *send = recv + k;
    dcuda_win_t win;
    fill_words(send, k, (uint32_t)c->rank, 12);
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, c->d->region, &win));
    for (uint64_t i = 0; i < k; i++) {
        ok(c, dcuda_put(c->st, win, c->to, 8 * i, 8, &send[i]));
        ok(c, dcuda_notify(c->st, c->rank, DCUDA_COMM_WORLD, SEM_TAG_SELF));
        ok(c, dcuda_notify(c->st, c->to, DCUDA_COMM_WORLD, SEM_TAG_NR));
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_SELF, 1));
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_NR, 1));
        check_words(c, recv, i, i + 1, (uint32_t)c->from, 12, 0);
    }
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_SELF, 1) == 0, -1);
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_NR, 1) == 0, -2);
    ok(c, dcuda_win_free(c->st, win));
}

/* Part A: put_notify i lands in slot i; when notification i is consumed,
 * slots 0..i must hold their data. Part B: rounds of plain puts closed by
 * a notify (even rounds) or a put_notify (odd rounds). */
TEST_RANK_FN void case_order(sem_rank_t *c)
{
    const uint64_t k = (uint64_t)c->d->iters, m = SEM_ORDER_MSGS, nb = SEM_ORDER_ROUNDS * m;
    uint64_t *recv_a = (uint64_t *)c->mine, *recv_b = recv_a + k;
    uint64_t *send_a = recv_b + nb, *send_b = send_a + k;
    dcuda_win_t win;
    fill_words(send_a, k, (uint32_t)c->rank, 1);
    fill_words(send_b, nb, (uint32_t)c->rank, 2);
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, c->d->region, &win));
    for (uint64_t i = 0; i < k; i++) {
        ok(c, dcuda_put_notify(c->st, win, c->to, 8 * i, 8, &send_a[i], SEM_TAG_ORDER));
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_ORDER, 1));
        check_words(c, recv_a, 0, i + 1, (uint32_t)c->from, 1, (int64_t)(i * k));
    }
    for (uint64_t r = 0; r < SEM_ORDER_ROUNDS; r++) {
        uint64_t first = r * m, last = first + m - 1;
        for (uint64_t j = first; j < last; j++)
            ok(c, dcuda_put(c->st, win, c->to, 8 * (k + j), 8, &send_b[j]));
        if (r % 2 == 0) {
            ok(c, dcuda_put(c->st, win, c->to, 8 * (k + last), 8, &send_b[last]));
            ok(c, dcuda_notify(c->st, c->to, DCUDA_COMM_WORLD, SEM_TAG_ORDER_B));
        } else {
            ok(c, dcuda_put_notify(c->st, win, c->to, 8 * (k + last), 8, &send_b[last],
                                   SEM_TAG_ORDER_B));
        }
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_ORDER_B, 1));
        check_words(c, recv_b, first, last + 1, (uint32_t)c->from, 2, 1000000);
    }
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_ORDER, 1) == 0, -1);
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_ORDER_B, 1) == 0, -2);
    ok(c, dcuda_win_free(c->st, win));
}

/* Notifications of one tag never satisfy or get consumed by another tag. */
TEST_RANK_FN void case_tags(sem_rank_t *c)
{
    dcuda_state_t *st = c->st;
    int dto = (c->drank + 1) % c->dsize;
    for (int i = 0; i < 5; i++)
        ok(c, dcuda_notify(st, c->to, DCUDA_COMM_WORLD, SEM_TAG_A));
    ok(c, dcuda_comm_barrier(st, DCUDA_COMM_WORLD));
    /* Five on tag A have arrived; no other tag has any. */
    for (int tag = 0; tag < DCUDA_TAG_COUNT; tag++)
        if (tag != SEM_TAG_A)
            expect(c, dcuda_test_notifications(st, tag, 1) == 0, tag);
    expect(c, dcuda_test_notifications(st, SEM_TAG_A, 6) == 0, 1000);
    expect(c, dcuda_test_notifications(st, SEM_TAG_A, 2) == 1, 1001);
    ok(c, dcuda_comm_barrier(st, DCUDA_COMM_WORLD));
    /* A wait on B needs B; the three left on A stay. */
    ok(c, dcuda_notify(st, dto, DCUDA_COMM_DEVICE, SEM_TAG_B));
    ok(c, dcuda_wait_notifications(st, SEM_TAG_B, 1));
    expect(c, dcuda_test_notifications(st, SEM_TAG_B, 1) == 0, 1002);
    expect(c, dcuda_test_notifications(st, SEM_TAG_A, 3) == 1, 1003);
    expect(c, dcuda_test_notifications(st, SEM_TAG_A, 1) == 0, 1004);
    /* The extreme tags. */
    ok(c, dcuda_notify(st, c->to, DCUDA_COMM_WORLD, DCUDA_TAG_COUNT - 1));
    ok(c, dcuda_notify(st, c->to, DCUDA_COMM_WORLD, DCUDA_TAG_COUNT - 1));
    ok(c, dcuda_notify(st, c->to, DCUDA_COMM_WORLD, 0));
    ok(c, dcuda_wait_notifications(st, 0, 1));
    ok(c, dcuda_wait_notifications(st, DCUDA_TAG_COUNT - 1, 2));
    expect(c, dcuda_test_notifications(st, DCUDA_TAG_COUNT - 1, 1) == 0, 1005);
    expect(c, dcuda_test_notifications(st, 0, 1) == 0, 1006);
    ok(c, dcuda_comm_barrier(st, DCUDA_COMM_WORLD));
    for (int tag = 0; tag < DCUDA_TAG_COUNT; tag++)
        expect(c, dcuda_test_notifications(st, tag, 1) == 0, 2000 + tag);
}

/* Every rank sends iters notified puts to one rank, which consumes them
 * in chunks, half by polling test_notifications, half by waiting. */
TEST_RANK_FN void case_many(sem_rank_t *c)
{
    const int target = c->size / 2;
    const uint64_t n = (uint64_t)c->d->iters, total = n * (uint64_t)c->size;
    uint64_t *slots = (uint64_t *)c->mine, *send = slots + total;
    dcuda_win_t win;
    fill_words(send, n, (uint32_t)c->rank, 3);
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, c->d->region, &win));
    for (uint64_t i = 0; i < n; i++)
        ok(c, dcuda_put_notify(c->st, win, target, 8 * ((uint64_t)c->rank * n + i), 8, &send[i],
                               SEM_TAG_MANY));
    if (c->rank == target) {
        uint64_t got = 0;
        while (got + SEM_MANY_CHUNK <= total / 2) {
            int r = dcuda_test_notifications(c->st, SEM_TAG_MANY, SEM_MANY_CHUNK);
            ok(c, r);
            if (r < 0)
                break;
            got += (uint64_t)r * SEM_MANY_CHUNK;
        }
        while (got < total) {
            uint64_t chunk = total - got < SEM_MANY_CHUNK ? total - got : SEM_MANY_CHUNK;
            ok(c, dcuda_wait_notifications(c->st, SEM_TAG_MANY, (int)chunk));
            got += chunk;
        }
        if (dcuda_thread_index() == 0)
            for (uint64_t j = 0; j < total; j++)
                expect(c, slots[j] == test_word((uint32_t)(j / n), 3, j % n), (int64_t)j);
        dcuda_rank_sync();
        expect(c, dcuda_test_notifications(c->st, SEM_TAG_MANY, 1) == 0, -1);
    }
    ok(c, dcuda_comm_barrier(c->st, DCUDA_COMM_WORLD));
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_MANY, 1) == 0, -2);
    ok(c, dcuda_win_free(c->st, win));
}

/* Counters start just below 2^32 (DCUDA_NOTIF_START): iters notified puts
 * per tag cross the wrap; consumed in chunks of 3 by waiting, chunks of 5 by
 * polling, and in one wait for all. Slot A/B: consumed count of the first
 * tag before and after (the state is a public layout). */
TEST_RANK_FN void case_wrap(sem_rank_t *c)
{
    const uint64_t m = (uint64_t)c->d->iters, nt = SEM_WRAP_TAGS;
    uint64_t *recv = (uint64_t *)c->mine, *send = recv + nt * m;
    dcuda_win_t win;
    if (dcuda_thread_index() == 0)
        c->d->res[c->rank * SEM_SLOTS + SEM_RES_A] = (int64_t)c->st->consumed[sem_wrap_tag(0)];
    fill_words(send, nt * m, (uint32_t)c->rank, 4);
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, c->d->region, &win));
    for (uint64_t i = 0; i < m; i++)
        for (uint64_t t = 0; t < nt; t++)
            ok(c, dcuda_put_notify(c->st, win, c->to, 8 * (t * m + i), 8, &send[t * m + i],
                                   sem_wrap_tag((int)t)));
    for (uint64_t got = 0; got < m;) {
        uint64_t chunk = m - got < 3 ? m - got : 3;
        ok(c, dcuda_wait_notifications(c->st, sem_wrap_tag(0), (int)chunk));
        check_words(c, recv, got, got + chunk, (uint32_t)c->from, 4, 0);
        got += chunk;
    }
    for (uint64_t got = 0; got < m;) {
        uint64_t chunk = m - got < 5 ? m - got : 5;
        int r = dcuda_test_notifications(c->st, sem_wrap_tag(1), (int)chunk);
        ok(c, r);
        if (r < 0)
            break;
        if (r == 1) {
            check_words(c, recv, m + got, m + got + chunk, (uint32_t)c->from, 4, 0);
            got += chunk;
        }
    }
    ok(c, dcuda_wait_notifications(c->st, sem_wrap_tag(2), (int)m));
    check_words(c, recv, 2 * m, 3 * m, (uint32_t)c->from, 4, 0);
    if (dcuda_thread_index() == 0)
        c->d->res[c->rank * SEM_SLOTS + SEM_RES_B] = (int64_t)c->st->consumed[sem_wrap_tag(0)];
    ok(c, dcuda_comm_barrier(c->st, DCUDA_COMM_WORLD));
    for (int t = 0; t < SEM_WRAP_TAGS; t++)
        expect(c, dcuda_test_notifications(c->st, sem_wrap_tag(t), 1) == 0, -1 - t);
    ok(c, dcuda_win_free(c->st, win));
}

/* All ranks expose the same buffer (WORLD and DEVICE windows); chunk r of
 * rank r: quarter 0 holds data, a put of it onto itself copies nothing but
 * notifies, puts copy it into quarters 1 (WORLD) and 2 (DEVICE), quarter 3
 * stays as the host wrote it. With several processes each has its own
 * buffer: the WORLD puts into the next rank's process, the DEVICE ones stay
 * in mine, so quarter 2 comes from my DEVICE neighbour. */
TEST_RANK_FN void case_overlap(sem_rank_t *c)
{
    const uint64_t s = SEM_OV_BYTES, q = s / 4, all = s * (uint64_t)c->size;
    const uint64_t at = (uint64_t)c->rank * s;
    int dto = (c->drank + 1) % c->dsize;
    int dfrom = c->wfirst + (c->drank + c->dsize - 1) % c->dsize; /* in WORLD */
    dcuda_win_t w, dw;
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->d->buf, all, &w));
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_DEVICE, c->d->buf, all, &dw));
    ok(c, dcuda_put_notify(c->st, w, c->to, at, q, c->mine, SEM_TAG_OV1));
    ok(c, dcuda_put_notify(c->st, w, c->to, at + q, q, c->mine, SEM_TAG_OV2));
    ok(c, dcuda_put_notify(c->st, dw, dto, at + 2 * q, q, c->mine, SEM_TAG_OV3));
    ok(c, dcuda_wait_notifications(c->st, SEM_TAG_OV1, 1));
    ok(c, dcuda_wait_notifications(c->st, SEM_TAG_OV2, 1));
    ok(c, dcuda_wait_notifications(c->st, SEM_TAG_OV3, 1));
    const unsigned char *theirs = c->d->buf + (uint64_t)c->from * s;
    const unsigned char *dtheirs = c->d->buf + (uint64_t)dfrom * s;
    for (uint64_t k = 0; k < 2; k++)
        check_bytes(c, theirs + k * q, 0, q, (uint32_t)c->from, 5, (int64_t)(k * q));
    check_bytes(c, dtheirs + 2 * q, 0, q, (uint32_t)dfrom, 5, (int64_t)(2 * q));
    check_bytes(c, theirs + 3 * q, 3 * q, q, (uint32_t)c->from, 6, (int64_t)(3 * q));
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_OV1, 1) == 0, -1);
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_OV2, 1) == 0, -2);
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_OV3, 1) == 0, -3);
    ok(c, dcuda_win_free(c->st, dw));
    ok(c, dcuda_win_free(c->st, w));
}

/* Puts, flush, then the source is overwritten: the target holds the data
 * from before the flush; a second put carries the new data. */
TEST_RANK_FN void case_flush(sem_rank_t *c)
{
    const uint64_t s = SEM_FLUSH_BYTES, seg = s / 4;
    unsigned char *recv1 = c->mine, *recv2 = c->mine + s, *send = c->mine + 2 * s;
    dcuda_win_t win;
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, 3 * s, &win));
    for (int it = 0; it < c->d->iters; it++) {
        uint32_t pre = (uint32_t)(2 * it), post = pre + 1;
        if (it > 0)
            ok(c, dcuda_wait_notifications(c->st, SEM_TAG_FLACK, 1));
        fill_bytes(send, s, (uint32_t)c->rank, pre);
        for (uint64_t k = 0; k < 3; k++)
            ok(c, dcuda_put(c->st, win, c->to, k * seg, seg, send + k * seg));
        ok(c, dcuda_put_notify(c->st, win, c->to, 3 * seg, seg, send + 3 * seg, SEM_TAG_FL1));
        ok(c, dcuda_win_flush(c->st, win));
        fill_bytes(send, s, (uint32_t)c->rank, post);
        ok(c, dcuda_put_notify(c->st, win, c->to, s, s, send, SEM_TAG_FL2));
        ok(c, dcuda_win_flush(c->st, win));
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_FL1, 1));
        check_bytes(c, recv1, 0, s, (uint32_t)c->from, pre, (int64_t)it * 2 * (int64_t)s);
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_FL2, 1));
        check_bytes(c, recv2, 0, s, (uint32_t)c->from, post, ((int64_t)it * 2 + 1) * (int64_t)s);
        ok(c, consumed_signal(c, win, c->from, SEM_TAG_FLACK));
    }
    ok(c, dcuda_wait_notifications(c->st, SEM_TAG_FLACK, 1));
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_FL1, 1) == 0, -1);
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_FL2, 1) == 0, -2);
    ok(c, dcuda_win_free(c->st, win));
}

/* Round r: write my slot of buffer r % 2 (indexed by WORLD rank on even
 * rounds, DEVICE rank on odd), barrier (WORLD on even rounds, DEVICE on
 * odd), read the slots of the round that lie on my device (plain stores:
 * a process sees its own ranks' only; with one process, all of them). One
 * barrier per round is enough for the double buffer only if barriers are
 * correct. On WORLD rounds the barrier must also hold back every rank of
 * every process: each rank notifies the next one once it is through, and
 * no such notification may be there before I arrive. */
TEST_RANK_FN void case_barrier(sem_rank_t *c)
{
    uint64_t *slots = (uint64_t *)c->d->buf;
    for (int r = 0; r < c->d->iters; r++) {
        int world = r % 2 == 0, comm = world ? DCUDA_COMM_WORLD : DCUDA_COMM_DEVICE;
        int me = world ? c->rank : c->drank, first = world ? c->wfirst : 0;
        uint64_t *row = slots + (uint64_t)(r % 2) * (uint64_t)c->size;
        if (dcuda_thread_index() == 0)
            row[me] = test_word((uint32_t)me, 7, (uint64_t)r);
        dcuda_rank_sync();
        if (world)
            expect(c, dcuda_test_notifications(c->st, SEM_TAG_BAR, 1) == 0,
                   (int64_t)r * 100000 - 1);
        ok(c, dcuda_comm_barrier(c->st, comm));
        if (dcuda_thread_index() == 0)
            for (int j = first; j < first + c->dsize; j++)
                expect(c, row[j] == test_word((uint32_t)j, 7, (uint64_t)r),
                       (int64_t)r * 100000 + j);
        dcuda_rank_sync();
        if (world) {
            ok(c, dcuda_notify(c->st, c->to, DCUDA_COMM_WORLD, SEM_TAG_BAR));
            ok(c, dcuda_wait_notifications(c->st, SEM_TAG_BAR, 1));
        }
    }
}

/* Even ranks expose 0 bytes (base NULL) in window W0: zero-size puts to them
 * succeed and notify; odd ranks get data, whose source lies in another
 * window (W1) of the same communicator. */
TEST_RANK_FN void case_size0(sem_rank_t *c)
{
    const uint64_t s = SEM_ZERO_BYTES;
    unsigned char *part = c->mine, *src = c->mine + s;
    int empty = c->rank % 2 == 0, to_empty = c->to % 2 == 0;
    dcuda_win_t w0, w1;
    fill_bytes(src, s, (uint32_t)c->rank, 8);
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, empty ? (void *)0 : part, empty ? 0 : s, &w0));
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, src, s, &w1));
    if (to_empty) {
        ok(c, dcuda_put(c->st, w0, c->to, 0, 0, src));
        ok(c, dcuda_put_notify(c->st, w0, c->to, 0, 0, src, SEM_TAG_ZERO));
    } else {
        ok(c, dcuda_put(c->st, w0, c->to, s, 0, src)); /* empty put at the very end */
        ok(c, dcuda_put_notify(c->st, w0, c->to, 0, s, src, SEM_TAG_ZERO));
    }
    ok(c, dcuda_wait_notifications(c->st, SEM_TAG_ZERO, 1));
    if (!empty)
        check_bytes(c, part, 0, s, (uint32_t)c->from, 8, 0);
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_ZERO, 1) == 0, -1);
    ok(c, dcuda_win_free(c->st, w1));
    ok(c, dcuda_win_free(c->st, w0));
}

/* A ring exchange of iters rounds, then all ranks put to rank 0. */
TEST_RANK_FN void case_ring(sem_rank_t *c)
{
    const uint64_t r = (uint64_t)c->d->iters, n = (uint64_t)c->size;
    uint64_t *ring = (uint64_t *)c->mine, *all = ring + r, *send = all + n;
    dcuda_win_t win;
    fill_words(send, r + 1, (uint32_t)c->rank, 9);
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, c->d->region, &win));
    for (uint64_t k = 0; k < r; k++) {
        ok(c, dcuda_put_notify(c->st, win, c->to, 8 * k, 8, &send[k], SEM_TAG_RING));
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_RING, 1));
        check_words(c, ring, k, k + 1, (uint32_t)c->from, 9, 0);
    }
    ok(c, dcuda_put_notify(c->st, win, 0, 8 * (r + (uint64_t)c->rank), 8, &send[r], SEM_TAG_ALL));
    if (c->rank == 0) {
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_ALL, c->size));
        if (dcuda_thread_index() == 0)
            for (uint64_t j = 0; j < n; j++)
                expect(c, all[j] == test_word((uint32_t)j, 9, r), (int64_t)j);
        dcuda_rank_sync();
        expect(c, dcuda_test_notifications(c->st, SEM_TAG_ALL, 1) == 0, -2);
    }
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_RING, 1) == 0, -1);
    ok(c, dcuda_win_free(c->st, win));
}

/* One round of the windows case: nl windows on comm, a notified put on
 * each to the next rank, checked, then freed in a round-dependent order.
 * Returns the handle of window 0 (freed). */
TEST_RANK_FN dcuda_win_t windows_round(sem_rank_t *c, int it, int comm, int nl)
{
    dcuda_win_t w[SEM_WIN_MAXLIVE];
    int me = comm == DCUDA_COMM_WORLD ? c->rank : c->drank;
    int n = comm == DCUDA_COMM_WORLD ? c->size : c->dsize;
    int to = (me + 1) % n, from = (me + n - 1) % n;
    for (int j = 0; j < nl; j++)
        ok(c, dcuda_win_create(c->st, comm, c->mine + j * SEM_WIN_SUB, SEM_WIN_SUB, &w[j]));
    if (dcuda_thread_index() == 0)
        for (int j = 0; j < nl; j++)
            *(uint64_t *)(c->mine + j * SEM_WIN_SUB + 8) =
                test_word((uint32_t)me, 10, (uint64_t)(it * 8 + j));
    dcuda_rank_sync();
    for (int j = 0; j < nl; j++)
        ok(c, dcuda_put_notify(c->st, w[j], to, 0, 8, c->mine + j * SEM_WIN_SUB + 8, SEM_TAG_WIN));
    ok(c, dcuda_wait_notifications(c->st, SEM_TAG_WIN, nl));
    if (dcuda_thread_index() == 0)
        for (int j = 0; j < nl; j++)
            expect(c,
                   *(const uint64_t *)(c->mine + j * SEM_WIN_SUB) ==
                       test_word((uint32_t)from, 10, (uint64_t)(it * 8 + j)),
                   it * 8 + j);
    dcuda_rank_sync();
    for (int j = 0; j < nl; j++)
        ok(c, dcuda_win_free(c->st, w[it % 2 ? nl - 1 - j : j]));
    return w[0];
}

/* Many windows over time (slots reused); stale handles are rejected by
 * rank 0 (which makes the run fail with DCUDA_ERR_WIN, as the host expects).
 * Slots A..F of rank 0: the three stale calls' statuses, the first stale
 * handle, the stale handle of the reused slot, the fresh handle. */
TEST_RANK_FN void case_windows(sem_rank_t *c)
{
    dcuda_win_t first, stale = DCUDA_WIN_NONE, fresh;
    int64_t *res = c->d->res + c->rank * SEM_SLOTS;
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, SEM_WIN_SUB, &first));
    ok(c, dcuda_win_free(c->st, first));
    for (int it = 0; it < c->d->iters; it++) {
        int comm = it % 2 ? DCUDA_COMM_DEVICE : DCUDA_COMM_WORLD;
        dcuda_win_t w0 = windows_round(c, it, comm, 1 + it % SEM_WIN_MAXLIVE);
        if (comm == DCUDA_COMM_WORLD)
            stale = w0;
    }
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, SEM_WIN_SUB, &fresh));
    if (c->rank == 0) {
        int a = dcuda_put(c->st, first, c->to, 0, 8, c->mine + 8);
        int b = dcuda_put_notify(c->st, stale, c->to, 0, 8, c->mine + 8, SEM_TAG_WIN);
        int f = dcuda_win_free(c->st, first);
        if (dcuda_thread_index() == 0) {
            res[SEM_RES_A] = a;
            res[SEM_RES_B] = b;
            res[SEM_RES_C] = f;
            res[SEM_RES_D] = first;
            res[SEM_RES_E] = stale;
            res[SEM_RES_F] = fresh;
        }
    }
    if (dcuda_thread_index() == 0)
        *(uint64_t *)(c->mine + 8) = test_word((uint32_t)c->rank, 11, 0);
    dcuda_rank_sync();
    ok(c, dcuda_put_notify(c->st, fresh, c->to, 0, 8, c->mine + 8, SEM_TAG_WIN));
    ok(c, dcuda_wait_notifications(c->st, SEM_TAG_WIN, 1));
    if (dcuda_thread_index() == 0)
        expect(c, *(const uint64_t *)c->mine == test_word((uint32_t)c->from, 11, 0), -1);
    dcuda_rank_sync();
    ok(c, dcuda_win_free(c->st, fresh));
}

/* The user struct comes in and goes back out (the copy of my process);
 * timer pairs as asked. */
TEST_RANK_FN void case_user(sem_rank_t *c)
{
    int64_t *res = c->d->res + c->rank * SEM_SLOTS;
    uint64_t acc = c->d->user_in;
    for (int p = 0; p < c->d->timer_pairs; p++) {
        ok(c, dcuda_start_cpu_timer(c->st));
        for (int i = 0; i < 1000; i++)
            acc = test_mix((uint32_t)acc + (uint32_t)i);
        ok(c, dcuda_stop_cpu_timer(c->st));
    }
    if (dcuda_thread_index() == 0) {
        res[SEM_RES_A] = (int64_t)c->d->user_in;
        res[SEM_RES_B] = (int64_t)acc;
        if (c->drank == 0) {
            c->d->user_out = c->d->user_in * 3u + (uint64_t)c->size;
            c->d->ranks_seen = c->size;
            c->d->first_seen = c->rank;
            c->d->device_seen = c->dsize;
        }
    }
    dcuda_rank_sync();
}

/* One round of mix into `to`'s region at `at`: in the zone, a small put, a
 * large one over it, a small one into it (later puts win); then every size
 * of sem_mix_size, the last notified. */
TEST_RANK_FN void mix_send(sem_rank_t *c, dcuda_win_t win, int r, uint64_t at,
                           const unsigned char *send)
{
    ok(c, dcuda_put(c->st, win, c->to, at, 16, send + 5));
    ok(c, dcuda_put(c->st, win, c->to, at, SEM_MIX_ZONE, send + 11));
    ok(c, dcuda_put(c->st, win, c->to, at + 64, 16, send + 17));
    uint64_t dst = at + SEM_MIX_ZONE;
    for (int i = 0; i < SEM_MIX_SIZES; i++) {
        uint64_t n = sem_mix_size(i);
        const unsigned char *src = send + sem_mix_src(r, i);
        if (i == SEM_MIX_SIZES - 1)
            ok(c, dcuda_put_notify(c->st, win, c->to, dst, n, src, SEM_TAG_MIX));
        else
            ok(c, dcuda_put(c->st, win, c->to, dst, n, src));
        dst += n;
    }
}

/* What mix_send wrote, as the target checks it. */
TEST_RANK_FN void mix_check(sem_rank_t *c, int r, const unsigned char *got)
{
    const uint32_t from = (uint32_t)c->from;
    check_bytes(c, got, 11, 64, from, 7, (int64_t)r * SEM_MIX_ROUND);
    check_bytes(c, got + 64, 17, 16, from, 7, (int64_t)r * SEM_MIX_ROUND + 64);
    check_bytes(c, got + 80, 11 + 80, SEM_MIX_ZONE - 80, from, 7, (int64_t)r * SEM_MIX_ROUND + 80);
    uint64_t dst = SEM_MIX_ZONE;
    for (int i = 0; i < SEM_MIX_SIZES; i++) {
        check_bytes(c, got + dst, sem_mix_src(r, i), sem_mix_size(i), from, 7,
                    (int64_t)(r * SEM_MIX_ROUND + dst));
        dst += sem_mix_size(i);
    }
}

/* Every rank sends all rounds to its ring neighbour before it waits for
 * any (so a target's inbox fills, wraps, and holds large puts back), then
 * checks every byte it received. */
TEST_RANK_FN void case_mix(sem_rank_t *c)
{
    const int rounds = c->d->iters;
    unsigned char *send = c->mine + (uint64_t)rounds * SEM_MIX_ROUND;
    dcuda_win_t win;
    fill_bytes(send, SEM_MIX_SEND, (uint32_t)c->rank, 7);
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, c->d->region, &win));
    for (int r = 0; r < rounds; r++)
        mix_send(c, win, r, (uint64_t)r * SEM_MIX_ROUND, send);
    ok(c, dcuda_wait_notifications(c->st, SEM_TAG_MIX, rounds));
    for (int r = 0; r < rounds; r++)
        mix_check(c, r, c->mine + (uint64_t)r * SEM_MIX_ROUND);
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_MIX, 1) == 0, -1);
    ok(c, dcuda_win_free(c->st, win));
}

/* A burst of small notified puts to the ring neighbour, sizes 1..16 in turn
 * (whole words the leader copies alone and odd sizes the block copies
 * alternate), k rounds. The target waits for one notification at a time
 * and checks, each time, every put of its source up to that one (issue
 * order), then answers with a notify that frees the buffer for the next
 * round, whose payloads differ. */
TEST_RANK_FN void case_burst(sem_rank_t *c)
{
    const uint64_t n = SEM_BURST_PUTS, span = SEM_BURST_SPAN;
    unsigned char *recv = c->mine, *send = c->mine + n * span;
    dcuda_win_t win;
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, c->d->region, &win));
    for (int r = 0; r < c->d->iters; r++) {
        fill_bytes(send, n * span, (uint32_t)c->rank, 20u + (uint32_t)r);
        for (uint64_t i = 0; i < n; i++)
            ok(c, dcuda_put_notify(c->st, win, c->to, i * span, 1u + i % span, send + i * span,
                                   SEM_TAG_MIX));
        for (uint64_t i = 0; i < n; i++) {
            ok(c, dcuda_wait_notifications(c->st, SEM_TAG_MIX, 1));
            for (uint64_t j = i < 3 ? 0 : i - 3; j <= i; j++) /* the last few, each time */
                check_bytes(c, recv + j * span, j * span, 1u + j % span, (uint32_t)c->from,
                            20u + (uint32_t)r, (int64_t)(r * 1000000 + (int)j));
        }
        for (uint64_t j = 0; j < n; j++)
            check_bytes(c, recv + j * span, j * span, 1u + j % span, (uint32_t)c->from,
                        20u + (uint32_t)r, (int64_t)(r * 1000000 + 500000 + (int)j));
        dcuda_rank_sync(); /* every thread is done with recv */
        /* recv is free: tell its source; wait until mine is, too */
        ok(c, dcuda_notify(c->st, c->from, DCUDA_COMM_WORLD, SEM_TAG_ORDER));
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_ORDER, 1));
    }
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_MIX, 1) == 0, -1);
    ok(c, dcuda_win_free(c->st, win));
}

/* A notified put of 8 bytes, then a notified put of 16 over the same bytes
 * (every other round a plain put and a notification instead), to the ring
 * neighbour, which waits for both and must find the newer bytes: the
 * older put's data never lands after the newer one's. Then it frees the
 * bytes for the next round. */
TEST_RANK_FN void case_stale(sem_rank_t *c)
{
    const uint64_t n = SEM_STALE_BYTES;
    unsigned char *old_src = c->mine + n, *new_src = c->mine + 2u * n;
    dcuda_win_t win;
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, c->d->region, &win));
    for (int r = 0; r < c->d->iters; r++) {
        fill_bytes(old_src, n, (uint32_t)c->rank, 40u + 2u * (uint32_t)r);
        fill_bytes(new_src, n, (uint32_t)c->rank, 41u + 2u * (uint32_t)r);
        ok(c, dcuda_put_notify(c->st, win, c->to, 0, n / 2u, old_src, SEM_TAG_DATA));
        if (r % 2 == 0) {
            ok(c, dcuda_put_notify(c->st, win, c->to, 0, n, new_src, SEM_TAG_ORDER));
        } else {
            ok(c, dcuda_put(c->st, win, c->to, 0, n, new_src));
            ok(c, dcuda_notify(c->st, c->to, DCUDA_COMM_WORLD, SEM_TAG_ORDER));
        }
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_DATA, 1));
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_ORDER, 1));
        check_bytes(c, c->mine, 0, n, (uint32_t)c->from, 41u + 2u * (uint32_t)r, (int64_t)r * 100);
        /* the bytes are free: tell their source; wait until mine are */
        ok(c, dcuda_notify(c->st, c->from, DCUDA_COMM_WORLD, SEM_TAG_ACK));
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_ACK, 1));
    }
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_DATA, 1) == 0, -1);
    ok(c, dcuda_win_free(c->st, win));
}

/* Notified puts of a few bytes to the ring neighbour, all from one source
 * slot, which the rank rewrites as soon as each put returns, from its last
 * threads first (a put's source is reusable once it returns, also while
 * the leader alone copies); each put into a slot of its own. The target
 * waits for all of a round and checks that every slot holds what the
 * source held when its put was made. */
TEST_RANK_FN void case_tiny(sem_rank_t *c)
{
    const uint64_t n = SEM_TINY_PUTS, slot = SEM_TINY_SLOT;
    unsigned char *src = c->mine + (uint64_t)c->d->iters * n * slot;
    const uint64_t nt = (uint64_t)dcuda_thread_count(), me = (uint64_t)dcuda_thread_index();
    dcuda_win_t win;
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, c->d->region, &win));
    for (uint64_t r = 0; r < (uint64_t)c->d->iters; r++) {
        for (uint64_t i = 0; i < n; i++) {
            uint64_t put = r * n + i, skew = sem_tiny_skew(i);
            for (uint64_t j = nt - 1u - me; j < slot; j += nt) /* the last threads first */
                src[j] = test_byte((uint32_t)c->rank, 30u + (uint32_t)put, j);
            dcuda_rank_sync();
            ok(c, dcuda_put_notify(c->st, win, c->to, put * slot + skew, sem_tiny_size(i),
                                   src + skew, SEM_TAG_MIX));
        }
        ok(c, dcuda_wait_notifications(c->st, SEM_TAG_MIX, (int)n));
        for (uint64_t i = 0; i < n; i++) {
            uint64_t put = r * n + i, skew = sem_tiny_skew(i);
            check_bytes(c, c->mine + put * slot + skew, skew, sem_tiny_size(i), (uint32_t)c->from,
                        30u + (uint32_t)put, (int64_t)(put * slot));
        }
    }
    expect(c, dcuda_test_notifications(c->st, SEM_TAG_MIX, 1) == 0, -1);
    ok(c, dcuda_win_free(c->st, win));
}

/* Two large puts to the ring neighbour, the first between small puts that
 * overlap it (later puts win), the second notified; the target checks all. */
TEST_RANK_FN void case_large(sem_rank_t *c)
{
    const uint64_t n = SEM_LARGE_BYTES;
    const uint32_t from = (uint32_t)c->from;
    unsigned char *send = c->mine + 2u * n;
    dcuda_win_t win;
    fill_bytes(send, n + 64u, (uint32_t)c->rank, 9);
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, c->d->region, &win));
    ok(c, dcuda_put(c->st, win, c->to, 0, 16, send + 3));
    ok(c, dcuda_put(c->st, win, c->to, 0, n, send + 5));
    ok(c, dcuda_put(c->st, win, c->to, 100, 16, send + 9));
    ok(c, dcuda_put_notify(c->st, win, c->to, n, n, send + 1, SEM_TAG_MIX));
    ok(c, dcuda_wait_notifications(c->st, SEM_TAG_MIX, 1));
    check_bytes(c, c->mine, 5, 100, from, 9, 0);
    check_bytes(c, c->mine + 100, 9, 16, from, 9, 100);
    check_bytes(c, c->mine + 116, 5 + 116, n - 116, from, 9, 116);
    check_bytes(c, c->mine + n, 1, n, from, 9, (int64_t)n);
    ok(c, dcuda_win_free(c->st, win));
}

/* Notified gets of a megabyte and a byte each from my right neighbour,
 * all in flight at once (their answers together exceed the network
 * path's credit: the last one hung before), then every byte checked. */
TEST_RANK_FN void case_gets(sem_rank_t *c)
{
    const uint64_t n = SEM_GETS_BYTES, slot = SEM_GETS_SLOT;
    dcuda_win_t win;
    fill_bytes(c->mine, n, (uint32_t)c->rank, 11);
    ok(c, dcuda_win_create(c->st, DCUDA_COMM_WORLD, c->mine, c->d->region, &win));
    ok(c, dcuda_comm_barrier(c->st, DCUDA_COMM_WORLD)); /* every source is filled */
    for (uint64_t i = 1; i <= SEM_GETS_COUNT; i++)
        ok(c, dcuda_get_notify(c->st, win, c->to, 0, n, c->mine + i * slot, SEM_TAG_MIX));
    ok(c, dcuda_wait_notifications(c->st, SEM_TAG_MIX, (int)SEM_GETS_COUNT));
    for (uint64_t i = 1; i <= SEM_GETS_COUNT; i++)
        check_bytes(c, c->mine + i * slot, 0, n, (uint32_t)c->to, 11, (int64_t)(i * slot));
    ok(c, dcuda_comm_barrier(c->st, DCUDA_COMM_WORLD)); /* no source freed while read */
    ok(c, dcuda_win_free(c->st, win));
}

DCUDA_KERNEL(semantics, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    sem_rank_t c;
    c.st = &st;
    c.status = c.bad = c.checked = 0;
    c.first_bad = -1;
    ok(&c, dcuda_rank_init(ctx, &st));
    if (dcuda_get_data(&st, (void **)&c.d) != DCUDA_OK) {
        dcuda_rank_finish(&st);
        return;
    }
    ok(&c, dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &c.rank));
    ok(&c, dcuda_comm_size(&st, DCUDA_COMM_WORLD, &c.size));
    ok(&c, dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &c.drank));
    ok(&c, dcuda_comm_size(&st, DCUDA_COMM_DEVICE, &c.dsize));
    c.wfirst = c.rank - c.drank;
    c.to = (c.rank + 1) % c.size;
    c.from = (c.rank + c.size - 1) % c.size;
    c.mine = c.d->buf + sem_region_index(c.d, c.rank) * c.d->region;
    switch (c.d->test_case) {
    case SEM_VISIBILITY:
        case_visibility(&c, SEM_VIS_BYTES, 0);
        break;
    case SEM_ACK:
        case_visibility(&c, SEM_ACK_BYTES, 1);
        break;
    case SEM_NOTIFY_RELEASE:
        case_notify_release(&c);
        break;
    case SEM_ORDER:
        case_order(&c);
        break;
    case SEM_TAGS:
        case_tags(&c);
        break;
    case SEM_MANY:
        case_many(&c);
        break;
    case SEM_WRAP:
        case_wrap(&c);
        break;
    case SEM_OVERLAP:
        case_overlap(&c);
        break;
    case SEM_FLUSH:
        case_flush(&c);
        break;
    case SEM_BARRIER:
        case_barrier(&c);
        break;
    case SEM_SIZE0:
        case_size0(&c);
        break;
    case SEM_RING:
        case_ring(&c);
        break;
    case SEM_WINDOWS:
        case_windows(&c);
        break;
    case SEM_USER:
        case_user(&c);
        break;
    case SEM_MIX:
        case_mix(&c);
        break;
    case SEM_LARGE:
        case_large(&c);
        break;
    case SEM_GETS:
        case_gets(&c);
        break;
    case SEM_BURST:
        case_burst(&c);
        break;
    case SEM_TINY:
        case_tiny(&c);
        break;
    case SEM_STALE:
        case_stale(&c);
        break;
    default:
        ok(&c, DCUDA_ERR_INVALID_ARG);
        break;
    }
    ok(&c, dcuda_rank_finish(&st));
    if (dcuda_thread_index() == 0) {
        int64_t *res = c.d->res + c.rank * SEM_SLOTS;
        res[SEM_RES_STATUS] = c.status;
        res[SEM_RES_BAD] = c.bad;
        res[SEM_RES_CHECKED] = c.checked;
        res[SEM_RES_FIRST_BAD] = c.first_bad;
    }
}
