/*
 * Shared by the rank code (tohost_kernels.c) and the host driver
 * (tohost_host.c) of the rank-to-host notification test: the cases, the
 * layout of a rank's part, and the seeded plan that both sides recompute
 * (each step's put size, the steps at which the host answers, the steps
 * that also notify the shared tag).
 */
#ifndef DCUDA_TESTS_TOHOST_H
#define DCUDA_TESTS_TOHOST_H

#include <stdint.h>

#include "test_common.h"

enum {
    TH_MODEL = 0,        /* the randomized model */
    TH_WRONG_TAG = 1,    /* ranks notify tag 7 and wait; the host waits for tag 8 */
    TH_RETURNED = 2,     /* ranks notify tag 3 once and return; the host wants one more */
    TH_ABORT = 3,        /* ranks wait; the host waits; another thread aborts */
    TH_BARRIER_FREE = 4, /* a free host; the ranks stuck in a barrier */
    TH_LATE_ACK = 5,     /* the ranks wait for a host that answers late */
    TH_MISUSE = 6,       /* bad tags on both sides */
    TH_THREAD = 7        /* dcuda_host_run on one thread, the wait on another */
};

/* Tags: the shared one, each device rank's own (1 + its DEVICE rank), and
 * the ranks' own among themselves. */
#define TH_SHARED_TAG 0
#define TH_PUT_TAG 201
#define TH_CREDIT_TAG 202
#define TH_ACK_TAG 203
TEST_FN int th_own_tag(int device_rank) { return 1 + device_rank; }

/* A rank's part: a header (the step it finished, its window's handle),
 * then what its left neighbour put, then what it puts to its right. */
#define TH_STEP_WORD 0
#define TH_WIN_WORD 1
#define TH_HEADER 64u
#define TH_MAX 40000u
#define TH_RECV TH_HEADER
#define TH_SRC (TH_HEADER + TH_MAX)
#define TH_PART (TH_HEADER + 2u * TH_MAX)
#define TH_STEPS 20
#define TH_THREAD_NOTES 5

/* The rank's findings ([device rank][TH_WORDS]). */
enum { TH_BAD_STEP = 0, TH_FIRST_ERROR = 1, TH_CALL_A = 2, TH_CALL_B = 3, TH_WORDS = 4 };

typedef struct tohost_data {
    unsigned char *parts; /* [device ranks][TH_PART], this process's */
    int64_t *words;       /* [device ranks][TH_WORDS] */
    uint32_t seed;
    int32_t test_case;
    int32_t steps;
    int32_t reserved;
} tohost_data_t;

/* Sizes on both sides of every threshold the paths have (the network
 * path's inline payloads and its 32 KiB chunks, the GPU's copy widths). */
TEST_FN uint32_t th_size(uint32_t seed, int rank, int step)
{
    const uint32_t sizes[] = { 1u, 7u, 64u, 1000u, 4095u, 4096u, 8193u, 32768u, 32769u, TH_MAX };
    return sizes[test_mix(seed ^ test_mix((uint32_t)rank * 977u + (uint32_t)step)) % 10u];
}

/* The host answers every rank at this step (the same steps for all). */
TEST_FN int th_sync(uint32_t seed, int step, int steps)
{
    return step < steps && test_mix(seed * 31u + (uint32_t)step) % 3u == 0;
}

/* The rank notifies the shared tag too at this step (before its own). */
TEST_FN int th_shared(uint32_t seed, int rank, int step)
{
    return test_mix(seed + 0x5bd1e995u * (uint32_t)rank + (uint32_t)step * 13u) % 2u == 0;
}

#endif /* DCUDA_TESTS_TOHOST_H */
