/*
 * The producer side of the rings (protocol in shared/ring.h) and of the
 * run's first-error record, written once over the backend's primitives.
 * Used by one thread of a rank: log lines, misuse reports and commands.
 */
#ifndef DCUDA_IMPL_RING_H
#define DCUDA_IMPL_RING_H

#include "prims.h"

/* Takes a ticket on the log ring and returns its entry once the consumer
 * has handed it to this lap (back-pressure: nothing is overwritten). */
DCU_FN void *dcu_ring_take(const dcuda_ring_t *ring, size_t entry_size, uint32_t *ticket)
{
    uint32_t t = dcu_tickets(ring->head, 1u);
    char *e = (char *)ring->entries + (size_t)(t & (ring->capacity - 1u)) * entry_size;
    dcu_waiter_t w = DCU_WAITER_INIT;
    while (dcu_ld_acquire((const dcu_u32a_t *)e, 1) != t)
        dcu_pause_host(&w);
    *ticket = t;
    return e;
}

/* Are the entries of command tickets t .. t + n - 1 (n <= capacity) free:
 * has the consumer consumed their previous lap? *known is how many
 * tickets the caller knows consumed (an acquire saw it); the consumer's
 * count `tail` is read (host memory on a GPU) only when that is not
 * enough. Exact while fewer than 2^31 tickets separate them. */
DCU_FN int dcu_cmd_free(const dcuda_ring_t *ring, const dcu_u32a_t *tail, uint32_t t, uint32_t n,
                        uint32_t *known)
{
    uint32_t need = t + n - ring->capacity; /* consumed tickets this needs */
    if ((int32_t)(need - *known) <= 0)
        return 1;
    uint32_t seen = dcu_ld_acquire(tail, 1);
    if ((int32_t)(seen - *known) > 0)
        *known = seen;
    return (int32_t)(need - *known) <= 0;
}

/* Entry number `ticket` of a ring of entries of `entry_size` bytes. */
DCU_FN void *dcu_ring_entry(const dcuda_ring_t *ring, uint32_t ticket, size_t entry_size)
{
    return (char *)ring->entries + (size_t)(ticket & (ring->capacity - 1u)) * entry_size;
}

/* Hands a filled entry to the consumer (seq is the entry's first field). */
DCU_FN void dcu_ring_publish(void *entry, uint32_t ticket)
{
    dcu_st_release((dcu_u32a_t *)entry, ticket + 1u, 1);
}

/* Counts an error of the run; 1 if it is the first, which the caller then
 * describes in the record's `first` entry and hands to dcu_error_end_run. */
DCU_FN int dcu_error_claim(const dcuda_context_t *ctx, int rank, dcuda_status_t status)
{
    dcuda_error_record_t *rec = ctx->error;
    int first = dcu_claim_i32(&rec->status, (int32_t)status);
    if (first)
        dcu_set_i32(&rec->rank, rank);
    dcu_add_u32(&rec->count, 1u);
    return first;
}

/* The claimer of the first error's record wrote its `first` entry: the
 * host may read it now (dcuda_error_record_t.filled). */
DCU_FN void dcu_error_filled(const dcuda_context_t *ctx)
{
    dcu_st_release(&ctx->error->filled, 1u, 1);
}

/* After the first error's record is filled: with ON_ERROR=abort (or
 * `always`, for a rank that can no longer take part) the error ends the
 * run. Unless something cancelled it already, blocked waits end quietly
 * with DCUDA_ERR_ABORTED, and the host, which finds the record filled,
 * tells the other processes. */
DCU_FN void dcu_error_end_run(const dcuda_context_t *ctx, int always)
{
    if ((always || ctx->on_error == DCUDA_ON_ERROR_ABORT) && dcu_ld_acquire(ctx->cancel, 1) == 0u)
        dcu_st_release(ctx->cancel, DCUDA_CANCEL_ERROR, 1);
}

#endif /* DCUDA_IMPL_RING_H */
