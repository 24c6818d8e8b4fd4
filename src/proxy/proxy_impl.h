/*
 * The proxy's state, shared by its files (internal: proxy.h is what the
 * rest of the runtime sees), and the functions they lend each other.
 *
 * The files call down only, never in a loop (ctest structure.call_loops):
 * proxy_core.c (failure, news, answers, where the pinned buffers are) is
 * beneath everything; send.c (making and sending messages, frames, credit,
 * acknowledgements) calls only it and the files of counts and formats
 * below (netbar.c, frames.c, wire.c); the services (bulk.c: the bytes of
 * large puts and of gets' answers through the pinned buffers, read by the
 * backend's copy engine; part_msgs.c; host_reqs.c, host_serve.c;
 * detector.c: the deadlock detector's rounds; beats.c: the beats along its
 * tree; rma.c; barrier.c: WORLD barriers and fences; control.c: ABORT
 * and LEFT; atomics.c: remote atomics) call those and each other downward; proxy.c, on top, keeps
 * their table (service.h), serves the command queue, hands each command
 * and each message to the service of its kind and polls the services
 * once a pass.
 */
#ifndef DCU_PROXY_IMPL_H
#define DCU_PROXY_IMPL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "command.h"
#include "fence.h"
#include "frames.h"
#include "inbox.h"
#include "netbar.h"
#include "parts.h"
#include "proxy.h"
#include "spares.h"
#include "util/msg.h"
#include "util/ring.h"
#include "wire.h"

/* Pinned buffers a large put streams through (DCU_NET_PUT_CHUNK each):
 * reads of rank memory fill them while the manager sends the ones before. */
#define PROXY_STAGING 4
/* Pinned buffers the answers of gets are read into, a chunk each: with the
 * staging's, at most DCU_BACKEND_READS reads are in flight. */
#define PROXY_GET_BUFFERS (DCU_BACKEND_READS - PROXY_STAGING)
#define PROXY_BUFFERS (PROXY_STAGING + PROXY_GET_BUFFERS)

/* A PUT_READ its rank waits on: its source is read chunk by chunk into the
 * staging buffers, each sent as a PUT message once read. */
typedef struct read_job {
    dcuda_cmd_t cmd;
    int q;           /* the target's process */
    uint64_t issued; /* bytes whose read started */
    uint64_t sent;   /* bytes handed to the manager */
} read_job_t;

enum { STAGING_FREE = 0, STAGING_READING, STAGING_SENDING };

/* A get another process asked of one of my ranks, as its turn waits in
 * that rank's inbox (inbox.h): the asker, the bytes, where they go, and
 * how many were sent back so far. */
typedef struct get_request {
    int32_t asker; /* WORLD rank */
    int32_t from;  /* its process */
    uint64_t src;  /* the bytes, in rank memory */
    uint64_t count;
    uint32_t tag;    /* tag + 1 of the answer's notification */
    uint32_t slot;   /* the asker's part that the answer writes ... */
    uint64_t offset; /* ... from here */
    uint64_t done;   /* bytes read and sent back */
    int32_t buffer;  /* the get buffer its next chunk is being read into, or -1 */
} get_request_t;

typedef struct staging {
    dcu_wire_header_t *msg; /* header and DCU_NET_PUT_CHUNK bytes of body */
    uint64_t ticket;        /* of its read */
    int state;
    int job; /* index into jobs of the put it carries */
} staging_t;

struct dcu_proxy {
    dcu_proxy_config_t c;
    dcu_ring_reader_t queue;
    dcu_cmd_limits_t cmd_limits; /* what its commands are checked against */
    int world_size, world_first;
    /* The network path. */
    dcu_net_t *net;
    dcu_wire_limits_t limits;
    dcu_inboxes_t *inboxes;   /* what arrives for my ranks */
    dcuda_win_entry_t *parts; /* [table slots][ranks]: my ranks' parts of windows */
    uint64_t parts_known[(DCUDA_WIN_TABLE_SLOTS + 63) / 64]; /* bit per table slot */
    dcu_parts_t remote;          /* parts of other processes' ranks, asked of their owners */
    uint64_t cancel_seen_ns;     /* when asks first met this run's cancel (0: not yet) */
    dcu_netbar_t bar;            /* the WORLD barriers of this run */
    dcu_fences_t fences;         /* fences waiting for acknowledgements (fence.h) */
    uint32_t *atomic_waits;      /* [ranks]: the reply tag of a rank's atomic on its way to
                                  * another process (0: none; atomics.c) */
    int atomics_waiting;         /* ranks with one */
    dcu_frames_t frames;         /* small messages packed a target, sent after each pass */
    dcu_wire_header_t *in_frame; /* the message made in a frame and not yet sent (or NULL) */
    dcu_spares_t spares; /* the manager's receive buffers, kept while large puts are written */
    /* Large puts read from rank memory: a ring of jobs (one per rank at
     * most, since each waits for its answer), the one being read, and the
     * staging ring, filled at `fill` and sent from `drain` in order. */
    read_job_t *jobs;
    int job_head, job_count, job_reading; /* reading: counted from job_head */
    staging_t staging[PROXY_STAGING];
    int fill, drain;
    staging_t gets[PROXY_GET_BUFFERS]; /* answers of gets, read from rank memory */
    uint32_t run;                      /* runs begun (dcu_proxy_reset) */
    char aborted[256];                 /* why a process of another node ended this run */
    char left[256];                    /* how a process of another node left this run */
    char failure[256];
    /* RMA from the host (host_reqs.c): requests handed over by the host
     * runtime's thread (pushed, newest first, taken all at once); those
     * taken, oldest first, until answered (the proxy's thread only), with
     * the next id, the bytes of chunks sent and not yet answered, and
     * whether the run's end closed the proxy to more. */
    _Atomic(dcu_host_rma_t *) host_queue;
    dcu_host_rma_t *host_pending, *host_last;
    uint64_t host_ids, host_in_flight;
    int host_closed;
    /* The chunks of hosts' requests for my ranks, in arrival order, until
     * answered (host_serve.c). */
    struct host_chunk *chunks_first, *chunks_last;
    int writes;      /* backend writes in flight: the inboxes' and the chunks' */
    unsigned spread; /* bit per text (1 ABORT, 2 LEFT) told to my tree neighbours this run */
    /* Messages of this run that move ranks on (puts, notifications,
     * barriers), sent and received: the deadlock detector's counts. */
    uint64_t sent, received;
    uint64_t unacked; /* bytes told landed since the last acknowledgements */
    /* Beats (beats.c alone; set up each run by dcu_proxy_beats_reset): my
     * neighbours in the detector's tree (parent, children), when each was
     * last heard from this run and whether it said its ranks are done;
     * when I last beat. */
    struct {
        int q;
        uint64_t heard_ns;
        int done;
    } nb[3];
    int nbs;
    uint64_t beat_ns;
    uint64_t listened_ns; /* my last look for beats (0: none yet this run) */
    /* The deadlock detector's rounds over the network (detector.c; cleared
     * by dcu_proxy_reset, and send.c reads `found`: every message after it
     * carries DCU_WIRE_ENDED): a tree of the processes (parent
     * (i - 1) / 2, children 2i + 1 and 2i + 2), process 0 its root, which
     * asks. */
    struct {
        uint32_t asked;     /* the round asked of this process (0: none yet) */
        int mine_in;        /* my own answer to it is in `sum` */
        int replies;        /* children that answered it */
        dcu_quiet_t sum;    /* my answer folded with my children's */
        uint32_t collected; /* root: the round whose answer is complete */
        dcu_quiet_t result; /* root: that answer */
        int found;          /* the root found this run deadlocked */
        uint64_t asked_ns;  /* when the round was asked (stalled children) */
        int answered_by[2]; /* which children answered it */
    } dl;
};

/* execute's answer for a command it answered itself or will answer later
 * (a PUT_READ once read, a PART once its owner told it, a FENCE once
 * acknowledged). */
#define PROXY_LATER 1

/* ---- proxy_core.c: beneath every other file ---- */

/* News for another thread (dcu_proxy_config_t.news): sets bits of it. */
void dcu_proxy_tell(dcu_proxy_t *p, int news);
/* The proxy cannot go on: says why, once (see proxy_core.c). */
void dcu_proxy_fail(dcu_proxy_t *p, const char *fmt, ...) DCU_MSG_FMT(2, 3);
/* Answers command c of a rank that waits for it. */
void dcu_proxy_answer(dcu_proxy_t *p, const dcuda_cmd_t *c, dcuda_status_t status);
/* Answers device rank r's command of reply tag `tag`, with a value. */
void dcu_proxy_answer_value(dcu_proxy_t *p, int r, uint32_t tag, dcuda_status_t status,
                            uint64_t value);
/* Whether the ranks that wait for an answer from another process (a
 * window part, a fence) must stop waiting: DCUDA_OK while they wait on,
 * else the status to answer them with (see proxy_core.c). */
dcuda_status_t dcu_proxy_asks_end(dcu_proxy_t *p);
/* Pinned buffer i of PROXY_BUFFERS (the staging ring's, then the gets'),
 * and the one that holds msg (NULL: a message of its own). */
staging_t *dcu_proxy_buffer_at(dcu_proxy_t *p, int i);
staging_t *dcu_proxy_staging_of(dcu_proxy_t *p, const void *msg);

/* ---- send.c: beneath every file but proxy_core.c ---- */

/* A message's size as its credit counts it, and what a credited message
 * counts (a GET: nothing). */
uint32_t dcu_proxy_message_bytes(const dcu_wire_header_t *h);
uint32_t dcu_proxy_credit_bytes(const dcu_wire_header_t *h);
/* Does a message of `type` move ranks on (the deadlock detector's
 * counts)? Is it acknowledged by its receiver and held to its credit? */
int dcu_proxy_moves_ranks(uint8_t type);
int dcu_proxy_credited(uint8_t type);
/* May a message of `bytes` go to process q now (its credit)? */
int dcu_proxy_credit_allows(const dcu_proxy_t *p, int q, uint64_t bytes);
/* A message of `type` with a body of `length` bytes for process q, its
 * header filled: written in place in q's frame when small, else of its
 * own (malloc); NULL once the proxy failed. The caller fills the rest and
 * hands it to dcu_proxy_send_to(p, q, ...) before it makes another. */
dcu_wire_header_t *dcu_proxy_message_to(dcu_proxy_t *p, int q, uint8_t type, size_t length);
/* Makes h the header of a PUT chunk (a large put's or a get's answer). */
void dcu_proxy_put_header(const dcu_proxy_t *p, dcu_wire_header_t *h, int32_t src_rank,
                          int32_t dst_rank, uint32_t slot, uint64_t offset, uint64_t n,
                          uint32_t tag);
/* A message without a body (ROUND, ACK, BEAT) to process q. */
void dcu_proxy_send_bare(dcu_proxy_t *p, int q, uint8_t type, uint32_t epoch, uint32_t tag,
                         uint64_t count);
/* My neighbours in the detector's tree into out; how many. */
int dcu_proxy_tree_neighbours(const dcu_proxy_t *p, int out[3]);
/* A text of `type` (ABORT, LEFT) to every process, along the tree (not
 * back to `from`; -1: none), once a run and type. */
void dcu_proxy_spread(dcu_proxy_t *p, uint8_t type, const char *why, int from);
/* The network manager failed (`what`: in a send, or in its progress). */
void dcu_proxy_net_failed(dcu_proxy_t *p, const char *what);
/* Hands a frame, or a message that goes alone, to the manager (frames.h's
 * send, arg the proxy). */
dcuda_status_t dcu_proxy_send_now(void *arg, int q, void *buf, size_t size);
/* Sends message h (the proxy's from now on) to process q. */
void dcu_proxy_send_to(dcu_proxy_t *p, int q, dcu_wire_header_t *h);
/* Sends every open frame. */
void dcu_proxy_send_frames(dcu_proxy_t *p);
/* The manager is done with message msg (dcu_net_mem_t, arg the proxy). */
void dcu_proxy_release_message(void *arg, void *msg);
/* A message from process `from` is in an inbox (inbox.h's landed, arg
 * the proxy); the acknowledgements owed, sent. */
void dcu_proxy_landed(void *arg, int from, uint32_t bytes);
void dcu_proxy_send_acks(dcu_proxy_t *p);

/* ---- barrier.c ---- */

/* Moves the WORLD barrier my device is in on: sends the rounds due, and
 * completes it when it can (its ranks then leave it). */
void dcu_proxy_advance_barriers(dcu_proxy_t *p);

/* ---- detector.c ---- */

/* A detector's message from process `from` (PROBE from my parent, REPLY
 * from a child, FOUND); one out of turn fails the proxy. (Any message
 * marked DCU_WIRE_ENDED declares the deadlock: dcu_proxy_dl_declare.) */
void dcu_proxy_dl_receive(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body);

/* ---- beats.c ---- */

/* A message from process `from` arrived: a beat when it is my neighbour. */
void dcu_proxy_heard(dcu_proxy_t *p, int from, const dcu_wire_header_t *h);
/* A run begins: my neighbours, each heard from now. */
void dcu_proxy_beats_reset(dcu_proxy_t *p);
/* A pass's step: beats my neighbours when due, names one silent too long
 * (its LEFT spread, the run cancelled). */
void dcu_proxy_beats(dcu_proxy_t *p);

/* ---- part_msgs.c ---- */

/* Does process q hold WORLD rank `rank`? */
int dcu_proxy_holds(const dcu_proxy_t *p, int q, int32_t rank);
/* My rank's part of the window that message h names, checked (NULL once
 * the proxy failed); its device rank in *rank. */
const dcuda_win_entry_t *dcu_proxy_part_of(dcu_proxy_t *p, const dcu_wire_header_t *h,
                                           const char *what, int *rank);
/* Reads my ranks first .. first + count - 1's parts of window `slot`; 0
 * once the proxy failed. */
int dcu_proxy_read_parts(dcu_proxy_t *p, uint32_t slot, int first, int count);
/* The library's parts of my ranks, known for the run (part_msgs.c). */
void dcu_proxy_know_lib(dcu_proxy_t *p);
/* ---- host_reqs.c ---- */

/* Ends every request with `status` (the run's end, a failure). */
void dcu_proxy_host_end_all(dcu_proxy_t *p, dcuda_status_t status);

/* ---- host_serve.c ---- */

/* A chunk of a host's request for one of my ranks (HOST_PUT, HOST_GET from
 * process `from`; body: its dcu_wire_host_t, then a put's bytes, in the
 * receive buffer being delivered). */
void dcu_proxy_serve_host_chunk(dcu_proxy_t *p, int from, const dcu_wire_header_t *h,
                                const char *body);
/* Moves the chunks on (copies done, next copies started): > 0 if any did. */
int dcu_proxy_host_chunks_advance(dcu_proxy_t *p);
/* Serves every chunk still here now, waiting for its copies (the run's
 * end; a chunk that finds no receive buffer to keep its bytes in). */
void dcu_proxy_host_chunks_settle(dcu_proxy_t *p);

/* ---- atomics.c ---- */

/* An atomic's answer from one of my ranks' inboxes (inbox.h's answer, arg
 * the proxy): sent back to its asker. */
void dcu_proxy_atomic_answered(void *arg, int r, int from, uint64_t token, dcuda_status_t status,
                               uint64_t value);

/* ---- bulk.c ---- */

/* A free get buffer (its index in p->gets; the ranks' gets and the hosts'
 * share them), or -1. */
int dcu_proxy_free_get_buffer(const dcu_proxy_t *p);
/* A get another process asked of one of my ranks, served in its turn
 * (the inboxes' on_read, arg the proxy). */
int dcu_proxy_serve_get(void *arg, int r, void *data, uint32_t size);
/* Message memory (dcu_net_mem_t, arg the proxy): pinned buffers of the
 * backend, and the manager's receive buffers (spares.h); what the manager
 * gives back once sent: dcu_proxy_release_message (send.c). */
void *dcu_proxy_pinned_alloc(void *arg, size_t size);
void dcu_proxy_pinned_free(void *arg, void *buf);
void *dcu_proxy_receive_buffer(void *arg, size_t size);
void dcu_proxy_receive_buffer_free(void *arg, void *buf);

#endif /* DCU_PROXY_IMPL_H */
