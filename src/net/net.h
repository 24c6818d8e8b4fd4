/*
 * The network manager contract: how the proxy moves remote puts and
 * notifications between processes of different nodes through an existing
 * engine (MPI, UCX). One small ops table per manager, versioned so that a
 * manager built for another contract is refused.
 *
 * No manager is built yet: ranks reach only the processes of their own
 * node (bootstrap refuses several nodes). The remote path fills this room;
 * the shape below is what the proxy will drive:
 *   - messages: a byte string to process `peer` (a put's header and its
 *     payload, or a notification), delivered in order per pair of
 *     processes, completed through a callback once the buffer may be
 *     reused;
 *   - progress: polled by the proxy, delivering received messages.
 */
#ifndef DCU_NET_NET_H
#define DCU_NET_NET_H

#include <stddef.h>
#include <stdint.h>

#include "dcuda/dcuda_status.h"

#define DCU_NET_VERSION 1u

typedef struct dcu_net dcu_net_t;

/* A send's buffer may be reused (or the send failed: status). */
typedef void (*dcu_net_sent_fn)(void *arg, dcuda_status_t status);
/* A message from process `peer` arrived; `data` is valid during the call. */
typedef void (*dcu_net_recv_fn)(void *arg, int peer, const void *data, size_t size);

typedef struct dcu_net_ops {
    uint32_t version; /* DCU_NET_VERSION */
    const char *name;
    dcuda_status_t (*open)(dcu_net_recv_fn recv, void *recv_arg, dcu_net_t **out);
    void (*close)(dcu_net_t *n);
    dcuda_status_t (*send)(dcu_net_t *n, int peer, const void *data, size_t size,
                           dcu_net_sent_fn sent, void *sent_arg);
    /* Completes sends and delivers arrivals; nonzero if it did anything. */
    int (*progress)(dcu_net_t *n);
} dcu_net_ops_t;

#endif /* DCU_NET_NET_H */
