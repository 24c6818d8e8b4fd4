/*
 * The proxy's inbox writer (src/proxy/inbox.h) against this file's own
 * consumer, written from the protocol in dcuda/shared/ring.h: a random
 * stream of puts (inline, spanning entries, in pieces, past the largest
 * put the inbox takes) and notifications for one rank, consumed at random moments. Every payload
 * is hostile: where it overlays a later entry, it forms a valid-looking
 * header (every flag right) for the position that entry has one lap later,
 * so an inbox that ever lets a rank poll stale payload is caught. Checks: the
 * consumer's memory and counts equal a reference applied in arrival order,
 * at every step; each message is told written (landed) once, in arrival
 * order (a put in pieces once, with its last piece), and what is held is
 * what was delivered and not told yet; nothing
 * is held once the consumer has drained; settle applies what is left.
 * Reads (a get's turn at the target) are drawn too: each must see exactly
 * the memory that the messages before it in arrival order made (a hash of
 * the reference at its delivery), be served in arrival order, and hold
 * the messages after it back until served.
 * First, by hand: a large put is copied at once behind unread
 * notifications (they write nothing), and waits behind an unread put with
 * data until the SYNC after it is consumed; so does a read, and a put
 * after it waits for it. Deterministic, well under a second.
 *
 * With the argument `kept`, the same stream runs with a keeper (the
 * proxy's receive buffers, spares.h): each large put arrives in a buffer
 * of its own, which the keeper keeps three times in four; the backend
 * writes kept bytes late (at a look 0 to 3 looks after it started) and
 * the rest with a blocking copy. A buffer not kept is overwritten as soon
 * as the delivery returns, and a kept one as soon as it is given back, so
 * an inbox that reads bytes it no longer owns is caught by the reference.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/inbox.h"
#include "test_util.h"

#define MEMORY 65536u /* the rank's memory the puts land in */
#define TAGS 4
#define STEPS 20000
/* The largest put delivered in pieces here (NET_INBOX_MAX). */
#define PIECES_MAX (2u * DCU_INBOX_PIECE_MAX + 100u)
/* Largest put drawn: past PIECES_MAX (copied by the proxy). */
#define PUT_MAX (PIECES_MAX + 8192u)

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t next(uint32_t bound) { return (uint32_t)(test_rng(&rng) % bound); }

static dcuda_status_t copy_in(dcu_backend_t *b, void *dst, const void *src, size_t size)
{
    (void)b;
    memcpy(dst, src, size);
    return DCUDA_OK;
}

/* The backend's writes (kept mode): made in order, each at a look a random
 * number of looks after it started. */
#define WRITES_MAX DCU_BACKEND_WRITES
static struct {
    void *dst;
    const void *src;
    size_t size;
    int looks;
} writes[WRITES_MAX];
static uint64_t writes_started, writes_done;
static int writes_late;      /* writes that took a look or more */
static int force_looks = -1; /* >= 0: every write takes this many looks */

static dcuda_status_t write_start(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                  uint64_t *ticket)
{
    (void)b;
    TEST_CHECK(writes_started - writes_done < WRITES_MAX, "more than %d writes in flight",
               WRITES_MAX);
    uint64_t t = ++writes_started;
    writes[t % WRITES_MAX].dst = dst;
    writes[t % WRITES_MAX].src = src;
    writes[t % WRITES_MAX].size = size;
    writes[t % WRITES_MAX].looks = force_looks >= 0 ? force_looks : (int)next(4);
    *ticket = t;
    return DCUDA_OK;
}

static int write_done(dcu_backend_t *b, uint64_t ticket)
{
    (void)b;
    if (ticket <= writes_done)
        return 1;
    if (writes[ticket % WRITES_MAX].looks-- > 0) {
        writes_late++;
        return 0;
    }
    for (; writes_done < ticket; writes_done++) {
        uint64_t t = writes_done + 1u;
        memcpy(writes[t % WRITES_MAX].dst, writes[t % WRITES_MAX].src, writes[t % WRITES_MAX].size);
    }
    return 1;
}

/* The receive buffer a large put arrives in (kept mode) and the keeper. */
typedef struct frame {
    unsigned char *buf;
    uint32_t size;
    int refs;
} frame_t;
static frame_t *arriving; /* during a delivery */
static int kept_mode, keeps, frames_live;
static int force_keep; /* keep every time */

static void frame_gone(frame_t *f)
{
    memset(f->buf, 0xee, f->size); /* whatever still reads it sees this */
    free(f->buf);
    free(f);
    frames_live--;
}

static void *keep(void *arg)
{
    (void)arg;
    if (!arriving || (!force_keep && next(4) == 0))
        return NULL;
    arriving->refs++;
    keeps++;
    return arriving;
}

static void unkeep(void *arg, void *token)
{
    (void)arg;
    frame_t *f = token;
    TEST_CHECK(f->refs > 0, "a buffer given back more often than kept");
    if (--f->refs == 0 && f != arriving)
        frame_gone(f);
}

/* Delivers a put of n bytes of `payload` (kept mode: from a buffer of its
 * own, overwritten once the inbox no longer owns it). */
static dcuda_status_t deliver_put(dcu_inboxes_t *in, uint64_t dst, const unsigned char *payload,
                                  uint32_t n, uint32_t tag, dcu_inbox_source_t src)
{
    if (!kept_mode)
        return dcu_inbox_deliver(in, 0, dst, payload, n, tag, src);
    frame_t *f = malloc(sizeof *f);
    TEST_CHECK(f && (f->buf = malloc(n ? n : 1u)), "out of memory");
    memcpy(f->buf, payload, n);
    f->size = n;
    f->refs = 0;
    frames_live++;
    arriving = f;
    dcuda_status_t st = dcu_inbox_deliver(in, 0, dst, f->buf, n, tag, src);
    arriving = NULL;
    if (f->refs == 0)
        frame_gone(f);
    return st;
}

/* Looks at the writes in flight until they are done (kept mode). */
static void finish_writes(dcu_inboxes_t *in)
{
    for (int i = 0; i < 8; i++)
        TEST_CHECK(dcu_inbox_retry(in) >= 0, "retry failed");
}

static dcuda_inbox_entry_t ring[DCUDA_INBOX_ENTRIES];
static DCUDA_ATOMIC(uint32_t) tail;
static unsigned char memory[MEMORY], reference[MEMORY];
static uint32_t counted[TAGS], expected[TAGS];
static uint32_t pos; /* the consumer's position */
/* Messages delivered and told written: each carries its number as its
 * sender, and its number + 100 as its bytes. */
static int delivered, landed;
static uint64_t delivered_bytes, landed_bytes;
static int syncs;   /* SYNC messages seen (a large put after inbox data) */
static int wrapped; /* payloads that went on at the ring's start */

static void on_landed(void *arg, int from, uint32_t bytes)
{
    (void)arg;
    TEST_CHECK(from == landed && bytes == (uint32_t)from + 100u,
               "message %d (%u bytes) told written, expected message %d", from, bytes, landed);
    landed++;
    landed_bytes += bytes;
}

/* A read as this file asks for one: its number among the messages, the
 * bytes it counts, the memory it reads, and the hash of what it must see. */
typedef struct read_req {
    int number;
    uint32_t bytes, at, n;
    uint32_t turns; /* the turns it takes (a get's answer waiting for credit) */
    uint64_t want;
} read_req_t;
static int reads, reads_served;

static uint64_t hash(const unsigned char *p, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The proxy's side of a read: over its turns it sees what the messages
 * before it made (nothing after it is written meanwhile), and counts as a
 * message told written, in order. */
static int on_read(void *arg, int r, void *data, uint32_t size)
{
    read_req_t *q = data;
    (void)arg;
    TEST_CHECK(r == 0 && size == sizeof *q, "a read of rank %d, %u bytes of request", r, size);
    TEST_CHECK(hash(memory + q->at, q->n) == q->want,
               "read %d (%u bytes at %u) does not see what arrived before it", q->number, q->n,
               q->at);
    if (q->turns-- > 0)
        return 0;
    reads_served++;
    return 1;
}

/* The next message's source (its number). */
static dcu_inbox_source_t source(void)
{
    dcu_inbox_source_t src = { delivered, (uint32_t)delivered + 100u };
    delivered++;
    delivered_bytes += src.bytes;
    return src;
}

/* Entries of a put of n bytes, from the protocol: 12 bytes in the first,
 * 64 in each after it. */
static uint32_t entries_of(uint32_t n)
{
    return n <= DCUDA_INBOX_INLINE ? 1u : 1u + (n - DCUDA_INBOX_INLINE + 63u) / 64u;
}

/* The payload of the message at the consumer's position past its first
 * entry: n bytes from the next entry on, wrapping to the ring's start. */
static void payload_from_ring(unsigned char *dst, uint32_t n)
{
    const size_t ring_bytes = sizeof ring;
    size_t at = ((pos + 1u) % DCUDA_INBOX_ENTRIES) * sizeof ring[0];
    size_t first = n < ring_bytes - at ? n : ring_bytes - at;
    memcpy(dst, (const char *)ring + at, first);
    memcpy(dst + first, ring, n - first);
    wrapped += first < n;
}

/* The consumer (a rank): applies messages in order, at most `budget`. */
static int consume(int budget)
{
    int done = 0;
    while (done < budget) {
        const dcuda_inbox_entry_t *e = &ring[pos % DCUDA_INBOX_ENTRIES];
        uint32_t v[DCUDA_INBOX_WORDS];
        int valid = 1;
        for (int i = 0; i < DCUDA_INBOX_WORDS; i++) {
            uint64_t x = atomic_load_explicit(&e->word[i], memory_order_acquire);
            valid &= (uint32_t)(x >> 32) == pos + 1u;
            v[i] = (uint32_t)x;
        }
        if (!valid)
            break;
        uint32_t kind = v[0] & 0xffu, entries = (v[0] >> 8) & 0xffu;
        TEST_CHECK(entries >= 1 && entries <= DCUDA_INBOX_MESSAGE_ENTRIES,
                   "message at %u claims %u entries", pos, entries);
        if (kind == DCUDA_INBOX_PUT) {
            uintptr_t at = (uintptr_t)((uint64_t)v[3] | (uint64_t)v[4] << 32) - (uintptr_t)memory;
            TEST_CHECK(at <= MEMORY && v[2] <= MEMORY - at, "put outside the memory");
            for (uint32_t j = 0; j < v[2] && j < DCUDA_INBOX_INLINE; j++)
                memory[at + j] = (unsigned char)(v[5u + j / 4u] >> (8u * (j % 4u)));
            if (v[2] > DCUDA_INBOX_INLINE)
                payload_from_ring(memory + at + DCUDA_INBOX_INLINE, v[2] - DCUDA_INBOX_INLINE);
        } else {
            TEST_CHECK(kind == DCUDA_INBOX_NOTIFY || kind == DCUDA_INBOX_SYNC, "kind %u at %u",
                       kind, pos);
            syncs += kind == DCUDA_INBOX_SYNC;
        }
        TEST_CHECK(entries == (kind == DCUDA_INBOX_PUT ? entries_of(v[2]) : 1u),
                   "message at %u of kind %u and %u bytes claims %u entries", pos, kind, v[2],
                   entries);
        if (v[1])
            counted[v[1] - 1u]++;
        pos += entries ? entries : 1u;
        done++;
    }
    atomic_store_explicit(&tail, pos, memory_order_release);
    return done;
}

/* A payload whose bytes at later entries' first words look like headers a
 * lap from now (every flag right), given the writer's head when it is
 * written (`head`). */
static void hostile(unsigned char *p, uint32_t n, uint32_t head)
{
    for (uint32_t i = 0; i < n; i++)
        p[i] = (unsigned char)next(256);
    /* Payload byte DCUDA_INBOX_INLINE + 64 (j - 1) starts the entry j after the header. */
    for (uint32_t off = DCUDA_INBOX_INLINE, j = 1; off + 64u <= n; off += 64u, j++) {
        uint32_t flag = head + j + DCUDA_INBOX_ENTRIES + 1u;
        for (uint32_t k = 0; k < DCUDA_INBOX_WORDS; k++)
            memcpy(p + off + 8u * k + 4u, &flag, 4);
        uint32_t w0 = DCUDA_INBOX_PUT | 1u << 8;
        memcpy(p + off, &w0, 4);
    }
}

/* Delivers a put of n hostile bytes at memory + at (tag 0: none). */
static void put(dcu_inboxes_t *in, unsigned char *payload, uint32_t at, uint32_t n, uint32_t tag)
{
    hostile(payload, n, dcu_inbox_head(in, 0));
    TEST_STATUS(deliver_put(in, (uint64_t)(uintptr_t)(memory + at), payload, n, tag, source()),
                DCUDA_OK);
    memcpy(reference + at, payload, n);
    if (tag)
        expected[tag - 1u]++;
}

/* Asks for a read of n bytes at memory + at, done in 1 + turns turns: it
 * must see the reference as it is now. */
static void ask_read(dcu_inboxes_t *in, uint32_t at, uint32_t n, uint32_t turns)
{
    dcu_inbox_source_t src = source();
    read_req_t q = { src.from, src.bytes, at, n, turns, hash(reference + at, n) };
    TEST_STATUS(dcu_inbox_read(in, 0, &q, sizeof q, src), DCUDA_OK);
    reads++;
}

/* A read waits behind an unread put with data until the SYNC after it is
 * consumed, then is served before the put that arrived after it. */
static void read_behind_unread(dcu_inboxes_t *in, unsigned char *payload)
{
    put(in, payload, 1000u, 100u, 0u); /* data in the inbox, unread */
    ask_read(in, 1000u, 200u, 1u);     /* and one more turn once its turn came */
    TEST_CHECK(dcu_inbox_held(in) == 1 && reads_served == 0,
               "a read did not wait behind an unread put");
    put(in, payload, 1050u, 100u, 1u); /* after it: the read must not see it */
    TEST_CHECK(dcu_inbox_held(in) == 2, "a put did not wait behind a read");
    for (int round = 0; round < 4 && dcu_inbox_held(in); round++) {
        consume(1 << 30);
        TEST_CHECK(dcu_inbox_retry(in) >= 0, "retry failed");
    }
    consume(1 << 30);
    TEST_CHECK(dcu_inbox_held(in) == 0 && reads_served == 1 && syncs == 1 &&
                   counted[0] == expected[0],
               "the read behind data: %zu held, %d served, %d SYNCs", dcu_inbox_held(in),
               reads_served, syncs);
    ask_read(in, 1000u, 200u, 0u); /* the put after the first read asks for a SYNC again */
    for (int round = 0; round < 4 && dcu_inbox_held(in); round++) {
        consume(1 << 30);
        TEST_CHECK(dcu_inbox_retry(in) >= 0, "retry failed");
    }
    ask_read(in, 0u, 64u, 0u); /* nothing written since the SYNC: served at once */
    TEST_CHECK(reads_served == 3 && dcu_inbox_held(in) == 0,
               "reads after a SYNC: %d served, %zu held", reads_served, dcu_inbox_held(in));
    TEST_CHECK(memcmp(memory, reference, MEMORY) == 0, "the memory differs from the reference");
}

/* What unread messages hold a large put back: notifications do not, a put
 * with data does (until the SYNC after it is consumed). */
static void large_behind_unread(dcu_inboxes_t *in, unsigned char *payload)
{
    uint32_t large = PIECES_MAX + 100u;
    TEST_STATUS(dcu_inbox_deliver(in, 0, 0u, NULL, 0u, 1u, source()), DCUDA_OK);
    expected[0]++;
    put(in, payload, 0u, large, 2u);
    finish_writes(in);
    TEST_CHECK(dcu_inbox_held(in) == 0 && memcmp(memory, reference, large) == 0,
               "a large put waited behind an unread notification");
    put(in, payload, 8192u, 100u, 0u); /* data in the inbox, unread */
    put(in, payload, 8192u + 50u, large, 3u);
    TEST_CHECK(dcu_inbox_held(in) == 1, "a large put did not wait behind an unread put");
    for (int round = 0; round < 4 && dcu_inbox_held(in); round++) {
        consume(1 << 30);
        TEST_CHECK(dcu_inbox_retry(in) >= 0, "retry failed");
    }
    TEST_CHECK(dcu_inbox_held(in) == 0 && syncs == 1,
               "the large put behind data: %zu held, %d SYNCs", dcu_inbox_held(in), syncs);
    consume(1 << 30);
    TEST_CHECK(memcmp(memory, reference, MEMORY) == 0, "the memory differs from the reference");
}

/* Kept puts behind a write in flight start theirs too, but only while
 * the inbox has room for all their notifications: with room for two, the
 * third waits until the rank has read some (kept mode). */
static void writes_behind_write(dcu_inboxes_t *in, unsigned char *payload)
{
    while (dcu_inbox_head(in, 0) - pos < DCUDA_INBOX_ENTRIES - 3u) { /* unread notifications */
        TEST_STATUS(dcu_inbox_deliver(in, 0, 0u, NULL, 0u, 1u, source()), DCUDA_OK);
        expected[0]++;
    }
    force_keep = 1;
    force_looks = 2;
    uint64_t started = writes_started;
    for (uint32_t i = 0; i < 4u; i++)
        put(in, payload, 16384u + 4000u * i, PIECES_MAX + 1000u, 2u + (i & 1u));
    for (int i = 0; i < 8; i++)
        TEST_CHECK(dcu_inbox_retry(in) >= 0, "retry failed");
    TEST_CHECK(writes_started - started == 2u && dcu_inbox_held(in) == 2,
               "behind a write with room for two notifications: %llu writes started, %zu held",
               (unsigned long long)(writes_started - started), dcu_inbox_held(in));
    force_keep = 0;
    force_looks = -1;
    for (int round = 0; round < 16 && dcu_inbox_held(in); round++) {
        consume(1 << 30);
        TEST_CHECK(dcu_inbox_retry(in) >= 0, "retry failed");
    }
    consume(1 << 30);
    TEST_CHECK(dcu_inbox_held(in) == 0 && memcmp(memory, reference, MEMORY) == 0,
               "the writes behind a write: %zu held, memory differs: %d", dcu_inbox_held(in),
               memcmp(memory, reference, MEMORY) != 0);
    for (int t = 0; t < TAGS; t++)
        TEST_CHECK(counted[t] == expected[t], "tag %d: counted %u, expected %u", t, counted[t],
                   expected[t]);
}

int main(int argc, char **argv)
{
    static const dcu_backend_ops_t ops = { .copy_in = copy_in,
                                           .write_start = write_start,
                                           .write_done = write_done };
    kept_mode = argc > 1 && strcmp(argv[1], "kept") == 0;
    dcu_inboxes_t *in = dcu_inboxes_create(ring, &tail, 1, &ops, NULL, on_landed, NULL, PIECES_MAX);
    TEST_CHECK(in != NULL, "cannot create the inbox");
    dcu_inboxes_on_read(in, on_read, NULL);
    if (kept_mode) {
        const dcu_inbox_keeper_t keeper = { keep, unkeep, NULL };
        dcu_inboxes_on_keep(in, &keeper);
    }
    static unsigned char payload[PUT_MAX];
    int puts = 0, pieces = 0, large = 0, held_seen = 0;
    large_behind_unread(in, payload);
    syncs = 0;
    read_behind_unread(in, payload);
    syncs = 0;
    if (kept_mode)
        writes_behind_write(in, payload);
    for (int step = 0; step < STEPS; step++) {
        uint32_t what = next(11);
        if (what < 7) {
            uint32_t n = what < 4   ? next(64)
                         : what < 6 ? next(DCU_INBOX_PIECE_MAX + 1u)
                                    : next(PUT_MAX + 1u);
            uint32_t at = next(MEMORY - n + 1u), tag = next(TAGS + 1u);
            hostile(payload, n, dcu_inbox_head(in, 0));
            TEST_STATUS(
                deliver_put(in, (uint64_t)(uintptr_t)(memory + at), payload, n, tag, source()),
                DCUDA_OK);
            memcpy(reference + at, payload, n);
            pieces += n > DCU_INBOX_PIECE_MAX && n <= PIECES_MAX;
            large += n > PIECES_MAX;
            puts++;
            if (tag)
                expected[tag - 1u]++;
        } else if (what < 8) {
            uint32_t tag = 1u + next(TAGS);
            TEST_STATUS(dcu_inbox_deliver(in, 0, 0u, NULL, 0u, tag, source()), DCUDA_OK);
            expected[tag - 1u]++;
        } else if (what < 9) {
            uint32_t n = next(2048u);
            ask_read(in, next(MEMORY - n + 1u), n, next(3));
        } else {
            consume((int)next(8));
        }
        held_seen |= dcu_inbox_held(in) > 0;
        TEST_CHECK(dcu_inbox_retry(in) >= 0, "retry failed");
        TEST_CHECK((dcu_inbox_held(in) > 0) == (delivered > landed) &&
                       dcu_inbox_held_bytes(in) == delivered_bytes - landed_bytes,
                   "step %d: %zu messages (%llu bytes) held, %d (%llu) not told written", step,
                   dcu_inbox_held(in), (unsigned long long)dcu_inbox_held_bytes(in),
                   delivered - landed, (unsigned long long)(delivered_bytes - landed_bytes));
    }
    /* Drain: the consumer applies everything, the writer writes what it held. */
    for (int rounds = 0; rounds < 100000; rounds++) {
        TEST_CHECK(dcu_inbox_retry(in) >= 0,
                   "retry failed"); /* a write may end without room made */
        int applied = consume(1 << 30);
        if (!applied && !dcu_inbox_held(in))
            break;
    }
    TEST_CHECK(dcu_inbox_held(in) == 0 && dcu_inbox_held_bytes(in) == 0 && landed == delivered,
               "%zu messages still held, %d of %d told written", dcu_inbox_held(in), landed,
               delivered);
    TEST_CHECK(memcmp(memory, reference, MEMORY) == 0, "the memory differs from the reference");
    for (int t = 0; t < TAGS; t++)
        TEST_CHECK(counted[t] == expected[t], "tag %d: counted %u, expected %u", t, counted[t],
                   expected[t]);
    TEST_CHECK(held_seen && large > 100 && pieces > 100 && syncs > 0 && wrapped > 100,
               "the stream never filled the inbox (%d in pieces, %d large, %d syncs, %d "
               "payloads wrapped)",
               pieces, large, syncs, wrapped);
    TEST_CHECK(reads > 1000 && reads_served == reads, "%d of %d reads served", reads_served, reads);

    if (kept_mode)
        TEST_CHECK(keeps > 100 && writes_late > 100 && frames_live == 0,
                   "kept %d puts, %d writes late, %d buffers never given back", keeps, writes_late,
                   frames_live);

    /* Settle drops a read still held (nobody waits for it any more); the
     * unread put before it wraps to the ring's start, which settle follows. */
    while (dcu_inbox_head(in, 0) % DCUDA_INBOX_ENTRIES != DCUDA_INBOX_ENTRIES - 2u) {
        TEST_STATUS(dcu_inbox_deliver(in, 0, 0u, NULL, 0u, 1u, source()), DCUDA_OK);
        expected[0]++;
        consume(1 << 30);
    }
    put(in, payload, 40000u, 100u, 0u); /* three entries: 254, 255 and 0 */
    ask_read(in, 0u, 100u, 0u);
    TEST_CHECK(dcu_inbox_held(in) == 1, "the last read was not held behind unread data");
    /* ... and applies a large put held behind it (kept: from its buffer). */
    put(in, payload, 4096u, PIECES_MAX + 64u, 0u);
    landed++; /* settle applies it untold, as the put behind it */

    /* Settle: what a rank left unread is applied by the proxy. */
    hostile(payload, 100, dcu_inbox_head(in, 0));
    TEST_STATUS(dcu_inbox_deliver(in, 0, (uint64_t)(uintptr_t)memory, payload, 100, 0, source()),
                DCUDA_OK);
    memcpy(reference, payload, 100);
    TEST_STATUS(dcu_inbox_settle(in), DCUDA_OK);
    TEST_CHECK(memcmp(memory, reference, MEMORY) == 0, "settle did not apply the last put");
    uint32_t t = atomic_load(&tail);
    uint64_t next_word = atomic_load(&ring[t % DCUDA_INBOX_ENTRIES].word[0]);
    TEST_CHECK((int32_t)(t - pos) >= 3 && (uint32_t)(next_word >> 32) != t + 1u,
               "settle did not mark the inbox consumed (tail %u, consumer at %u)", t, pos);
    TEST_CHECK(reads_served == reads - 1, "settle served a read");

    /* The next run starts at the tail, and its first put asks for a SYNC of
     * its own: the last run's (pending when settled) is not this one's. */
    pos = t;
    landed += 2; /* settle dropped the read and applied the put behind it: never told */
    if (kept_mode) {
        TEST_CHECK(frames_live == 0, "settle kept %d buffers", frames_live);
        /* A kept put's write still in flight when the run ends: settle waits for it. */
        for (int tries = 0; tries < 64 && frames_live == 0; tries++) {
            put(in, payload, 20000u, PIECES_MAX + 8u, 0u);
            if (frames_live == 0) { /* not kept this time, or written at once */
                finish_writes(in);
                landed = delivered;
                landed_bytes = delivered_bytes;
            }
        }
        TEST_CHECK(frames_live == 1 && dcu_inbox_held(in) == 1, "no write left in flight");
        TEST_STATUS(dcu_inbox_settle(in), DCUDA_OK);
        TEST_CHECK(frames_live == 0 && memcmp(memory, reference, MEMORY) == 0,
                   "settle did not finish a write in flight");
        landed = delivered;
        landed_bytes = delivered_bytes;
        pos = atomic_load(&tail);
    }
    int before = reads_served;
    put(in, payload, 300u, 40u, 0u);
    ask_read(in, 300u, 40u, 0u);
    TEST_CHECK(dcu_inbox_held(in) == 1 && reads_served == before,
               "a read of the next run did not wait for its put's SYNC");
    for (int round = 0; round < 4 && dcu_inbox_held(in); round++) {
        consume(1 << 30);
        TEST_CHECK(dcu_inbox_retry(in) >= 0, "retry failed");
    }
    TEST_CHECK(reads_served == before + 1, "the next run's read was not served");
    dcu_inboxes_destroy(in);
    printf("inbox: %d puts (%d in pieces, %d copied, %d payloads wrapped), all applied in "
           "order; %d reads, each saw what arrived before it\n",
           puts, pieces, large, wrapped, reads);
    return test_failures ? 1 : 0;
}
