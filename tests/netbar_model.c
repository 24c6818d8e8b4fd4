/*
 * The WORLD barrier over the network path (src/proxy/netbar.h) against a
 * model of its promise, in a seeded random simulation: P processes (2 to
 * 40) with a FIFO channel for each ordered pair send puts to random
 * processes and enter barriers; messages are delivered in random order
 * across channels, puts are held for lack of inbox room at random and
 * released later, acknowledgements leave at random moments. Puts have
 * random sizes, some larger than the credit (drawn per seed), and a put
 * waits while its target's credit does not allow it. Some messages count
 * no bytes (gets), and a process sends puts while it is in a barrier too
 * (the answers to gets, served whenever their turn comes).
 *
 * Checked whenever a process completes a barrier: every process entered
 * it, and every put any process sent to this one before entering it is in
 * this one's inboxes (not in flight, not held). Checked after every step:
 * what a process has sent another and that one has not taken (on its way
 * or held) is within the credit, or a single message; every receiver
 * accepts every arrival under its credit check. Checked at the end: every
 * process completed every barrier (nothing waits for ever), and each
 * barrier took ceil(log2 P) rounds a process.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/netbar.h"
#include "test_util.h"

#define MAX_P 40
#define BARRIERS 12
#define QUEUE 512 /* messages a channel holds: far more than a run puts in one */

enum { M_PUT = 1, M_ROUND, M_ACK };

typedef struct msg {
    int type;
    uint32_t epoch, value;
    uint64_t bytes; /* PUT: its size; ACK: the bytes acknowledged */
} msg_t;

/* A put held for lack of inbox room. */
typedef struct held {
    int from;
    uint64_t bytes;
} held_t;

typedef struct chan {
    msg_t m[QUEUE];
    int head, count;
} chan_t;

typedef struct proc {
    dcu_netbar_t b;
    int in_barrier;   /* 0: running */
    int puts_left;    /* before the next barrier */
    int answers_left; /* puts it may send while in its next barrier */
    int next_to;      /* the next put's target and size */
    uint64_t next_bytes;
    held_t held[MAX_P * BARRIERS * 8]; /* the puts held, in order (every put of the run) */
    int held_count;
    uint32_t delivered[MAX_P]; /* puts from each process in my inboxes */
    uint32_t sent[MAX_P];      /* puts I sent to each process */
    uint32_t rounds_sent;
} proc_t;

static struct {
    int P;
    proc_t pr[MAX_P];
    chan_t ch[MAX_P][MAX_P]; /* [from][to] */
    int entered[BARRIERS + 1][MAX_P];
    uint32_t sent_at_entry[BARRIERS + 1][MAX_P][MAX_P]; /* [e][from][to] */
    /* Puts sent and not yet taken (in flight or held): [from][to]. */
    int untaken[MAX_P][MAX_P]; /* puts with bytes (a get counts none) */
    uint64_t untaken_bytes[MAX_P][MAX_P];
    uint64_t credit;
    long waits; /* steps a put waited for credit */
    uint64_t rng;
} w;

static void push(int from, int to, msg_t m)
{
    chan_t *c = &w.ch[from][to];
    if (c->count == QUEUE) {
        TEST_CHECK(0, "channel %d -> %d full", from, to);
        return;
    }
    c->m[(c->head + c->count++) % QUEUE] = m;
}

/* The barrier `me` is in completes when it can: checks the promise. */
static void drive(int me)
{
    proc_t *p = &w.pr[me];
    int to;
    uint32_t round;
    while (dcu_netbar_send(&p->b, &to, &round)) {
        push(me, to, (msg_t){ M_ROUND, p->b.entered, round, 0 });
        p->rounds_sent++;
    }
    if (!p->in_barrier || !dcu_netbar_complete(&p->b))
        return;
    uint32_t e = p->b.done;
    for (int q = 0; q < w.P; q++) {
        TEST_CHECK(w.entered[e][q], "process %d completed barrier %u before process %d entered it",
                   me, e, q);
        TEST_CHECK(p->delivered[q] >= w.sent_at_entry[e][q][me],
                   "process %d completed barrier %u with %u of the %u puts process %d sent it "
                   "before entering",
                   me, e, p->delivered[q], w.sent_at_entry[e][q][me], q);
    }
    p->in_barrier = 0;
    p->puts_left = (int)(test_rng(&w.rng) % 6);
    p->answers_left = (int)(test_rng(&w.rng) % 3);
}

static void enter(int me)
{
    proc_t *p = &w.pr[me];
    uint32_t e = p->b.done + 1u;
    w.entered[e][me] = 1;
    memcpy(w.sent_at_entry[e][me], p->sent, sizeof p->sent);
    p->in_barrier = 1;
    const char *bad = dcu_netbar_enter(&p->b, e);
    TEST_CHECK(bad == NULL, "process %d cannot enter barrier %u: %s", me, e, bad ? bad : "");
    drive(me);
}

/* A put from `from` is in my inbox. */
static void take(int me, int from, uint64_t bytes)
{
    w.pr[me].delivered[from]++;
    w.untaken[from][me] -= bytes > 0;
    w.untaken_bytes[from][me] -= bytes;
    dcu_netbar_taken(&w.pr[me].b, from, bytes);
}

/* The next put's target and size: up to three times the credit, or none
 * (a get, which counts no bytes). */
static void draw_put(int me)
{
    proc_t *p = &w.pr[me];
    int q = (int)(test_rng(&w.rng) % (uint64_t)(w.P - 1));
    p->next_to = q + (q >= me);
    p->next_bytes = 56u + test_rng(&w.rng) % (test_rng(&w.rng) % 8 == 0 ? 3u * w.credit : 256u);
    if (test_rng(&w.rng) % 8 == 0)
        p->next_bytes = 0;
}

/* Sends the drawn put (its sender's count; the receiver's untaken). */
static void send_put(int me)
{
    proc_t *p = &w.pr[me];
    int q = p->next_to;
    push(me, q, (msg_t){ M_PUT, 0, 0, p->next_bytes });
    dcu_netbar_sent(&p->b, q, p->next_bytes);
    w.untaken[me][q] += p->next_bytes > 0;
    w.untaken_bytes[me][q] += p->next_bytes;
    TEST_CHECK(w.untaken[me][q] <= 1 || w.untaken_bytes[me][q] <= w.credit,
               "process %d has %d puts of %llu bytes untaken by %d, credit %llu", me,
               w.untaken[me][q], (unsigned long long)w.untaken_bytes[me][q], q,
               (unsigned long long)w.credit);
    p->sent[q]++;
    draw_put(me);
}

static void receive(int me, int from)
{
    proc_t *p = &w.pr[me];
    chan_t *c = &w.ch[from][me];
    msg_t m = c->m[c->head];
    c->head = (c->head + 1) % QUEUE;
    c->count--;
    const char *bad = NULL;
    switch (m.type) {
    case M_PUT:
        bad = dcu_netbar_arrived(&p->b, from, m.bytes, w.credit);
        if (p->held_count > 0 || test_rng(&w.rng) % 3 == 0)
            p->held[p->held_count++] = (held_t){ from, m.bytes }; /* the inbox is full: held */
        else
            take(me, from, m.bytes);
        break;
    case M_ROUND:
        bad = dcu_netbar_heard(&p->b, from, m.epoch, m.value);
        break;
    default: /* M_ACK */
        bad = dcu_netbar_acked(&p->b, from, m.value, m.bytes);
        break;
    }
    TEST_CHECK(bad == NULL, "process %d refused a message of type %d from %d: %s", me, m.type, from,
               bad ? bad : "");
    drive(me);
}

/* One random step of process me; 0 if it has none to take. */
static int step(int me)
{
    proc_t *p = &w.pr[me];
    int choices[MAX_P + 4], n = 0;
    for (int q = 0; q < w.P; q++)
        if (w.ch[q][me].count)
            choices[n++] = q; /* receive from q */
    int may_put =
        p->puts_left > 0 && dcu_netbar_may_send(&p->b, p->next_to, p->next_bytes, w.credit);
    if (!p->in_barrier && p->b.done < BARRIERS && (p->puts_left == 0 || may_put))
        choices[n++] = -1; /* send a put, or enter */
    int may_answer = p->in_barrier && p->answers_left > 0 &&
                     dcu_netbar_may_send(&p->b, p->next_to, p->next_bytes, w.credit);
    if (may_answer)
        choices[n++] = -4; /* in a barrier: a get's answer goes */
    w.waits += !p->in_barrier && p->puts_left > 0 && !may_put;
    if (p->held_count)
        choices[n++] = -2; /* the inbox takes a held put */
    if (p->b.owed_count)
        choices[n++] = -3; /* acknowledge */
    if (n == 0)
        return 0;
    int c = choices[test_rng(&w.rng) % (uint64_t)n];
    if (c >= 0) {
        receive(me, c);
    } else if (c == -1 && p->puts_left > 0) {
        send_put(me);
        p->puts_left--;
    } else if (c == -4) {
        send_put(me);
        p->answers_left--;
    } else if (c == -1) {
        enter(me);
    } else if (c == -2) {
        held_t h = p->held[0];
        memmove(p->held, p->held + 1, (size_t)--p->held_count * sizeof *p->held);
        take(me, h.from, h.bytes);
        drive(me);
    } else {
        int to;
        uint32_t count;
        uint64_t bytes;
        while (dcu_netbar_owed(&p->b, &to, &count, &bytes))
            push(me, to, (msg_t){ M_ACK, 0, count, bytes });
    }
    return 1;
}

static int simulate(uint64_t seed)
{
    memset(&w, 0, sizeof w);
    w.rng = seed * 0x9e3779b97f4a7c15ull + 1;
    w.P = 2 + (int)(test_rng(&w.rng) % (MAX_P - 1));
    w.credit = 64u << (test_rng(&w.rng) % 8);
    for (int q = 0; q < w.P; q++) {
        TEST_CHECK(dcu_netbar_init(&w.pr[q].b, w.P, q, 0) == DCUDA_OK, "init");
        dcu_netbar_reset(&w.pr[q].b);
        w.pr[q].puts_left = (int)(test_rng(&w.rng) % 6);
        w.pr[q].answers_left = (int)(test_rng(&w.rng) % 3);
        draw_put(q);
    }
    for (long steps = 0; steps < 10000000; steps++) {
        int me = (int)(test_rng(&w.rng) % (uint64_t)w.P), moved = 0;
        for (int k = 0; k < w.P && !moved; k++)
            moved = step((me + k) % w.P);
        if (!moved)
            break;
    }
    int log2p = 0;
    while ((1 << log2p) < w.P)
        log2p++;
    for (int q = 0; q < w.P; q++) {
        proc_t *p = &w.pr[q];
        TEST_CHECK(p->b.done == BARRIERS && !p->in_barrier,
                   "seed %llu: process %d of %d stopped at barrier %u of %d",
                   (unsigned long long)seed, q, w.P, p->b.done, BARRIERS);
        TEST_CHECK(p->rounds_sent == (uint32_t)(BARRIERS * log2p),
                   "process %d sent %u rounds for %d barriers of %d processes", q, p->rounds_sent,
                   BARRIERS, w.P);
        dcu_netbar_free(&p->b);
    }
    return 0;
}

static int run_model(int argc, char **argv)
{
    long seeds = argc > 2 ? strtol(argv[2], NULL, 10) : 200, waits = 0;
    for (long s = 1; s <= seeds && test_failures == 0; s++) {
        simulate((uint64_t)s);
        waits += w.waits;
    }
    TEST_CHECK(seeds < 20 || waits > 0, "no put ever waited for credit in %ld seeds", seeds);
    printf("%ld seeds, %ld steps a put waited for credit\n", seeds, waits);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = { { "model", run_model } };
    return test_main(argc, argv, cases, 1);
}
