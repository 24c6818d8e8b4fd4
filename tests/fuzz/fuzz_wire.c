/*
 * Fuzz harness of the proxies' wire decoder (src/proxy/wire.h), which reads
 * what arrives from other processes over the network.
 *
 * Input: eight bytes of setting (the sender, the program's processes and
 * WORLD size, the largest message, the size of the buffer for the reason;
 * five spare, so that the message's fields are aligned in the input), then
 * the message. dcu_wire_check must accept it exactly when this file's
 * own reading of the format (from wire.h) calls it valid; an accepted
 * header is the message's first bytes; a refusal's reason is terminated
 * inside its buffer and never written beyond. The same bytes read as a
 * frame: dcu_wire_next splits them exactly where this file's reading of
 * the framing does, and stops where that reading finds no whole message.
 */
#include <string.h>

#include "dcuda/dcuda_status.h"
#include "fuzz.h"
#include "proxy/wire.h"

const char fuzz_name[] = "wire";
const unsigned fuzz_replay_rounds = 400000;
const char *const fuzz_tokens[] = { "\x0d\xdc\x09\x01",
                                    "\x0d\xdc\x09\x02",
                                    "\x0d\xdc\x09\x0b",
                                    "\x0d\xdc\x09\x0c",
                                    "\x0d\xdc\x09\x0d",
                                    "\x0d\xdc\x09\x0e",
                                    "\xff\xff\xff\xff",
                                    "\x38",
                                    NULL };

#define WHY_GUARD 16

/* The sender and the program a message is read against. */
typedef struct setting {
    int from;
    dcu_wire_limits_t lim;
    size_t why_size;
} setting_t;

static setting_t read_setting(fuzz_reader_t *r)
{
    setting_t s;
    unsigned b0 = (unsigned)fuzz_read(r, 1), b1 = (unsigned)fuzz_read(r, 1);
    unsigned b2 = (unsigned)fuzz_read(r, 1);
    fuzz_read(r, 5);
    s.lim.processes = 1 + (int)(b1 & 7u);
    s.lim.world_size = s.lim.processes * (1 + (int)(b1 >> 3 & 3u)) + (int)(b1 >> 5);
    s.lim.max_size = b2 & 1u ? 1000u : 4096u;
    s.from = (int)(b0 % 10u) - 1; /* -1 .. 8: some not a process */
    s.why_size = 1 + (b2 >> 1);   /* 1 .. 128 */
    return s;
}

/* wire.h's format, as this file reads it: a header of 56 bytes (magic
 * 0xdc0d, version 15, type, body length, sender, ranks, tag, slot, epoch,
 * offset, count, the sender's run, flags: 0 to 7), the body after it. */
static int rank_in(int32_t r, const setting_t *s) { return r >= 0 && r < s->lim.world_size; }

/* Window slots a message may name: WORLD's and DEVICE's 64 windows, 16
 * for each of six more communicator ids, and the library's own (the last,
 * which the pushed collectives put into): 161 (layout.h's table). */
#define WIRE_SLOTS (64 + 6 * 16 + 1)

/* A GET's body of 16 bytes: the asker's window slot (below WIRE_SLOTS), four
 * zero bytes, the offset there, which the count may not carry past 2^64. */
static int valid_get(const dcu_wire_header_t *h, const uint8_t *body)
{
    uint32_t slot, zero;
    uint64_t offset;
    memcpy(&slot, body, 4);
    memcpy(&zero, body + 4, 4);
    memcpy(&offset, body + 8, 8);
    return slot < WIRE_SLOTS && zero == 0 && offset <= UINT64_MAX - h->count;
}

/* A host message (types 15 to 18): a body of 24 bytes first (the request's
 * id, first byte, byte count), then HOST_PUT's and HOST_DATA's bytes
 * (count); spans that do not pass 2^64. HOST_PUT: a chunk inside
 * [first, first + total), a slot below WIRE_SLOTS, tag 0 or (the last chunk's
 * notification) 1..256, and HOST_GET the same; HOST_PUT with slot 0xffff:
 * a notification alone (total 0, tag 1..256);
 * HOST_DATA: tag 0, first 0, the chunk inside total;
 * HOST_DONE: a status of at most 100 (tag). */
static int valid_host(const dcu_wire_header_t *h, const uint8_t *body, int ranks)
{
    uint64_t first, total, bytes = h->type == 15 || h->type == 17 ? h->count : 0;
    if (h->length < 24 || h->length - 24 != bytes || !ranks)
        return 0;
    memcpy(&first, body + 8, 8);
    memcpy(&total, body + 16, 8);
    if (h->offset > UINT64_MAX - h->count || first > UINT64_MAX - total)
        return 0;
    switch (h->type) {
    case 15:
    case 16:
        if (h->slot == 0xffff)
            return h->type == 15 && total == 0 && h->tag >= 1 && h->tag <= 256 &&
                   h->offset >= first && h->offset + h->count <= first + total;
        return h->slot < WIRE_SLOTS && h->tag <= 256 &&
               (h->tag == 0 || h->offset + h->count == first + total) && h->offset >= first &&
               h->offset + h->count <= first + total;
    case 17:
        return h->tag == 0 && first == 0 && h->offset + h->count <= total;
    default:
        return h->tag <= 100;
    }
}

/* An ATOMIC's body of 24 bytes: an op 0..2, a tag + 1 of 0..256, then
 * the operand and the compare value, each within a 4-byte word's range
 * when the word (count) has 4 bytes. */
static int valid_atomic(const dcu_wire_header_t *h, const uint8_t *body)
{
    uint32_t op, note;
    uint64_t operand, compare;
    memcpy(&op, body, 4);
    memcpy(&note, body + 4, 4);
    memcpy(&operand, body + 8, 8);
    memcpy(&compare, body + 16, 8);
    return op <= 2 && note <= 256 && (h->count == 8 || (operand >> 32 == 0 && compare >> 32 == 0));
}

static int valid_body(const dcu_wire_header_t *h, const uint8_t *body, const setting_t *s)
{
    int ranks = rank_in(h->src_rank, s) && rank_in(h->dst_rank, s);
    switch (h->type) {
    case 1: /* PUT: the payload is the body; a tag 0..384 (0: no notification; 257..384:
             * the library's tags) */
        return ranks && h->tag <= 384 && h->slot < WIRE_SLOTS && h->count == h->length &&
               h->offset <= UINT64_MAX - h->count;
    case 2: /* NOTIFY: no body, a tag 1..384 */
        return ranks && h->tag >= 1 && h->tag <= 384 && h->length == 0;
    /* 3: the all-to-all barrier of version 4, no longer a type */
    case 4: /* ABORT: why, as text of at most 256 bytes */
    case 5: /* LEFT: how the sender left, the same */
        return h->length <= 256;
    case 6: /* PROBE: a round (epoch) 1 and up, no body */
        return h->epoch != 0 && h->length == 0;
    case 7: /* REPLY: a round, and an answer of 32 bytes (a dcu_quiet_t) */
        return h->epoch != 0 && h->length == 32;
    case 8: /* FOUND: no body */
        return h->length == 0;
    case 9: /* ROUND: a barrier (epoch) 1 and up, a round (tag) 0..30, no body */
        return h->epoch != 0 && h->tag <= 30 && h->length == 0;
    case 10: /* ACK: a count (tag) and its bytes (count), no body */
        return h->length == 0;
    case 11: /* PART_ASK: two ranks, a window slot, no body */
    case 12: /* PART: the same, the part's size in count */
        return ranks && h->slot < WIRE_SLOTS && h->length == 0;
    case 13: /* BEAT: tag 0 or 1 (no more beats), no body */
        return h->tag <= 1 && h->length == 0;
    case 14: /* GET: two ranks, a tag 1..384, a window slot, offset + count within 2^64,
              * a body of 16 bytes */
        return ranks && h->tag >= 1 && h->tag <= 384 && h->slot < WIRE_SLOTS &&
               h->offset <= UINT64_MAX - h->count && h->length == 16 && valid_get(h, body);
    case 15: /* HOST_PUT, HOST_GET, HOST_DATA, HOST_DONE (valid_host) */
    case 16:
    case 17:
    case 18:
        return valid_host(h, body, ranks);
    case 19: /* ATOMIC: two ranks, a window slot, a word of 4 or 8 bytes (count) at an
              * offset within 2^64, a body of 24 bytes (valid_atomic) */
        return ranks && h->slot < WIRE_SLOTS && (h->count == 4 || h->count == 8) &&
               h->offset <= UINT64_MAX - h->count && h->length == 24 && valid_atomic(h, body);
    case 20: /* ATOMIC_DONE: two ranks, a status (epoch) 0 or 1, no body */
        return ranks && h->epoch <= 1 && h->length == 0;
    default:
        return 0;
    }
}

static int valid(const uint8_t *m, size_t size, const setting_t *s)
{
    dcu_wire_header_t h;
    if (size < 56)
        return 0;
    memcpy(&h, m, sizeof h);
    if (h.magic != 0xdc0d || h.version != 15 || size > s->lim.max_size || h.length != size - 56 ||
        h.flags > 7u)
        return 0;
    if (s->from < 0 || s->from >= s->lim.processes || h.src_proc != s->from || h.run == 0)
        return 0;
    return valid_body(&h, m + 56, s);
}

/* Frames (wire.h): whole messages at offsets that are multiples of 8, the
 * frame ending where its last message ends. The next message from *mine:
 * 1 and its size (*mine moved on), 0 at the end, -1 when none is whole. */
static int next_in_frame(const uint8_t *m, size_t n, size_t *mine, size_t *size)
{
    uint32_t len;
    if (*mine == n)
        return 0;
    if (*mine > n || n - *mine < 56)
        return -1;
    memcpy(&len, m + *mine + 4, sizeof len);
    if (len > n - *mine - 56)
        return -1;
    *size = 56 + (size_t)len;
    size_t end = *mine + *size;
    *mine = end == n ? n : (end + 7u) & ~(size_t)7u;
    return 1;
}

static void check_frame(const uint8_t *m, size_t n)
{
    size_t at = 0, mine = 0;
    for (;;) {
        size_t off = 0, size = 0, want_off = mine, want_size = 0;
        int got = dcu_wire_next(m, n, &at, &off, &size);
        int want = next_in_frame(m, n, &mine, &want_size);
        FUZZ_CHECK(got == want, "a frame of %zu bytes: next at %zu gives %d, expected %d", n,
                   want_off, got, want);
        if (got != 1)
            return;
        FUZZ_CHECK(off == want_off && size == want_size && at == mine,
                   "a frame's message at %zu of %zu bytes (next %zu), expected %zu of %zu (%zu)",
                   off, size, at, want_off, want_size, mine);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reader_t r = { data, size, 0 };
    setting_t s = read_setting(&r);
    const uint8_t *m = data + (r.at < size ? r.at : size);
    size_t n = size - (size_t)(m - data);
    char why[128 + WHY_GUARD];
    dcu_wire_header_t out;
    memset(why, 0x5a, sizeof why);
    memset(&out, 0xa5, sizeof out);
    int st = dcu_wire_check(m, n, s.from, &s.lim, &out, why, s.why_size);
    int want = valid(m, n, &s);
    FUZZ_CHECK((st == DCUDA_OK) == want, "decoder %s a message of %zu bytes this harness calls %s",
               st == DCUDA_OK ? "accepts" : "refuses", n, want ? "valid" : "invalid");
    if (st == DCUDA_OK) {
        FUZZ_CHECK(memcmp(&out, m, sizeof out) == 0, "the header given back is not the message's");
    } else {
        FUZZ_CHECK(st == DCUDA_ERR_PEER, "a refusal returns %d", st);
        FUZZ_CHECK(memchr(why, '\0', s.why_size) != NULL, "reason not terminated in %zu bytes",
                   s.why_size);
        for (size_t i = s.why_size; i < sizeof why; i++)
            FUZZ_CHECK((unsigned char)why[i] == 0x5a, "reason written at byte %zu of %zu", i,
                       s.why_size);
    }
    check_frame(m, n);
    return 0;
}

/* A valid message of `type` from process 1 of 3 (WORLD 6), setting first. */
static size_t make_seed(uint8_t buf[8 + 56 + 64], uint8_t type, uint32_t body)
{
    dcu_wire_header_t h;
    dcu_wire_header(&h, type, body, 1, 3); /* of the third run */
    h.src_rank = 2;
    h.dst_rank = 5;
    h.tag = type == 2 ? 4 : type == 9 ? 1 : type == 10 ? 7 : type == 13 ? 1 : type >= 11 ? 9 : 0;
    h.slot = 3;
    h.epoch = type == 6 || type == 7 || type == 9 ? 1 : 0;
    h.offset = 16;
    h.count = type == 1 ? body : type == 12 ? 4096 : type == 10 ? 7 * 56 : type == 14 ? 300 : 0;
    if (type >= 15) { /* a host message: 8 bytes at 16 of a request of 40 at 8 (a get: all 40) */
        h.tag = type == 18 ? 3 : 0;
        h.offset = type == 16 ? 8 : type == 17 ? 16 : 16;
        h.count = type == 15 || type == 17 ? body - 24 : type == 16 ? 40 : 0;
    }
    memset(buf, 0, 8);
    buf[0] = 2;          /* from 1 */
    buf[1] = 2 | 1 << 3; /* 3 processes of 2 ranks */
    buf[2] = 40 << 1;    /* at most 4096 bytes, a reason of 81 */
    memcpy(buf + 8, &h, sizeof h);
    for (uint32_t i = 0; i < body; i++)
        buf[8 + sizeof h + i] = (uint8_t)(type == 14 ? (i == 0 ? 2 : i == 8 ? 40 : 0) : i * 13);
    if (type >= 15) { /* id 7, first 8 (a get's answer: 0), total 40 */
        uint64_t w[3] = { 7, type == 17 || type == 18 ? 0 : 8, type == 18 ? 0 : 40 };
        memcpy(buf + 8 + sizeof h, w, sizeof w);
    }
    return 8 + sizeof h + body;
}

/* A host's put whose last chunk notifies (tag 6: user tag 5), or (alone)
 * a notification alone: slot 0xffff, a request of no bytes. */
static size_t make_note_seed(uint8_t buf[8 + 56 + 64], int alone)
{
    size_t n = make_seed(buf, 15, alone ? 24 : 32);
    dcu_wire_header_t h;
    memcpy(&h, buf + 8, sizeof h);
    h.tag = 6;
    h.offset = alone ? 0 : 40; /* the last 8 bytes of [8, 48) */
    if (alone) {
        uint64_t w[3] = { 7, 0, 0 };
        h.slot = 0xffff;
        memcpy(buf + 8 + sizeof h, w, sizeof w);
    }
    memcpy(buf + 8, &h, sizeof h);
    return n;
}

/* A remote atomic (a compare-swap of a word of 8 bytes at 16, notified
 * with user tag 7), or its answer (the value 5, or a refusal). */
static size_t make_atomic_seed(uint8_t buf[8 + 56 + 64], int answer, int refused)
{
    size_t n = make_seed(buf, 1, answer ? 0 : 24);
    dcu_wire_header_t h;
    memcpy(&h, buf + 8, sizeof h);
    h.type = answer ? 20 : 19;
    h.tag = 9;
    h.count = answer ? 5 : 8;
    h.epoch = refused ? 1 : 0;
    memcpy(buf + 8, &h, sizeof h);
    if (!answer) {
        const uint32_t op_note[2] = { 2, 8 };
        const uint64_t operands[2] = { 6, 5 };
        memcpy(buf + 8 + sizeof h, op_note, sizeof op_note);
        memcpy(buf + 8 + sizeof h + 8, operands, sizeof operands);
    }
    return n;
}

void fuzz_seeds(fuzz_emit_fn emit, void *arg)
{
    uint8_t buf[8 + 56 + 64];
    emit(arg, buf, make_seed(buf, 1, 24));
    emit(arg, buf, make_seed(buf, 2, 0));
    emit(arg, buf, make_seed(buf, 4, 20));
    emit(arg, buf, make_seed(buf, 5, 20));
    emit(arg, buf, make_seed(buf, 6, 0));
    emit(arg, buf, make_seed(buf, 7, 32));
    emit(arg, buf, make_seed(buf, 8, 0));
    emit(arg, buf, make_seed(buf, 9, 0));
    emit(arg, buf, make_seed(buf, 10, 0));
    emit(arg, buf, make_seed(buf, 11, 0));
    emit(arg, buf, make_seed(buf, 12, 0));
    emit(arg, buf, make_seed(buf, 13, 0));
    emit(arg, buf, make_seed(buf, 14, 16)); /* a get of 300 bytes into slot 2 at 40 */
    emit(arg, buf, make_seed(buf, 15, 32)); /* host messages: a put's chunk of 8 bytes, */
    emit(arg, buf, make_seed(buf, 16, 24)); /* a get of 40, */
    emit(arg, buf, make_note_seed(buf, 0)); /* a notifying last chunk, a notification alone */
    emit(arg, buf, make_note_seed(buf, 1));
    emit(arg, buf, make_seed(buf, 17, 32)); /* an answer's chunk of 8, */
    emit(arg, buf, make_seed(buf, 18, 24)); /* an end with status -3 */
    emit(arg, buf, make_atomic_seed(buf, 0, 0));
    emit(arg, buf, make_atomic_seed(buf, 1, 0));
    emit(arg, buf, make_atomic_seed(buf, 1, 1));
    /* A frame: a put of 20 bytes, padding to 80, a notification. */
    uint8_t frame[8 + 80 + 56];
    make_seed(buf, 1, 20);
    memcpy(frame, buf, 8 + 76);
    memset(frame + 8 + 76, 0, 4);
    make_seed(buf, 2, 0);
    memcpy(frame + 8 + 80, buf + 8, 56);
    emit(arg, frame, sizeof frame);
}
