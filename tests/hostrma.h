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
    int32_t reserved;
} hostrma_data_t;

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
