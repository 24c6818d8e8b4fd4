/*
 * Fuzz harness of the proxy's reading of the rank -> host command queue
 * (src/proxy/command.h, src/proxy/proxy.c; layouts in dcuda/shared/ring.h).
 * Ranks write the entries, so nothing in them is trusted.
 *
 * Input: eight bytes of setting (this process's ranks, the queue's
 * capacity, the processes and which of them are on the network path),
 * then 64-byte entries as ranks write them: a command's header, then its
 * payload entries.
 *
 * Two checks, each against this file's own reading of ring.h's rules:
 *  - every entry alone through dcu_cmd_check: its verdict (execute, queue
 *    unreadable, unknown op, refused), the entries it spans and its
 *    target process are what the rules say;
 *  - all of them through a real proxy, with a backend and a network
 *    manager made here: the queue is written a whole command at a time as
 *    room is made, and polled. Every message the proxy sends is the next
 *    one the commands call for (type, ranks, tag, slot, offset, payload:
 *    the entries after a PUT's header, the source of a large put, the
 *    window part a PART asks its owner for, where a GET's answer goes)
 *    and passes the receiver's dcu_wire_check
 *    (messages come packed in frames, split by dcu_wire_next);
 *    it fails once a command is refused, and only then or on a command
 *    whose fault lies in the order of commands (a barrier epoch out of
 *    turn, more large puts or fences waiting than ranks); otherwise it consumes the
 *    whole queue and sends everything.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sanitizer/asan_interface.h>

#include "fuzz.h"
#include "proxy/command.h"
#include "proxy/proxy_impl.h"
#include "proxy/wire.h"
#include "util/msg.h"

const char fuzz_name[] = "cmd";
const unsigned fuzz_replay_rounds = 30000;
const char *const fuzz_tokens[] = { NULL };

#define MAX_ENTRIES 96 /* entries of one input, payload padding included */
#define MAX_PROCS 4
#define READABLE (1536u * 1024u) /* rank memory a large put may be read from */
#define MAX_SENT 1024            /* messages one input may make */
/* Mapped buffers the proxy makes: its staging and get buffers, and spare
 * receive buffers (as many as its credit, set so high here that nothing
 * waits for it, asks: DCU_SPARES_MAX). */
#define MAPPED_MAX (PROXY_BUFFERS + DCU_SPARES_MAX)

/* ---- the setting -------------------------------------------------------------------- */

typedef struct setting {
    int ranks;         /* of this process */
    uint32_t capacity; /* entries of the queue */
    int procs, me;
    int32_t proc_first[MAX_PROCS + 1];
    uint8_t path[MAX_PROCS];
    int net; /* some process is on the network path */
    dcu_cmd_limits_t lim;
} setting_t;

static void read_setting(fuzz_reader_t *r, setting_t *s)
{
    unsigned b0 = (unsigned)fuzz_read(r, 1), b1 = (unsigned)fuzz_read(r, 1);
    unsigned b2 = (unsigned)fuzz_read(r, 1);
    fuzz_read(r, 5);
    memset(s, 0, sizeof *s);
    s->ranks = 1 + (int)(b0 & 3u);
    s->capacity = 4u << (2u * ((b0 >> 2) & 3u)); /* 4, 16, 64, 256 */
    s->procs = 1 + (int)(b1 & 3u);
    s->me = (int)((b1 >> 2) & 3u) % s->procs;
    for (int q = 0; q < s->procs; q++) {
        int ranks = q == s->me ? s->ranks : 1 + (int)((b1 >> 4) & 3u);
        s->proc_first[q + 1] = s->proc_first[q] + ranks;
        s->path[q] = q == s->me       ? DCUDA_PATH_DEVICE
                     : (b2 >> q) & 1u ? DCUDA_PATH_NET
                                      : DCUDA_PATH_SHM;
        s->net |= s->path[q] == DCUDA_PATH_NET;
    }
    s->lim = (dcu_cmd_limits_t){ .ranks = s->ranks,
                                 .capacity = s->capacity,
                                 .world_first = s->proc_first[s->me],
                                 .process_count = s->procs,
                                 .proc_first = s->proc_first,
                                 .path = s->path,
                                 .net = s->net };
}

/* ---- ring.h's rules, as this file reads them ---------------------------------------- */

typedef struct ref {
    dcu_cmd_verdict_t verdict;
    uint32_t entries; /* a PUT's args[4], else 1 */
    int target;       /* the process of a PUT, PUT_READ, NOTIFY, PART or GET executed */
} ref_t;

/* A GET's args[]: [1] two window slots (the target's in the low 32 bits,
 * the receiving part's in the high), [5] a tag + 1 (never 0), [2] + [3]
 * and [4] + [3] may not wrap. */
static dcu_cmd_verdict_t ref_get(const dcuda_cmd_t *c)
{
    uint64_t size = c->args[3];
    int ok = (c->args[1] & 0xffffffffu) < DCUDA_WIN_TABLE_SLOTS &&
             (c->args[1] >> 32) < DCUDA_WIN_TABLE_SLOTS && c->args[5] != 0 &&
             c->args[2] + size >= c->args[2] && c->args[4] + size >= c->args[4];
    return ok ? DCU_CMD_EXECUTE : DCU_CMD_REFUSED;
}

/* An ATOMIC's args[]: [1] a slot in its low 32 bits, the op (0 .. 2) in
 * bits 32..39 and the word's bytes (4 or 8) from bit 40; [3] and [4]
 * operands that fit the word; [2] + the word may not wrap; [5] a user's
 * tag + 1 or 0; answered. */
static dcu_cmd_verdict_t ref_atomic(const dcuda_cmd_t *c)
{
    uint64_t op = (c->args[1] >> 32) & 0xffu, bytes = c->args[1] >> 40;
    int word = bytes == 8u || (bytes == 4u && c->args[3] >> 32 == 0 && c->args[4] >> 32 == 0);
    int ok = (c->args[1] & 0xffffffffu) < DCUDA_WIN_TABLE_SLOTS && op <= 2u && word &&
             c->args[2] + bytes > c->args[2] && c->args[5] <= DCUDA_TAG_COUNT && c->tag;
    return ok ? DCU_CMD_EXECUTE : DCU_CMD_REFUSED;
}

/* A command of a known op for the network path, by its args[]. */
static dcu_cmd_verdict_t ref_net_op(const dcuda_cmd_t *c, const setting_t *s, ref_t *r)
{
    uint64_t tag = c->args[5], slot = c->args[1], size = c->args[3];
    if (!s->net)
        return DCU_CMD_REFUSED;       /* nothing is on the network path */
    if (c->op == DCUDA_CMD_BARRIER) { /* [0] epoch > 0, [1] a slot or none (32 bits) */
        uint32_t epoch = (uint32_t)c->args[0], s32 = (uint32_t)slot;
        return epoch != 0 && (s32 == DCUDA_CMD_NO_SLOT || s32 < DCUDA_MAX_WINDOWS)
                   ? DCU_CMD_EXECUTE
                   : DCU_CMD_REFUSED;
    }
    if (c->op == DCUDA_CMD_WINDOW) /* [0] a communicator's slot (after WORLD's); answered */
        return c->args[0] >= DCUDA_MAX_WINDOWS && c->args[0] < DCUDA_WIN_TABLE_SLOTS && c->tag
                   ? DCU_CMD_EXECUTE
                   : DCU_CMD_REFUSED;
    /* [0] a WORLD rank of a process on the network path, [5] tag + 1 or 0 */
    for (int q = 0; q < s->procs; q++)
        if ((int64_t)c->args[0] >= s->proc_first[q] && (int64_t)c->args[0] < s->proc_first[q + 1] &&
            s->path[q] == DCUDA_PATH_NET)
            r->target = q;
    if (r->target < 0 || tag > DCUDA_TAG_SLOTS)
        return DCU_CMD_REFUSED;
    if (c->op == DCUDA_CMD_NOTIFY)
        return tag ? DCU_CMD_EXECUTE : DCU_CMD_REFUSED;
    if (c->op == DCUDA_CMD_PART) /* [1] a slot; answered */
        return slot < DCUDA_WIN_TABLE_SLOTS && c->tag ? DCU_CMD_EXECUTE : DCU_CMD_REFUSED;
    if (c->op == DCUDA_CMD_GET)
        return ref_get(c);
    if (c->op == DCUDA_CMD_ATOMIC)
        return ref_atomic(c);
    if (slot >= DCUDA_WIN_TABLE_SLOTS || c->args[2] + size < c->args[2]) /* [2] + [3] no wrap */
        return DCU_CMD_REFUSED;
    if (c->op == DCUDA_CMD_PUT) /* the payload fits the entries after the header */
        return size <= (uint64_t)(r->entries - 1u) * 64u ? DCU_CMD_EXECUTE : DCU_CMD_REFUSED;
    return size > 0 && c->tag ? DCU_CMD_EXECUTE : DCU_CMD_REFUSED; /* PUT_READ: answered */
}

static ref_t ref_check(const dcuda_cmd_t *c, const setting_t *s)
{
    ref_t r = { DCU_CMD_EXECUTE, c->op == DCUDA_CMD_PUT ? (uint32_t)c->args[4] : 1u, -1 };
    /* A sender of this queue, and a command of 1 .. capacity / 4 entries. */
    if (c->rank < 0 || c->rank >= s->ranks || r.entries == 0 || r.entries > s->capacity / 4u)
        r.verdict = DCU_CMD_UNREADABLE;
    else if (c->op == DCUDA_CMD_PING)
        r.verdict = DCU_CMD_EXECUTE;
    else if ((c->op >= DCUDA_CMD_PUT && c->op <= DCUDA_CMD_GET) || c->op == DCUDA_CMD_WINDOW ||
             c->op == DCUDA_CMD_ATOMIC)
        r.verdict = ref_net_op(c, s, &r);
    else if (c->op == DCUDA_CMD_FENCE) /* answered (with no network path too) */
        r.verdict = c->tag ? DCU_CMD_EXECUTE : DCU_CMD_REFUSED;
    else
        r.verdict = DCU_CMD_UNKNOWN;
    if (r.verdict != DCU_CMD_EXECUTE)
        r.target = -1;
    return r;
}

/* Check one: an entry alone. */
static void check_entry(const dcuda_cmd_t *c, const setting_t *s)
{
    char why[256 + 16];
    dcu_cmd_info_t info;
    memset(why, 0x5a, sizeof why);
    dcu_cmd_verdict_t v = dcu_cmd_check(c, &s->lim, &info, why, 256);
    ref_t want = ref_check(c, s);
    FUZZ_CHECK(v == want.verdict, "op %u of rank %d: verdict %d, expected %d", c->op, c->rank, v,
               want.verdict);
    if (v != DCU_CMD_UNREADABLE)
        FUZZ_CHECK(info.entries == want.entries, "op %u spans %u entries, expected %u", c->op,
                   info.entries, want.entries);
    if (v == DCU_CMD_EXECUTE && c->op != DCUDA_CMD_PING && c->op != DCUDA_CMD_BARRIER)
        FUZZ_CHECK(info.target == want.target, "op %u goes to process %d, expected %d", c->op,
                   info.target, want.target);
    if (v != DCU_CMD_EXECUTE)
        FUZZ_CHECK(memchr(why, '\0', 256) != NULL && why[0] != '\0' &&
                       (unsigned char)why[256] == 0x5a,
                   "the reason for verdict %d is empty, unterminated or too long", v);
}

/* ---- the world around a proxy --------------------------------------------------------- */

static int readable(void *arg, uint64_t addr, uint64_t size);

/* A command of the input, where it goes in the queue. */
typedef struct command {
    uint32_t ticket, entries; /* entries written (1 for an unreadable one) */
    ref_t ref;
} command_t;

/* What the proxy is expected to send, in order: messages of the commands
 * it executes at once (PUT, NOTIFY, GET, PART: its PART_ASK, as no part is
 * known here; BARRIER: its first ROUND to the next process, but only while
 * no put or notification it sent waits for an acknowledgement, and none
 * comes here), and the chunks of the large puts it reads. */
typedef struct expected {
    uint32_t ticket;
    int peer;        /* PUT, NOTIFY, PART_ASK, ROUND */
    uint64_t done;   /* PUT_READ: bytes sent so far */
    int round;       /* a ROUND, sent only if nothing was sent before */
    int data_before; /* a ROUND: puts and notifications of the commands before it */
    int matched;     /* sent (or, a ROUND, rightly withheld) */
} expected_t;

static struct world {
    setting_t s;
    dcuda_cmd_t *queue;
    dcuda_cmd_t shadow[MAX_ENTRIES]; /* the entries as the input has them */
    command_t cmds[MAX_ENTRIES];
    int ncmds;
    int fails; /* a command the rules refuse, or one that ends the queue */
    expected_t sync[MAX_ENTRIES * MAX_PROCS], reads[MAX_ENTRIES];
    int nsync, nreads, sync_at, reads_at;
    int data_sent;    /* puts, notifications and gets sent (none is ever acknowledged) */
    int chunks_sent;  /* chunks of large puts sent */
    int data_planned; /* puts, notifications and gets of the commands planned so far */
    dcuda_win_entry_t *own_table;
    uint8_t *rank_mem;
    dcu_net_mem_t mem;
    void *pending[MAX_SENT];
    int npending;
    void *staging[MAPPED_MAX]; /* what the backend allocated */
    size_t staging_size[MAPPED_MAX];
    int nstaging;
} w;

/* Lists the commands of the n entries and what each should make; those
 * after one that fails the proxy are still written, and should make
 * nothing. An unreadable one ends the list, as a command that would run
 * past the input. */
static void plan(uint32_t n)
{
    w.ncmds = w.nsync = w.nreads = w.sync_at = w.reads_at = w.data_sent = 0;
    w.chunks_sent = w.data_planned = 0;
    w.fails = 0;
    for (uint32_t t = 0; t < n;) {
        command_t *c = &w.cmds[w.ncmds];
        const dcuda_cmd_t *h = &w.shadow[t];
        c->ticket = t;
        c->ref = ref_check(h, &w.s);
        c->entries = c->ref.verdict == DCU_CMD_UNREADABLE ? 1u : c->ref.entries;
        if (t + c->entries > n)
            break;
        w.ncmds++;
        t += c->entries;
        if (w.fails)
            continue;
        w.fails = c->ref.verdict == DCU_CMD_UNREADABLE || c->ref.verdict == DCU_CMD_REFUSED ||
                  (c->ref.verdict == DCU_CMD_UNKNOWN && !h->tag);
        if (c->ref.verdict == DCU_CMD_UNREADABLE)
            break;
        if (c->ref.verdict != DCU_CMD_EXECUTE)
            continue;
        if (h->op == DCUDA_CMD_PUT || h->op == DCUDA_CMD_NOTIFY || h->op == DCUDA_CMD_PART ||
            h->op == DCUDA_CMD_GET || h->op == DCUDA_CMD_ATOMIC)
            w.sync[w.nsync++] = (expected_t){ c->ticket, c->ref.target, 0, 0, 0, 0 };
        w.data_planned += h->op == DCUDA_CMD_PUT || h->op == DCUDA_CMD_NOTIFY ||
                          h->op == DCUDA_CMD_GET || h->op == DCUDA_CMD_ATOMIC;
        if (h->op == DCUDA_CMD_BARRIER && w.s.procs > 1)
            w.sync[w.nsync++] =
                (expected_t){ c->ticket, (w.s.me + 1) % w.s.procs, 0, 1, w.data_planned, 0 };
        if (h->op == DCUDA_CMD_PUT_READ && readable(NULL, h->args[4], h->args[3]))
            w.reads[w.nreads++] = (expected_t){ c->ticket, c->ref.target, 0, 0, 0, 0 };
    }
}

/* Checks a PUT message (header h, body) against the command of header
 * ticket t. */
static void check_put(const dcu_wire_header_t *h, const uint8_t *body, const dcuda_cmd_t *c,
                      uint32_t t)
{
    /* The entries after the header as the rank wrote them (the queue's own
     * are marked free, and maybe written again, by the time a frame goes). */
    const uint8_t *entries = (const uint8_t *)&w.shadow[t + 1u];
    FUZZ_CHECK(h->count == c->args[3] && h->offset == c->args[2] && h->tag == c->args[5],
               "the PUT of ticket %u says %llu bytes at %llu, tag %u", t,
               (unsigned long long)h->count, (unsigned long long)h->offset, h->tag);
    FUZZ_CHECK(t + 1u + (h->count + 63u) / 64u <= MAX_ENTRIES, "a PUT past the input");
    for (uint64_t i = 0; i < h->count; i++)
        FUZZ_CHECK(body[i] == entries[i],
                   "the PUT of ticket %u differs from its entries at byte %llu", t,
                   (unsigned long long)i);
}

/* Checks a chunk (header h, body) of the large put expected next. */
static void check_chunk(const dcu_wire_header_t *h, const uint8_t *body)
{
    FUZZ_CHECK(w.reads_at < w.nreads, "a chunk of a large put nobody asked for");
    expected_t *x = &w.reads[w.reads_at];
    const dcuda_cmd_t *c = &w.shadow[x->ticket];
    uint64_t size = c->args[3],
             n = size - x->done < DCU_NET_PUT_CHUNK ? size - x->done : DCU_NET_PUT_CHUNK;
    int last = x->done + n == size;
    const uint8_t *src = (const uint8_t *)(uintptr_t)(c->args[4] + x->done);
    FUZZ_CHECK(h->count == n && h->offset == c->args[2] + x->done &&
                   h->tag == (last ? c->args[5] : 0u) && h->dst_rank == (int32_t)c->args[0] &&
                   h->slot == c->args[1] && h->src_rank == w.s.proc_first[w.s.me] + c->rank,
               "chunk at %llu of the large put of ticket %u: %llu bytes at %llu, tag %u",
               (unsigned long long)x->done, x->ticket, (unsigned long long)h->count,
               (unsigned long long)h->offset, h->tag);
    FUZZ_CHECK(memcmp(body, src, (size_t)n) == 0, "a chunk differs from its source");
    x->done += n;
    w.reads_at += last;
}

/* A ROUND that is rightly not sent: a put, notification or get sent before
 * its barrier waits for an acknowledgement (none comes here). The puts and
 * notifications before it in the queue are known from the plan; the
 * chunks of large puts are sent as their reads end, before the barrier
 * when sent before it is checked (a barrier's round leaves in the frames
 * of its pass, before the chunks sent in that pass). */
static int withheld(const expected_t *x)
{
    return x->round && (x->data_before > 0 || w.chunks_sent > 0);
}

/* Moves sync_at past what was matched, marking withheld rounds matched. */
static void advance_sync(void)
{
    for (; w.sync_at < w.nsync; w.sync_at++) {
        expected_t *x = &w.sync[w.sync_at];
        x->matched |= withheld(x);
        if (!x->matched)
            return;
    }
}

/* Checks a GET message (header h, body) against the command c of ticket t. */
static void check_get(const dcu_wire_header_t *h, const uint8_t *body, const dcuda_cmd_t *c,
                      uint32_t t)
{
    dcu_wire_get_t g;
    memcpy(&g, body, sizeof g);
    FUZZ_CHECK(h->count == c->args[3] && h->offset == c->args[2] && h->tag == c->args[5] &&
                   g.slot == c->args[1] >> 32 && g.reserved == 0 && g.offset == c->args[4],
               "the GET of ticket %u says %llu bytes at %llu, tag %u, into window %u at %llu", t,
               (unsigned long long)h->count, (unsigned long long)h->offset, h->tag, g.slot,
               (unsigned long long)g.offset);
}

/* Checks an ATOMIC message (header h, body) against the command c of
 * ticket t. */
static void check_atomic(const dcu_wire_header_t *h, const uint8_t *body, const dcuda_cmd_t *c,
                         uint32_t t)
{
    dcu_wire_atomic_t a;
    memcpy(&a, body, sizeof a);
    FUZZ_CHECK(h->count == c->args[1] >> 40 && h->offset == c->args[2] && h->tag == c->tag &&
                   a.op == ((c->args[1] >> 32) & 0xffu) && a.note == c->args[5] &&
                   a.operand == c->args[3] && a.compare == c->args[4],
               "the ATOMIC of ticket %u says a %llu-byte word at %llu, reply tag %u, op %u, "
               "tag %u, operands %llu and %llu",
               t, (unsigned long long)h->count, (unsigned long long)h->offset, h->tag, a.op, a.note,
               (unsigned long long)a.operand, (unsigned long long)a.compare);
}

/* Checks a message (header h, body) of a PUT, NOTIFY, GET, PART_ASK, ATOMIC or ROUND:
 * the next one expected for its process (frames keep the order of the
 * messages to one process, not across processes). */
static void check_sync(int peer, const dcu_wire_header_t *h, const uint8_t *body)
{
    expected_t *x = NULL;
    for (int i = w.sync_at; i < w.nsync && !x; i++) {
        expected_t *y = &w.sync[i];
        y->matched |= withheld(y);
        if (!y->matched && y->peer == peer)
            x = y;
    }
    FUZZ_CHECK(x != NULL, "a message (type %u) to process %d no command asked for", h->type, peer);
    x->matched = 1;
    advance_sync();
    const dcuda_cmd_t *c = &w.shadow[x->ticket];
    uint8_t want = c->op == DCUDA_CMD_PUT      ? DCU_WIRE_PUT
                   : c->op == DCUDA_CMD_NOTIFY ? DCU_WIRE_NOTIFY
                   : c->op == DCUDA_CMD_PART   ? DCU_WIRE_PART_ASK
                   : c->op == DCUDA_CMD_GET    ? DCU_WIRE_GET
                   : c->op == DCUDA_CMD_ATOMIC ? DCU_WIRE_ATOMIC
                                               : DCU_WIRE_ROUND;
    FUZZ_CHECK(h->type == want && peer == x->peer, "a message of type %u to %d, expected %u to %d",
               h->type, peer, want, x->peer);
    if (want == DCU_WIRE_ROUND) {
        FUZZ_CHECK(h->epoch == (uint32_t)c->args[0] && h->tag == 0,
                   "a barrier round %u of epoch %u", h->tag, h->epoch);
        return;
    }
    FUZZ_CHECK(h->src_rank == w.s.proc_first[w.s.me] + c->rank &&
                   h->dst_rank == (int32_t)c->args[0] &&
                   (want == DCU_WIRE_NOTIFY || h->slot == (c->args[1] & 0xffffffffu)),
               "a message from rank %d to %d, slot %u", h->src_rank, h->dst_rank, h->slot);
    if (want == DCU_WIRE_PUT)
        check_put(h, body, c, x->ticket);
    else if (want == DCU_WIRE_GET)
        check_get(h, body, c, x->ticket);
    else if (want == DCU_WIRE_ATOMIC)
        check_atomic(h, body, c, x->ticket);
    else if (want == DCU_WIRE_PART_ASK)
        FUZZ_CHECK(h->tag == c->tag, "an ask for a part with reply tag %u, not %u", h->tag, c->tag);
    else
        FUZZ_CHECK(h->tag == c->args[5], "a notification with tag %u", h->tag);
}

/* Was buf made by the backend (the proxy's staging buffers)? */
static int is_staging(const void *buf)
{
    for (int i = 0; i < w.nstaging; i++)
        if (w.staging[i] == buf)
            return 1;
    return 0;
}

/* The network manager: a message must be one the receiver accepts and the
 * one expected next; it is released at the next progress. */
static void check_message(int peer, const uint8_t *m, size_t size, int staging)
{
    dcu_wire_limits_t lim = { w.s.procs, w.s.proc_first[w.s.procs], DCU_NET_MAX_MESSAGE };
    dcu_wire_header_t h;
    char why[128];
    FUZZ_CHECK(dcu_wire_check(m, size, w.s.me, &lim, &h, why, sizeof why) == DCUDA_OK,
               "process %d would refuse a message: %s", peer, why);
    int me = w.s.me, neighbour = peer == (me - 1) / 2 || peer == 2 * me + 1 || peer == 2 * me + 2;
    if (h.type == DCU_WIRE_BEAT) /* beats go to the tree's neighbours, unasked */
        FUZZ_CHECK(neighbour && h.tag <= 1, "a beat to process %d (tag %u)", peer, h.tag);
    else if (staging) /* large puts are read into the staging buffers */
        check_chunk(&h, m + sizeof h);
    else
        check_sync(peer, &h, m + sizeof h);
    w.data_sent += h.type == DCU_WIRE_PUT || h.type == DCU_WIRE_NOTIFY || h.type == DCU_WIRE_GET ||
                   h.type == DCU_WIRE_ATOMIC;
}

/* The network manager: a frame of messages (a staging buffer: one chunk),
 * each one the receiver accepts and the one expected next; released at
 * the next progress. */
static dcuda_status_t net_send(dcu_net_t *n, int peer, void *data, size_t size)
{
    size_t at = 0, offset = 0, one = 0;
    int r, staging = is_staging(data);
    (void)n;
    FUZZ_CHECK(peer >= 0 && peer < w.s.procs && peer != w.s.me, "a message to process %d", peer);
    FUZZ_CHECK(w.npending < MAX_SENT, "too many messages at once");
    w.pending[w.npending++] = data;
    if (staging) {
        check_message(peer, data, size, 1);
        w.chunks_sent++;
        return DCUDA_OK;
    }
    while ((r = dcu_wire_next(data, size, &at, &offset, &one)) > 0)
        check_message(peer, (const uint8_t *)data + offset, one, 0);
    FUZZ_CHECK(r == 0, "a frame of %zu bytes that ends inside a message", size);
    return DCUDA_OK;
}

static dcuda_status_t net_open(const dcu_net_env_t *env, dcu_net_recv_fn recv, void *arg,
                               dcu_net_t **out)
{
    (void)recv;
    (void)arg;
    w.mem = env->mem;
    *out = (dcu_net_t *)&w;
    return DCUDA_OK;
}

static int net_progress(dcu_net_t *n)
{
    int did = w.npending > 0;
    (void)n;
    for (int i = 0; i < w.npending; i++)
        dcu_net_release(&w.mem, w.pending[i]);
    w.npending = 0;
    return did;
}

static void net_close(dcu_net_t *n, int abandon)
{
    (void)abandon;
    net_progress(n);
}

static int net_pending(dcu_net_t *n)
{
    (void)n;
    return w.npending;
}

static const char *net_why(dcu_net_t *n)
{
    (void)n;
    return "no error";
}

static int net_serialized(char *why, size_t why_size)
{
    (void)why;
    (void)why_size;
    return 1;
}

static const dcu_net_ops_t net_ops = { .version = DCU_NET_VERSION,
                                       .name = "fuzz",
                                       .open = net_open,
                                       .close = net_close,
                                       .send = net_send,
                                       .progress = net_progress,
                                       .pending = net_pending,
                                       .why = net_why,
                                       .serialized = net_serialized };

/* The backend: rank memory is this process's memory. Mapped buffers (the
 * proxy's staging, a megabyte each) are kept for the next input rather
 * than freed, poisoned meanwhile so that AddressSanitizer still sees any
 * use of one after the proxy gave it back. */
static struct {
    void *buf[MAPPED_MAX];
    size_t size[MAPPED_MAX];
    int count;
} kept;

static dcuda_status_t be_alloc_mapped(dcu_backend_t *b, size_t size, void **host, void **rank)
{
    void *buf = NULL;
    (void)b;
    FUZZ_CHECK(w.nstaging < MAPPED_MAX, "more than %d mapped buffers", MAPPED_MAX);
    for (int i = 0; i < kept.count && !buf; i++)
        if (kept.size[i] == size) {
            buf = kept.buf[i];
            kept.buf[i] = kept.buf[--kept.count];
            kept.size[i] = kept.size[kept.count];
            ASAN_UNPOISON_MEMORY_REGION(buf, size);
        }
    if (!buf)
        buf = malloc(size);
    *host = *rank = w.staging[w.nstaging] = buf;
    w.staging_size[w.nstaging++] = size;
    return buf ? DCUDA_OK : DCUDA_ERR_NO_MEMORY;
}

static void be_free_mapped(dcu_backend_t *b, void *host)
{
    size_t size = 0;
    (void)b;
    for (int i = 0; i < w.nstaging; i++)
        if (w.staging[i] == host) {
            size = w.staging_size[i];
            w.staging[i] = w.staging[--w.nstaging];
            w.staging_size[i] = w.staging_size[w.nstaging];
            break;
        }
    FUZZ_CHECK(size > 0, "a mapped buffer given back twice, or never made");
    if (kept.count == MAPPED_MAX) {
        free(host);
        return;
    }
    ASAN_POISON_MEMORY_REGION(host, size);
    kept.buf[kept.count] = host;
    kept.size[kept.count++] = size;
}

static dcuda_status_t be_copy(dcu_backend_t *b, void *dst, const void *src, size_t size)
{
    (void)b;
    memcpy(dst, src, size);
    return DCUDA_OK;
}

static dcuda_status_t be_read_start(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                    uint64_t *ticket)
{
    *ticket = 0;
    return be_copy(b, dst, src, size);
}

static int be_read_done(dcu_backend_t *b, uint64_t ticket)
{
    (void)b;
    (void)ticket;
    return 1;
}

static const dcu_backend_ops_t backend_ops = { .name = "fuzz",
                                               .alloc_mapped = be_alloc_mapped,
                                               .free_mapped = be_free_mapped,
                                               .copy_in = be_copy,
                                               .copy_out = be_copy,
                                               .read_start = be_read_start,
                                               .read_done = be_read_done,
                                               .write_start = be_read_start,
                                               .write_done = be_read_done };

static int readable(void *arg, uint64_t addr, uint64_t size)
{
    uint64_t base = (uint64_t)(uintptr_t)w.rank_mem;
    (void)arg;
    return addr >= base && addr < base + READABLE && size <= base + READABLE - addr;
}

/* ---- one input ------------------------------------------------------------------------ */

static void quiet(void *arg, const char *line)
{
    (void)arg;
    (void)line;
}

/* Once: rank memory a large put may read, and the library's messages
 * (the proxy reports what it refuses) kept off stderr. */
static void setup(void)
{
    if (w.rank_mem)
        return;
    w.rank_mem = malloc(READABLE);
    FUZZ_CHECK(w.rank_mem != NULL, "out of memory");
    for (uint32_t i = 0; i < READABLE; i++)
        w.rank_mem[i] = (uint8_t)(i * 7u + (i >> 12));
    dcu_msg_set_sink(quiet, NULL);
}

/* The input's entries into w.shadow (a large put's source is an offset
 * into rank memory there); the last command's payload is padded with
 * zero entries. Returns how many. */
static uint32_t read_entries(fuzz_reader_t *r)
{
    uint32_t n = 0, header = 0;
    while ((r->at < r->size || n < header) && n < MAX_ENTRIES) {
        dcuda_cmd_t *c = &w.shadow[n];
        memset(c, 0, sizeof *c);
        if (r->at < r->size)
            memcpy(c, r->data + r->at, r->size - r->at < 64 ? r->size - r->at : 64);
        r->at += 64;
        if (n == header) {
            uint32_t k = c->op == DCUDA_CMD_PUT ? (uint32_t)c->args[4] : 1u;
            if (c->op == DCUDA_CMD_PUT_READ)
                c->args[4] += (uint64_t)(uintptr_t)w.rank_mem;
            header = n + (k >= 1u && k <= w.s.capacity / 4u ? k : 1u);
        }
        n++;
    }
    return n;
}

/* Writes command c into the queue as its rank would: payload, then the
 * header's seq. */
static void write_command(const command_t *c)
{
    uint32_t mask = w.s.capacity - 1u;
    for (uint32_t i = c->entries; i-- > 0;) {
        uint32_t t = c->ticket + i;
        memcpy((void *)&w.queue[t & mask], &w.shadow[t], sizeof(dcuda_cmd_t));
        if (i == 0)
            atomic_store(&w.queue[t & mask].seq, t + 1u);
    }
}

/* Polls until the proxy has nothing to do twice in a row. */
static void poll_idle(dcu_proxy_t *p)
{
    int idle = 0;
    for (int i = 0; i < 4096 && idle < 2; i++)
        idle = dcu_proxy_poll(p) ? 0 : idle + 1;
}

typedef struct run {
    dcu_proxy_config_t c;
    DCUDA_ATOMIC(uint32_t) cmd_tail, net_barrier, cancel;
} run_t;

static void *zeroed(size_t count, size_t size)
{
    void *p = calloc(count, size);
    FUZZ_CHECK(p != NULL, "out of memory");
    return p;
}

static void config(run_t *r)
{
    int world = w.s.proc_first[w.s.procs];
    memset(r, 0, sizeof *r);
    w.queue = zeroed(w.s.capacity, sizeof(dcuda_cmd_t));
    w.own_table = zeroed((size_t)DCUDA_WIN_TABLE_SLOTS * (size_t)world, sizeof(dcuda_win_entry_t));
    for (size_t i = 0; i < (size_t)DCUDA_WIN_TABLE_SLOTS * (size_t)world; i++)
        w.own_table[i] = (dcuda_win_entry_t){ 0x1000u * i, 64u + i };
    r->c.entries = w.queue;
    r->c.capacity = w.s.capacity;
    r->c.replies = zeroed((size_t)w.s.ranks, sizeof(dcuda_cmd_reply_t));
    r->c.cmd_tail = &r->cmd_tail;
    r->c.ranks = w.s.ranks;
    r->c.net_ops = w.s.net ? &net_ops : NULL;
    r->c.net_env = (dcu_net_env_t){ .process_index = w.s.me, .process_count = w.s.procs };
    r->c.ops = &backend_ops;
    r->c.process_count = w.s.procs;
    r->c.process_index = w.s.me;
    r->c.proc_first = w.s.proc_first;
    r->c.path = w.s.path;
    r->c.own_table = w.own_table;
    r->c.inbox = zeroed((size_t)w.s.ranks * DCUDA_INBOX_ENTRIES, sizeof(dcuda_inbox_entry_t));
    r->c.inbox_tail = zeroed((size_t)w.s.ranks, sizeof(uint32_t));
    r->c.net_barrier = &r->net_barrier;
    r->c.cancel = &r->cancel;
    /* No process here acknowledges: a credit for every message an input makes. */
    r->c.net_credit = (uint64_t)MAX_SENT * DCU_NET_MAX_MESSAGE;
    r->c.inbox_max = 40000u; /* puts in pieces too (the default, 12288, takes each whole) */
    r->c.readable = readable;
}

/* Every answer is to a command of its rank that wanted one. */
static void check_replies(const run_t *r)
{
    for (int k = 0; k < w.s.ranks; k++) {
        const dcuda_cmd_reply_t *rep = &r->c.replies[k];
        uint32_t seq = atomic_load(&rep->seq);
        int asked = 0;
        for (int i = 0; i < w.ncmds && seq; i++)
            asked |= w.shadow[w.cmds[i].ticket].rank == k && w.shadow[w.cmds[i].ticket].tag == seq;
        FUZZ_CHECK(!seq || asked, "rank %d answered %u, a tag it never sent", k, seq);
        FUZZ_CHECK(!seq || rep->status == DCUDA_OK || rep->status == DCUDA_ERR_INVALID_ARG ||
                       rep->status == DCUDA_ERR_PEER || rep->status == DCUDA_ERR_UNSUPPORTED,
                   "rank %d answered with status %d", k, rep->status);
    }
}

/* Check two: the commands through a proxy. */
static void run_proxy(void)
{
    run_t r;
    dcu_proxy_t *p;
    uint32_t tickets = 0;
    config(&r);
    FUZZ_CHECK(dcu_proxy_create(&r.c, &p) == DCUDA_OK, "the proxy cannot be made");
    dcu_proxy_reset(p);
    for (int i = 0; i < w.ncmds;) {
        uint32_t tail = atomic_load(&r.cmd_tail);
        FUZZ_CHECK(tail <= tickets, "the proxy consumed %u entries of %u written", tail, tickets);
        if (w.cmds[i].entries <= w.s.capacity - (tickets - tail)) {
            write_command(&w.cmds[i]);
            tickets += w.cmds[i++].entries;
            continue;
        }
        poll_idle(p);
        if (atomic_load(&r.cmd_tail) == tail)
            break; /* it stopped reading the queue */
    }
    poll_idle(p);
    const char *failure = dcu_proxy_failure(p);
    uint32_t tail = atomic_load(&r.cmd_tail);
    if (w.fails)
        FUZZ_CHECK(failure != NULL, "a refused command did not fail the proxy");
    if (failure && !w.fails)
        FUZZ_CHECK(strstr(failure, "reached WORLD barrier") ||
                       strstr(failure, "sent a put to read") ||
                       strstr(failure, "more fences waiting than ranks"),
                   "the proxy failed on commands the rules allow: %s", failure);
    advance_sync();
    if (!failure)
        FUZZ_CHECK(tail == tickets && w.sync_at == w.nsync && w.reads_at == w.nreads,
                   "consumed %u of %u entries, sent %d of %d messages and %d of %d large puts",
                   tail, tickets, w.sync_at, w.nsync, w.reads_at, w.nreads);
    check_replies(&r);
    dcu_proxy_drain(p);
    dcu_proxy_destroy(p);
    FUZZ_CHECK(w.nstaging == 0 && w.npending == 0, "%d buffers and %d messages left behind",
               w.nstaging, w.npending);
    free(w.queue);
    free(w.own_table);
    free(r.c.replies);
    free(r.c.inbox);
    free((void *)r.c.inbox_tail);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reader_t r = { data, size, 0 };
    setup();
    read_setting(&r, &w.s);
    uint32_t n = read_entries(&r);
    for (uint32_t i = 0; i < n; i++)
        check_entry(&w.shadow[i], &w.s);
    plan(n);
    run_proxy();
    return 0;
}

/* ---- seeds -------------------------------------------------------------------------- */

typedef struct seed {
    uint8_t b[8 + 64 * MAX_ENTRIES];
    size_t n;
} seed_t;

/* A setting: b0 ranks - 1 | capacity (4 << 2 * x) << 2; b1 processes - 1 |
 * me << 2 | other processes' ranks - 1 << 4; b2 a bit per process on the
 * network path. */
static void seed_start(seed_t *s, uint8_t b0, uint8_t b1, uint8_t b2)
{
    memset(s, 0, sizeof *s);
    s->b[0] = b0;
    s->b[1] = b1;
    s->b[2] = b2;
    s->n = 8;
}

static void seed_cmd(seed_t *s, int rank, uint32_t op, uint32_t tag, uint64_t a0, uint64_t a1,
                     uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
    dcuda_cmd_t c;
    memset(&c, 0, sizeof c);
    c.rank = rank;
    c.op = op;
    c.tag = tag;
    c.args[0] = a0, c.args[1] = a1, c.args[2] = a2, c.args[3] = a3, c.args[4] = a4, c.args[5] = a5;
    memcpy(s->b + s->n, &c, sizeof c);
    s->n += sizeof c;
}

/* A PUT of `size` bytes and its payload entries. */
static void seed_put(seed_t *s, int rank, int64_t dst, uint64_t slot, uint64_t offset,
                     uint64_t size, uint64_t tag1)
{
    uint32_t k = 1u + (uint32_t)((size + 63u) / 64u);
    seed_cmd(s, rank, DCUDA_CMD_PUT, 0, (uint64_t)dst, slot, offset, size, k, tag1);
    for (uint64_t i = 0; i < (uint64_t)(k - 1u) * 64u; i++)
        s->b[s->n++] = (uint8_t)(i * 31u + size);
}

void fuzz_seeds(fuzz_emit_fn emit, void *arg)
{
    seed_t s;
    /* 2 ranks, a queue of 16; process 0 of 2, the other (3 ranks) on the
     * network path: every op. */
    seed_start(&s, 0x05, 0x21, 0x02);
    seed_cmd(&s, 0, DCUDA_CMD_PING, 1, 0, 0, 0, 0, 0, 0);
    seed_put(&s, 1, 3, 3, 8, 100, 5);
    seed_cmd(&s, 0, DCUDA_CMD_NOTIFY, 0, 4, 0, 0, 0, 0, 7);
    seed_cmd(&s, 0, DCUDA_CMD_BARRIER, 0, 1, DCUDA_CMD_NO_SLOT, 0, 0, 0, 0);
    seed_cmd(&s, 0, DCUDA_CMD_BARRIER, 0, 2, 3, 0, 0, 0, 0);
    seed_cmd(&s, 1, DCUDA_CMD_PUT_READ, 2, 2, 1, 0, 300, 64, 9);
    seed_cmd(&s, 0, DCUDA_CMD_PUT_READ, 3, 4, 1, 0, 10, READABLE, 0);
    seed_cmd(&s, 1, DCUDA_CMD_PART, 4, 3, 3, 0, 0, 0, 0);
    seed_cmd(&s, 0, DCUDA_CMD_GET, 0, 4, 2 | (uint64_t)5 << 32, 16, 300, 40, 8);
    seed_cmd(&s, 1, DCUDA_CMD_WINDOW, 5, DCUDA_MAX_WINDOWS + 3, 0, 0, 0, 0, 0);
    seed_cmd(&s, 0, DCUDA_CMD_ATOMIC, 6, 3, 1 | (uint64_t)2 << 32 | (uint64_t)8 << 40, 16, 5, 9, 8);
    seed_cmd(&s, 1, DCUDA_CMD_ATOMIC, 7, 4, 2 | (uint64_t)4 << 40, 4, 1, 0, 0);
    emit(arg, s.b, s.n);
    /* 1 rank, a queue of 16: puts that wrap around its end. */
    seed_start(&s, 0x04, 0x01, 0x02);
    for (int i = 0; i < 8; i++)
        seed_put(&s, 0, 1, (uint64_t)i, 64u * (uint64_t)i, 150, (uint64_t)i);
    emit(arg, s.b, s.n);
    /* One process, no network path: pings and an op nobody knows. */
    seed_start(&s, 0x03, 0x00, 0x00);
    seed_cmd(&s, 2, DCUDA_CMD_PING, 5, 0, 0, 0, 0, 0, 0);
    seed_cmd(&s, 3, 11, 4, 0, 0, 0, 0, 0, 0);
    seed_cmd(&s, 0, DCUDA_CMD_PING, 6, 0, 0, 0, 0, 0, 0);
    emit(arg, s.b, s.n);
    /* A large put of two chunks; process 1 of 3, only process 2 on the
     * network path. */
    seed_start(&s, 0x09, 0x15, 0x04);
    seed_cmd(&s, 1, DCUDA_CMD_PUT_READ, 7, 4, 0, 4096, DCU_NET_PUT_CHUNK + 1000, 0, 1);
    emit(arg, s.b, s.n);
    /* A put whose offset and size wrap around 2^64: refused here (not by
     * the receiver). */
    seed_start(&s, 0x04, 0x01, 0x02);
    seed_put(&s, 0, 1, 2, UINT64_MAX - 10u, 100, 0);
    emit(arg, s.b, s.n);
    /* A queue of 4: notifications and empty puts, many laps. */
    seed_start(&s, 0x00, 0x01, 0x02);
    for (int i = 0; i < 12; i++)
        seed_cmd(&s, 0, i % 2 ? DCUDA_CMD_NOTIFY : DCUDA_CMD_PUT, (uint32_t)i % 3, 1, 0, 0, 0, 1,
                 1u + (uint64_t)i);
    emit(arg, s.b, s.n);
}
