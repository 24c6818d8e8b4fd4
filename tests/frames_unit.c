/*
 * The proxy's frames (src/proxy/frames.h) against a model: a seeded random
 * stream of wire messages of every size (a bare header, bodies up to and
 * past the size that goes alone) to more processes than frames stay open,
 * sent as the proxy sends them (a small one written into the room its
 * target's frame reserves; a large one alone, after that frame), with
 * flushes of one target or of all at random moments. Every buffer handed
 * to the manager is split here with dcu_wire_next, as a receiver does.
 * Checks: each buffer is whole
 * messages at aligned offsets and no larger than a frame (or one message
 * alone); each process receives exactly the messages sent to it, in the
 * order sent, byte for byte; nothing is left open after the last flush;
 * frames do pack (fewer sends than messages). Deterministic, well under a
 * second: dcuda_test_frames [SEED [STEPS]].
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/frames.h"
#include "proxy/wire.h"
#include "test_util.h"

#define PROCS 13 /* more than DCU_FRAMES_OPEN */
#define MAX_BODY (2u * DCU_FRAME_ALONE)
#define MAX_MSGS 40000

/* A message of the model: its target, and its bytes. */
typedef struct sent_msg {
    int q;
    size_t size;
    uint8_t *bytes;
} sent_msg_t;

static sent_msg_t model[MAX_MSGS];
static int model_count;
static int next_of[PROCS]; /* index into model of the next message process q expects */
static unsigned long sends, received;
static uint64_t rng;

static uint32_t draw(uint32_t bound) { return (uint32_t)(test_rng(&rng) % bound); }

/* The model's next message to q, from index `from` on; -1 if none. */
static int next_for(int q)
{
    for (int i = next_of[q]; i < model_count; i++)
        if (model[i].q == q)
            return i;
    return -1;
}

/* A receiver: the buffer is split and each message checked against the
 * next one the model sent q. */
static dcuda_status_t receive(void *arg, int q, void *buf, size_t size)
{
    (void)arg;
    size_t at = 0, off = 0, n = 0;
    int r, count = 0;
    sends++;
    TEST_CHECK(q >= 0 && q < PROCS, "a buffer for process %d", q);
    while ((r = dcu_wire_next(buf, size, &at, &off, &n)) > 0) {
        int i = next_for(q);
        TEST_CHECK(i >= 0, "process %d received a message it was never sent", q);
        if (i < 0)
            break;
        TEST_CHECK(off % DCU_WIRE_ALIGN == 0, "a message at offset %zu", off);
        TEST_CHECK(n == model[i].size && memcmp((char *)buf + off, model[i].bytes, n) == 0,
                   "process %d: message %d (%zu bytes) arrived as %zu other bytes", q, i,
                   model[i].size, n);
        next_of[q] = i + 1;
        count++;
        received++;
    }
    TEST_CHECK(r == 0, "a buffer of %zu bytes to process %d ends inside a message", size, q);
    TEST_CHECK(count >= 1, "an empty buffer to process %d", q);
    TEST_CHECK(size <= DCU_FRAME_BYTES || count == 1, "a frame of %zu bytes", size);
    free(buf);
    return DCUDA_OK;
}

/* A wire message with a body of `body` bytes, its bytes drawn. */
static uint8_t *make_message(uint32_t body, size_t *size)
{
    *size = sizeof(dcu_wire_header_t) + body;
    uint8_t *m = malloc(*size);
    dcu_wire_header_t h;
    dcu_wire_header(&h, DCU_WIRE_PUT, body, 0, 1);
    h.tag = draw(1000);
    h.count = body;
    memcpy(m, &h, sizeof h);
    for (uint32_t i = 0; i < body; i++)
        m[sizeof h + i] = (uint8_t)draw(256);
    return m;
}

/* Sends a message to q as the proxy does. */
static void send_message(dcu_frames_t *f, int q, uint8_t *m, size_t size)
{
    model[model_count++] = (sent_msg_t){ q, size, m };
    if (size <= DCU_FRAME_ALONE) {
        void *room = dcu_frames_reserve(f, q, size);
        TEST_CHECK(room != NULL, "no room for a message of %zu bytes", size);
        if (room) {
            TEST_CHECK((uintptr_t)room % DCU_WIRE_ALIGN == 0, "room at %p", room);
            memcpy(room, m, size);
        }
        return;
    }
    TEST_CHECK(dcu_frames_reserve(f, q, size) == NULL, "room for %zu bytes, which go alone", size);
    uint8_t *copy = malloc(size); /* the receiver frees it */
    memcpy(copy, m, size);
    TEST_STATUS(dcu_frames_flush_to(f, q), DCUDA_OK);
    receive(NULL, q, copy, size);
}

int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    int steps = argc > 2 ? atoi(argv[2]) : 20000;
    if (steps > MAX_MSGS)
        steps = MAX_MSGS;
    rng = seed * 0x9e3779b97f4a7c15ull + 1;
    dcu_frames_t f;
    dcu_frames_init(&f, receive, NULL);
    for (int step = 0; step < steps && !test_failures; step++) {
        uint32_t what = draw(100);
        /* Few targets at a time, sometimes all of them. */
        int q = what < 70 ? (int)draw(3) : (int)draw(PROCS);
        if (what < 92) {
            uint32_t kind = draw(10);
            uint32_t body = kind < 5 ? 0 : kind < 8 ? draw(200) : draw(MAX_BODY + 1);
            size_t size;
            uint8_t *m = make_message(body, &size);
            send_message(&f, q, m, size);
        } else if (what < 97) {
            TEST_STATUS(dcu_frames_flush_to(&f, q), DCUDA_OK);
        } else {
            TEST_STATUS(dcu_frames_flush(&f), DCUDA_OK);
        }
    }
    TEST_STATUS(dcu_frames_flush(&f), DCUDA_OK);
    TEST_CHECK(f.count == 0, "%d frames left open", f.count);
    for (int q = 0; q < PROCS; q++)
        TEST_CHECK(next_for(q) < 0, "process %d never received message %d", q, next_for(q));
    TEST_CHECK(received == (unsigned long)model_count, "%lu of %d messages received", received,
               model_count);
    TEST_CHECK(sends < received / 2, "%lu sends for %lu messages: frames did not pack", sends,
               received);
    printf("frames: seed %llu: %d messages in %lu sends\n", (unsigned long long)seed, model_count,
           sends);
    for (int i = 0; i < model_count; i++)
        free(model[i].bytes);
    return test_failures ? 1 : 0;
}
