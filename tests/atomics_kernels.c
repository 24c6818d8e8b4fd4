/*
 * Rank code of the test of remote atomics (dcuda_test_atomics). In the
 * model, each step every rank sets its counters to the plan's start
 * values, then (after a barrier) issues its atomics (atomics.h) and checks
 * each fetched value against what the plan allows: an add never sees its
 * own bit and always sees the bits this rank added to the word before; a
 * swap sees the start value or a value some op of the plan stores there,
 * never its own; a compare-swap loop increments once. Then it waits for
 * the notified ops aimed at it and checks their payloads, and after a
 * barrier checks its counters' final values: every bit added, a stored
 * value (or the start), the start plus the increments. The other cases
 * misuse the call, or check the network path's answers and refusal.
 * Written once for CPU and GPU ranks.
 */
#include "atomics.h"
#include "dcuda/dcuda_rank.h"

typedef struct atom_rank {
    dcuda_state_t *st;
    const atom_data_t *d;
    unsigned char *part;
    int64_t *words;
    int64_t err;
    dcuda_win_t win;
    uint64_t *fetched; /* memory the rank's threads share (a GPU: __shared__) */
    int me, n, step;
} atom_rank_t;

TEST_RANK_FN void atom_bad(atom_rank_t *r, int what)
{
    if (dcuda_thread_index() == 0 && r->words[ATOM_BAD] == 0)
        r->words[ATOM_BAD] = (int64_t)r->step * 100 + what;
}

TEST_RANK_FN uint64_t atom_read(const atom_rank_t *r, int c)
{
    const unsigned char *p = r->part + atom_offset(c);
    return atom_width(c) == 8u ? *(const volatile uint64_t *)p : *(const volatile uint32_t *)p;
}

/* Is v a value some swap of the plan stores into (t, c) this step (other
 * than op k of this rank)? */
TEST_RANK_FN int atom_stored(const atom_rank_t *r, int t, int c, int k, uint64_t v)
{
    const uint32_t seed = r->d->seed;
    for (int q = 0; q < r->n; q++)
        for (int j = 0; j < ATOM_OPS; j++)
            if ((q != r->me || j != k) && atom_target(seed, r->step, q, j, r->n) == t &&
                atom_counter(seed, r->step, q, j) == c && atom_swap_value(r->step, q, j) == v)
                return 1;
    return 0;
}

TEST_RANK_FN void atom_add(atom_rank_t *r, int k, int t, int c, int notify)
{
    const uint32_t seed = r->d->seed;
    int bit = atom_bit(seed, r->step, r->me, k, r->n, 0);
    if (bit < 0)
        return; /* beyond the word: skipped by the plan */
    const uint64_t v = 1ull << bit, off = atom_offset(c), w = atom_width(c);
    dcuda_status_t s =
        notify ? dcuda_atomic_notify(r->st, DCUDA_ATOMIC_FETCH_ADD, r->win, t, off, w, v, 0,
                                     r->fetched, ATOM_TAG)
               : dcuda_atomic(r->st, DCUDA_ATOMIC_FETCH_ADD, r->win, t, off, w, v, 0, r->fetched);
    uint64_t old = *r->fetched;
    test_note(&r->err, s);
    if (old & v)
        atom_bad(r, ATOM_BAD_SEEN_OWN);
    for (int j = 0; j < k; j++) /* my earlier adds to the word are in it */
        if (atom_target(seed, r->step, r->me, j, r->n) == t &&
            atom_counter(seed, r->step, r->me, j) == c) {
            int b = atom_bit(seed, r->step, r->me, j, r->n, 0);
            if (b >= 0 && !(old >> b & 1u))
                atom_bad(r, ATOM_BAD_ORDER);
        }
    if (dcuda_thread_index() == 0)
        r->words[ATOM_DONE]++;
}

TEST_RANK_FN void atom_swap(atom_rank_t *r, int k, int t, int c, int notify)
{
    const uint64_t v = atom_swap_value(r->step, r->me, k), off = atom_offset(c);
    const uint64_t w = atom_width(c);
    dcuda_status_t s =
        notify ? dcuda_atomic_notify(r->st, DCUDA_ATOMIC_SWAP, r->win, t, off, w, v, 0, r->fetched,
                                     ATOM_TAG)
               : dcuda_atomic(r->st, DCUDA_ATOMIC_SWAP, r->win, t, off, w, v, 0, r->fetched);
    uint64_t old = *r->fetched;
    test_note(&r->err, s);
    if (old != atom_init(r->d->seed, r->step, t, c, 0) && !atom_stored(r, t, c, k, old))
        atom_bad(r, ATOM_BAD_STRANGER);
    if (dcuda_thread_index() == 0)
        r->words[ATOM_DONE + 1]++;
}

/* One increment by compare-and-swap from the word's current value (read
 * by adding 0). */
TEST_RANK_FN void atom_cas(atom_rank_t *r, int t, int c)
{
    const uint64_t off = atom_offset(c), w = atom_width(c);
    const uint64_t mask = w == 8u ? ~0ull : 0xffffffffull;
    test_note(&r->err,
              dcuda_atomic(r->st, DCUDA_ATOMIC_FETCH_ADD, r->win, t, off, w, 0, 0, r->fetched));
    uint64_t cur = *r->fetched;
    for (int i = 0; i < ATOM_CAS_TRIES; i++) {
        dcuda_status_t s = dcuda_atomic(r->st, DCUDA_ATOMIC_COMPARE_SWAP, r->win, t, off, w,
                                        (cur + 1u) & mask, cur, r->fetched);
        uint64_t old = *r->fetched;
        test_note(&r->err, s);
        if (s != DCUDA_OK || old == cur) {
            if (dcuda_thread_index() == 0)
                r->words[ATOM_DONE + 2]++;
            return;
        }
        cur = old;
    }
    atom_bad(r, ATOM_BAD_STUCK);
}

/* My ops of the step, in order. */
TEST_RANK_FN void atom_issue(atom_rank_t *r)
{
    const uint32_t seed = r->d->seed;
    for (int k = 0; k < ATOM_OPS; k++) {
        const int t = atom_target(seed, r->step, r->me, k, r->n);
        const int c = atom_counter(seed, r->step, r->me, k);
        const int kind = atom_kind(seed, r->step, t, c);
        const int notify = atom_notified(seed, r->step, r->me, k, kind);
        if (notify) { /* the payload first: the notification says it is there */
            unsigned char *src = r->part + ATOM_SRC + (uint32_t)k * ATOM_PAYLOAD;
            for (uint32_t i = (uint32_t)dcuda_thread_index(); i < ATOM_PAYLOAD;
                 i += (uint32_t)dcuda_thread_count())
                src[i] = atom_byte(r->step, r->me, k, i);
            test_note(&r->err, dcuda_put(r->st, r->win, t,
                                         ATOM_SLOTS + ((uint64_t)r->me * ATOM_OPS + (uint64_t)k) *
                                                          ATOM_PAYLOAD,
                                         ATOM_PAYLOAD, src));
            if (dcuda_thread_index() == 0)
                r->words[ATOM_DONE + 3]++;
        }
        if (kind == ATOM_ADD)
            atom_add(r, k, t, c, notify);
        else if (kind == ATOM_SWAP)
            atom_swap(r, k, t, c, notify);
        else
            atom_cas(r, t, c);
    }
}

/* The notified ops aimed at me: waited for, then their payloads checked. */
TEST_RANK_FN void atom_receive(atom_rank_t *r)
{
    const uint32_t seed = r->d->seed;
    int want = 0;
    for (int q = 0; q < r->n; q++)
        for (int j = 0; j < ATOM_OPS; j++) {
            int t = atom_target(seed, r->step, q, j, r->n), c = atom_counter(seed, r->step, q, j);
            int kind = atom_kind(seed, r->step, t, c);
            want += t == r->me && atom_notified(seed, r->step, q, j, kind) &&
                    (kind != ATOM_ADD || atom_bit(seed, r->step, q, j, r->n, 0) >= 0);
        }
    if (want)
        test_note(&r->err, dcuda_wait_notifications(r->st, ATOM_TAG, want));
    for (int q = 0; q < r->n; q++)
        for (int j = 0; j < ATOM_OPS; j++) {
            int t = atom_target(seed, r->step, q, j, r->n), c = atom_counter(seed, r->step, q, j);
            int kind = atom_kind(seed, r->step, t, c);
            if (t != r->me || !atom_notified(seed, r->step, q, j, kind) ||
                (kind == ATOM_ADD && atom_bit(seed, r->step, q, j, r->n, 0) < 0))
                continue;
            const unsigned char *p =
                r->part + ATOM_SLOTS + ((uint64_t)q * ATOM_OPS + (uint64_t)j) * ATOM_PAYLOAD;
            for (uint32_t i = (uint32_t)dcuda_thread_index(); i < ATOM_PAYLOAD;
                 i += (uint32_t)dcuda_thread_count())
                if (p[i] != atom_byte(r->step, q, j, i))
                    atom_bad(r, ATOM_BAD_PAYLOAD);
        }
}

/* Counter c of mine after the step: what the plan's ops make of it. */
TEST_RANK_FN void atom_final(atom_rank_t *r, int c)
{
    const uint32_t seed = r->d->seed;
    const int kind = atom_kind(seed, r->step, r->me, c);
    const uint64_t mask = atom_width(c) == 8u ? ~0ull : 0xffffffffull;
    int adds = 0, incs = 0, swaps = 0;
    uint64_t bits = 0u, v = atom_read(r, c);
    for (int q = 0; q < r->n; q++)
        for (int j = 0; j < ATOM_OPS; j++) {
            if (atom_target(seed, r->step, q, j, r->n) != r->me ||
                atom_counter(seed, r->step, q, j) != c)
                continue;
            int b = atom_bit(seed, r->step, q, j, r->n, &adds);
            bits |= kind == ATOM_ADD && b >= 0 ? 1ull << b : 0u;
            incs++;
            swaps += v == atom_swap_value(r->step, q, j);
        }
    const uint64_t init = atom_init(seed, r->step, r->me, c, adds);
    int ok = kind == ATOM_ADD    ? v == (init | bits)
             : kind == ATOM_SWAP ? (incs ? swaps == 1 : v == init)
                                 : v == ((init + (uint64_t)incs) & mask);
    if (!ok)
        atom_bad(r, ATOM_BAD_FINAL);
}

TEST_RANK_FN void atom_model(atom_rank_t *r)
{
    const uint32_t seed = r->d->seed;
    for (r->step = 0; r->step < ATOM_STEPS; r->step++) {
        if (dcuda_thread_index() == 0)
            for (int c = 0; c < ATOM_COUNTERS; c++) {
                int adds = 0;
                for (int q = 0; q < r->n; q++)
                    for (int j = 0; j < ATOM_OPS; j++)
                        adds += atom_target(seed, r->step, q, j, r->n) == r->me &&
                                atom_counter(seed, r->step, q, j) == c;
                uint64_t v = atom_init(seed, r->step, r->me, c, adds);
                unsigned char *p = r->part + atom_offset(c);
                if (atom_width(c) == 8u)
                    *(uint64_t *)p = v;
                else
                    *(uint32_t *)p = (uint32_t)v;
            }
        test_note(&r->err, dcuda_comm_barrier(r->st, DCUDA_COMM_WORLD));
        atom_issue(r);
        atom_receive(r);
        test_note(&r->err, dcuda_comm_barrier(r->st, DCUDA_COMM_WORLD));
        for (int c = 0; c < ATOM_COUNTERS; c++)
            atom_final(r, c);
        test_note(&r->err, dcuda_comm_barrier(r->st, DCUDA_COMM_WORLD));
    }
}

/* Each misuse refused with its status, *fetched 0 and my counter 0 kept;
 * then a good add. Counter 0 of mine starts at 5. */
TEST_RANK_FN void atom_misuse(atom_rank_t *r)
{
    int64_t *call = r->words + ATOM_CALLS;
    dcuda_state_t *st = r->st;
    int64_t c[ATOM_CALL_WORDS];
    if (dcuda_thread_index() == 0)
        *(uint64_t *)r->part = 5u;
    test_note(&r->err, dcuda_comm_barrier(st, DCUDA_COMM_WORLD));
    const dcuda_atomic_op_t add = DCUDA_ATOMIC_FETCH_ADD;
    uint64_t bad_fetched = 0u;
    c[0] = dcuda_atomic(st, (dcuda_atomic_op_t)7, r->win, r->me, 0, 8, 1, 0, r->fetched);
    bad_fetched |= *r->fetched;
    c[1] = dcuda_atomic(st, add, r->win, r->me, 0, 2, 1, 0, r->fetched);
    bad_fetched |= *r->fetched;
    c[2] = dcuda_atomic(st, add, r->win, r->me, 4, 8, 1, 0, r->fetched); /* unaligned */
    bad_fetched |= *r->fetched;
    c[3] = dcuda_atomic(st, add, r->win, r->me, r->d->part, 8, 1, 0, r->fetched);
    bad_fetched |= *r->fetched;
    c[4] = dcuda_atomic(st, add, r->win, r->me, 16, 4, 1ull << 32, 0, r->fetched);
    bad_fetched |= *r->fetched;
    c[5] = dcuda_atomic_notify(st, add, r->win, r->me, 0, 8, 1, 0, r->fetched, 300);
    bad_fetched |= *r->fetched;
    c[6] = dcuda_atomic(st, add, 0xdeadu, r->me, 0, 8, 1, 0, r->fetched);
    bad_fetched |= *r->fetched;
    c[7] = dcuda_atomic(st, add, r->win, r->n, 0, 8, 1, 0, r->fetched);
    bad_fetched |= *r->fetched;
    c[8] = dcuda_atomic(st, add, r->win, r->me, ~(size_t)0 - 3u, 8, 1, 0, r->fetched);
    bad_fetched |= *r->fetched;
    c[9] = dcuda_atomic(st, add, r->win, r->me, 0, 8, 3, 0, 0); /* fetched may be NULL */
    c[10] = dcuda_atomic(st, DCUDA_ATOMIC_COMPARE_SWAP, r->win, r->me, 0, 8, 100, 4, r->fetched);
    c[11] = (int64_t)*r->fetched; /* 8: the compare failed */
    if (bad_fetched)
        atom_bad(r, ATOM_BAD_FETCHED);
    if (atom_read(r, 0) != 8u)
        atom_bad(r, ATOM_BAD_FINAL);
    if (dcuda_thread_index() == 0)
        for (int i = 0; i < ATOM_CALL_WORDS; i++)
            call[i] = c[i];
}

/* Atomics on a rank of the next device (this one's, under NET_LOOPBACK):
 * the network path, where the target's proxy checks the alignment and
 * the target rank applies each while it waits. My counters 0 and 2 start
 * at 5 and 9; the previous device's rank (as I do to the next) adds 1 to
 * 0, swaps 77 into 2 notified, then, once all are in, compare-swaps 0
 * from 6 to 100. */
TEST_RANK_FN void atom_net(atom_rank_t *r)
{
    int64_t *call = r->words + ATOM_CALLS;
    dcuda_state_t *st = r->st;
    int64_t c[ATOM_CALL_WORDS];
    int here = 1;
    dcuda_comm_size(st, DCUDA_COMM_DEVICE, &here);
    const int t = r->n > here ? (r->me + here) % r->n : (r->me + 1) % r->n;
    if (dcuda_thread_index() == 0) {
        *(uint64_t *)r->part = 5u;
        *(uint32_t *)(r->part + 16) = 9u;
    }
    test_note(&r->err, dcuda_comm_barrier(st, DCUDA_COMM_WORLD));
    const dcuda_atomic_op_t add = DCUDA_ATOMIC_FETCH_ADD;
    c[0] = dcuda_atomic(st, add, r->win, t, 4, 8, 1, 0, r->fetched); /* not aligned */
    c[1] = dcuda_atomic(st, add, r->win, t, 0, 8, 1, 0, r->fetched);
    c[2] = (int64_t)*r->fetched;
    c[3] =
        dcuda_atomic_notify(st, DCUDA_ATOMIC_SWAP, r->win, t, 16, 4, 77, 0, r->fetched, ATOM_TAG);
    c[4] = (int64_t)*r->fetched;
    c[5] = dcuda_wait_notifications(st, ATOM_TAG, 1);
    test_note(&r->err, dcuda_comm_barrier(st, DCUDA_COMM_WORLD));
    c[6] = (int64_t)atom_read(r, 0);
    c[7] = (int64_t)atom_read(r, 2);
    test_note(&r->err, dcuda_comm_barrier(st, DCUDA_COMM_WORLD));
    c[8] = dcuda_atomic(st, DCUDA_ATOMIC_COMPARE_SWAP, r->win, t, 0, 8, 100, 6, r->fetched);
    c[9] = (int64_t)*r->fetched;
    test_note(&r->err, dcuda_comm_barrier(st, DCUDA_COMM_WORLD));
    c[10] = (int64_t)atom_read(r, 0);
    c[11] = 0;
    if (dcuda_thread_index() == 0)
        for (int i = 0; i < ATOM_CALL_WORDS; i++)
            call[i] = c[i];
}

/* Windows made and freed between atomics to the same rank: at step s a
 * window of WORLD over half s % 2 of every part (the other window, of the
 * whole part, stays live: the new one takes the same table slot each
 * time), a fetch-add of 1 on my right's first word there (a notified one
 * on odd steps), and after a barrier each half's first word must hold the
 * adds of the steps that used it, the fetched value the adds before. An
 * atomic along a route left by the freed window would change the other
 * half. */
TEST_RANK_FN void atom_rewindow(atom_rank_t *r)
{
    dcuda_state_t *st = r->st;
    const uint64_t half = (r->d->part / 2u) & ~(uint64_t)7u;
    const int right = (r->me + 1) % r->n;
    int64_t adds[2] = { 0, 0 };
    if (dcuda_thread_index() == 0)
        *(volatile uint64_t *)r->part = *(volatile uint64_t *)(r->part + half) = 0u;
    test_note(&r->err, dcuda_comm_barrier(st, DCUDA_COMM_WORLD));
    for (int s = 0; s < ATOM_REWINDOW_STEPS && r->err == 0; s++) {
        const int h = s % 2;
        r->step = s;
        dcuda_win_t w;
        test_note(&r->err,
                  dcuda_win_create(st, DCUDA_COMM_WORLD, r->part + (uint64_t)h * half, half, &w));
        if (h)
            test_note(&r->err, dcuda_atomic_notify(st, DCUDA_ATOMIC_FETCH_ADD, w, right, 0, 8, 1, 0,
                                                   r->fetched, ATOM_TAG));
        else
            test_note(&r->err,
                      dcuda_atomic(st, DCUDA_ATOMIC_FETCH_ADD, w, right, 0, 8, 1, 0, r->fetched));
        if (*r->fetched != (uint64_t)adds[h])
            atom_bad(r, ATOM_BAD_WINDOW);
        if (h)
            test_note(&r->err, dcuda_wait_notifications(st, ATOM_TAG, 1));
        adds[h]++;
        test_note(&r->err, dcuda_comm_barrier(st, DCUDA_COMM_WORLD));
        if (*(volatile uint64_t *)r->part != (uint64_t)adds[0] ||
            *(volatile uint64_t *)(r->part + half) != (uint64_t)adds[1])
            atom_bad(r, ATOM_BAD_WINDOW);
        test_note(&r->err, dcuda_win_free(st, w));
    }
    if (dcuda_thread_index() == 0)
        r->words[ATOM_DONE] = adds[0] + adds[1];
}

DCUDA_KERNEL(atomics, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    DCUDA_SHARED uint64_t fetched;
    atom_data_t *d;
    atom_rank_t r;
    int drank = 0;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dcuda_get_data(&st, (void **)&d);
    r.st = &st;
    r.d = d;
    r.err = 0;
    r.step = 0;
    r.fetched = &fetched;
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &r.me);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &r.n);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank);
    r.words = d->words + (int64_t)drank * ATOM_WORDS;
    r.part = d->parts + (uint64_t)drank * d->part;
    test_note(&r.err, dcuda_win_create(&st, DCUDA_COMM_WORLD, r.part, d->part, &r.win));
    switch (d->test_case) {
    case ATOM_MODEL:
        atom_model(&r);
        break;
    case ATOM_MISUSE:
        atom_misuse(&r);
        break;
    case ATOM_NET:
        atom_net(&r);
        break;
    case ATOM_REWINDOW:
        atom_rewindow(&r);
        break;
    default:
        r.err = DCUDA_ERR_INVALID_ARG;
        break;
    }
    test_note(&r.err, dcuda_win_free(&st, r.win));
    dcuda_rank_finish(&st);
    if (dcuda_thread_index() == 0)
        r.words[ATOM_FIRST_ERROR] = r.err;
}
