/*
 * The WORLD barrier over the network path (src/proxy/netbar.h) against a
 * model of its promise, in a seeded random simulation: P processes (2 to
 * 40) with a FIFO channel for each ordered pair send puts to random
 * processes and enter barriers; messages are delivered in random order
 * across channels, puts are held for lack of inbox room at random and
 * released later, acknowledgements leave at random moments.
 *
 * Checked whenever a process completes a barrier: every process entered
 * it, and every put any process sent to this one before entering it is in
 * this one's inboxes (not in flight, not held). Checked at the end: every
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
} msg_t;

typedef struct chan {
    msg_t m[QUEUE];
    int head, count;
} chan_t;

typedef struct proc {
    dcu_netbar_t b;
    int in_barrier;                 /* 0: running */
    int puts_left;                  /* before the next barrier */
    int held[MAX_P * BARRIERS * 6]; /* sources of the puts held, in order (every put of the run) */
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
        push(me, to, (msg_t){ M_ROUND, p->b.entered, round });
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
        dcu_netbar_taken(&p->b, from);
        if (p->held_count > 0 || test_rng(&w.rng) % 3 == 0)
            p->held[p->held_count++] = from; /* the inbox is full: held */
        else
            p->delivered[from]++;
        break;
    case M_ROUND:
        bad = dcu_netbar_heard(&p->b, from, m.epoch, m.value);
        break;
    default: /* M_ACK */
        bad = dcu_netbar_acked(&p->b, from, m.value);
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
    if (!p->in_barrier && p->b.done < BARRIERS)
        choices[n++] = -1; /* send a put, or enter */
    if (p->held_count)
        choices[n++] = -2; /* the inbox takes a held put */
    if (p->b.owed_count && !p->held_count)
        choices[n++] = -3; /* acknowledge */
    if (n == 0)
        return 0;
    int c = choices[test_rng(&w.rng) % (uint64_t)n];
    if (c >= 0) {
        receive(me, c);
    } else if (c == -1 && p->puts_left > 0) {
        int q = (int)(test_rng(&w.rng) % (uint64_t)(w.P - 1));
        q += q >= me;
        push(me, q, (msg_t){ M_PUT, 0, 0 });
        dcu_netbar_sent(&p->b, q);
        p->sent[q]++;
        p->puts_left--;
    } else if (c == -1) {
        enter(me);
    } else if (c == -2) {
        p->delivered[p->held[0]]++;
        memmove(p->held, p->held + 1, (size_t)--p->held_count * sizeof *p->held);
        drive(me);
    } else {
        int to;
        uint32_t count;
        while (dcu_netbar_owed(&p->b, p->held_count, &to, &count))
            push(me, to, (msg_t){ M_ACK, 0, count });
    }
    return 1;
}

static int simulate(uint64_t seed)
{
    memset(&w, 0, sizeof w);
    w.rng = seed * 0x9e3779b97f4a7c15ull + 1;
    w.P = 2 + (int)(test_rng(&w.rng) % (MAX_P - 1));
    for (int q = 0; q < w.P; q++) {
        TEST_CHECK(dcu_netbar_init(&w.pr[q].b, w.P, q) == DCUDA_OK, "init");
        dcu_netbar_reset(&w.pr[q].b);
        w.pr[q].puts_left = (int)(test_rng(&w.rng) % 6);
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
    long seeds = argc > 2 ? strtol(argv[2], NULL, 10) : 200;
    for (long s = 1; s <= seeds && test_failures == 0; s++)
        simulate((uint64_t)s);
    printf("%ld seeds\n", seeds);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = { { "model", run_model } };
    return test_main(argc, argv, cases, 1);
}
