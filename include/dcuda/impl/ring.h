/*
 * The producer side of the rings (protocol in shared/ring.h) and of the
 * run's first-error record, written once over the backend's primitives.
 * Used by one thread of a rank: log lines, misuse reports and commands.
 */
#ifndef DCUDA_IMPL_RING_H
#define DCUDA_IMPL_RING_H

#include "prims.h"

/* Takes a ticket on `ring` and returns its entry once it is free for this
 * lap (back-pressure: nothing is overwritten). The caller may know (an
 * acquire saw it) that the consumer had consumed *consumed tickets: an
 * entry whose previous lap lies below is free without a look at it. NULL:
 * nothing known. Exact while fewer than 2^31 tickets separate the two. */
DCU_FN void *dcu_ring_take(const dcuda_ring_t *ring, size_t entry_size, const uint32_t *consumed,
                           uint32_t *ticket)
{
    uint32_t t = dcu_ticket(ring->head);
    char *e = (char *)ring->entries + (size_t)(t & (ring->capacity - 1u)) * entry_size;
    int known_free = consumed && (int32_t)(t - ring->capacity - *consumed) < 0;
    dcu_waiter_t w = DCU_WAITER_INIT;
    while (!known_free && dcu_ld_acquire((const dcu_u32a_t *)e, 1) != t)
        dcu_pause_host(&w);
    *ticket = t;
    return e;
}

/* Hands a filled entry to the consumer (seq is the entry's first field). */
DCU_FN void dcu_ring_publish(void *entry, uint32_t ticket)
{
    dcu_st_release((dcu_u32a_t *)entry, ticket + 1u, 1);
}

/* Counts an error of the run; 1 if it is the first, which the caller then
 * describes in the record's `first` entry. */
DCU_FN int dcu_error_claim(const dcuda_context_t *ctx, int rank, dcuda_status_t status)
{
    dcuda_error_record_t *rec = ctx->error;
    int first = dcu_claim_i32(&rec->status, (int32_t)status);
    if (first)
        dcu_set_i32(&rec->rank, rank);
    dcu_add_u32(&rec->count, 1u);
    return first;
}

#endif /* DCUDA_IMPL_RING_H */
