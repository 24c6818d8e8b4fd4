/*
 * The proxies' wire decoding (src/proxy/wire.h) against hostile input:
 * valid messages of every type are accepted; every truncation of them, and
 * random bytes, are refused; and under many random mutations the decoder
 * accepts a message exactly when this file's own reading of the format
 * calls it valid. Deterministic (fixed seed), a second or so.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_status.h"
#include "proxy/wire.h"
#include "test_util.h"

#define FUZZ_ROUNDS 200000
#define PROCS 4
#define WORLD 12        /* 3 ranks a process */
#define TYPES 18        /* message types 1 .. TYPES */
#define RETIRED 3       /* a type of an earlier version: refused */
#define ANSWER_BYTES 32 /* a REPLY's body: a dcu_quiet_t */
#define GET_BYTES 16    /* a GET's body: where its answer goes */
#define HOST_BYTES 24   /* a host message's request: id, first byte, byte count */
#define TAGS 384        /* tag + 1 at most: the user's 256 and the library's 128 */

static const dcu_wire_limits_t limits = { PROCS, WORLD, 4096 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void) { return test_rng(&rng); }

/* A GET's body: a window slot below 160, four zero bytes, an offset the
 * count does not carry past 2^64. */
static int valid_get(const dcu_wire_header_t *h, const unsigned char *body)
{
    uint32_t slot, zero;
    uint64_t offset;
    memcpy(&slot, body, 4);
    memcpy(&zero, body + 4, 4);
    memcpy(&offset, body + 8, 8);
    return slot < 160 && zero == 0 && offset + h->count >= offset;
}

/* A host message's request and spans: see wire.h. */
static int valid_host(const dcu_wire_header_t *h, const unsigned char *body, int ranks)
{
    uint64_t first, total,
        bytes = h->type == DCU_WIRE_HOST_PUT || h->type == DCU_WIRE_HOST_DATA ? h->count : 0;
    if (!ranks || h->length < HOST_BYTES || h->length - HOST_BYTES != bytes)
        return 0;
    memcpy(&first, body + 8, 8);
    memcpy(&total, body + 16, 8);
    if (h->offset + h->count < h->offset || first + total < first)
        return 0;
    if (h->type == DCU_WIRE_HOST_PUT || h->type == DCU_WIRE_HOST_GET) {
        /* tag: 0, or a notification (user tag + 1, 1..256) on the last
         * chunk; slot 0xffff: a notification alone (a put of nothing) */
        int alone = h->slot == 0xffffu;
        if (alone && (h->type != DCU_WIRE_HOST_PUT || total != 0 || h->tag == 0))
            return 0;
        return (h->slot < 160 || alone) && h->tag <= 256 &&
               (h->tag == 0 || h->offset + h->count == first + total) && h->offset >= first &&
               h->offset + h->count <= first + total;
    }
    if (h->type == DCU_WIRE_HOST_DATA)
        return h->tag == 0 && first == 0 && h->offset + h->count <= total;
    return h->tag <= 100;
}

/* This test's own statement of a valid message from process `from`. */
static int valid(const unsigned char *m, size_t size, int from)
{
    dcu_wire_header_t h;
    if (size < sizeof h)
        return 0;
    memcpy(&h, m, sizeof h);
    int framed = h.magic == DCU_WIRE_MAGIC && h.version == DCU_WIRE_VERSION &&
                 size <= limits.max_size && h.length == size - sizeof h && h.src_proc == from &&
                 from >= 0 && from < PROCS && h.run != 0 && h.flags <= 7u;
    if (!framed)
        return 0;
    int ranks = h.src_rank >= 0 && h.src_rank < WORLD && h.dst_rank >= 0 && h.dst_rank < WORLD;
    switch (h.type) {
    case DCU_WIRE_PUT:
        return ranks && h.tag <= TAGS && h.slot < 160 && h.count == h.length &&
               h.offset + h.count >= h.offset;
    case DCU_WIRE_NOTIFY:
        return ranks && h.tag >= 1 && h.tag <= TAGS && h.length == 0;
    case DCU_WIRE_ABORT: /* a run number and up to 256 bytes of text */
    case DCU_WIRE_LEFT:
        return h.length <= 256;
    case DCU_WIRE_PROBE:
        return h.epoch != 0 && h.length == 0;
    case DCU_WIRE_REPLY:
        return h.epoch != 0 && h.length == ANSWER_BYTES;
    case DCU_WIRE_FOUND:
        return h.length == 0;
    case DCU_WIRE_ROUND: /* a barrier, a round of at most 31 */
        return h.epoch != 0 && h.tag < 31 && h.length == 0;
    case DCU_WIRE_ACK: /* any count and bytes (the barrier checks them) */
        return h.length == 0;
    case DCU_WIRE_PART_ASK: /* two ranks, a slot; any tag and count */
    case DCU_WIRE_PART:
        return ranks && h.slot < 160 && h.length == 0;
    case DCU_WIRE_BEAT: /* alive (tag 0) or done (tag 1) */
        return h.tag <= 1 && h.length == 0;
    case DCU_WIRE_GET: /* two ranks, a tag, a slot, a span; where the answer goes */
        return ranks && h.tag >= 1 && h.tag <= TAGS && h.slot < 160 &&
               h.offset + h.count >= h.offset && h.length == GET_BYTES &&
               valid_get(&h, m + sizeof h);
    case DCU_WIRE_HOST_PUT:
    case DCU_WIRE_HOST_GET:
    case DCU_WIRE_HOST_DATA:
    case DCU_WIRE_HOST_DONE:
        return valid_host(&h, m + sizeof h, ranks);
    default:
        return 0;
    }
}

static size_t make(unsigned char *m, int type, int from)
{
    dcu_wire_header_t h;
    int host = type >= DCU_WIRE_HOST_PUT;
    size_t body = type == DCU_WIRE_PUT                                      ? 40
                  : type == DCU_WIRE_ABORT || type == DCU_WIRE_LEFT         ? 30
                  : type == DCU_WIRE_REPLY                                  ? ANSWER_BYTES
                  : type == DCU_WIRE_GET                                    ? GET_BYTES
                  : type == DCU_WIRE_HOST_PUT || type == DCU_WIRE_HOST_DATA ? HOST_BYTES + 8
                  : host                                                    ? HOST_BYTES
                                                                            : 0;
    dcu_wire_header(&h, (uint8_t)type, (uint32_t)body, from, 3);
    h.src_rank = 3 * from;
    h.dst_rank = (3 * from + 4) % WORLD;
    h.tag = type == DCU_WIRE_BEAT ? 1 : 8;
    h.slot = 5;
    h.epoch = type == DCU_WIRE_PROBE || type == DCU_WIRE_REPLY || type == DCU_WIRE_ROUND ? 2 : 0;
    h.offset = 64;
    h.count = type == DCU_WIRE_PUT ? body : type == DCU_WIRE_PART ? 4096 : 0;
    memcpy(m, &h, sizeof h);
    for (size_t i = 0; i < body; i++) /* a GET's: slot 14, offset 21 */
        m[sizeof h + i] = type == DCU_WIRE_GET ? (unsigned char)(i == 0   ? 14
                                                                 : i == 8 ? 21
                                                                          : 0)
                                               : (unsigned char)(i * 7);
    if (host) { /* a request of 40 bytes from 64 (a get: all of it), 8 bytes at 64 + 16 */
        dcu_wire_header_t *hh = (dcu_wire_header_t *)(void *)m;
        uint64_t w[3] = { 9, type == DCU_WIRE_HOST_DATA || type == DCU_WIRE_HOST_DONE ? 0 : 64,
                          type == DCU_WIRE_HOST_DONE ? 0 : 40 };
        hh->tag = type == DCU_WIRE_HOST_DONE ? 5 : 0;
        hh->offset = type == DCU_WIRE_HOST_PUT ? 80 : type == DCU_WIRE_HOST_GET ? 64 : 16;
        hh->count = type == DCU_WIRE_HOST_GET ? 40 : body - HOST_BYTES;
        memcpy(m + sizeof h, w, sizeof w);
    }
    return sizeof h + body;
}

static int accepts(const unsigned char *m, size_t size, int from)
{
    dcu_wire_header_t h;
    char why[128];
    return dcu_wire_check(m, size, from, &limits, &h, why, sizeof why) == DCUDA_OK;
}

static int run_fuzz(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    unsigned char m[4200], base[TYPES][4200];
    size_t sizes[TYPES];
    for (int t = 0; t < TYPES; t++) {
        sizes[t] = make(base[t], t + 1, 2);
        if (t + 1 == RETIRED) {
            TEST_CHECK(!accepts(base[t], sizes[t], 2), "retired message type %d accepted", t + 1);
            continue;
        }
        TEST_CHECK(accepts(base[t], sizes[t], 2), "valid message of type %d refused", t + 1);
        TEST_CHECK(!accepts(base[t], sizes[t], 1), "message of type %d taken from another sender",
                   t + 1);
        for (size_t n = 0; n < sizes[t]; n++)
            TEST_CHECK(!accepts(base[t], n, 2), "type %d accepted when cut to %zu bytes", t + 1, n);
    }
    int agree = 0, accepted = 0;
    for (int round = 0; round < FUZZ_ROUNDS; round++) {
        int t = (int)(next() % TYPES), from = (int)(next() % PROCS);
        size_t size = sizes[t];
        memcpy(m, base[t], size);
        ((dcu_wire_header_t *)m)->src_proc = from;
        for (int flips = 1 + (int)(next() % 3); flips > 0; flips--) {
            switch (next() % 4) {
            case 0: /* a random byte of the header */
                m[next() % sizeof(dcu_wire_header_t)] = (unsigned char)next();
                break;
            case 1: /* a small number in a random field word */
                memcpy(m + 4 * (next() % (sizeof(dcu_wire_header_t) / 4)),
                       &(uint32_t){ (uint32_t)(next() % 80) }, 4);
                break;
            case 2: /* another size (or a GET's body: a random byte of it) */
                if ((t + 1 == DCU_WIRE_GET || t + 1 >= DCU_WIRE_HOST_PUT) && next() % 2) {
                    m[sizeof(dcu_wire_header_t) + next() % GET_BYTES] = (unsigned char)next();
                    break;
                }
                size = next() % 2 ? sizeof(dcu_wire_header_t) + next() % 200 : next() % 4200;
                break;
            default: /* random bytes throughout */
                for (size_t i = 0; i < size; i++)
                    m[i] = (unsigned char)next();
                break;
            }
        }
        int a = accepts(m, size, from), v = valid(m, size, from);
        accepted += a;
        if (a == v) {
            agree++;
        } else if (test_failures < 5) {
            TEST_CHECK(a == v, "round %d: decoder %s a message this test calls %s", round,
                       a ? "accepts" : "refuses", v ? "valid" : "invalid");
        } else {
            test_failures++;
        }
    }
    printf("wire fuzz: %d rounds, decoder and reference agree on %d, %d accepted\n", FUZZ_ROUNDS,
           agree, accepted);
    TEST_CHECK(accepted > 100, "too few mutations stayed valid (%d): the fuzzing is too coarse",
               accepted);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = { { "decode", run_fuzz } };
    return test_main(argc, argv, cases, 1);
}
