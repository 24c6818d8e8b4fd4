/*
 * The rings between ranks and their host runtime: the log ring (rank log
 * lines and misuse reports) and the command ring (rank -> host commands,
 * answered in per-rank reply slots). Shared by rank code, the host runtime
 * and the proxy; the producer side lives in impl/ring.h and impl/engine.h,
 * the consumer in the host library.
 *
 * Every ring is a bounded multi-producer, single-consumer queue with one
 * protocol: a producer takes a ticket t from `head`, waits until entry
 * t % capacity has seq == t (free for this lap: back-pressure, nothing is
 * dropped), fills it and stores seq = t + 1 with release. The consumer
 * waits for seq == t + 1, handles the entry, and stores seq = t + capacity
 * to hand it to the next lap. Each entry starts with its seq.
 *
 * A ring's descriptor carries the version of its entry layout; rank code
 * refuses a context whose rings it was not compiled for.
 *
 * The inbox (network path, host -> rank) is the one ring the other way
 * round; it is described at its entry below.
 */
#ifndef DCUDA_SHARED_RING_H
#define DCUDA_SHARED_RING_H

#include "base.h"

#define DCUDA_LOG_RING_VERSION 1u
#define DCUDA_CMD_RING_VERSION 5u

/* Characters of text in one log entry (longer messages are truncated). */
#define DCUDA_LOG_TEXT 224
/* Arguments carried by a device log entry that the host formats. */
#define DCUDA_LOG_MAX_ARGS 8

/* A ring as producers and the consumer see it. */
typedef struct dcuda_ring {
    DCUDA_ATOMIC(uint32_t) * head; /* tickets taken: where producers add cheaply (GPU memory) */
    void *entries;                 /* [capacity], each entry_size bytes, seq first: where the
                                     consumer reads cheaply (mapped host memory) */
    uint32_t capacity;             /* a power of two */
    uint16_t entry_size;
    uint16_t version; /* DCUDA_LOG_RING_VERSION or DCUDA_CMD_RING_VERSION */
} dcuda_ring_t;

/* ---- log ring --------------------------------------------------------- */

/* Kinds of log entries: flags. */
enum dcuda_log_kind {
    DCUDA_LOG_TEXT_KIND = 0,   /* text[] holds the finished line */
    DCUDA_LOG_FORMAT_KIND = 1, /* text[] holds a printf format, args[] its values */
    DCUDA_LOG_ERROR_KIND = 2,  /* a misuse report (text or format) */
    DCUDA_LOG_WARN_KIND = 4    /* a warning (text or format): not an error of the run */
};

enum dcuda_log_arg_type {
    DCUDA_LOG_ARG_INT = 1,    /* int64 */
    DCUDA_LOG_ARG_UINT = 2,   /* uint64 */
    DCUDA_LOG_ARG_DOUBLE = 3, /* double bits */
    DCUDA_LOG_ARG_PTR = 4,    /* address */
    DCUDA_LOG_ARG_STR = 5     /* string: copied inline after the format text */
};

/* One log line. */
typedef struct dcuda_log_entry {
    DCUDA_ATOMIC(uint32_t) seq;
    int32_t rank;
    uint16_t kind;
    uint16_t nargs;
    uint32_t arg_types; /* 4 bits per argument, see dcuda_log_arg_type */
    uint64_t args[DCUDA_LOG_MAX_ARGS];
    char text[DCUDA_LOG_TEXT];
} dcuda_log_entry_t;

/* ---- command ring ------------------------------------------------------ */

/*
 * Commands. A command is a header entry, possibly followed by payload
 * entries (raw 64-byte blocks): a rank takes one ticket per entry at once,
 * writes the payload, then publishes the header's seq. The host consumes in
 * ticket order, skips a command's payload entries, recycles every entry
 * (seq = ticket + capacity) and then publishes how many tickets it has
 * consumed in the context's cmd_tail. It answers a command that wants a
 * reply only after recycling it.
 *
 * A rank writes entries once they are known free: the proxy had consumed
 * their previous lap. It knows how far from the reply to its own last
 * command, or reads cmd_tail when that is not enough (on a GPU, a read of
 * host memory, rarely needed); a command never spans more than the ring.
 */
enum dcuda_cmd_op {
    DCUDA_CMD_PING = 1,     /* answer at once: measures the queue round trip */
    DCUDA_CMD_PUT = 2,      /* to a rank on the network path; payload entries follow */
    DCUDA_CMD_NOTIFY = 3,   /* a notification to a rank on the network path */
    DCUDA_CMD_BARRIER = 4,  /* the device's ranks reached a WORLD barrier (network path) */
    DCUDA_CMD_PUT_READ = 5, /* a large put the proxy reads from rank memory (network path) */
    DCUDA_CMD_PART = 6,     /* the size of a part of a rank on the network path */
    DCUDA_CMD_GET = 7,      /* a get from a rank on the network path */
    DCUDA_CMD_FENCE = 8,    /* the proxy's sends so far acknowledged (a split's barrier) */
    DCUDA_CMD_WINDOW = 9,   /* my part of a new window of NODE or a split (network path) */
    DCUDA_CMD_ATOMIC = 10   /* a remote atomic on a rank on the network path */
};

/* args[] of each op. PUT: [0] target WORLD rank, [1] window slot, [2] offset
 * in the target's part, [3] size, [4] entries (header included), [5] tag + 1
 * (0: no notification). NOTIFY: [0] target WORLD rank, [5] tag + 1. BARRIER:
 * [0] epoch (barriers of this run), [1] window slot created by it, or
 * DCUDA_CMD_NO_SLOT. PUT_READ: as PUT, but [4] is the source's address in
 * rank memory; it wants a reply: DCUDA_OK once the proxy has read the whole
 * source and handed it to the network, DCUDA_ERR_UNSUPPORTED (nothing
 * read) when the source is not memory the proxy can read, which the rank
 * then sends in PUT commands. PART: [0] a WORLD rank on the network path,
 * [1] a window slot (of WORLD) live there; it wants a reply: the size of
 * that rank's part in `value` (the proxy asks the part's owner once and
 * keeps the answer until the slot's next window). GET: [0] target WORLD
 * rank, [1] window slot of the target's part | window slot of the
 * sender's part that receives the data << 32, [2] offset in the target's
 * part, [3] size, [4] offset in the receiving part, [5] tag + 1 of the
 * notification the sender gets once the data is there (never 0). FENCE:
 * no args; wants a reply: DCUDA_OK once every message this proxy handed to
 * the network before reading it (puts, notifications, gets, of any rank of
 * its ring) has been acknowledged by its receiver; at once when none is
 * unacknowledged. WINDOW: [0] the WORLD table slot of a window of NODE or
 * a split the sender is creating; wants a reply: DCUDA_OK once the proxy
 * has read the sender's part of it (which other processes will ask for)
 * and forgotten the parts of other ranks it knew in that slot. ATOMIC:
 * [0] target WORLD rank, [1] window slot | op << 32 | width << 40, [2]
 * offset in the target's part, [3] operand, [4] compare, [5] tag + 1 of
 * the target's notification (0: none); wants a reply: the word's value
 * before in `value` once the target rank applied it, DCUDA_ERR_INVALID_ARG
 * when the word is not aligned to its width there. */
#define DCUDA_CMD_NO_SLOT 0xffffffffu
/* Most payload bytes one PUT command carries. */
#define DCUDA_NET_CHUNK_MAX 65536u
/* Puts of at least this many bytes to a rank on the network path are read
 * by the proxy (PUT_READ) rather than written into the queue by the rank. */
#define DCUDA_NET_READ_MIN 32768u

typedef struct dcuda_cmd {
    DCUDA_ATOMIC(uint32_t) seq;
    int32_t rank; /* device rank of the sender */
    uint32_t op;
    uint32_t tag; /* echoed in the reply; 0: no reply wanted */
    uint64_t args[6];
} dcuda_cmd_t;

/* The host -> rank direction: one slot per rank, `seq` (the tag of the
 * command answered) released last; a GPU rank reads seq and status in one
 * 8-byte load. */
typedef struct dcuda_cmd_reply {
    DCUDA_ATOMIC(uint32_t) seq;
    int32_t status;
    uint64_t value;
    uint64_t reserved[6];
} dcuda_cmd_reply_t;

/* ---- inbox ------------------------------------------------------------ */

/*
 * One rank's inbox: what the proxy received for it from processes on the
 * network path, in arrival order, in mapped host memory that the rank
 * polls while it waits. One producer (the proxy), one consumer (the rank):
 * the message at position p (counted in entries since the inbox was made)
 * starts at entry p % DCUDA_INBOX_ENTRIES, and its payload entries follow
 * it, wrapping to the ring's start. The rank applies messages in
 * order, then publishes how many entries it consumed in the context's
 * inbox_tail[rank]; the proxy writes only entries consumed already.
 *
 * A message's first entry is eight words of 8 bytes, each 4 bytes of the
 * message and a flag, p + 1, stored together (an aligned 8-byte access is
 * single-copy atomic on both sides): a rank that reads the entry once and
 * finds every flag right holds the whole header and up to 12 bytes of
 * payload, with no second read (as NCCL's LL protocol does). Words: [0]
 * kind | entries << 8 | flags << 16, [1] tag + 1 (0: nothing to count),
 * [2] payload bytes, [3..4] where they go (the rank's address, low half
 * first), [5..7] the payload's first 12 bytes. The rest of a payload
 * follows in the next entries as plain bytes, written before the flags
 * with release; DCUDA_INBOX_ACQUIRE then tells the rank to acquire (the
 * first word) before reading them (or, on a NOTIFY, the data the proxy
 * wrote itself).
 *
 * A PUT's payload goes to its address and then, when tagged, the rank
 * counts the notification on its own counter (an atomic add on the GPU that
 * holds it: the host never writes a counter). A put too large for the inbox
 * is written by the proxy itself, and only its notification comes, as a
 * NOTIFY; when the rank may not yet have applied, or released, data from
 * its inbox (a PUT written since the last SYNC it consumed), the proxy
 * first sends a SYNC and waits for it to be consumed: the count published
 * after a SYNC is a release, so the rank's writes come before the proxy's.
 * Unread NOTIFYs do not hold the copy back: they write nothing.
 */
#define DCUDA_INBOX_ENTRIES 256u /* a power of two: 16 KiB per rank */
#define DCUDA_INBOX_WORDS 8
#define DCUDA_INBOX_INLINE 12u /* payload bytes in the first entry */

enum dcuda_inbox_kind {
    DCUDA_INBOX_PUT = 1,    /* data at its address, then the notification if tagged */
    DCUDA_INBOX_NOTIFY = 2, /* the notification alone */
    /* 3 was PAD (the ring's end skipped) until messages wrapped (layout 18) */
    DCUDA_INBOX_SYNC = 4,  /* publish the consumed count with release (before the
                             proxy writes the rank's memory itself) */
    DCUDA_INBOX_ATOMIC = 5 /* a remote atomic the rank applies to its word and
                              answers in the message itself (below) */
};

/* An ATOMIC is two entries (flag DCUDA_INBOX_ACQUIRE): words [1] tag + 1
 * of the notification that follows it (0: none), [2] op | width << 8
 * (dcuda_atomic_op_t, 4 or 8), [3..4] the word's address, [5..6] the
 * operand; its second entry's 32-bit words [0..1] the compare value. The
 * rank applies it (a word not aligned to its width is refused, nothing
 * done, nothing notified) and writes its answer into the second entry,
 * words [2..3] the word's value before and [4] DCUDA_INBOX_DONE or
 * DCUDA_INBOX_REFUSED, then publishes its count with release: once the
 * proxy sees the count past the message, the answer is there. */
#define DCUDA_INBOX_ATOMIC_ENTRIES 2u
#define DCUDA_INBOX_DONE 1u
#define DCUDA_INBOX_REFUSED 2u

/* Most entries of one message (an 8-bit count), and so most payload bytes:
 * 16,268. The ring keeps one entry free besides (see inbox.c). */
#define DCUDA_INBOX_MESSAGE_ENTRIES 255u
#define DCUDA_INBOX_MESSAGE_MAX (DCUDA_INBOX_INLINE + (DCUDA_INBOX_MESSAGE_ENTRIES - 1u) * 64u)

/* Flags of a message. */
#define DCUDA_INBOX_ACQUIRE 1u /* acquire before reading past the first entry or the data */

/* The data halves of a first entry's words, read (w[]) and written: word 0
 * packs kind, entries and flags; bytes 0..11 of the payload sit in words
 * 5..7, little-endian. */
#define DCUDA_INBOX_HEAD(kind, entries, flags) ((kind) | (entries) << 8 | (flags) << 16)
#define DCUDA_INBOX_KIND_OF(w0) ((w0)&0xffu)
#define DCUDA_INBOX_ENTRIES_OF(w0) (((w0) >> 8) & 0xffu)
#define DCUDA_INBOX_FLAGS_OF(w0) ((w0) >> 16)
#define DCUDA_INBOX_INLINE_BYTE(w, j) ((w)[5u + (j) / 4u] >> (8u * ((j) % 4u)))

typedef struct dcuda_inbox_entry {
    DCUDA_ATOMIC(uint64_t) word[DCUDA_INBOX_WORDS]; /* data in the low half, flag in the high */
} dcuda_inbox_entry_t;

DCUDA_STATIC_ASSERT(sizeof(dcuda_ring_t) == 24, "ring");
DCUDA_STATIC_ASSERT(sizeof(dcuda_log_entry_t) == 304, "log entry");
DCUDA_STATIC_ASSERT(offsetof(dcuda_log_entry_t, seq) == 0, "log entry seq first");
DCUDA_STATIC_ASSERT(offsetof(dcuda_log_entry_t, args) == 16, "log entry args");
DCUDA_STATIC_ASSERT(sizeof(dcuda_cmd_t) == 64, "command");
DCUDA_STATIC_ASSERT(offsetof(dcuda_cmd_t, seq) == 0, "command seq first");
DCUDA_STATIC_ASSERT(sizeof(dcuda_cmd_reply_t) == 64, "command reply");
DCUDA_STATIC_ASSERT(offsetof(dcuda_cmd_reply_t, status) == 4 &&
                        offsetof(dcuda_cmd_reply_t, value) == 8,
                    "a reply's seq and status share one 8-byte word (read at once on a GPU)");
DCUDA_STATIC_ASSERT(sizeof(dcuda_inbox_entry_t) == 64, "inbox entry");

#endif /* DCUDA_SHARED_RING_H */
