/*
 * Shared by the rank code (hostrma_kernels.c) and the host driver
 * (hostrma_host.c) of the host RMA test: the layout of the parts and of
 * the words through which ranks and host meet, and the parts' first bytes.
 */
#ifndef DCUDA_TESTS_HOSTRMA_H
#define DCUDA_TESTS_HOSTRMA_H

#include <stdint.h>

#include "test_common.h"

/* The windows every rank makes: WORLD's, a split of WORLD by parity, and
 * DEVICE's; then the room its split's exchange used. */
enum { HR_WORLD = 0, HR_SPLIT = 1, HR_DEVICE = 2, HR_WINDOWS = 3, HR_SLOTS = 4 };

/* The words: the ranks' "ready" and the host's "gate", twice (the misuse
 * case frees the split's window between), then each device rank's handles
 * and colour. */
enum {
    HR_READY = 0,
    HR_GATE = 1,
    HR_READY2 = 2,
    HR_GATE2 = 3,
    HR_HANDLES = 8, /* + device rank * HR_PER_RANK + window; + HR_WINDOWS: the colour */
    HR_PER_RANK = 4
};

typedef struct hostrma_data {
    unsigned char *parts; /* [device ranks][HR_SLOTS][slot_bytes], this process's */
    int64_t *words;       /* HR_HANDLES + device ranks * HR_PER_RANK */
    uint64_t slot_bytes;
    uint64_t stripe_max; /* a process's share of a part: 1 .. stripe_max bytes */
    uint32_t seed;
    int32_t processes;
    int32_t misuse; /* the misuse case: the split's window is freed at the first gate */
    int32_t notify; /* the notify case: after the gate, the ranks take the hosts' notes */
    /* The notify case: [device rank][process][HN_PLAN], what each host
     * sends the rank (written before the gate) and what the rank found. */
    int32_t *plan;
    /* The notify case: slots of each host's stripe, and their bytes
     * (HN_SLOTS of HN_SLOT_CAP; the large form: fewer and larger). */
    uint32_t note_slots;
    uint32_t note_cap;
} hostrma_data_t;

/* The notify case. Stripe q of a rank's part of WORLD's window is host
 * q's: note_slots slots of note_cap bytes, then HN_GET_BYTES a get reads.
 * Notification k of host q's tag to a rank announces slot k, which holds
 * a header (hostnote_magic, the payload's size) and the payload; it was
 * written by the request that carried the notification, or by a put just
 * before a notification alone. Host q's get of the last bytes notifies
 * its get tag, and the rank then writes them anew. */
#define HN_SLOTS 8
#define HN_HEADER 16u
#define HN_PAYLOAD_MAX 4200u
#define HN_SLOT_CAP (HN_HEADER + HN_PAYLOAD_MAX)
#define HN_GET_BYTES 96u
/* The large form: requests of more than one of the network path's chunks. */
#define HN_SLOTS_LARGE 2
#define HN_SLOT_CAP_LARGE (HN_HEADER + 1200u * 1024u)
/* Per rank and host in the plan: notifications of its tag, 1 if it gets
 * and notifies its get tag; then the rank's finding (HN_OK or what went
 * wrong) and where (slot << 20 | byte). */
enum { HN_COUNT = 0, HN_GETS = 1, HN_FOUND = 2, HN_WHERE = 3, HN_PLAN = 4 };
enum {
    HN_OK = 0,
    HN_BAD_HEADER = 1,
    HN_BAD_BYTE = 2,
    HN_WAIT_FAILED = 3,
    HN_EXTRA = 4,
    HN_NOT_YET = 5 /* the rank never got this far */
};

TEST_FN int hostnote_tag(int q) { return q % 100; }
TEST_FN int hostnote_get_tag(int q) { return 100 + q % 100; }
TEST_FN uint32_t hostnote_magic(int q, int k)
{
    return 0xc0de0000u | ((uint32_t)q & 0xffu) << 8 | (uint32_t)k;
}
/* Byte i of the payload of host q's slot k at WORLD rank r. */
TEST_FN uint8_t hostnote_byte(uint32_t seed, int q, int r, int k, uint64_t i)
{
    return test_byte(seed ^ ((uint32_t)q * 0x9e37u), (uint32_t)(r * HN_SLOTS + k + 1), i);
}
/* Byte i of the bytes host q gets from rank r, as the rank writes them
 * once it has the get's notification. */
TEST_FN uint8_t hostnote_after_get(uint32_t seed, int q, int r, uint64_t i)
{
    return test_byte(seed + 0x51u, 0x700u + (uint32_t)(q * 977 + r), i);
}

/* Bytes of WORLD rank r's part of window w a process's host owns (from
 * three quarters of stripe_max to all of it): the part holds one such
 * stripe a process, stripe q of process q. */
TEST_FN uint64_t hostrma_stripe(uint32_t seed, int r, int w, uint64_t stripe_max)
{
    return stripe_max - test_mix(seed * 31u + (uint32_t)r * 3u + (uint32_t)w) % (stripe_max / 4u);
}

/* Byte i of WORLD rank r's part of window w before the host's puts. */
TEST_FN uint8_t hostrma_first(uint32_t seed, int r, int w, uint64_t i)
{
    return test_byte(seed + (uint32_t)r, 0x40u + (uint32_t)w, i);
}

#endif /* DCUDA_TESTS_HOSTRMA_H */
