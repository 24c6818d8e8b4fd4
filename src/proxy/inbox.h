/*
 * The proxy's side of its ranks' inboxes (layout and protocol in
 * dcuda/shared/ring.h): what arrives for a rank from the network goes into
 * its inbox, in arrival order, and the rank applies it while it waits. A
 * message that finds no room is held, in order, until the rank has made
 * room; a put too large for the inbox waits until the inbox is empty, then
 * the proxy writes its data into rank memory itself (a backend copy) and
 * sends only its notification through the inbox. The order of everything
 * for one rank is the order of arrival.
 */
#ifndef DCU_PROXY_INBOX_H
#define DCU_PROXY_INBOX_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "dcuda/dcuda_status.h"
#include "dcuda/shared/layout.h"

/* Largest put payload that travels through an inbox (larger ones are
 * copied by the proxy). At most half the ring, so it always fits. */
#define DCU_INBOX_EAGER_MAX 4096u

typedef struct dcu_inboxes dcu_inboxes_t;

/* The inboxes of `ranks` ranks (host views of the mapped memory);
 * rank memory is written through the backend. */
dcu_inboxes_t *dcu_inboxes_create(dcuda_inbox_entry_t *entries, DCUDA_ATOMIC(uint32_t) * tails,
                                  int ranks, const dcu_backend_ops_t *ops, dcu_backend_t *backend);
void dcu_inboxes_destroy(dcu_inboxes_t *in);

/* A put of `count` bytes for rank r at dst (rank memory, checked by the
 * caller), notified with tag + 1 when tag is nonzero; a notification alone
 * when data is NULL. DCUDA_OK once written or held. */
dcuda_status_t dcu_inbox_deliver(dcu_inboxes_t *in, int r, uint64_t dst, const void *data,
                                 uint32_t count, uint32_t tag);
/* Writes what was held where room was made; > 0 if it wrote anything,
 * < 0 if a copy failed. */
int dcu_inbox_retry(dcu_inboxes_t *in);
/* Where rank r's next message will start (entries written so far). */
uint32_t dcu_inbox_head(const dcu_inboxes_t *in, int r);
/* Messages held for lack of room. */
size_t dcu_inbox_held(const dcu_inboxes_t *in);
/* Ranks whose inbox holds entries they have not consumed yet. */
int dcu_inbox_unread(const dcu_inboxes_t *in);
/* After a run (the ranks returned): applies what they left unread and what
 * was held, data only, and marks every inbox consumed. */
dcuda_status_t dcu_inbox_settle(dcu_inboxes_t *in);

#endif /* DCU_PROXY_INBOX_H */
