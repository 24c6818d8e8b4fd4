/*
 * Fences over the network path (see fence.h).
 */
#include "fence.h"

#include <stdlib.h>
#include <string.h>

dcuda_status_t dcu_fences_init(dcu_fences_t *f, int ranks)
{
    memset(f, 0, sizeof *f);
    f->capacity = ranks;
    f->fifo = calloc((size_t)ranks, sizeof *f->fifo);
    return f->fifo ? DCUDA_OK : DCUDA_ERR_NO_MEMORY;
}

void dcu_fences_free(dcu_fences_t *f)
{
    for (int i = 0; i < f->capacity; i++)
        free(f->fifo[i].owed);
    free(f->fifo);
    memset(f, 0, sizeof *f);
}

void dcu_fences_reset(dcu_fences_t *f) { f->head = f->count = 0; }

/* Are the first `sent` messages to process q in its inboxes (modulo
 * 2^32)? An acknowledgement's count alone does not say so: a message
 * held for inbox room lands after later ones. One sent while nothing
 * from me was held there does (dcu_netbar_cleared). */
static int reached(const dcu_netbar_t *b, int q, uint32_t sent)
{
    return (int32_t)(b->peer[q].clear - sent) >= 0;
}

/* Room in fence e for n processes (kept for the fences after it). */
static int make_room(dcu_fence_t *e, int n)
{
    if (n <= e->room)
        return 1;
    dcu_fence_owed_t *owed = realloc(e->owed, (size_t)n * sizeof *owed);
    if (!owed)
        return 0;
    e->owed = owed;
    e->room = n;
    return 1;
}

/* Processes that may owe an acknowledgement (netbar's unacked set). */
static int unacked_count(const dcu_netbar_t *b)
{
    int n = 0;
    for (int w = 0; w < b->words; w++)
        n += __builtin_popcountll(b->unacked[w]);
    return n;
}

const char *dcu_fences_take(dcu_fences_t *f, const dcu_netbar_t *b, int rank, uint32_t tag,
                            int *waits)
{
    *waits = 0;
    int n = unacked_count(b);
    if (n == 0)
        return NULL;
    if (f->count == f->capacity)
        return "more fences waiting than ranks (a rank sent one while its last waited)";
    dcu_fence_t *e = &f->fifo[(f->head + f->count) % f->capacity];
    if (!make_room(e, n))
        return "out of memory for a fence";
    e->count = 0;
    for (int w = 0; w < b->words; w++)
        for (uint64_t bits = b->unacked[w]; bits; bits &= bits - 1u) {
            int q = w * 64 + __builtin_ctzll(bits);
            if (b->peer[q].acked != b->peer[q].sent)
                e->owed[e->count++] = (dcu_fence_owed_t){ q, b->peer[q].sent };
        }
    if (e->count == 0)
        return NULL;
    e->rank = rank;
    e->tag = tag;
    f->count++;
    *waits = 1;
    return NULL;
}

/* Ends the oldest fence: its rank and tag. */
static void pop(dcu_fences_t *f, int *rank, uint32_t *tag)
{
    dcu_fence_t *e = &f->fifo[f->head];
    *rank = e->rank;
    *tag = e->tag;
    f->head = (f->head + 1) % f->capacity;
    f->count--;
}

int dcu_fences_done(dcu_fences_t *f, const dcu_netbar_t *b, int *rank, uint32_t *tag)
{
    if (f->count == 0)
        return 0;
    dcu_fence_t *e = &f->fifo[f->head];
    for (int i = 0; i < e->count;) /* those reached are dropped */
        if (reached(b, e->owed[i].q, e->owed[i].sent))
            e->owed[i] = e->owed[--e->count];
        else
            i++;
    if (e->count > 0)
        return 0;
    pop(f, rank, tag);
    return 1;
}

int dcu_fences_next_waiting(dcu_fences_t *f, int *rank, uint32_t *tag)
{
    if (f->count == 0)
        return 0;
    pop(f, rank, tag);
    return 1;
}
