/*
 * The proxy's fences (src/proxy/fence.h) against a model, in a seeded
 * random simulation of one proxy's counts (netbar.h): messages sent to
 * random processes (itself among them, as NET_LOOPBACK does), bursts to
 * a few, acknowledgements arriving per process in order, up to what was
 * sent, some of them saying that nothing of ours is held there (only
 * those make their count a prefix of what was sent: a held message lands
 * after later ones), and fences taken by random ranks at random moments (a rank waits
 * for its own). The model keeps each fence's counts itself: what had been
 * sent each process when the fence was taken. Counts start near 2^32, so
 * they wrap.
 *
 * Checked after every step: every fence the acknowledgements complete is
 * answered, and only those: one is answered exactly when each process
 * has acknowledged what the fence's counts say with nothing held, never
 * earlier (a larger count with something held is not enough), whatever
 * was sent after it; a fence taken when nothing is unacknowledged
 * completes at once; fences complete in the order taken. Also: a fence
 * beyond one a rank is refused, abandoned fences come oldest first, a
 * reset leaves none. Deterministic, well under a second:
 * dcuda_test_fence [SEED [STEPS]].
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/fence.h"
#include "test_util.h"

#define MAX_P 130 /* three words of netbar's set */
#define MAX_R 9
#define BYTES 8u /* each message's bytes */

/* A fence of the model: its counts, taken independently of fence.c. */
typedef struct model_fence {
    int waiting;
    uint32_t tag;
    uint32_t need[MAX_P]; /* what each process must have acknowledged */
    int owes[MAX_P];      /* the process lagged when the fence was taken */
    long order;           /* when it was taken */
} model_fence_t;

static struct {
    int P, R;
    uint32_t sent[MAX_P], acked[MAX_P], base[MAX_P];
    uint32_t clear[MAX_P];  /* the largest count acknowledged with nothing held */
    model_fence_t f[MAX_R]; /* one a rank */
    long taken, at_once, done, abandoned, overtaken;
    uint32_t next_tag;
    uint64_t rng;
} m;

static uint32_t draw(uint32_t bound) { return (uint32_t)(test_rng(&m.rng) % bound); }

/* Has every process model fence f waits for acknowledged what it needs? */
static int complete(const model_fence_t *f)
{
    for (int q = 0; q < m.P; q++)
        if (f->owes[q] && (int32_t)(m.clear[q] - f->need[q]) < 0)
            return 0;
    return 1;
}

/* A new episode: P processes, R ranks, counts from near 2^32 (or 0). */
static void episode(dcu_netbar_t *b, dcu_fences_t *fs)
{
    dcu_netbar_free(b);
    dcu_fences_free(fs);
    m.P = 1 + (int)draw(MAX_P);
    m.R = 1 + (int)draw(MAX_R);
    TEST_STATUS(dcu_netbar_init(b, m.P, (int)draw((uint32_t)m.P), 1), DCUDA_OK);
    TEST_STATUS(dcu_fences_init(fs, m.R), DCUDA_OK);
    memset(m.f, 0, sizeof m.f);
    for (int q = 0; q < m.P; q++) {
        m.base[q] = draw(4) ? 0xffffffffu - draw(40) : draw(40);
        m.sent[q] = m.acked[q] = m.clear[q] = m.base[q];
        b->peer[q].sent = b->peer[q].acked = b->peer[q].clear = m.base[q];
    }
}

static void send_one(dcu_netbar_t *b, int q)
{
    dcu_netbar_sent(b, q, BYTES);
    m.sent[q]++;
}

/* Process q acknowledges some of what it was sent, in order, saying
 * whether it holds nothing of ours. */
static void ack(dcu_netbar_t *b, int q, int all_taken)
{
    uint32_t lag = m.sent[q] - m.acked[q];
    if (lag == 0)
        return;
    m.acked[q] += 1u + draw(lag);
    uint64_t bytes = (uint64_t)(uint32_t)(m.acked[q] - m.base[q]) * BYTES;
    const char *bad = dcu_netbar_acked(b, q, m.acked[q], bytes);
    TEST_CHECK(bad == NULL, "process %d acknowledged %u: %s", q, m.acked[q], bad ? bad : "");
    /* All of it acknowledged: nothing can be held there. */
    if (all_taken || m.acked[q] == m.sent[q]) {
        dcu_netbar_cleared(b, q, m.acked[q]);
        m.clear[q] = m.acked[q];
    }
}

/* Rank r takes a fence. */
static void take(dcu_fences_t *fs, const dcu_netbar_t *b, int r)
{
    model_fence_t *f = &m.f[r];
    int waits, lag = 0;
    uint32_t tag = ++m.next_tag;
    const char *bad = dcu_fences_take(fs, b, r, tag, &waits);
    TEST_CHECK(bad == NULL, "rank %d cannot take a fence: %s", r, bad ? bad : "");
    for (int q = 0; q < m.P; q++) {
        f->owes[q] = m.sent[q] != m.acked[q];
        f->need[q] = m.sent[q];
        lag |= f->owes[q];
    }
    m.taken++;
    TEST_CHECK(waits == lag, "rank %d's fence %s while %s is unacknowledged", r,
               waits ? "waits" : "completes at once", lag ? "something" : "nothing");
    if (!waits) {
        m.at_once++;
        return;
    }
    f->waiting = 1;
    f->tag = tag;
    f->order = m.taken;
}

/* Is rank r's fence the oldest one waiting? */
static int oldest(int r)
{
    for (int k = 0; k < m.R; k++)
        if (m.f[k].waiting && m.f[k].order < m.f[r].order)
            return 0;
    return 1;
}

/* The fences fence.c completes now: exactly the model's complete ones. */
static void check_done(dcu_fences_t *fs, const dcu_netbar_t *b)
{
    int r;
    uint32_t tag;
    while (dcu_fences_done(fs, b, &r, &tag)) {
        TEST_CHECK(r >= 0 && r < m.R && m.f[r].waiting && m.f[r].tag == tag,
                   "a fence of rank %d (tag %u) completed that does not wait", r, tag);
        if (r < 0 || r >= m.R || !m.f[r].waiting)
            return;
        TEST_CHECK(complete(&m.f[r]), "rank %d's fence completed early", r);
        TEST_CHECK(oldest(r), "rank %d's fence completed before an older one", r);
        for (int q = 0; q < m.P; q++)
            m.overtaken += m.f[r].owes[q] && m.sent[q] != m.acked[q];
        m.f[r].waiting = 0;
        m.done++;
    }
    for (r = 0; r < m.R; r++)
        TEST_CHECK(!m.f[r].waiting || !complete(&m.f[r]),
                   "rank %d's fence is complete but was not answered", r);
    TEST_CHECK(fs->count >= 0 && fs->count <= m.R, "%d fences wait", fs->count);
}

/* Every rank waits: one more fence is refused; the abandoned come
 * oldest first. */
static void abandon(dcu_fences_t *fs, const dcu_netbar_t *b)
{
    int r, waits;
    uint32_t tag;
    if (fs->count == m.R) {
        const char *bad = dcu_fences_take(fs, b, 0, ++m.next_tag, &waits);
        TEST_CHECK(bad != NULL, "a fence beyond one a rank was taken");
    }
    while (dcu_fences_next_waiting(fs, &r, &tag)) {
        TEST_CHECK(r >= 0 && r < m.R && m.f[r].waiting && m.f[r].tag == tag && oldest(r),
                   "abandoned a fence of rank %d (tag %u) out of turn", r, tag);
        if (r >= 0 && r < m.R)
            m.f[r].waiting = 0;
        m.abandoned++;
    }
    for (r = 0; r < m.R; r++)
        TEST_CHECK(!m.f[r].waiting, "rank %d's fence was not abandoned", r);
}

static void step(dcu_netbar_t *b, dcu_fences_t *fs)
{
    uint32_t what = draw(1000);
    /* Most traffic to a few processes, some to any. */
    int q = draw(4) ? (int)draw(m.P < 3 ? (uint32_t)m.P : 3u) : (int)draw((uint32_t)m.P);
    if (what < 450) {
        for (uint32_t k = 1 + draw(3); k > 0; k--)
            send_one(b, q);
    } else if (what < 850) {
        ack(b, q, (int)draw(2));
    } else if (what < 990) {
        int r = (int)draw((uint32_t)m.R);
        if (!m.f[r].waiting)
            take(fs, b, r);
    } else if (what < 991) {
        abandon(fs, b);
    } else if (what < 997) {
        for (int p = 0; p < m.P; p++) /* everything acknowledged */
            while (m.acked[p] != m.sent[p])
                ack(b, p, 1);
    } else {
        dcu_fences_reset(fs);
        TEST_CHECK(fs->count == 0, "%d fences wait after a reset", fs->count);
        memset(m.f, 0, sizeof m.f);
    }
    check_done(fs, b);
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    long steps = argc > 2 ? atol(argv[2]) : 200000;
    m.rng = seed * 0x9e3779b97f4a7c15ull + 1;
    dcu_netbar_t b;
    dcu_fences_t fs;
    memset(&b, 0, sizeof b);
    memset(&fs, 0, sizeof fs);
    episode(&b, &fs);
    for (long s = 0; s < steps && !test_failures; s++) {
        if (s % 5000 == 4999)
            episode(&b, &fs);
        step(&b, &fs);
    }
    TEST_CHECK(m.done > 100 && m.at_once > 10 && m.overtaken > 10,
               "too few cases: %ld fences completed, %ld at once, %ld past later traffic", m.done,
               m.at_once, m.overtaken);
    printf("fence: seed %llu: %ld fences, %ld at once, %ld completed (%ld past later traffic), "
           "%ld abandoned\n",
           (unsigned long long)seed, m.taken, m.at_once, m.done, m.overtaken, m.abandoned);
    dcu_netbar_free(&b);
    dcu_fences_free(&fs);
    return test_failures ? 1 : 0;
}
