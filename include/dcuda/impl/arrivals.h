/*
 * What arrives at a rank other than through its counters, applied by the
 * rank while it waits or tests: the messages the proxy leaves in its
 * inbox (the network path), and the small notified puts of other
 * processes of the node in its eager rings (shared/ring.h). Written once
 * over the backend's primitives; part of the rank engine (engine.h).
 */
#ifndef DCUDA_IMPL_ARRIVALS_H
#define DCUDA_IMPL_ARRIVALS_H

#include "prims.h"

/* ---- the inbox (network path, target side) --------------------------------- */

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

/* ---- eager rings (target side) -------------------------------------------- */

#define DCU_NO_TAG 0xffffffffu

/* The lanes of `lanes`: applies, in order, what the ranks of process p
 * left in my ring from it (shared/ring.h): a put's payload into my part of
 * its window, then its notification, counted by consuming one less of its
 * tag (only this rank touches `consumed`, so no atomic is needed). Hands
 * the entries back through p's `freed`; returns how many notifications of
 * `tag` it counted. */
DCU_FN uint32_t dcu_eager_drain_from(dcuda_state_t *st, dcu_lanes_t lanes, int p, uint32_t tag)
{
    const dcuda_inbox_entry_t *ring = st->eager_rings + (size_t)p * DCUDA_EAGER_ENTRIES;
    uint32_t pos = st->eager_pos[p], start = pos, of_tag = 0;
    for (;;) {
        const dcuda_inbox_entry_t *e = &ring[pos & (DCUDA_EAGER_ENTRIES - 1u)];
        uint32_t w[DCUDA_INBOX_WORDS];
        if (!dcu_lanes_all(lanes, dcu_inbox_read(e, pos + 1u, w)))
            break;
        (void)dcu_inbox_acquire(e); /* the sender fenced before its stores */
        uint32_t n = w[2] & 0xffffu;
        if (n) {
            const dcuda_win_entry_t *mine =
                dcu_win_entry(st, DCU_COMM_WORLD, (int)(w[2] >> 16), st->world_rank);
            dcu_inbox_inline(
                lanes, (char *)(uintptr_t)mine->base + ((uint64_t)w[3] | (uint64_t)w[4] << 32), w,
                n);
        }
        of_tag += w[1] - 1u == tag;
        if (dcu_leader())
            st->consumed[w[1] - 1u] -= 1u;
        pos++;
    }
    if (pos != start && dcu_leader()) {
        dcuda_eager_ctl_t *c = dcu_eager_ctl_of(st->peer_notifs[p], dcu_process_size(st, p));
        st->eager_pos[p] = pos;
        dcu_st_after_loads(&c[st->world_rank].freed, pos);
    }
    dcu_lanes_sync(lanes); /* the payload is written, and every lane read eager_pos */
    return of_tag;
}

/* The same for every other process of the node. */
DCU_FN uint32_t dcu_eager_drain(dcuda_state_t *st, dcu_lanes_t lanes, uint32_t tag)
{
    uint32_t of_tag = 0;
    for (int p = 0; p < st->process_count; p++)
        if (p != st->process_index && st->peer_path[p] != DCUDA_PATH_NET)
            of_tag += dcu_eager_drain_from(st, lanes, p, tag);
    return of_tag;
}

#endif /* DCUDA_IMPL_ARRIVALS_H */
