/*
 * Rank code of the test of sets of tags (dcuda_test_sets). In the model,
 * each step every rank fills its source slots, sends what the plan gives
 * it (sets.h), then consumes what the plan sends it by a seeded mix of
 * set waits (any, some, all), set tests, takes and plain waits, checking
 * each call's answer against what is still to come and, for every
 * notification consumed, that its put's bytes are there; after a barrier
 * nothing more may be there. The other cases misuse the calls or get
 * stuck on purpose. Written once for CPU and GPU ranks.
 */
#include "dcuda/dcuda_rank.h"
#include "sets.h"

typedef struct sets_rank {
    dcuda_state_t *st;
    const sets_data_t *d;
    unsigned char *part;
    int64_t *words;
    int64_t err;
    int me, n, step;
    uint32_t rng;
    uint32_t *shared_taken; /* memory the rank's threads share (a GPU: __shared__) */
    int left[SETS_TAGS];    /* per tag of the pool: notifications still to come this step */
    int got[SETS_TAGS];     /* consumed this step */
} sets_rank_t;

TEST_RANK_FN uint32_t sets_rand(sets_rank_t *r)
{
    r->rng = test_mix(r->rng + 0x9e3779b9u);
    return r->rng;
}

TEST_RANK_FN int sets_popcount(uint32_t x)
{
    int n = 0;
    for (; x; x &= x - 1u)
        n++;
    return n;
}

/* The lowest set bit of x (x != 0). */
TEST_RANK_FN uint32_t sets_lowest(uint32_t x) { return x & (~x + 1u); }

TEST_RANK_FN void sets_bad(sets_rank_t *r, int what)
{
    if (dcuda_thread_index() == 0 && r->words[SETS_BAD] == 0)
        r->words[SETS_BAD] = (int64_t)r->step * 100 + what;
}

/* A finding of any thread (a byte it checked): the first to see one keeps
 * it (threads of a GPU rank may race to write the same kind of finding). */
TEST_RANK_FN void sets_bad_any(sets_rank_t *r, int what)
{
    if (r->words[SETS_BAD] == 0)
        r->words[SETS_BAD] = (int64_t)r->step * 100 + what;
}

/* Every source slot holds this step's pattern (the same for each target). */
TEST_RANK_FN void sets_fill(sets_rank_t *r)
{
    for (int t = 0; t < SETS_TAGS; t++)
        for (int k = 0; k < SETS_MAX_SENDS; k++) {
            unsigned char *src = r->part + SETS_SRC + sets_slot(t, k);
            for (uint32_t i = (uint32_t)dcuda_thread_index(); i < SETS_SLOT;
                 i += (uint32_t)dcuda_thread_count())
                src[i] = sets_byte(r->me, r->step, t, k, i);
        }
    dcuda_rank_sync();
}

/* What the plan has this rank send this step, in order. */
TEST_RANK_FN void sets_send(sets_rank_t *r, dcuda_win_t win)
{
    const uint32_t seed = r->d->seed;
    for (int dst = 0; dst < r->n; dst++)
        for (int t = 0; t < SETS_TAGS; t++) {
            if (sets_owner(seed, r->step, dst, t, r->n) != r->me)
                continue;
            for (int k = 0; k < sets_sends(seed, r->step, dst, t); k++) {
                uint32_t size = sets_size(seed, r->step, dst, t, k);
                const void *src = r->part + SETS_SRC + sets_slot(t, k);
                if (size == 0)
                    test_note(&r->err, dcuda_notify(r->st, dst, DCUDA_COMM_WORLD, SETS_TAG0 + t));
                else
                    test_note(&r->err,
                              dcuda_put_notify(r->st, win, dst, SETS_RECV + sets_slot(t, k), size,
                                               src, SETS_TAG0 + t));
            }
        }
}

/* count notifications of pool tag t were consumed: each must have been
 * sent, and its put's bytes must be in place. */
TEST_RANK_FN void sets_took(sets_rank_t *r, int t, int count)
{
    const uint32_t seed = r->d->seed;
    for (int j = 0; j < count; j++) {
        if (r->left[t] <= 0) {
            sets_bad(r, SETS_BAD_PHANTOM);
            return;
        }
        int k = r->got[t]++;
        r->left[t]--;
        uint32_t size = sets_size(seed, r->step, r->me, t, k);
        if (size == 0)
            continue;
        /* Every thread checks its share: what the wait made visible is
         * the whole rank's, not its leader's alone. */
        int owner = sets_owner(seed, r->step, r->me, t, r->n);
        const unsigned char *p = r->part + SETS_RECV + sets_slot(t, k);
        for (uint32_t i = (uint32_t)dcuda_thread_index(); i < size;
             i += (uint32_t)dcuda_thread_count())
            if (p[i] != sets_byte(owner, r->step, t, k, i)) {
                sets_bad_any(r, SETS_BAD_DATA);
                break;
            }
    }
}

/* A set call on (first, mask) that needed `want` tags took `taken`. */
TEST_RANK_FN void sets_check_taken(sets_rank_t *r, int first, uint32_t mask, uint32_t taken,
                                   int want)
{
    if (taken & ~mask)
        sets_bad(r, SETS_BAD_OUTSIDE);
    if (sets_popcount(taken) < want)
        sets_bad(r, SETS_BAD_FEW);
    for (int i = 0; i < 32; i++) {
        if (!(taken >> i & 1u))
            continue;
        int t = first + i - SETS_TAG0;
        if (t < 0 || t >= SETS_TAGS)
            sets_bad(r, SETS_BAD_PHANTOM);
        else
            sets_took(r, t, 1);
    }
}

/* The pool tags with something still to come, as bits of a set from first. */
TEST_RANK_FN uint32_t sets_live(const sets_rank_t *r, int first)
{
    uint32_t live = 0u;
    for (int t = 0; t < SETS_TAGS; t++)
        if (r->left[t] > 0)
            live |= 1u << (t + SETS_TAG0 - first);
    return live;
}

/* A wait for some of a drawn set (all: only tags still to come in it). */
TEST_RANK_FN void sets_wait_op(sets_rank_t *r, int first, uint32_t drawn, uint32_t live, int all)
{
    uint32_t mask = all ? drawn & live : drawn;
    if (!(mask & live))
        mask |= sets_lowest(live);
    int want =
        all ? sets_popcount(mask) : 1 + (int)(sets_rand(r) % (uint32_t)sets_popcount(mask & live));
    /* The answer in memory every thread shares: each reads it before its
     * next call, in which another thread may already clear it. */
    dcuda_status_t s = dcuda_wait_notification_set(r->st, first, mask, all ? DCUDA_SET_ALL : want,
                                                   r->shared_taken);
    uint32_t taken = *r->shared_taken;
    test_note(&r->err, s);
    if (s == DCUDA_OK)
        sets_check_taken(r, first, mask, taken, want);
}

/* A test of a drawn set with a drawn need, met or not. */
TEST_RANK_FN void sets_test_op(sets_rank_t *r, int first, uint32_t mask)
{
    int need = 1 + (int)(sets_rand(r) % (uint32_t)sets_popcount(mask));
    uint32_t taken = 0xdeadu;
    int rc = dcuda_test_notification_set(r->st, first, mask, need, &taken);
    test_note(&r->err, rc);
    if (rc == 1)
        sets_check_taken(r, first, mask, taken, need);
    else if (rc == 0 && taken != 0u)
        sets_bad(r, SETS_BAD_TEST);
}

/* A take of a pool tag, or of one never notified (it must take nothing). */
TEST_RANK_FN void sets_take_op(sets_rank_t *r)
{
    uint32_t x = sets_rand(r);
    int t = (int)(x % (SETS_TAGS + 2u)) - 2; /* -2, -1: never notified */
    uint32_t taken = 0xdeadu;
    test_note(&r->err, dcuda_take_notifications(r->st, SETS_TAG0 + t, &taken));
    if (t < 0 && taken != 0u)
        sets_bad(r, SETS_BAD_EXTRA);
    else if (t >= 0)
        sets_took(r, t, (int)taken);
}

/* A plain wait for some of what is still to come of one tag. */
TEST_RANK_FN void sets_plain_op(sets_rank_t *r, uint32_t live)
{
    int t = 0;
    for (uint32_t bit = sets_lowest(live); !(bit >> t & 1u); t++) {
    }
    int count = 1 + (int)(sets_rand(r) % (uint32_t)r->left[t]);
    dcuda_status_t s = dcuda_wait_notifications(r->st, SETS_TAG0 + t, count);
    test_note(&r->err, s);
    if (s == DCUDA_OK)
        sets_took(r, t, count);
}

/* One drawn call. A set starts up to 3 tags below the pool (tags never
 * notified) and takes a drawn part of the pool. */
TEST_RANK_FN void sets_op(sets_rank_t *r)
{
    uint32_t x = sets_rand(r);
    int first = SETS_TAG0 - (int)(x % 4u);
    int shift = SETS_TAG0 - first;
    uint32_t drawn = (sets_rand(r) & 0xffffu) << shift;
    drawn |= sets_rand(r) & ((1u << shift) - 1u);
    uint32_t live = sets_live(r, first);
    int kind = (int)(x >> 8) % 5;
    if (r->words && dcuda_thread_index() == 0)
        r->words[SETS_OPS + kind]++;
    switch (kind) {
    case 0:
    case 1:
        sets_wait_op(r, first, drawn, live, kind == 1);
        break;
    case 2:
        sets_test_op(r, first, drawn ? drawn : 1u << shift);
        break;
    case 3:
        sets_take_op(r);
        break;
    default:
        sets_plain_op(r, sets_live(r, SETS_TAG0));
        break;
    }
}

/* After a step's barrier: nothing is left of any tag of the pool, nor of
 * the tags below it. */
TEST_RANK_FN void sets_nothing_left(sets_rank_t *r)
{
    uint32_t taken = 0xdeadu;
    int rc = dcuda_test_notification_set(r->st, SETS_TAG0 - 4, 0xfffffu, 1, &taken);
    test_note(&r->err, rc);
    if (rc != 0 || taken != 0u)
        sets_bad(r, SETS_BAD_EXTRA);
    for (int tag = SETS_TAG0 - 4; tag < SETS_TAG0 + SETS_TAGS; tag++) {
        test_note(&r->err, dcuda_take_notifications(r->st, tag, &taken));
        if (taken != 0u)
            sets_bad(r, SETS_BAD_EXTRA);
    }
}

TEST_RANK_FN void sets_step(sets_rank_t *r, dcuda_win_t win)
{
    for (int t = 0; t < SETS_TAGS; t++) {
        r->left[t] = sets_sends(r->d->seed, r->step, r->me, t);
        r->got[t] = 0;
    }
    r->rng = test_mix(r->d->seed * 2654435761u + (uint32_t)r->me * 40503u + (uint32_t)r->step);
    sets_fill(r);
    sets_send(r, win);
    int ops = 0;
    while (sets_live(r, SETS_TAG0) && ops++ < 4000 && r->err == 0)
        sets_op(r);
    if (sets_live(r, SETS_TAG0) && r->err == 0)
        sets_bad(r, SETS_BAD_STUCK);
    test_note(&r->err, dcuda_win_flush(r->st, win)); /* my sources are free again */
    test_note(&r->err, dcuda_comm_barrier(r->st, DCUDA_COMM_WORLD));
    sets_nothing_left(r);
    test_note(&r->err, dcuda_comm_barrier(r->st, DCUDA_COMM_WORLD));
}

TEST_RANK_FN void sets_model(sets_rank_t *r)
{
    dcuda_win_t win;
    test_note(&r->err, dcuda_win_create(r->st, DCUDA_COMM_WORLD, r->part, SETS_PART, &win));
    for (r->step = 1; r->step <= r->d->steps && r->err == 0; r->step++)
        sets_step(r, win);
    test_note(&r->err, dcuda_win_free(r->st, win));
}

/* Bad sets and tags, at every bound; then good sets this rank notified
 * itself (in order, so what arrived before a wait's tag is known). */
TEST_RANK_FN void sets_misuse(sets_rank_t *r)
{
    int64_t *call = r->words + SETS_CALLS;
    uint32_t taken = 0xdeadu, last = 0u, every = 0u;
    dcuda_state_t *st = r->st;
    int64_t c[SETS_CALL_WORDS];
    c[0] = dcuda_wait_notification_set(st, -1, 1u, 1, &taken);
    c[1] = dcuda_wait_notification_set(st, 250, 0x80u, 1, &taken); /* names tag 257 */
    c[2] = dcuda_test_notification_set(st, 10, 0u, 1, &taken);
    taken = 0xdeadu;
    c[3] = dcuda_wait_notification_set(st, 10, 0x3u, 3, &taken);
    if (taken != 0u) /* a refused call says it took nothing */
        sets_bad(r, SETS_BAD_TEST);
    c[4] = dcuda_test_notification_set(st, 10, 0x3u, 0, &taken);
    taken = 0xdeadu;
    c[5] = dcuda_take_notifications(st, 256, &taken);
    if (taken != 0u)
        sets_bad(r, SETS_BAD_TEST);
    c[6] = dcuda_take_notifications(st, -2, 0);
    test_note(&r->err, dcuda_notify(st, r->me, DCUDA_COMM_WORLD, 11));
    test_note(&r->err, dcuda_notify(st, r->me, DCUDA_COMM_WORLD, 13));
    c[7] = dcuda_wait_notification_set(st, 10, 0xau, DCUDA_SET_ALL, &taken);
    /* Mask bit 31: tag 255 is the last a set may name. */
    test_note(&r->err, dcuda_notify(st, r->me, DCUDA_COMM_WORLD, 255));
    c[8] = dcuda_wait_notification_set(st, 224, 0x80000000u, 1, &last);
    c[9] = dcuda_wait_notification_set(st, 225, 0x80000000u, 1, 0);
    c[10] = dcuda_test_notification_set(st, 10, 0x3u, -2, 0);
    c[11] = dcuda_wait_notification_set(st, 10, 0x3u, 0, 0);
    c[12] = dcuda_test_notification_set(st, 255, 1u, 1, 0); /* nothing left of 255: 0 */
    c[13] = dcuda_take_notifications(st, 12, 0);
    /* A set takes every tag that has a notification, not only `need`:
     * 11 and 13 arrived before 15, which a plain wait took. */
    test_note(&r->err, dcuda_notify(st, r->me, DCUDA_COMM_WORLD, 11));
    test_note(&r->err, dcuda_notify(st, r->me, DCUDA_COMM_WORLD, 13));
    test_note(&r->err, dcuda_notify(st, r->me, DCUDA_COMM_WORLD, 15));
    test_note(&r->err, dcuda_wait_notifications(st, 15, 1));
    c[14] = dcuda_test_notification_set(st, 10, 0xau, 1, &every);
    test_note(&r->err, dcuda_notify(st, r->me, DCUDA_COMM_WORLD, 11));
    c[15] = dcuda_wait_notification_set(st, 11, 1u, 1, 0); /* taken may be NULL */
    if (dcuda_thread_index() == 0) {
        for (int i = 0; i < SETS_CALL_WORDS; i++)
            call[i] = c[i];
        r->words[SETS_TAKEN] = taken;
        r->words[SETS_TAKEN + 1] = last;
        r->words[SETS_TAKEN + 2] = every;
    }
}

DCUDA_KERNEL(sets, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    DCUDA_SHARED uint32_t set_taken;
    sets_data_t *d;
    sets_rank_t r;
    int drank = 0;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dcuda_get_data(&st, (void **)&d);
    r.st = &st;
    r.shared_taken = &set_taken;
    r.d = d;
    r.err = 0;
    r.step = 0;
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &r.me);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &r.n);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank);
    r.words = d->words + (int64_t)drank * SETS_WORDS;
    r.part = d->parts ? d->parts + (uint64_t)drank * SETS_PART : 0;
    uint32_t taken = 0xdeadu;
    switch (d->test_case) {
    case SETS_MODEL:
        sets_model(&r);
        break;
    case SETS_MISUSE:
        sets_misuse(&r);
        break;
    case SETS_DEADLOCK: /* one of the two tags comes; all are wanted */
    case SETS_WATCHDOG:
        test_note(&r.err, dcuda_notify(&st, r.me, DCUDA_COMM_WORLD, SETS_LONE_TAG));
        r.words[SETS_CALLS] =
            dcuda_wait_notification_set(&st, SETS_LONE_TAG, 0x5u, DCUDA_SET_ALL, &taken);
        r.words[SETS_TAKEN] = taken;
        break;
    case SETS_HOST: /* only the host notifies the set, late */
        r.words[SETS_CALLS] = dcuda_wait_notification_set(&st, SETS_LONE_TAG, 0x5u, 1, &taken);
        r.words[SETS_TAKEN] = taken;
        break;
    default:
        r.err = DCUDA_ERR_INVALID_ARG;
        break;
    }
    dcuda_rank_finish(&st);
    if (dcuda_thread_index() == 0)
        r.words[SETS_FIRST_ERROR] = r.err;
}
