/*
 * The consumer side of the rings: an entry is ready when its seq (its first
 * field) is ticket + 1, and is handed back with seq = ticket + capacity.
 */
#include "ring.h"

#include <stdatomic.h>
#include <string.h>

static _Atomic uint32_t *seq_of(void *entry) { return (_Atomic uint32_t *)entry; }

void dcu_ring_reader_init(dcu_ring_reader_t *r, void *entries, uint32_t capacity,
                          uint32_t entry_size)
{
    r->entries = entries;
    r->capacity = capacity;
    r->entry_size = entry_size;
    r->tail = 0;
}

void dcu_ring_reset(dcu_ring_reader_t *r)
{
    memset(r->entries, 0, (size_t)r->capacity * r->entry_size);
    for (uint32_t i = 0; i < r->capacity; i++)
        atomic_store_explicit(seq_of(r->entries + (size_t)i * r->entry_size), i,
                              memory_order_relaxed);
    r->tail = 0;
}

void *dcu_ring_next(dcu_ring_reader_t *r)
{
    char *e = r->entries + (size_t)(r->tail & (r->capacity - 1)) * r->entry_size;
    if (atomic_load_explicit(seq_of(e), memory_order_acquire) != r->tail + 1)
        return NULL;
    return e;
}

void dcu_ring_done(dcu_ring_reader_t *r, void *entry)
{
    atomic_store_explicit(seq_of(entry), r->tail + r->capacity, memory_order_release);
    r->tail++;
}

void dcu_ring_done_n(dcu_ring_reader_t *r, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        char *e = r->entries + (size_t)((r->tail + i) & (r->capacity - 1)) * r->entry_size;
        atomic_store_explicit(seq_of(e), r->tail + i + r->capacity, memory_order_release);
    }
    r->tail += n;
}
