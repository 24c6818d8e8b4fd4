/*
 * The proxy's side of its ranks' inboxes (see inbox.h and shared/ring.h).
 *
 * A message's payload past its first entry fills whole entries as plain
 * bytes, so an entry that held payload could look like a header to a rank
 * polling it later. The proxy therefore clears the first word of the entry
 * after every message it writes before releasing the message, and keeps
 * one entry of each ring free for that: the entry a rank polls next is
 * either the next message's header or cleared. (A GPU rank reads headers
 * with relaxed loads; it sees the clear in practice, since it polls the
 * next entry only after using the message before it, but no acquire orders
 * the two. Payload forging all eight flags of a header is what that would
 * take.)
 */
#include "inbox.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

#define INBOX_MASK (DCUDA_INBOX_ENTRIES - 1u)
#define ENTRY_BYTES sizeof(dcuda_inbox_entry_t)
#define RING_BYTES (DCUDA_INBOX_ENTRIES * ENTRY_BYTES)

DCUDA_STATIC_ASSERT(DCU_INBOX_PIECE_MAX <= DCUDA_INBOX_MESSAGE_MAX &&
                        DCUDA_INBOX_MESSAGE_ENTRIES + 1u <= DCUDA_INBOX_ENTRIES,
                    "a piece is one message, which fits an empty inbox with its free entry");

/* What a held item is. */
enum { HELD_NOTIFY = 0, HELD_PUT, HELD_READ, HELD_ATOMIC };

/* An atomic written into an inbox whose answer was not read yet. */
typedef struct due {
    struct due *next;
    uint32_t pos; /* its first entry */
    int from;
    uint64_t token;
} due_t;

/* A message that waits for room, or a read that waits for its turn, or a
 * large put whose bytes the keeper keeps, while it waits or is written. */
typedef struct held {
    struct held *next;
    dcu_inbox_source_t src;
    uint64_t dst;
    uint32_t count, tag;
    int kind;          /* HELD_*: a READ's data is its request */
    const char *bytes; /* a put's: `data`, or the keeper's buffer */
    void *kept;        /* the keeper's token for them, or NULL */
    uint64_t ticket;   /* of the backend's write, while `writing` */
    int writing;
    _Alignas(16) char data[]; /* a READ's request is read in place */
} held_t;

typedef struct writer {
    uint32_t head;    /* entries written */
    uint32_t seen;    /* entries the rank had consumed when its count was last read */
    int dirty;        /* the rank may have written data from its inbox since it released */
    int sync_pending; /* a SYNC is written and not yet known consumed */
    uint32_t sync_at; /* its position */
    held_t *first, *last;
    due_t *due, *due_last; /* atomics written, in order, not yet answered */
} writer_t;

struct dcu_inboxes {
    dcuda_inbox_entry_t *entries;
    DCUDA_ATOMIC(uint32_t) * tails;
    int ranks;
    const dcu_backend_ops_t *ops;
    dcu_backend_t *backend;
    dcu_inbox_landed_fn landed;
    void *landed_arg;
    uint32_t pieces_max;      /* largest put delivered through the inbox (in pieces) */
    dcu_inbox_serve_fn serve; /* serves a read once its turn came */
    void *serve_arg;
    dcu_inbox_keeper_t keeper;  /* keeps large puts' bytes where they arrived */
    dcu_inbox_answer_fn answer; /* told an atomic's answer */
    void *answer_arg;
    size_t dues;    /* atomics not yet answered, of every rank */
    int own_writes; /* backend writes in flight, unless shared */
    int *writes;    /* those of everyone who writes through the backend */
    size_t held;
    uint64_t held_bytes;
    writer_t w[];
};

/* Entries of a put of `count` bytes: the first holds 12 of them. */
static uint32_t entries_for(uint32_t count)
{
    if (count <= DCUDA_INBOX_INLINE)
        return 1u;
    return 1u + (uint32_t)((count - DCUDA_INBOX_INLINE + ENTRY_BYTES - 1u) / ENTRY_BYTES);
}

static uint64_t word(uint32_t data, uint32_t flag) { return (uint64_t)flag << 32 | data; }

/* 4 bytes of p (n of them: the rest zero), little-endian as the rank reads them. */
static uint32_t bytes4(const unsigned char *p, uint32_t n)
{
    uint32_t v = 0;
    for (uint32_t i = 0; i < n && i < 4u; i++)
        v |= (uint32_t)p[i] << (8u * i);
    return v;
}

static dcuda_inbox_entry_t *entry_at(const dcu_inboxes_t *in, int r, uint32_t pos)
{
    return &in->entries[(size_t)r * DCUDA_INBOX_ENTRIES + (pos & INBOX_MASK)];
}

static uint32_t consumed(const dcu_inboxes_t *in, int r)
{
    return atomic_load_explicit(&in->tails[r], memory_order_acquire);
}

/* Is a put of `count` bytes written into rank memory by the proxy (too
 * large for the inbox) rather than carried in pieces through it? */
static int copied(const dcu_inboxes_t *in, const void *data, uint32_t count)
{
    return data && count > in->pieces_max;
}

/* The byte of its ring where the payload of the message at `pos` starts
 * (the entry after its first), and how many of its n bytes lie before the
 * ring's end: the rest wraps to the ring's start. */
static size_t payload_at(uint32_t pos) { return ((pos + 1u) & INBOX_MASK) * ENTRY_BYTES; }
static size_t before_end(size_t at, size_t n) { return n < RING_BYTES - at ? n : RING_BYTES - at; }

/* Writes the n payload bytes of the message at `pos` into rank r's ring. */
static void payload_to_ring(dcu_inboxes_t *in, int r, uint32_t pos, const unsigned char *p,
                            size_t n)
{
    char *ring = (char *)entry_at(in, r, 0u);
    size_t at = payload_at(pos), first = before_end(at, n);
    memcpy(ring + at, p, first);
    memcpy(ring, p + first, n - first);
}

/* count bytes into rank memory at dst (a backend copy). */
static dcuda_status_t copy_in(dcu_inboxes_t *in, uint64_t dst, const void *data, uint32_t count)
{
    return count ? in->ops->copy_in(in->backend, (void *)(uintptr_t)dst, data, count) : DCUDA_OK;
}

/* Publishes the message of k entries at rank r's head whose first entry's
 * data halves are v (its payload entries written already): clears the
 * entry after it, then stores every word of the first entry with its
 * flag, with release, the first word last; the head moves past it. */
static void publish(dcu_inboxes_t *in, int r, uint32_t k, const uint32_t v[DCUDA_INBOX_WORDS])
{
    writer_t *w = &in->w[r];
    dcuda_inbox_entry_t *e = entry_at(in, r, w->head);
    atomic_store_explicit(&entry_at(in, r, w->head + k)->word[0], 0u, memory_order_relaxed);
    uint32_t flag = w->head + 1u;
    for (int i = DCUDA_INBOX_WORDS - 1; i >= 0; i--)
        atomic_store_explicit(&e->word[i], word(v[i], flag), memory_order_release);
    w->head += k;
}

/* Writes a message of k entries at the head (room checked), clearing the
 * entry after it, and releases it: its plain bytes, then every word of
 * its first entry with its flag. */
static void write_message(dcu_inboxes_t *in, int r, uint32_t kind, uint32_t flags, uint32_t k,
                          uint32_t tag, uint64_t dst, const void *data, uint32_t count)
{
    writer_t *w = &in->w[r];
    const unsigned char *p = data;
    uint32_t n = count < DCUDA_INBOX_INLINE ? count : DCUDA_INBOX_INLINE;
    if (count > n)
        payload_to_ring(in, r, w->head, p + n, count - n);
    uint32_t v[DCUDA_INBOX_WORDS] = { DCUDA_INBOX_HEAD(kind, k, flags), tag, count, (uint32_t)dst,
                                      (uint32_t)(dst >> 32) };
    for (uint32_t i = 0; i < 3u; i++)
        v[5u + i] = 4u * i < n ? bytes4(p + 4u * i, n - 4u * i) : 0u;
    publish(in, r, k, v);
    w->dirty |= kind == DCUDA_INBOX_PUT && count > 0;
}

/* Is there room for a message of k entries at rank r's head, with one
 * entry left free (see above)? The rank's count is read again only when
 * the count last read leaves too little room: it only grows, and a read of
 * it costs the host a miss each time a GPU rank wrote it. */
static int fits(dcu_inboxes_t *in, int r, uint32_t k)
{
    writer_t *w = &in->w[r];
    if (w->head - w->seen + k + 1u <= DCUDA_INBOX_ENTRIES)
        return 1;
    w->seen = consumed(in, r);
    if (w->due && (int32_t)(w->seen - w->due->pos) > 0) /* its answer is still there */
        w->seen = w->due->pos;
    return w->head - w->seen + k + 1u <= DCUDA_INBOX_ENTRIES;
}

/* A put too large for the inbox may be copied into rank r's memory once
 * the rank applied every put before it that came through the inbox, and
 * released what it wrote doing so: 1 when it may, 0 not yet (a SYNC asks
 * for the release). Notifications still unread do not hold it back: they
 * write nothing the copy could overwrite or be overwritten by. */
static int ready_for_copy(dcu_inboxes_t *in, int r)
{
    writer_t *w = &in->w[r];
    if (w->sync_pending) { /* consumed: its count was published with release */
        if ((int32_t)(consumed(in, r) - (w->sync_at + 1u)) < 0)
            return 0;
        w->sync_pending = 0;
        w->dirty = 0;
    }
    if (!w->dirty)
        return 1;
    if (!fits(in, r, 1u)) /* no room for the SYNC yet */
        return 0;
    w->sync_at = w->head;
    write_message(in, r, DCUDA_INBOX_SYNC, 0u, 1u, 0u, 0u, NULL, 0u);
    w->sync_pending = 1;
    return 0;
}

/* Writes one message if there is room: 1 written, 0 no room yet, -1 the
 * copy of a large put failed. A large put's room (for its notification)
 * is checked before its data is copied, so a copy is never repeated. */
static int try_write(dcu_inboxes_t *in, int r, uint64_t dst, const void *data, uint32_t count,
                     uint32_t tag)
{
    int copy = copied(in, data, count);
    if (copy && !ready_for_copy(in, r))
        return 0;
    int entry = !copy || tag;             /* an untagged copied put writes no entry */
    uint32_t carried = copy ? 0u : count; /* payload bytes in the inbox */
    uint32_t flags = copy || carried > DCUDA_INBOX_INLINE ? DCUDA_INBOX_ACQUIRE : 0u;
    uint32_t k = data && !copy ? entries_for(carried) : 1u;
    if (entry && !fits(in, r, k))
        return 0;
    if (copy && copy_in(in, dst, data, count) != DCUDA_OK)
        return -1;
    if (!entry)
        return 1;
    /* A copied put's notification: the rank acquires what the copy wrote;
     * a long payload's: the entries after the first. */
    write_message(in, r, data && !copy ? DCUDA_INBOX_PUT : DCUDA_INBOX_NOTIFY, flags, k, tag, dst,
                  copy ? NULL : data, carried);
    return 1;
}

/* Writes atomic a for rank r's word at dst if there is room (its answer
 * then due): 1 written, 0 no room yet, -1 out of memory. A word not
 * aligned to its width asks for no notification: the rank refuses it. */
static int try_atomic(dcu_inboxes_t *in, int r, uint64_t dst, const dcu_inbox_atomic_t *a, int from)
{
    writer_t *w = &in->w[r];
    const uint32_t k = DCUDA_INBOX_ATOMIC_ENTRIES;
    if (!fits(in, r, k))
        return 0;
    due_t *d = malloc(sizeof *d);
    if (!d)
        return -1;
    *d = (due_t){ NULL, w->head, from, a->token };
    unsigned char two[ENTRY_BYTES] = { 0 };
    memcpy(two, &a->compare, sizeof a->compare);
    memcpy(entry_at(in, r, w->head + 1u), two, sizeof two);
    const uint32_t note = dst % a->width ? 0u : a->note;
    const uint32_t v[DCUDA_INBOX_WORDS] = { DCUDA_INBOX_HEAD(DCUDA_INBOX_ATOMIC, k,
                                                             DCUDA_INBOX_ACQUIRE),
                                            note,
                                            a->op | a->width << 8,
                                            (uint32_t)dst,
                                            (uint32_t)(dst >> 32),
                                            (uint32_t)a->operand,
                                            (uint32_t)(a->operand >> 32),
                                            0u };
    publish(in, r, k, v);
    w->dirty = 1; /* the rank writes its memory applying it */
    if (w->due_last)
        w->due_last->next = d;
    else
        w->due = d;
    w->due_last = d;
    in->dues++;
    return 1;
}

/* Starts the backend's write of kept put m: 0, or -1 if it could not. */
static int start_write(dcu_inboxes_t *in, held_t *m)
{
    if (in->ops->write_start(in->backend, (void *)(uintptr_t)m->dst, m->bytes, m->count,
                             &m->ticket) != DCUDA_OK)
        return -1;
    m->writing = 1;
    (*in->writes)++;
    return 0;
}

/* A large put whose bytes the keeper keeps: its write starts once its
 * turn came (as try_write's copy) and the backend takes another write,
 * and is done once the backend says so, then its notification follows; 1
 * done, 0 not yet, -1 the write failed. Nothing else for rank r is
 * written meanwhile, so the room checked for the notification stays. */
static int try_write_kept(dcu_inboxes_t *in, int r, held_t *m)
{
    if (!m->writing) {
        if (!ready_for_copy(in, r) || (m->tag && !fits(in, r, 1u)) ||
            *in->writes >= DCU_BACKEND_WRITES)
            return 0;
        if (start_write(in, m) < 0)
            return -1;
    }
    int done = in->ops->write_done(in->backend, m->ticket);
    if (done <= 0)
        return done;
    m->writing = 0;
    (*in->writes)--;
    if (m->tag)
        write_message(in, r, DCUDA_INBOX_NOTIFY, DCUDA_INBOX_ACQUIRE, 1u, m->tag, m->dst, NULL, 0u);
    return 1;
}

/* Waits for the write of a held item in flight (the end of a run, or of
 * the inboxes), after which its bytes may go: 1 if it was written, 0 if
 * it had not started, -1 if it failed. */
static int finish_write(dcu_inboxes_t *in, held_t *m)
{
    if (!m->writing)
        return 0;
    int done;
    while ((done = in->ops->write_done(in->backend, m->ticket)) == 0)
        dcu_clock_sleep_ns(1000);
    m->writing = 0;
    (*in->writes)--;
    return done > 0 ? 1 : -1;
}

/* A read's turn (rank r applied and released every put before it that
 * came through its inbox): it is served, in one go or over several turns
 * (its request keeps its progress); 1 done, 0 not yet. */
static int try_read(dcu_inboxes_t *in, int r, void *req, uint32_t size)
{
    if (!ready_for_copy(in, r))
        return 0;
    return in->serve(in->serve_arg, r, req, size) != 0;
}

/* One held item's attempt: 1 done, 0 not yet, -1 a copy failed. */
static int try_held(dcu_inboxes_t *in, int r, held_t *m)
{
    if (m->kind == HELD_READ)
        return try_read(in, r, m->data, m->count);
    if (m->kind == HELD_ATOMIC)
        return try_atomic(in, r, m->dst, (const dcu_inbox_atomic_t *)m->data, m->src.from);
    if (m->kept)
        return try_write_kept(in, r, m);
    return try_write(in, r, m->dst, m->kind == HELD_PUT ? m->bytes : NULL, m->count, m->tag);
}

/* An item of `kind` from src is done: `landed` is told of it (a read
 * always; a message unless it is a piece before a put's last). */
static void tell_done(dcu_inboxes_t *in, int kind, dcu_inbox_source_t src)
{
    if (kind == HELD_READ || src.bytes)
        in->landed(in->landed_arg, src.from, src.bytes);
}

/* Queues an item for rank r: its bytes copied, unless `kept` (the
 * keeper's token for them). */
static dcuda_status_t hold(dcu_inboxes_t *in, int r, int kind, uint64_t dst, const void *data,
                           uint32_t count, uint32_t tag, dcu_inbox_source_t src, void *kept)
{
    held_t *m = malloc(sizeof *m + (data && !kept ? count : 0u));
    if (!m)
        return DCUDA_ERR_NO_MEMORY;
    m->next = NULL;
    m->src = src;
    m->dst = dst;
    m->count = data ? count : 0u;
    m->tag = tag;
    m->kind = kind;
    m->kept = kept;
    m->writing = 0;
    m->bytes = kept ? data : m->data;
    if (data && count && !kept)
        memcpy(m->data, data, count);
    writer_t *w = &in->w[r];
    if (w->last)
        w->last->next = m;
    else
        w->first = m;
    w->last = m;
    in->held++;
    in->held_bytes += src.bytes;
    return DCUDA_OK;
}

static int advance_rank(dcu_inboxes_t *in, int r);

/* A piece of a message (or all of it) to rank r, written or held;
 * `landed` is told of it once written unless src.bytes is 0 (a piece of a
 * put that is not its last). A large put whose bytes the keeper keeps is
 * written by the backend while the proxy goes on (held until done);
 * otherwise it is copied at once when its turn came, or held as a copy. */
static dcuda_status_t deliver_piece(dcu_inboxes_t *in, int r, uint64_t dst, const void *data,
                                    uint32_t count, uint32_t tag, dcu_inbox_source_t src)
{
    const int kind = data ? HELD_PUT : HELD_NOTIFY;
    const int alone = !in->w[r].first;
    void *kept =
        copied(in, data, count) && in->keeper.keep ? in->keeper.keep(in->keeper.arg) : NULL;
    if (alone && !kept) {
        int done = try_write(in, r, dst, data, count, tag);
        if (done > 0)
            tell_done(in, kind, src);
        if (done != 0)
            return done > 0 ? DCUDA_OK : DCUDA_ERR_SYSTEM;
    }
    dcuda_status_t st = hold(in, r, kind, dst, data, count, tag, src, kept);
    if (st != DCUDA_OK) {
        if (kept)
            in->keeper.unkeep(in->keeper.arg, kept);
        return st;
    }
    if (kept && alone && advance_rank(in, r) < 0) /* its write starts now */
        return DCUDA_ERR_SYSTEM;
    return DCUDA_OK;
}

dcuda_status_t dcu_inbox_deliver(dcu_inboxes_t *in, int r, uint64_t dst, const void *data,
                                 uint32_t count, uint32_t tag, dcu_inbox_source_t src)
{
    if (!data || count <= DCU_INBOX_PIECE_MAX || copied(in, data, count))
        return deliver_piece(in, r, dst, data, count, tag, src);
    /* In pieces of equal size (a piece is one message), in order: the rank
     * copies each from its inbox, and the last carries the notification
     * and the message. */
    const char *bytes = data;
    dcu_inbox_source_t part = { src.from, 0u };
    uint32_t pieces = (count + DCU_INBOX_PIECE_MAX - 1u) / DCU_INBOX_PIECE_MAX;
    uint32_t size = (count + pieces - 1u) / pieces;
    for (uint32_t done = 0; done < count; done += size) {
        uint32_t n = count - done < size ? count - done : size;
        int last = done + n == count;
        dcuda_status_t st =
            deliver_piece(in, r, dst + done, bytes + done, n, last ? tag : 0u, last ? src : part);
        if (st != DCUDA_OK)
            return st;
    }
    return DCUDA_OK;
}

static void pop(dcu_inboxes_t *in, writer_t *w);

/* While rank r's first held item is a write in flight, the kept puts right
 * behind it start theirs too: the backend's writes finish in the order
 * started, so the bytes land in arrival order, and each notification is
 * still written once its own write is done (room for all of them checked
 * before each start). 0, or -1 if a write could not start. */
static int start_next_writes(dcu_inboxes_t *in, int r)
{
    writer_t *w = &in->w[r];
    uint32_t notes = w->first->tag != 0u;
    for (held_t *m = w->first->next; m && m->kept && *in->writes < DCU_BACKEND_WRITES;
         m = m->next) {
        notes += m->tag != 0u;
        if (m->writing)
            continue;
        if (m->tag && !fits(in, r, notes))
            return 0;
        if (start_write(in, m) < 0)
            return -1;
    }
    return 0;
}

/* Rank r's held items, in order, as far as they go: > 0 if any was done,
 * 0 if none, -1 if a copy failed. */
static int advance_rank(dcu_inboxes_t *in, int r)
{
    writer_t *w = &in->w[r];
    int did = 0;
    while (w->first) {
        held_t *m = w->first;
        int done = try_held(in, r, m);
        if (done < 0)
            return -1;
        if (done == 0)
            return m->writing && start_next_writes(in, r) < 0 ? -1 : did;
        tell_done(in, m->kind, m->src);
        pop(in, w);
        did = 1;
    }
    return did;
}

dcuda_status_t dcu_inbox_read(dcu_inboxes_t *in, int r, const void *req, uint32_t size,
                              dcu_inbox_source_t src)
{
    int alone = !in->w[r].first; /* its turn is now: try it at once */
    dcuda_status_t st = hold(in, r, HELD_READ, 0u, req, size, 0u, src, NULL);
    if (st != DCUDA_OK || !alone)
        return st;
    return advance_rank(in, r) < 0 ? DCUDA_ERR_SYSTEM : DCUDA_OK;
}

dcuda_status_t dcu_inbox_atomic(dcu_inboxes_t *in, int r, uint64_t dst, const dcu_inbox_atomic_t *a,
                                dcu_inbox_source_t src)
{
    if (!in->w[r].first) { /* its turn is now */
        int done = try_atomic(in, r, dst, a, src.from);
        if (done > 0)
            tell_done(in, HELD_ATOMIC, src);
        if (done != 0)
            return done > 0 ? DCUDA_OK : DCUDA_ERR_NO_MEMORY;
    }
    return hold(in, r, HELD_ATOMIC, dst, a, (uint32_t)sizeof *a, 0u, src, NULL);
}

/* The answer the rank wrote into the second entry of the atomic at pos. */
static dcuda_status_t answer_at(const dcu_inboxes_t *in, int r, uint32_t pos, uint64_t *value)
{
    uint32_t a[5];
    memcpy(a, entry_at(in, r, pos + 1u), sizeof a);
    *value = (uint64_t)a[2] | (uint64_t)a[3] << 32;
    if (a[4] == DCUDA_INBOX_DONE)
        return DCUDA_OK;
    *value = 0u;
    return a[4] == DCUDA_INBOX_REFUSED ? DCUDA_ERR_INVALID_ARG : DCUDA_ERR_SYSTEM;
}

int dcu_inbox_answers(dcu_inboxes_t *in)
{
    int told = 0;
    for (int r = 0; r < in->ranks && in->dues; r++) {
        writer_t *w = &in->w[r];
        if (!w->due)
            continue;
        const uint32_t now = consumed(in, r);
        due_t *d;
        while ((d = w->due) && (int32_t)(now - (d->pos + DCUDA_INBOX_ATOMIC_ENTRIES)) >= 0) {
            uint64_t value;
            dcuda_status_t st = answer_at(in, r, d->pos, &value);
            w->due = d->next;
            if (!w->due)
                w->due_last = NULL;
            in->dues--;
            in->answer(in->answer_arg, r, d->from, d->token, st, value);
            free(d);
            told++;
        }
    }
    return told;
}

size_t dcu_inbox_answers_due(const dcu_inboxes_t *in) { return in->dues; }

void dcu_inboxes_on_answer(dcu_inboxes_t *in, dcu_inbox_answer_fn answer, void *arg)
{
    in->answer = answer;
    in->answer_arg = arg;
}

void dcu_inboxes_on_read(dcu_inboxes_t *in, dcu_inbox_serve_fn serve, void *arg)
{
    in->serve = serve;
    in->serve_arg = arg;
}

void dcu_inboxes_on_keep(dcu_inboxes_t *in, const dcu_inbox_keeper_t *keeper)
{
    in->keeper = *keeper;
}

void dcu_inboxes_share_writes(dcu_inboxes_t *in, int *writes) { in->writes = writes; }

static void pop(dcu_inboxes_t *in, writer_t *w)
{
    held_t *m = w->first;
    w->first = m->next;
    if (!w->first)
        w->last = NULL;
    in->held_bytes -= m->src.bytes;
    if (m->kept)
        in->keeper.unkeep(in->keeper.arg, m->kept);
    free(m);
    in->held--;
}

int dcu_inbox_retry(dcu_inboxes_t *in)
{
    int did = 0;
    for (int r = 0; r < in->ranks && in->held; r++) {
        int done = advance_rank(in, r);
        if (done < 0)
            return -1;
        did |= done;
    }
    return did;
}

size_t dcu_inbox_held(const dcu_inboxes_t *in) { return in->held; }

uint64_t dcu_inbox_held_bytes(const dcu_inboxes_t *in) { return in->held_bytes; }

uint32_t dcu_inbox_head(const dcu_inboxes_t *in, int r) { return in->w[r].head; }

int dcu_inbox_unread(const dcu_inboxes_t *in)
{
    int n = 0;
    for (int r = 0; r < in->ranks; r++)
        n += atomic_load_explicit(&in->tails[r], memory_order_acquire) != in->w[r].head;
    return n;
}

/* The payload of the message at `pos` of rank r past its first entry (n
 * bytes, wrapping to the ring's start) into rank memory at dst. */
static dcuda_status_t payload_from_ring(dcu_inboxes_t *in, int r, uint32_t pos, uint64_t dst,
                                        uint32_t n)
{
    const char *ring = (const char *)entry_at(in, r, 0u);
    size_t at = payload_at(pos);
    uint32_t first = (uint32_t)before_end(at, n);
    dcuda_status_t st = copy_in(in, dst, ring + at, first);
    return st == DCUDA_OK ? copy_in(in, dst + first, ring, n - first) : st;
}

/* A message the proxy wrote at `pos` of rank r, applied by the proxy: its
 * data only (the rank is gone). Returns its entries. */
static uint32_t settle_one(dcu_inboxes_t *in, int r, uint32_t pos, dcuda_status_t *st)
{
    const dcuda_inbox_entry_t *e = entry_at(in, r, pos);
    uint32_t v[DCUDA_INBOX_WORDS];
    for (int i = 0; i < DCUDA_INBOX_WORDS; i++)
        v[i] = (uint32_t)atomic_load_explicit(&e->word[i], memory_order_relaxed);
    uint32_t k = DCUDA_INBOX_ENTRIES_OF(v[0]);
    if (DCUDA_INBOX_KIND_OF(v[0]) == DCUDA_INBOX_PUT && *st == DCUDA_OK) {
        uint64_t dst = (uint64_t)v[3] | (uint64_t)v[4] << 32;
        unsigned char first[DCUDA_INBOX_INLINE];
        uint32_t n = v[2] < DCUDA_INBOX_INLINE ? v[2] : DCUDA_INBOX_INLINE;
        for (uint32_t j = 0; j < n; j++)
            first[j] = (unsigned char)DCUDA_INBOX_INLINE_BYTE(v, j);
        *st = copy_in(in, dst, first, n);
        if (*st == DCUDA_OK && v[2] > n)
            *st = payload_from_ring(in, r, pos, dst + n, v[2] - n);
    }
    return k ? k : 1u;
}

/* Rank r's atomics whose answers were not read: forgotten. */
static void drop_dues(dcu_inboxes_t *in, writer_t *w)
{
    while (w->due) {
        due_t *d = w->due;
        w->due = d->next;
        free(d);
        in->dues--;
    }
    w->due_last = NULL;
}

dcuda_status_t dcu_inbox_settle(dcu_inboxes_t *in)
{
    dcuda_status_t st = DCUDA_OK;
    for (int r = 0; r < in->ranks; r++) {
        writer_t *w = &in->w[r];
        for (uint32_t pos = consumed(in, r); pos != w->head;)
            pos += settle_one(in, r, pos, &st);
        for (; w->first; pop(in, w)) { /* a read left here has no reader any more */
            int written = finish_write(in, w->first);
            if (written < 0)
                st = DCUDA_ERR_SYSTEM;
            else if (!written && w->first->kind == HELD_PUT && st == DCUDA_OK)
                st = copy_in(in, w->first->dst, w->first->bytes, w->first->count);
        }
        drop_dues(in, w);
        atomic_store_explicit(&in->tails[r], w->head, memory_order_release);
        /* Everything is applied: the next run's first put is the first to
         * ask for a SYNC (a SYNC of this run is not the next run's). */
        w->dirty = 0;
        w->sync_pending = 0;
    }
    return st;
}

dcu_inboxes_t *dcu_inboxes_create(dcuda_inbox_entry_t *entries, DCUDA_ATOMIC(uint32_t) * tails,
                                  int ranks, const dcu_backend_ops_t *ops, dcu_backend_t *backend,
                                  dcu_inbox_landed_fn landed, void *landed_arg, uint32_t pieces_max)
{
    dcu_inboxes_t *in = calloc(1, sizeof *in + (size_t)ranks * sizeof(writer_t));
    if (!in)
        return NULL;
    in->entries = entries;
    in->tails = tails;
    in->ranks = ranks;
    in->ops = ops;
    in->backend = backend;
    in->landed = landed;
    in->landed_arg = landed_arg;
    in->pieces_max = pieces_max;
    in->writes = &in->own_writes;
    memset(entries, 0, (size_t)ranks * DCUDA_INBOX_ENTRIES * sizeof *entries);
    for (int r = 0; r < ranks; r++)
        atomic_store_explicit(&tails[r], 0u, memory_order_relaxed);
    return in;
}

void dcu_inboxes_destroy(dcu_inboxes_t *in)
{
    if (!in)
        return;
    for (int r = 0; r < in->ranks; r++) {
        while (in->w[r].first) {
            finish_write(in, in->w[r].first); /* its bytes go with it */
            pop(in, &in->w[r]);
        }
        drop_dues(in, &in->w[r]);
    }
    free(in);
}
