/*
 * The proxy: serves the rank -> host command queue of one process's ranks
 * and answers each command in its sender's reply slot. Today the only
 * command is a ping (the round trip remote operations will take); the
 * remote path's puts and notifications will be served here, driving a
 * network manager (net/net.h).
 *
 * The proxy reads and writes the queue where the host reaches it (mapped
 * host memory); it is polled by the thread that runs the ranks.
 */
#ifndef DCU_PROXY_PROXY_H
#define DCU_PROXY_PROXY_H

#include <stdint.h>

#include "dcuda/dcuda_status.h"
#include "dcuda/shared/ring.h"

typedef struct dcu_proxy dcu_proxy_t;

/* The queue of `ranks` ranks: command entries and reply slots, host views. */
dcuda_status_t dcu_proxy_create(dcuda_cmd_t *entries, uint32_t capacity, dcuda_cmd_reply_t *replies,
                                int ranks, dcu_proxy_t **out);
void dcu_proxy_destroy(dcu_proxy_t *p);
/* Before a run: every entry free, every reply slot clear. */
void dcu_proxy_reset(dcu_proxy_t *p);
/* Serves every command that is ready, in ticket order; nonzero if any. */
int dcu_proxy_poll(dcu_proxy_t *p);

#endif /* DCU_PROXY_PROXY_H */
