/*
 * The messages proxies send each other through a network manager: a fixed
 * header (magic, version, type, lengths, ranks) and a body. Nothing in a
 * message is trusted: dcu_wire_check accepts a message only when every
 * field is consistent with its length and with the program (process count,
 * WORLD size, tag range), and says why not otherwise. A put carries a window
 * slot and an offset, never an address: the receiver finds the memory in
 * its own tables.
 *
 * Messages travel in frames (frames.h): one network message holds one or
 * more whole messages, each at an offset that is a multiple of
 * DCU_WIRE_ALIGN, and ends where its last message ends; dcu_wire_next
 * splits a frame, trusting nothing in it either.
 */
#ifndef DCU_PROXY_WIRE_H
#define DCU_PROXY_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "dcuda/shared/layout.h"

#define DCU_WIRE_MAGIC 0xdc0du
#define DCU_WIRE_VERSION 15u /* 15: remote atomics (ATOMIC, ATOMIC_DONE) */
/* Where the messages of a frame start: multiples of this. */
#define DCU_WIRE_ALIGN 8u
/* Bytes of an ABORT or LEFT message's text at most. */
#define DCU_WIRE_ABORT_MAX 256u

enum dcu_wire_type {
    DCU_WIRE_PUT = 1,    /* body: the payload */
    DCU_WIRE_NOTIFY = 2, /* no body */
    /* 3: the all-to-all barrier that carried window parts (version 4) */
    /* Passed on along the tree of processes below (the sender is the
     * teller, not the process named): */
    DCU_WIRE_ABORT = 4, /* body: why a process ended the run (text, no NUL) */
    DCU_WIRE_LEFT = 5,  /* body: how a process left the run (text, no NUL) */
    /* The deadlock detector's rounds, down and up a tree of processes
     * (core/deadlock.c): */
    DCU_WIRE_PROBE = 6, /* epoch: the round asked for; no body */
    DCU_WIRE_REPLY = 7, /* epoch: the round; body: a dcu_quiet_t, the subtree's answer */
    DCU_WIRE_FOUND = 8, /* every rank of every process is blocked: the run ends; no body */
    /* The WORLD barrier (netbar.h); no body: */
    DCU_WIRE_ROUND = 9, /* epoch: the barrier; tag: its dissemination round (0 .. 30) */
    DCU_WIRE_ACK = 10,  /* tag: puts and notifications of the receiver taken into inboxes so
                         * far; count: their bytes (whole messages), its credit */
    /* Window parts of ranks on other nodes (parts.h); no body: */
    DCU_WIRE_PART_ASK = 11, /* src_rank asks for dst_rank's part of window slot; tag: the
                             * asker's reply tag */
    DCU_WIRE_PART = 12,     /* the answer: src_rank's part of slot is count bytes, for
                             * dst_rank; tag echoed */
    /* Along the detector's tree while a run goes on (proxy.h); no body: */
    DCU_WIRE_BEAT = 13, /* the sender serves its run; tag 1: no more beats this run (its
                         * ranks are done) */
    /* A get: src_rank asks for count bytes at offset of dst_rank's part of
     * window slot; tag: tag + 1 of the PUTs that answer it (on the last);
     * body: a dcu_wire_get_t, where the answer goes. Acknowledged as puts
     * are (once answered), but counted as no bytes of the credit. */
    DCU_WIRE_GET = 14,
    /* RMA from the host (host_reqs.c): a host's request to a rank of the
     * receiver, checked there without failing the run; body: a
     * dcu_wire_host_t (the request), then HOST_PUT's and HOST_DATA's
     * bytes. src_rank: the first WORLD rank of the asking process (the
     * owner, in the answers), dst_rank: the owner (the asker's first rank,
     * in the answers). Not credited: the host's bytes never enter an
     * inbox. */
    DCU_WIRE_HOST_PUT = 15,  /* count bytes at offset of dst_rank's part of slot: a chunk
                              * of the request's [first, first + total); tag: 0, or on
                              * its last chunk the user tag + 1 to notify dst_rank of
                              * once its bytes are in (slot DCU_WIRE_HOST_NO_WINDOW,
                              * total 0: a notification alone) */
    DCU_WIRE_HOST_GET = 16,  /* the same chunk asked for (tag: as HOST_PUT's, once its
                              * bytes are read) */
    DCU_WIRE_HOST_DATA = 17, /* a get chunk's bytes: count bytes at offset of the request
                              * (of total bytes) */
    DCU_WIRE_HOST_DONE = 18, /* the answer to the chunk [offset, offset + count) of the part:
                              * tag 0, or minus the refusal's dcuda_status_t */
    /* A remote atomic (atomics.c): src_rank asks for it on the word of
     * count (4 or 8) bytes at offset of dst_rank's part of window slot;
     * tag: the asker's reply tag; body: a dcu_wire_atomic_t. Credited and
     * acknowledged as a put (it enters an inbox). */
    DCU_WIRE_ATOMIC = 19,
    /* Its answer, to the asker (src_rank: the target, dst_rank: the
     * asker; tag echoed): count is the word's value before; epoch 0, or
     * 1 when the word was not aligned there (nothing done). No body; not
     * credited (its asker waits for it). */
    DCU_WIRE_ATOMIC_DONE = 20
};
/* Rounds of a dissemination barrier at most (2^31 processes). */
#define DCU_WIRE_ROUNDS 31u

typedef struct dcu_wire_header {
    uint16_t magic;   /* DCU_WIRE_MAGIC */
    uint8_t version;  /* DCU_WIRE_VERSION */
    uint8_t type;     /* dcu_wire_type */
    uint32_t length;  /* bytes of body after the header */
    int32_t src_proc; /* sending process */
    int32_t src_rank; /* PUT, NOTIFY: WORLD rank of the sender; PART_ASK, PART, GET above */
    int32_t dst_rank; /* PUT, NOTIFY: WORLD rank of the target; PART_ASK, PART, GET above */
    uint32_t tag;     /* PUT, NOTIFY: tag + 1 (0: a put that does not notify); ROUND: the
                       * round; ACK: the messages taken; GET above */
    uint32_t slot;    /* PUT, PART_ASK, PART, GET: window slot */
    uint32_t epoch;   /* ROUND: WORLD barrier of this run;
                       * PROBE, REPLY: the detector's round; ATOMIC_DONE above */
    uint64_t offset;  /* PUT, GET: in the target's part of the window */
    uint64_t count;   /* PUT: payload bytes; GET: bytes asked for; PART: the part's size;
                       * ACK: the bytes taken */
    uint32_t run;     /* the sender's run (1, 2, ...): a message of an earlier run, one that
                       * ended early, is dropped */
    uint32_t flags;   /* DCU_WIRE_ENDED, DCU_WIRE_UNCREDITED, DCU_WIRE_ALL_TAKEN */
} dcu_wire_header_t;

/* A GET's body: the asking rank's part (window slot, offset in it) that
 * the answer, a PUT to src_rank, writes. */
typedef struct dcu_wire_get {
    uint32_t slot;
    uint32_t reserved; /* 0 */
    uint64_t offset;
} dcu_wire_get_t;

DCUDA_STATIC_ASSERT(sizeof(dcu_wire_get_t) == 16, "wire get");

/* An ATOMIC's body. */
typedef struct dcu_wire_atomic {
    uint32_t op;   /* dcuda_atomic_op_t */
    uint32_t note; /* tag + 1 of the target's notification (0: none) */
    uint64_t operand, compare;
} dcu_wire_atomic_t;

DCUDA_STATIC_ASSERT(sizeof(dcu_wire_atomic_t) == 24, "wire atomic");

/* The body of a host's request and of its answers (before any bytes). */
typedef struct dcu_wire_host {
    uint64_t id;    /* the asking proxy's, echoed in the answers */
    uint64_t first; /* HOST_PUT, HOST_GET: the request's bytes in the part */
    uint64_t total; /* ... and how many; HOST_DATA: the request's size; HOST_DONE: 0 */
} dcu_wire_host_t;

DCUDA_STATIC_ASSERT(sizeof(dcu_wire_host_t) == 24, "wire host");
/* The slot of a host's notification alone (HOST_PUT of no bytes). */
#define DCU_WIRE_HOST_NO_WINDOW 0xffffu
/* The largest status a HOST_DONE carries (minus it, in tag). */
#define DCU_WIRE_HOST_STATUS_MAX 100u

/* Sent after the deadlock detector ended the sender's run: the receiver's
 * run has ended too, before what the message carries is applied. */
#define DCU_WIRE_ENDED 1u
/* A put or notification sent beyond the receiver's credit, once the
 * sender's run was cancelled (its targets may have stopped taking what
 * arrives), or an answer of a get (its asker holds room for it): not held
 * to the credit. */
#define DCU_WIRE_UNCREDITED 2u
/* An ACK sent while everything that arrived from its receiver was in an
 * inbox (netbar.h, dcu_netbar_all_taken). */
#define DCU_WIRE_ALL_TAKEN 4u

DCUDA_STATIC_ASSERT(sizeof(dcu_wire_header_t) == 56, "wire header");

/* What a message must be consistent with. */
typedef struct dcu_wire_limits {
    int processes;   /* processes of the program */
    int world_size;  /* WORLD ranks */
    size_t max_size; /* largest message the manager carries */
} dcu_wire_limits_t;

/* Fills the header of a message of run `run`. */
void dcu_wire_header(dcu_wire_header_t *h, uint8_t type, uint32_t length, int src_proc,
                     uint32_t run);

/* DCUDA_OK and the header when the `size` bytes at msg form a valid
 * message from process `from`; otherwise an error and why (not applied). */
int dcu_wire_check(const void *msg, size_t size, int from, const dcu_wire_limits_t *lim,
                   dcu_wire_header_t *out, char *why, size_t why_size);

/* n rounded up to a multiple of DCU_WIRE_ALIGN: where a message after n
 * bytes of a frame starts. */
static inline size_t dcu_wire_aligned(size_t n)
{
    return (n + DCU_WIRE_ALIGN - 1u) & ~(size_t)(DCU_WIRE_ALIGN - 1u);
}

/* The next message of a frame of `size` bytes, from *at (0 at first): 1,
 * its offset and size (its header's length says it), *at moved past it; 0
 * at the frame's end; -1 when what is left is no whole message (shorter
 * than a header, longer than the frame, or padding past the end). Only
 * the framing is checked here: dcu_wire_check checks the message. */
int dcu_wire_next(const void *frame, size_t size, size_t *at, size_t *offset, size_t *msg_size);

#endif /* DCU_PROXY_WIRE_H */
