/*
 * The consumer side of the rings (protocol in dcuda/shared/ring.h): the
 * host runtime's monitor drains the log ring with it, the proxy the command
 * ring. One reader per ring; it reads the entries where the host reaches
 * them.
 */
#ifndef DCU_UTIL_RING_H
#define DCU_UTIL_RING_H

#include <stddef.h>
#include <stdint.h>

typedef struct dcu_ring_reader {
    char *entries;     /* [capacity] entries of entry_size bytes, host view */
    uint32_t capacity; /* a power of two */
    uint32_t entry_size;
    uint32_t tail; /* next ticket to consume */
} dcu_ring_reader_t;

void dcu_ring_reader_init(dcu_ring_reader_t *r, void *entries, uint32_t capacity,
                          uint32_t entry_size);
/* Before a run: every entry free for lap 0, and the reader at ticket 0
 * (the ring's head is reset with the rank tables). */
void dcu_ring_reset(dcu_ring_reader_t *r);
/* The next entry once its producer has published it, else NULL. */
void *dcu_ring_next(dcu_ring_reader_t *r);
/* Hands the entry dcu_ring_next returned to its next lap and moves on. */
void dcu_ring_done(dcu_ring_reader_t *r, void *entry);
/* The same for the n entries from the one dcu_ring_next returned (a
 * command and its payload entries): each gets its next lap's seq. */
void dcu_ring_done_n(dcu_ring_reader_t *r, uint32_t n);

#endif /* DCU_UTIL_RING_H */
