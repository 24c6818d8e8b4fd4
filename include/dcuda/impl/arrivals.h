/*
 * What arrives at a rank other than through its counters, applied by the
 * rank while it waits or tests: the messages the proxy leaves in its
 * inbox (the network path). Written once over the backend's primitives;
 * part of the rank engine (engine.h).
 */
#ifndef DCUDA_IMPL_ARRIVALS_H
#define DCUDA_IMPL_ARRIVALS_H

#include "prims.h"

/* The lanes of `lanes`: a put's first bytes, from the data halves of an
 * inbox header's words 5..7, to dst. */
DCU_FN void dcu_inbox_inline(dcu_lanes_t lanes, char *dst, const uint32_t *w, uint32_t n)
{
    for (uint32_t j = (uint32_t)dcu_thread(); j < n; j += (uint32_t)dcu_lanes_count(lanes))
        dst[j] = (char)DCUDA_INBOX_INLINE_BYTE(w, j);
}

/* The lanes of `lanes`: applies, in order, up to `most` messages the proxy
 * has left in the rank's inbox (shared/ring.h): a put's data into the
 * rank's memory, then its notification, counted on the rank's own counter
 * by an atomic add of its GPU (so it never races the adds of other ranks).
 * Publishes how far it consumed (with release after a SYNC); returns how
 * many messages it applied. */
DCU_FN_COLD uint32_t dcu_inbox_drain(dcuda_state_t *st, dcu_lanes_t lanes, uint32_t most)
{
    uint32_t pos = st->inbox_pos, done = 0, release = 0;
    while (done < most) {
        const dcuda_inbox_entry_t *e = &st->inbox[pos & (DCUDA_INBOX_ENTRIES - 1u)];
        uint32_t w[DCUDA_INBOX_WORDS];
        if (!dcu_lanes_all(lanes, dcu_inbox_read(e, pos + 1u, w)))
            break;
        uint32_t kind = DCUDA_INBOX_KIND_OF(w[0]), entries = DCUDA_INBOX_ENTRIES_OF(w[0]);
        if (DCUDA_INBOX_FLAGS_OF(w[0]) & DCUDA_INBOX_ACQUIRE)
            (void)dcu_inbox_acquire(e);
        if (kind == DCUDA_INBOX_PUT) {
            char *dst = (char *)(uintptr_t)((uint64_t)w[3] | (uint64_t)w[4] << 32);
            uint32_t n = w[2] < DCUDA_INBOX_INLINE ? w[2] : DCUDA_INBOX_INLINE;
            dcu_inbox_inline(lanes, dst, w, n);
            if (w[2] > n)
                dcu_lanes_copy(lanes, dst + n, (const char *)(e + 1), w[2] - n);
        }
        dcu_lanes_sync(lanes); /* the data is written before it is counted */
        if (dcu_leader() && kind != DCUDA_INBOX_PAD && w[1]) /* only this rank reads it */
            dcu_add_u32(&st->notifs[st->device_rank].arrived[w[1] - 1u], 1u);
        release |= kind == DCUDA_INBOX_SYNC;
        pos += entries ? entries : 1u;
        done++;
    }
    if (done && dcu_leader()) {
        st->inbox_pos = pos;
        if (release) /* the proxy writes my memory next */
            dcu_st_release(&st->ctx->inbox_tail[st->device_rank], pos, 1);
        else /* it reuses the entries next */
            dcu_st_after_loads(&st->ctx->inbox_tail[st->device_rank], pos);
    }
    dcu_lanes_sync(lanes); /* every lane read inbox_pos before the leader moved it */
    return done;
}

#endif /* DCUDA_IMPL_ARRIVALS_H */
