/*
 * Shared by the rank code (sets_kernels.c) and the host driver
 * (sets_host.c) of the test of sets of tags (dcuda_wait_notification_set,
 * dcuda_test_notification_set, dcuda_take_notifications): the cases, a
 * rank's part, and the seeded plan both sides recompute. Each step, every
 * tag of the pool at every rank has one sender (drawn), which sends it 0
 * to SETS_MAX_SENDS notified puts of drawn sizes (0: a plain notify), each
 * into its own slot of the target's part.
 */
#ifndef DCUDA_TESTS_SETS_H
#define DCUDA_TESTS_SETS_H

#include <stdint.h>

#include "test_common.h"

enum {
    SETS_MODEL = 0,    /* the randomized model */
    SETS_MISUSE = 1,   /* bad sets and tags, each refused with its status */
    SETS_DEADLOCK = 2, /* a set of two tags, all wanted, one never notified */
    SETS_HOST = 3,     /* a set only the host completes, late: no deadlock */
    SETS_WATCHDOG = 4  /* the deadlock case with the detector off: the watchdog cancels */
};

/* The pool: tags SETS_TAG0 .. SETS_TAG0 + SETS_TAGS - 1; the tags below it
 * (a set may name them) are never notified. */
#define SETS_TAG0 40
#define SETS_TAGS 16
#define SETS_MAX_SENDS 2
#define SETS_SLOTS (SETS_TAGS * SETS_MAX_SENDS)
#define SETS_SLOT 32832u /* the largest size, rounded up to 64 */
#define SETS_HEADER 64u
#define SETS_RECV SETS_HEADER
#define SETS_SRC (SETS_HEADER + SETS_SLOTS * SETS_SLOT)
#define SETS_PART (SETS_HEADER + 2u * SETS_SLOTS * SETS_SLOT)
#define SETS_STEPS 6
#define SETS_THREADS 64 /* a GPU rank: two warps, so that every thread checks bytes */
/* The deadlock and host cases' set: tags 60 and 62. */
#define SETS_LONE_TAG 60
#define SETS_HOST_TAG 62

/* A rank's findings ([device rank][SETS_WORDS]): the first wrong thing
 * (step * 100 + what, SETS_BAD_*), the first failing status, the calls'
 * statuses of the other cases, the sets they took. */
enum {
    SETS_BAD = 0,
    SETS_FIRST_ERROR = 1,
    SETS_CALLS = 2, /* SETS_CALL_WORDS words */
    SETS_CALL_WORDS = 16,
    SETS_TAKEN = 18, /* 3 words */
    SETS_OPS = 21,   /* the model's calls, by kind: 5 words */
    SETS_WORDS = 32
};
enum {
    SETS_BAD_PHANTOM = 1, /* took a tag with nothing left to come */
    SETS_BAD_OUTSIDE = 2, /* took a tag outside the set */
    SETS_BAD_FEW = 3,     /* took fewer tags than it needed */
    SETS_BAD_DATA = 4,    /* a consumed notification's put not visible */
    SETS_BAD_EXTRA = 5,   /* after the step, a notification nobody sent */
    SETS_BAD_STUCK = 6,   /* the step's calls never consumed everything */
    SETS_BAD_TEST = 7     /* a test that consumed returned 0, or the reverse */
};

typedef struct sets_data {
    unsigned char *parts; /* [device ranks][SETS_PART], this process's */
    int64_t *words;       /* [device ranks][SETS_WORDS] */
    uint32_t seed;
    int32_t test_case;
    int32_t steps;
    int32_t reserved;
} sets_data_t;

TEST_FN uint32_t sets_key(uint32_t seed, int step, int dst, int t)
{
    return test_mix(
        seed ^ test_mix((uint32_t)step * 131u + (uint32_t)dst * 7919u + (uint32_t)t * 104729u));
}

/* The one rank that sends tag SETS_TAG0 + t to dst in this step. */
TEST_FN int sets_owner(uint32_t seed, int step, int dst, int t, int ranks)
{
    return (int)(sets_key(seed, step, dst, t) % (uint32_t)ranks);
}

/* How many it sends (0 .. SETS_MAX_SENDS). */
TEST_FN int sets_sends(uint32_t seed, int step, int dst, int t)
{
    return (int)(test_mix(sets_key(seed, step, dst, t) + 17u) % (SETS_MAX_SENDS + 1u));
}

/* The size of send k (0: a plain notify): both sides of each path's
 * thresholds (inline payloads, 4 KiB, the network path's 32 KiB reads). */
TEST_FN uint32_t sets_size(uint32_t seed, int step, int dst, int t, int k)
{
    const uint32_t sizes[] = { 0u, 1u, 8u, 100u, 4095u, 4096u, 8193u, 32768u, 32769u };
    return sizes[test_mix(sets_key(seed, step, dst, t) * 3u + (uint32_t)k) % 9u];
}

/* Byte i of send k of tag t by rank src in step (the same for every
 * target: the source slot is filled once a step). */
TEST_FN uint8_t sets_byte(int src, int step, int t, int k, uint32_t i)
{
    return test_byte((uint32_t)src * 64u + (uint32_t)step, (uint32_t)(t * SETS_MAX_SENDS + k), i);
}

TEST_FN uint32_t sets_slot(int t, int k) { return (uint32_t)(t * SETS_MAX_SENDS + k) * SETS_SLOT; }

#endif /* DCUDA_TESTS_SETS_H */
