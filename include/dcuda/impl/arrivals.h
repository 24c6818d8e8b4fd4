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
 * inbox header's words 5..7, to dst (each byte chosen by comparisons, so
 * that w stays in registers). */
DCU_FN void dcu_inbox_inline(dcu_lanes_t lanes, char *dst, const uint32_t *w, uint32_t n)
{
    for (uint32_t j = (uint32_t)dcu_thread(); j < n; j += (uint32_t)dcu_lanes_count(lanes)) {
        uint32_t word = j < 4u ? w[5] : j < 8u ? w[6] : w[7];
        dst[j] = (char)(word >> (8u * (j % 4u)));
    }
}

/* The lanes of `lanes`: the payload past a put's first 12 bytes, from the
 * entries after its first at inbox position pos, to dst: `n` bytes,
 * continued from the ring's start where they reach its end. */
DCU_FN void dcu_inbox_payload(const dcuda_state_t *st, dcu_lanes_t lanes, char *dst, uint32_t pos,
                              uint32_t n)
{
    const uint32_t ring = DCUDA_INBOX_ENTRIES * (uint32_t)sizeof(dcuda_inbox_entry_t);
    uint32_t at = ((pos + 1u) & (DCUDA_INBOX_ENTRIES - 1u)) * (uint32_t)sizeof(dcuda_inbox_entry_t);
    for (uint32_t done = 0; done < n;) { /* at most twice */
        uint32_t part = n - done < ring - at ? n - done : ring - at;
        dcu_lanes_copy(lanes, dst + done, (const char *)st->inbox + at, part);
        done += part;
        at = 0;
    }
}

/* The lanes of `lanes`: is a message at the rank's next inbox position?
 * Its first entry's data halves go to w. Inline: the wait loop's turn. */
DCU_FN int dcu_inbox_look(const dcuda_state_t *st, dcu_lanes_t lanes, uint32_t w[8])
{
    uint32_t pos = st->inbox_pos;
    return dcu_inbox_read(&st->inbox[pos & (DCUDA_INBOX_ENTRIES - 1u)], pos + 1u, lanes, w);
}

/* Leader: the ATOMIC at inbox position pos (first entry's data halves
 * w; acquired) applied to its word, system-scope (the word's other
 * atomics may come from peer GPUs), and answered in its second entry
 * (shared/ring.h), which the count published after it releases. A word
 * not aligned to its width is refused (the proxy, which checks the same,
 * then asked for no notification). */
DCU_FN_COLD void dcu_inbox_atomic(const dcuda_state_t *st, uint32_t pos, const uint32_t *w)
{
    volatile uint32_t *two =
        (volatile uint32_t *)(uintptr_t)&st->inbox[(pos + 1u) & (DCUDA_INBOX_ENTRIES - 1u)];
    const uint64_t width = (w[2] >> 8) & 0xffu;
    char *word = (char *)(uintptr_t)((uint64_t)w[3] | (uint64_t)w[4] << 32);
    if ((width != 4u && width != 8u) || (uintptr_t)word % width) {
        two[4] = DCUDA_INBOX_REFUSED;
        return;
    }
    const uint64_t operand = (uint64_t)w[5] | (uint64_t)w[6] << 32;
    const uint64_t compare = (uint64_t)two[0] | (uint64_t)two[1] << 32;
    const uint64_t old = dcu_atomic_rmw(word, (int)(w[2] & 0xffu), width, operand, compare, 1);
    two[2] = (uint32_t)old;
    two[3] = (uint32_t)(old >> 32);
    two[4] = DCUDA_INBOX_DONE;
}

/* What a wait watches while it applies its inbox: its counter, and how
 * many notifications were counted on it (leader). The counter's value
 * read before, plus these, is a value it has reached: the wait may end
 * without reading it again. */
typedef struct dcu_watch {
    const dcu_u32a_t *counter;
    uint32_t counted;
} dcu_watch_t;

/* The lanes of `lanes`: applies, in order, the message whose first entry
 * dcu_inbox_look read (w) and those after it until `most` of them counted
 * a notification (messages that count none, such as the pieces of a put
 * before its last, cost no turn of the wait each): a put's data into
 * the rank's memory, then its notification, counted on the rank's own
 * counter by an atomic add of its GPU (so it never races the adds of
 * other ranks; those on the watched counter, if any, are counted in
 * `watch`). Publishes how far it consumed (with release after a
 * SYNC); returns how many messages it applied. */
DCU_FN_COLD uint32_t dcu_inbox_apply(dcuda_state_t *st, dcu_lanes_t lanes, const uint32_t *first,
                                     uint32_t most, dcu_watch_t *watch)
{
    uint32_t pos = st->inbox_pos, done = 0, counted = 0, release = 0;
    uint32_t w[DCUDA_INBOX_WORDS];
    for (int i = 0; i < DCUDA_INBOX_WORDS; i++)
        w[i] = first[i];
    for (;;) {
        const dcuda_inbox_entry_t *e = &st->inbox[pos & (DCUDA_INBOX_ENTRIES - 1u)];
        uint32_t kind = DCUDA_INBOX_KIND_OF(w[0]), entries = DCUDA_INBOX_ENTRIES_OF(w[0]);
        if (DCUDA_INBOX_FLAGS_OF(w[0]) & DCUDA_INBOX_ACQUIRE)
            (void)dcu_inbox_acquire(e);
        if (kind == DCUDA_INBOX_PUT) {
            char *dst = (char *)(uintptr_t)((uint64_t)w[3] | (uint64_t)w[4] << 32);
            uint32_t n = w[2] < DCUDA_INBOX_INLINE ? w[2] : DCUDA_INBOX_INLINE;
            dcu_inbox_inline(lanes, dst, w, n);
            if (w[2] > n)
                dcu_inbox_payload(st, lanes, dst + n, pos, w[2] - n);
        }
        if (kind == DCUDA_INBOX_ATOMIC && dcu_leader())
            dcu_inbox_atomic(st, pos, w);
        dcu_lanes_sync(lanes); /* the data is written before it is counted */
        const int notifies = w[1] != 0u;
        if (dcu_leader() && notifies) { /* only this rank reads it */
            dcu_u32a_t *c = &st->notifs[st->device_rank].arrived[w[1] - 1u].ranks;
            dcu_add_u32(c, 1u);
            if (watch && c == watch->counter)
                watch->counted++;
        }
        release |= kind == DCUDA_INBOX_SYNC || kind == DCUDA_INBOX_ATOMIC;
        pos += entries ? entries : 1u;
        done++;
        counted += notifies ? 1u : 0u;
        if (counted >= most ||
            !dcu_inbox_read(&st->inbox[pos & (DCUDA_INBOX_ENTRIES - 1u)], pos + 1u, lanes, w))
            break;
    }
    if (dcu_leader()) {
        st->inbox_pos = pos;
        if (release) /* the proxy writes my memory next, or reads an answer */
            dcu_st_release(&st->ctx->inbox_tail[st->device_rank], pos, 1);
        else /* it reuses the entries next */
            dcu_st_after_loads(&st->ctx->inbox_tail[st->device_rank], pos);
    }
    dcu_lanes_sync(lanes); /* every lane read inbox_pos before the leader moved it */
    return done;
}

/* The lanes of `lanes`: applies up to `most` messages of the rank's inbox
 * (dcu_inbox_apply); how many. Out of line: only the wait loop's turn
 * reads the inbox inline (inlined at every caller, the read grew the
 * rank code's registers and slowed a same-device barrier). */
DCU_FN_COLD uint32_t dcu_inbox_drain(dcuda_state_t *st, dcu_lanes_t lanes, uint32_t most)
{
    uint32_t w[DCUDA_INBOX_WORDS];
    return dcu_inbox_look(st, lanes, w) ? dcu_inbox_apply(st, lanes, w, most, NULL) : 0u;
}

#endif /* DCUDA_IMPL_ARRIVALS_H */
