/*
 * The WORLD barrier among the processes when some of them are on the
 * network path, as a state machine the proxy drives: it sends and
 * receives, this decides (no I/O here, so a test can drive it).
 *
 * A plain barrier is a dissemination barrier: in round k a process tells
 * process (me + 2^k) mod P and waits to hear from (me - 2^k) mod P, for
 * ceil(log2 P) rounds, one message a round. It keeps the barrier's promise
 * (a rank that leaves it finds in its inbox everything sent to it before
 * the others entered it) through acknowledgements: a process counts the
 * puts, notifications and gets it sends to each process, the receiver counts
 * what it took into its ranks' inboxes from each sender (a message held
 * for lack of inbox room counts once written there) and, whenever it has
 * nothing else to do, tells each sender how many (ACK). A process starts
 * its rounds once every process it sent to has acknowledged all of it,
 * which by then is usually the case already.
 *
 * The acknowledgements are also credits: they count bytes too, and a
 * sender has at most `credit` bytes sent to a process that the process has
 * not acknowledged (one message always goes, whatever its size), so what a
 * receiver holds of one sender, on its way or waiting for inbox room, is
 * bounded, and a slow target holds its senders back. The receiver checks
 * that its senders keep to the credit.
 *
 * A get counts as a message and as no bytes (its answer, puts, counts
 * them): it is acknowledged once served, so a barrier after it orders it,
 * and it holds no credit that the answers in the other direction could
 * wait for.
 *
 * A barrier that creates a window is no different: nobody sends parts;
 * a process asks a part's owner when one of its ranks first needs it
 * (parts.h).
 *
 * A process is at most one barrier ahead of another (it cannot finish the
 * next before every process entered it), so arrivals are kept for two
 * barriers, by the parity of their epoch.
 */
#ifndef DCU_PROXY_NETBAR_H
#define DCU_PROXY_NETBAR_H

#include <stdint.h>

#include "dcuda/dcuda_status.h"

/* What arrived for one barrier. */
typedef struct dcu_netbar_arrivals {
    uint32_t epoch;
    uint32_t heard; /* bit k: round k's message arrived */
} dcu_netbar_arrivals_t;

/* What one process counts of another: puts and notifications (messages
 * and their bytes) sent to it and acknowledged by it; arrived from it,
 * taken from it into inboxes, and acknowledged to it. */
typedef struct dcu_netbar_peer {
    uint32_t sent, acked, taken, told;
    /* Messages that arrived from it (taken counts those in an inbox: a
     * message held for inbox room lands after later ones), and the
     * largest count it acknowledged with everything arrived taken (then
     * a prefix of what I sent is in its inboxes: a fence's test). */
    uint32_t arrived, clear;
    uint64_t sent_bytes, acked_bytes, arrived_bytes, taken_bytes, told_bytes;
} dcu_netbar_peer_t;

typedef struct dcu_netbar {
    int procs, me;
    uint32_t done;    /* barriers completed (of this run) */
    uint32_t entered; /* the barrier my device entered (== done: none in progress) */
    int ack_wait;     /* processes whose acknowledgement it still waits for */
    int rounds;       /* rounds of a barrier: ceil(log2 procs) */
    int round;        /* its rounds sent */
    dcu_netbar_arrivals_t at[2];
    dcu_netbar_peer_t *peer; /* [procs] */
    /* Bit per process that may owe an acknowledgement. */
    uint64_t *unacked;
    int words;
    /* The processes owed an acknowledgement. */
    int *owed;
    int owed_count;
} dcu_netbar_t;

/* loopback: a process alone still runs one round, to itself (NET_LOOPBACK:
 * every barrier goes through the manager). */
dcuda_status_t dcu_netbar_init(dcu_netbar_t *b, int procs, int me, int loopback);
void dcu_netbar_free(dcu_netbar_t *b);
/* A new run: no barrier done, nothing counted. */
void dcu_netbar_reset(dcu_netbar_t *b);

/* May a put or notification of `bytes` (its whole message) go to process
 * q now, with `credit` bytes a receiver? 1 or 0. */
int dcu_netbar_may_send(const dcu_netbar_t *b, int q, uint64_t bytes, uint64_t credit);
/* A put or a notification of `bytes` went to process q. */
void dcu_netbar_sent(dcu_netbar_t *b, int q, uint64_t bytes);
/* One of `bytes` arrived from process q: NULL, or why q cannot have sent
 * it (beyond its credit). */
const char *dcu_netbar_arrived(dcu_netbar_t *b, int q, uint64_t bytes, uint64_t credit);
/* One of `bytes` from process q is in an inbox (or was dropped). */
void dcu_netbar_taken(dcu_netbar_t *b, int q, uint64_t bytes);
/* The next acknowledgement to send: 1, to whom, and the count and bytes
 * it acknowledges; else 0. */
int dcu_netbar_owed(dcu_netbar_t *b, int *to, uint32_t *count, uint64_t *bytes);
/* Process q acknowledged `count` (`bytes`) of what I sent it. NULL, or
 * why that cannot be right. */
const char *dcu_netbar_acked(dcu_netbar_t *b, int q, uint32_t count, uint64_t bytes);
/* Is everything that arrived from process q in an inbox (none held)? An
 * acknowledgement sent then says so (DCU_WIRE_ALL_TAKEN): with messages
 * of a pair arriving in the order sent, its count is then a prefix. */
int dcu_netbar_all_taken(const dcu_netbar_t *b, int q);
/* Process q acknowledged `count` with everything that arrived taken:
 * the first `count` messages I sent it are in its inboxes. */
void dcu_netbar_cleared(dcu_netbar_t *b, int q, uint32_t count);

/* My device entered barrier `epoch`: NULL, or why it cannot (the barrier
 * is not the next one or the one after, as for any process's rounds). */
const char *dcu_netbar_enter(dcu_netbar_t *b, uint32_t epoch);
/* A round's message from `from`. NULL, or why the message cannot be right
 * (the proxy fails). */
const char *dcu_netbar_heard(dcu_netbar_t *b, int from, uint32_t epoch, uint32_t round);
/* The next round message to send now: 1, to whom and its round, or 0. */
int dcu_netbar_send(dcu_netbar_t *b, int *to, uint32_t *round);
/* 1 when the barrier entered completes now (it is then done). */
int dcu_netbar_complete(dcu_netbar_t *b);

#endif /* DCU_PROXY_NETBAR_H */
