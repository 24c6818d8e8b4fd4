/*
 * Shared by the rank code (atomics_kernels.c) and the host driver
 * (atomics_host.c) of the test of remote atomics (dcuda_atomic,
 * dcuda_atomic_notify): the cases, a rank's part, and the seeded plan
 * both sides recompute. Each step, every rank issues ATOM_OPS atomics,
 * each to a drawn rank's drawn counter (two 64-bit, two 32-bit words);
 * what a counter takes that step is drawn once for it: distinct bits
 * added (fetch-add), values of their own stored (swap), or increments by
 * compare-and-swap loops. Some adds and swaps are notified, after a put
 * of a payload into the target's slot for that op.
 */
#ifndef DCUDA_TESTS_ATOMICS_H
#define DCUDA_TESTS_ATOMICS_H

#include <stdint.h>

#include "test_common.h"

enum {
    ATOM_MODEL = 0,   /* the randomized model */
    ATOM_MISUSE = 1,  /* bad arguments, each refused with its status, nothing changed */
    ATOM_NET = 2,     /* targets on the network path: answers, and a word not aligned there */
    ATOM_REWINDOW = 3 /* windows freed and made again over the other half of the part between
                       * atomics to the same rank: each lands in the live window's memory */
};
#define ATOM_REWINDOW_STEPS 6
enum { ATOM_ADD = 0, ATOM_SWAP = 1, ATOM_CAS = 2 };

#define ATOM_OPS 8
#define ATOM_COUNTERS 4 /* 0, 1: 8 bytes at 0, 8; 2, 3: 4 bytes at 16, 20 */
#define ATOM_SRC 64u    /* a rank's payloads to send: ATOM_OPS of 16 bytes */
#define ATOM_SLOTS 256u /* [sender rank][ATOM_OPS] payloads of 16 bytes */
#define ATOM_PAYLOAD 16u
#define ATOM_STEPS 4
#define ATOM_TAG 7
#define ATOM_THREADS 64
#define ATOM_CAS_TRIES 1000000

/* A rank's findings ([device rank][ATOM_WORDS]). */
enum {
    ATOM_BAD = 0,         /* step * 100 + what (ATOM_BAD_*) of the first wrong thing */
    ATOM_FIRST_ERROR = 1, /* the first failing status */
    ATOM_DONE = 2,        /* ops by kind: adds, swaps, compare-swaps, notified: 4 words */
    ATOM_CALLS = 6,       /* the misuse and net cases' statuses and values: ATOM_CALL_WORDS */
    ATOM_CALL_WORDS = 12,
    ATOM_WORDS = 20
};
enum {
    ATOM_BAD_SEEN_OWN = 1, /* an add found its own bit set already */
    ATOM_BAD_ORDER = 2,    /* an add missed a bit this rank added before */
    ATOM_BAD_STRANGER = 3, /* a fetched value nobody stored */
    ATOM_BAD_STUCK = 4,    /* a compare-swap loop never succeeded */
    ATOM_BAD_PAYLOAD = 5,  /* a notified op's payload was not there */
    ATOM_BAD_FINAL = 6,    /* a counter's final value is not the plan's */
    ATOM_BAD_FETCHED = 7,  /* a refused call's fetched value is not 0 */
    ATOM_BAD_WINDOW = 8    /* an atomic fetched or changed a word outside the live window */
};

typedef struct atom_data {
    unsigned char *parts; /* [device ranks][part], this process's */
    int64_t *words;       /* [device ranks][ATOM_WORDS] */
    uint64_t part;        /* bytes of a part: ATOM_SLOTS + world * ATOM_OPS * 16 */
    uint32_t seed;
    int32_t test_case;
} atom_data_t;

TEST_FN uint32_t atom_width(int c) { return c < 2 ? 8u : 4u; }
TEST_FN uint32_t atom_offset(int c)
{
    return c < 2 ? (uint32_t)c * 8u : 16u + (uint32_t)(c - 2) * 4u;
}

TEST_FN uint32_t atom_key(uint32_t seed, int step, int rank, int k)
{
    return test_mix(seed ^ test_mix((uint32_t)step * 131u + (uint32_t)rank * 7919u +
                                    (uint32_t)k * 104729u + 1u));
}

/* Op k of `rank` in step: its target and counter. */
TEST_FN int atom_target(uint32_t seed, int step, int rank, int k, int n)
{
    return (int)(atom_key(seed, step, rank, k) % (uint32_t)n);
}
TEST_FN int atom_counter(uint32_t seed, int step, int rank, int k)
{
    return (int)((atom_key(seed, step, rank, k) >> 8) % ATOM_COUNTERS);
}

/* What counter c of rank t takes in step. */
TEST_FN int atom_kind(uint32_t seed, int step, int t, int c)
{
    return (int)(test_mix(seed ^ ((uint32_t)step * 31u + (uint32_t)t * 17u + (uint32_t)c + 5u)) %
                 3u);
}

/* Is op k of rank notified (adds and swaps only)? */
TEST_FN int atom_notified(uint32_t seed, int step, int rank, int k, int kind)
{
    return kind != ATOM_CAS && ((atom_key(seed, step, rank, k) >> 16) & 1u);
}

/* An add's bit: how many adds to its counter come before it in the
 * plan's order (rank, then k); -1 when it would not fit the word (the op
 * is then skipped). *count (when not NULL) gets every add's count. */
TEST_FN int atom_bit(uint32_t seed, int step, int rank, int k, int n, int *count)
{
    const int t = atom_target(seed, step, rank, k, n), c = atom_counter(seed, step, rank, k);
    int before = -1, adds = 0;
    for (int r = 0; r < n; r++)
        for (int j = 0; j < ATOM_OPS; j++) {
            if (r == rank && j == k)
                before = adds;
            if (atom_target(seed, step, r, j, n) == t && atom_counter(seed, step, r, j) == c)
                adds++;
        }
    if (count)
        *count = adds;
    return before < (int)(atom_width(c) * 8u) ? before : -1;
}

/* The value a swap stores: its own. */
TEST_FN uint64_t atom_swap_value(int step, int rank, int k)
{
    return ((uint64_t)(step + 1) << 24) | ((uint64_t)rank << 8) | (uint64_t)(k + 1);
}

/* A counter's value at a step's start (an add counter's low bits, which
 * its adds set, are clear). */
TEST_FN uint64_t atom_init(uint32_t seed, int step, int t, int c, int adds)
{
    uint64_t v = ((uint64_t)test_mix(seed + (uint32_t)(step * 977 + t * 13 + c)) << 32) |
                 test_mix(seed ^ (uint32_t)(step * 389 + t * 7 + c + 99));
    if (atom_width(c) == 4u)
        v &= 0xffffffffull;
    const int bits = (int)atom_width(c) * 8;
    if (atom_kind(seed, step, t, c) == ATOM_ADD)
        v &= adds >= bits ? 0ull : ~((1ull << adds) - 1ull);
    return v;
}

/* Byte i of the payload op k of rank sends in step. */
TEST_FN uint8_t atom_byte(int step, int rank, int k, uint32_t i)
{
    return test_byte((uint32_t)rank * 64u + (uint32_t)step, (uint32_t)k + 300u, i);
}

#endif /* DCUDA_TESTS_ATOMICS_H */
