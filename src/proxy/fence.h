/*
 * Fences (DCUDA_CMD_FENCE): a rank waits until every message its proxy
 * handed to the network before the fence has been acknowledged by its
 * receiver, with the counts the WORLD barrier keeps (netbar.h). No I/O
 * here, so a test can drive it.
 *
 * A fence takes, of each process whose acknowledgements lag what was sent
 * it, the count sent so far, and completes once each such process has
 * acknowledged that many with nothing of mine held (a message held for
 * inbox room lands after later ones, so a count alone is no prefix:
 * DCU_WIRE_ALL_TAKEN, netbar.h): traffic sent after the fence holds it
 * back only while the receiver holds some of it (a WORLD barrier waits
 * for all acknowledgements). Counts are compared modulo 2^32.
 *
 * Each rank waits for its own fence, so at most one a rank waits, in the
 * order taken. A later fence's counts are at least an earlier one's, so
 * fences complete in that order: only the oldest is checked.
 */
#ifndef DCU_PROXY_FENCE_H
#define DCU_PROXY_FENCE_H

#include <stdint.h>

#include "netbar.h"

/* A process a fence waits for, and the count it waits for it to reach. */
typedef struct dcu_fence_owed {
    int q;
    uint32_t sent;
} dcu_fence_owed_t;

/* A fence taken: the device rank that waits and its reply tag, and the
 * processes it still waits for (owed[0..count), room for `room`). */
typedef struct dcu_fence {
    int rank;
    uint32_t tag;
    dcu_fence_owed_t *owed;
    int count, room;
} dcu_fence_t;

typedef struct dcu_fences {
    dcu_fence_t *fifo; /* [capacity], the waiting ones from head */
    int capacity, head, count;
} dcu_fences_t;

/* Room for `ranks` fences waiting at once (one a rank). */
dcuda_status_t dcu_fences_init(dcu_fences_t *f, int ranks);
void dcu_fences_free(dcu_fences_t *f);
/* A new run: no fence waits. */
void dcu_fences_reset(dcu_fences_t *f);

/* Device rank `rank` takes a fence (reply tag `tag`) as b counts now:
 * NULL and *waits 1 when it waits, 0 when nothing sent is unacknowledged
 * (it completes at once, nothing kept); else why it cannot. */
const char *dcu_fences_take(dcu_fences_t *f, const dcu_netbar_t *b, int rank, uint32_t tag,
                            int *waits);
/* 1, and the oldest waiting fence's rank and tag, when b's acknowledgements
 * complete it now (it ends); else 0. */
int dcu_fences_done(dcu_fences_t *f, const dcu_netbar_t *b, int *rank, uint32_t *tag);
/* The oldest waiting fence, abandoned (it ends): 1, its rank and tag; 0
 * if none waits. */
int dcu_fences_next_waiting(dcu_fences_t *f, int *rank, uint32_t *tag);

#endif /* DCU_PROXY_FENCE_H */
