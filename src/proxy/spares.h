/*
 * The network manager's receive buffers, as the proxy lends and keeps
 * them: a large put's bytes stay in the buffer they arrived in while the
 * backend writes them into rank memory (the inbox's keeper, inbox.h), and
 * the manager receives into a spare meanwhile.
 *
 * Pinned memory is allocated and freed only outside runs: a pinned
 * allocation or free may wait for the device, where the ranks' kernel runs
 * until the run ends. So the spares are made when the network path opens,
 * a buffer is kept only while a spare is left to take its place, kept
 * buffers come back as spares, and only what the manager gives back at
 * its close (or a full pool) is freed.
 */
#ifndef DCU_PROXY_SPARES_H
#define DCU_PROXY_SPARES_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "dcuda/dcuda_status.h"

/* Spare receive buffers (DCU_NET_MAX_MESSAGE each): as many as one
 * sender's credit (NET_CREDIT, 4 MiB by default: 4) lets chunks of large
 * puts arrive while the first is written, at most DCU_SPARES_MAX. */
#define DCU_SPARES_MAX 64

typedef struct dcu_kept dcu_kept_t;

typedef struct dcu_spares {
    const dcu_backend_ops_t *ops;
    dcu_backend_t *backend;
    void **free;
    int count, capacity;
    void *frame;      /* the receive buffer being delivered, or NULL */
    dcu_kept_t *kept; /* its token, once something in it is kept */
} dcu_spares_t;

/* No spares yet: buffers come from the backend's pinned memory. `credit`:
 * the bytes one sender may have on their way (NET_CREDIT). */
dcuda_status_t dcu_spares_init(dcu_spares_t *s, const dcu_backend_ops_t *ops,
                               dcu_backend_t *backend, uint64_t credit);
/* Makes the spares (after the manager opened: its first buffers are its own). */
dcuda_status_t dcu_spares_fill(dcu_spares_t *s);
/* Frees the spares (after the manager closed and the inboxes gave back
 * what they kept). */
void dcu_spares_free(dcu_spares_t *s);

/* The manager's buffer memory (dcu_net_mem_t, arg the spares): a spare
 * when there is one, else a new pinned buffer; a buffer given back becomes
 * a spare while there are fewer than made, else it is freed. */
void *dcu_spares_alloc(void *arg, size_t size);
void dcu_spares_put(void *arg, void *buf);

/* A receive buffer is delivered between begin and end; end returns
 * nonzero when something in it was kept (the manager must not reuse it). */
void dcu_spares_begin(dcu_spares_t *s, void *frame);
int dcu_spares_end(dcu_spares_t *s);

/* The inbox's keeper (arg the spares): keeps the buffer being delivered
 * while a spare is left for the manager's next receive; a kept buffer
 * becomes a spare again when the last of its tokens is given back. */
void *dcu_spares_keep(void *arg);
void dcu_spares_unkeep(void *arg, void *token);

#endif /* DCU_PROXY_SPARES_H */
