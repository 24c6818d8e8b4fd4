/*
 * The proxy's side of its ranks' inboxes (layout and protocol in
 * dcuda/shared/ring.h): what arrives for a rank from the network goes into
 * its inbox, in arrival order, and the rank applies it while it waits. A
 * message that finds no room is held, in order, until the rank has made
 * room; a put too large for the inbox waits until the rank has applied
 * (and released) every put before it that came through the inbox, then
 * the proxy writes its data into rank memory itself (a backend copy) and
 * sends only its notification through the inbox: notifications still
 * unread do not hold it back. Where its bytes may stay in the buffer they
 * arrived in (a keeper), that copy runs on the backend's copy engine
 * while the proxy serves the rest; what follows for the same rank waits
 * until it is done. A put of up to `pieces_max` bytes goes through the
 * inbox instead, in pieces of equal size (each one message, at most
 * DCU_INBOX_PIECE_MAX) that the rank copies (a copy by the proxy costs a
 * round trip of about 10 us on a GPU before the rank may see it). The
 * order of everything for one rank is the order of arrival. Each message, once written, is
 * told to a callback with its sender and size (the proxy's
 * acknowledgements count what is in an inbox, not what is held). A read
 * of rank memory (a get) takes its turn in the same order.
 */
#ifndef DCU_PROXY_INBOX_H
#define DCU_PROXY_INBOX_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "dcuda/dcuda_status.h"
#include "dcuda/shared/layout.h"

/* Largest piece of a put that travels through an inbox as one message:
 * all but the ring's free entry (its payload wraps to the ring's start),
 * so a rank copies a put of up to 16,268 bytes after one look. */
#define DCU_INBOX_PIECE_MAX DCUDA_INBOX_MESSAGE_MAX

typedef struct dcu_inboxes dcu_inboxes_t;

/* A message of `bytes` from process `from` is written in an inbox. */
typedef void (*dcu_inbox_landed_fn)(void *arg, int from, uint32_t bytes);

/* The inboxes of `ranks` ranks (host views of the mapped memory);
 * rank memory is written through the backend. Puts of up to pieces_max
 * bytes go through the inbox (at least 4096), larger ones are copied. */
dcu_inboxes_t *dcu_inboxes_create(dcuda_inbox_entry_t *entries, DCUDA_ATOMIC(uint32_t) * tails,
                                  int ranks, const dcu_backend_ops_t *ops, dcu_backend_t *backend,
                                  dcu_inbox_landed_fn landed, void *landed_arg,
                                  uint32_t pieces_max);
void dcu_inboxes_destroy(dcu_inboxes_t *in);

/* What arrived: a message of `bytes` from process `from`. */
typedef struct dcu_inbox_source {
    int from;
    uint32_t bytes;
} dcu_inbox_source_t;

/* A put of `count` bytes for rank r at dst (rank memory, checked by the
 * caller), notified with tag + 1 when tag is nonzero; a notification alone
 * when data is NULL. DCUDA_OK once written (`landed` was told) or held
 * (it will be told once written). */
dcuda_status_t dcu_inbox_deliver(dcu_inboxes_t *in, int r, uint64_t dst, const void *data,
                                 uint32_t count, uint32_t tag, dcu_inbox_source_t src);
/* A read of rank r's memory (a get from another process), `size` bytes
 * of request that `serve` (dcu_inboxes_on_read) is called with once its
 * turn comes: after every message for r before it, once r has applied
 * and released every put before it that came through its inbox (a SYNC
 * asks for that, as before a large put's copy). `serve` returns nonzero
 * once the read is done, 0 to be called again later (it keeps its
 * progress in the request). Messages for r after it wait until it is
 * done, so the read sees exactly what arrived before it. `landed` is told
 * of it when done, with src.bytes (0 is told too). DCUDA_OK once done or
 * held. */
dcuda_status_t dcu_inbox_read(dcu_inboxes_t *in, int r, const void *req, uint32_t size,
                              dcu_inbox_source_t src);
typedef int (*dcu_inbox_serve_fn)(void *arg, int r, void *req, uint32_t size);
void dcu_inboxes_on_read(dcu_inboxes_t *in, dcu_inbox_serve_fn serve, void *arg);
/* A remote atomic for a rank (ATOMIC, shared/ring.h), and what its
 * answer names. */
typedef struct dcu_inbox_atomic {
    uint32_t op, width; /* dcuda_atomic_op_t; 4 or 8 bytes */
    uint32_t note;      /* tag + 1 of the notification after it (0: none) */
    uint64_t operand, compare;
    uint64_t token; /* the caller's, told with the answer */
} dcu_inbox_atomic_t;
/* The answer of an atomic from process `from` on rank r's word: DCUDA_OK
 * and the word's value before, or DCUDA_ERR_INVALID_ARG (the word was not
 * aligned to its width: nothing done). */
typedef void (*dcu_inbox_answer_fn)(void *arg, int r, int from, uint64_t token,
                                    dcuda_status_t status, uint64_t value);
void dcu_inboxes_on_answer(dcu_inboxes_t *in, dcu_inbox_answer_fn answer, void *arg);
/* A remote atomic on rank r's word at dst (rank memory, inside its part),
 * in order with every message for r: written into its inbox (or held
 * until there is room), applied by the rank while it waits, answered once
 * the rank consumed it (dcu_inbox_answers). A word not aligned to its
 * width asks for no notification (the rank refuses it). `landed` is told
 * once it is written. DCUDA_OK once written or held. */
dcuda_status_t dcu_inbox_atomic(dcu_inboxes_t *in, int r, uint64_t dst, const dcu_inbox_atomic_t *a,
                                dcu_inbox_source_t src);
/* The answers of the atomics the ranks consumed since the last look, told
 * (`answer`); > 0 if any was. Until its answer is read, an atomic's
 * entries are not written again. */
int dcu_inbox_answers(dcu_inboxes_t *in);
/* Atomics written into inboxes and not yet answered. */
size_t dcu_inbox_answers_due(const dcu_inboxes_t *in);
/* Who may keep a large put's bytes where they arrived (the network
 * manager's receive buffer) while the backend writes them into rank
 * memory: keep, asked during dcu_inbox_deliver, returns a token when the
 * bytes stay valid until unkeep(token), or NULL (they are then copied if
 * they must wait, and written with a blocking copy). Without a keeper
 * every large put is written with a blocking copy. */
typedef struct dcu_inbox_keeper {
    void *(*keep)(void *arg);
    void (*unkeep)(void *arg, void *token);
    void *arg;
} dcu_inbox_keeper_t;
void dcu_inboxes_on_keep(dcu_inboxes_t *in, const dcu_inbox_keeper_t *keeper);
/* The backend's writes in flight are counted in *writes, which others who
 * write through the same backend count theirs in too: together they keep
 * at most DCU_BACKEND_WRITES in flight (the inbox's own count otherwise). */
void dcu_inboxes_share_writes(dcu_inboxes_t *in, int *writes);
/* Writes what was held where room was made (and serves reads whose turn
 * came); > 0 if it wrote anything,
 * < 0 if a copy failed. */
int dcu_inbox_retry(dcu_inboxes_t *in);
/* Where rank r's next message will start (entries written so far). */
uint32_t dcu_inbox_head(const dcu_inboxes_t *in, int r);
/* Messages held for lack of room (each piece of a put in pieces counts;
 * reads waiting for their turn too),
 * and their bytes (message sizes, counted on a put's last piece). */
size_t dcu_inbox_held(const dcu_inboxes_t *in);
uint64_t dcu_inbox_held_bytes(const dcu_inboxes_t *in);
/* Ranks whose inbox holds entries they have not consumed yet. */
int dcu_inbox_unread(const dcu_inboxes_t *in);
/* After a run (the ranks returned): applies what they left unread and what
 * was held, data only (a read still held is dropped, and so is an atomic,
 * applied or not, whose answer was not told: its asker's run has ended
 * too, as the ranks wait in their closing barrier for each other's
 * atomics), and marks every inbox consumed. */
dcuda_status_t dcu_inbox_settle(dcu_inboxes_t *in);

#endif /* DCU_PROXY_INBOX_H */
