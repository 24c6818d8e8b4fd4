/*
 * The window parts of ranks on the network path (see parts.h).
 */
#include "parts.h"

#include <stdlib.h>
#include <string.h>

#define PARTS_FIRST_CAPACITY 64u

static size_t hash(uint32_t slot, int32_t rank, size_t capacity)
{
    uint64_t k = ((uint64_t)slot << 32) ^ (uint32_t)rank;
    k *= 0x9e3779b97f4a7c15ull;
    return (size_t)(k >> 32) & (capacity - 1u);
}

static dcu_part_entry_t *empty_table(size_t capacity)
{
    dcu_part_entry_t *t = malloc(capacity * sizeof *t);
    if (t)
        for (size_t i = 0; i < capacity; i++)
            t[i].rank = -1;
    return t;
}

dcuda_status_t dcu_parts_init(dcu_parts_t *c, int ranks)
{
    memset(c, 0, sizeof *c);
    c->ranks = ranks;
    c->capacity = PARTS_FIRST_CAPACITY;
    c->table = empty_table(c->capacity);
    c->asks = calloc((size_t)ranks, sizeof *c->asks);
    return c->table && c->asks ? DCUDA_OK : DCUDA_ERR_NO_MEMORY;
}

void dcu_parts_free(dcu_parts_t *c)
{
    free(c->table);
    free(c->asks);
    memset(c, 0, sizeof *c);
}

void dcu_parts_reset(dcu_parts_t *c)
{
    for (size_t i = 0; i < c->capacity; i++)
        c->table[i].rank = -1;
    c->count = 0;
    memset(c->epoch, 0, sizeof c->epoch);
    memset(c->asks, 0, (size_t)c->ranks * sizeof *c->asks);
    c->asking = 0;
}

void dcu_parts_new_window(dcu_parts_t *c, uint32_t slot)
{
    if (slot < DCUDA_WIN_TABLE_SLOTS)
        c->epoch[slot]++;
}

/* The entry of (slot, rank), or the empty one where it would go. */
static dcu_part_entry_t *probe(const dcu_parts_t *c, uint32_t slot, int32_t rank)
{
    size_t i = hash(slot, rank, c->capacity);
    while (c->table[i].rank >= 0 && (c->table[i].rank != rank || c->table[i].slot != slot))
        i = (i + 1u) & (c->capacity - 1u);
    return &c->table[i];
}

int dcu_parts_find(const dcu_parts_t *c, uint32_t slot, int32_t rank, uint64_t *size)
{
    if (slot >= DCUDA_WIN_TABLE_SLOTS || rank < 0)
        return 0;
    const dcu_part_entry_t *e = probe(c, slot, rank);
    if (e->rank < 0 || e->epoch != c->epoch[slot])
        return 0;
    *size = e->size;
    return 1;
}

/* Twice the entries, every entry put again. */
static dcuda_status_t grow(dcu_parts_t *c)
{
    dcu_parts_t bigger = *c;
    bigger.capacity = c->capacity * 2u;
    if (!(bigger.table = empty_table(bigger.capacity)))
        return DCUDA_ERR_NO_MEMORY;
    for (size_t i = 0; i < c->capacity; i++)
        if (c->table[i].rank >= 0)
            *probe(&bigger, c->table[i].slot, c->table[i].rank) = c->table[i];
    free(c->table);
    c->table = bigger.table;
    c->capacity = bigger.capacity;
    return DCUDA_OK;
}

dcuda_status_t dcu_parts_store(dcu_parts_t *c, uint32_t slot, int32_t rank, uint64_t size)
{
    if (slot >= DCUDA_WIN_TABLE_SLOTS || rank < 0)
        return DCUDA_ERR_INVALID_ARG;
    if ((c->count + 1u) * 2u > c->capacity && grow(c) != DCUDA_OK)
        return DCUDA_ERR_NO_MEMORY;
    dcu_part_entry_t *e = probe(c, slot, rank);
    if (e->rank < 0)
        c->count++;
    *e = (dcu_part_entry_t){ rank, slot, c->epoch[slot], 0u, size };
    return DCUDA_OK;
}

void dcu_parts_ask(dcu_parts_t *c, int r, uint32_t slot, int32_t rank, uint32_t tag)
{
    c->asking += !c->asks[r].waiting;
    c->asks[r] = (dcu_part_ask_t){ 1, rank, slot, tag };
}

const char *dcu_parts_answered(dcu_parts_t *c, int r, uint32_t slot, int32_t rank, uint32_t tag)
{
    if (r < 0 || r >= c->ranks)
        return "an answer for a rank of another process";
    dcu_part_ask_t *a = &c->asks[r];
    if (!a->waiting || a->slot != slot || a->rank != rank || a->tag != tag)
        return "an answer to a question this process did not ask";
    a->waiting = 0;
    c->asking--;
    return NULL;
}

int dcu_parts_next_waiting(dcu_parts_t *c, int *r, uint32_t *tag)
{
    for (int i = 0; i < c->ranks && c->asking > 0; i++)
        if (c->asks[i].waiting) {
            c->asks[i].waiting = 0;
            c->asking--;
            *r = i;
            *tag = c->asks[i].tag;
            return 1;
        }
    return 0;
}
