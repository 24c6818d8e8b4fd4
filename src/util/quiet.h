/*
 * A process's answer to a round of the deadlock detector (core/deadlock.c),
 * and how the answers of several processes fold into one as they travel to
 * the process that asked (through the node segment, or up a tree of
 * network messages). Four counters, as in Mattern's termination detection:
 * a round finds deadlock when every process is quiet in it and in the round
 * before, none changed between the two, and every message counted as sent
 * was counted as received. Two flags more: a host that may still notify a
 * rank keeps a round from finding deadlock while some rank waits for a
 * tag that a host can notify.
 */
#ifndef DCU_UTIL_QUIET_H
#define DCU_UTIL_QUIET_H

#include <stdint.h>

typedef struct dcu_quiet {
    uint32_t quiet;      /* 1: every rank blocked or finished, nothing in the process's hands */
    uint32_t changed;    /* 1: something moved since the process's last answer */
    uint64_t sent;       /* network messages of this run sent (the detector's own not counted) */
    uint64_t received;   /* ... and received */
    uint32_t host_free;  /* 1: a host of the process may still notify a rank */
    uint32_t user_waits; /* 1: a blocked rank waits for a user tag (one a host can notify) */
} dcu_quiet_t;

/* The answer of nobody: quiet, unchanged, nothing sent. */
static inline dcu_quiet_t dcu_quiet_none(void)
{
    dcu_quiet_t q = { 1u, 0u, 0u, 0u, 0u, 0u };
    return q;
}

static inline void dcu_quiet_fold(dcu_quiet_t *into, const dcu_quiet_t *q)
{
    into->quiet &= q->quiet;
    into->changed |= q->changed;
    into->sent += q->sent;
    into->received += q->received;
    into->host_free |= q->host_free;
    into->user_waits |= q->user_waits;
}

/* The folded answer of a round: nothing can move again by itself, and no
 * host can release a waiting rank. */
static inline int dcu_quiet_stuck(const dcu_quiet_t *q)
{
    return q->quiet && !(q->host_free && q->user_waits);
}

#endif /* DCU_UTIL_QUIET_H */
