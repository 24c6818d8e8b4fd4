/*
 * The proxy's receive buffers (see spares.h).
 */
#include "spares.h"

#include <stdlib.h>

#include "net/net.h"

struct dcu_kept {
    void *buf;
    int refs; /* held puts whose bytes lie in buf */
};

static void *pinned(dcu_spares_t *s)
{
    void *host = NULL, *rank = NULL;
    return s->ops->alloc_mapped(s->backend, DCU_NET_MAX_MESSAGE, &host, &rank) == DCUDA_OK ? host
                                                                                           : NULL;
}

dcuda_status_t dcu_spares_init(dcu_spares_t *s, const dcu_backend_ops_t *ops,
                               dcu_backend_t *backend, uint64_t credit)
{
    uint64_t chunks = (credit + DCU_NET_PUT_CHUNK - 1u) / DCU_NET_PUT_CHUNK;
    s->ops = ops;
    s->backend = backend;
    s->count = 0;
    s->capacity = chunks < 1u ? 1 : chunks > DCU_SPARES_MAX ? DCU_SPARES_MAX : (int)chunks;
    s->frame = NULL;
    s->kept = NULL;
    s->free = calloc((size_t)s->capacity, sizeof *s->free);
    return s->free ? DCUDA_OK : DCUDA_ERR_NO_MEMORY;
}

dcuda_status_t dcu_spares_fill(dcu_spares_t *s)
{
    for (; s->count < s->capacity; s->count++)
        if (!(s->free[s->count] = pinned(s)))
            return DCUDA_ERR_NO_MEMORY;
    return DCUDA_OK;
}

void dcu_spares_free(dcu_spares_t *s)
{
    while (s->count > 0)
        s->ops->free_mapped(s->backend, s->free[--s->count]);
    free(s->free);
    s->free = NULL;
    s->capacity = 0;
}

/* Every buffer is DCU_NET_MAX_MESSAGE long, so that any may be a spare. */
void *dcu_spares_alloc(void *arg, size_t size)
{
    dcu_spares_t *s = arg;
    if (size > DCU_NET_MAX_MESSAGE)
        return NULL;
    return s->count > 0 ? s->free[--s->count] : pinned(s);
}

void dcu_spares_put(void *arg, void *buf)
{
    dcu_spares_t *s = arg;
    if (s->count < s->capacity)
        s->free[s->count++] = buf;
    else
        s->ops->free_mapped(s->backend, buf);
}

void dcu_spares_begin(dcu_spares_t *s, void *frame)
{
    s->frame = frame;
    s->kept = NULL;
}

int dcu_spares_end(dcu_spares_t *s)
{
    int kept = s->kept != NULL && s->kept->refs > 0;
    if (s->kept && !kept) /* given back before the frame's end: the manager's again */
        free(s->kept);
    s->frame = NULL;
    s->kept = NULL;
    return kept;
}

void *dcu_spares_keep(void *arg)
{
    dcu_spares_t *s = arg;
    if (!s->frame)
        return NULL;
    if (!s->kept) { /* the manager's next receive takes a spare */
        if (s->count == 0 || !(s->kept = malloc(sizeof *s->kept)))
            return NULL;
        s->kept->buf = s->frame;
        s->kept->refs = 0;
    }
    s->kept->refs++;
    return s->kept;
}

void dcu_spares_unkeep(void *arg, void *token)
{
    dcu_spares_t *s = arg;
    dcu_kept_t *k = token;
    if (--k->refs > 0 || k == s->kept) /* the frame being delivered: its end decides */
        return;
    dcu_spares_put(arg, k->buf);
    free(k);
}
