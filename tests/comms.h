/*
 * Shared by the rank code (comms_kernels.c) and the host driver
 * (comms_host.c) of the communicators' suite: the cases, the user struct,
 * the result slots, and the seeded model both sides compute: each round's
 * colours and keys, and the barrier case's puts.
 */
#ifndef DCUDA_TESTS_COMMS_H
#define DCUDA_TESTS_COMMS_H

#include "test_common.h"

enum comms_case {
    COMMS_SPLIT = 1, /* splits of WORLD, of a split, of NODE, of DEVICE: their members */
    COMMS_BARRIER,   /* the barrier's promise on splits and NODE, randomized */
    COMMS_MISUSE     /* refused calls, the id limit, ids reused after frees */
};

/* Splits made in the split case, one a round, each of a different parent. */
enum comms_round {
    COMMS_OF_WORLD = 0, /* WORLD by a random colour (some ranks none) and key */
    COMMS_OF_SPLIT,     /* that split, again (odd seeds: through a window of it) */
    COMMS_OF_NODE,      /* NODE by WORLD rank parity, key the reverse order */
    COMMS_OF_DEVICE,    /* DEVICE (through a DEVICE window) by device rank mod 3 */
    COMMS_NODE,         /* NODE itself, as the rank sees it (no split) */
    COMMS_ROUNDS
};

/* Members a communicator may have in these tests (the ranks a test runs). */
#define COMMS_MAX_MEMBERS 64

/* Per rank and round: the communicator's id (-1: none), size, my rank,
 * its members' WORLD ranks. */
enum {
    COMMS_ID = 0,
    COMMS_SIZE,
    COMMS_RANK,
    COMMS_MEMBERS,
    COMMS_ROUND_SLOTS = 3 + COMMS_MAX_MEMBERS
};
/* Per rank: the first failing call, checks failed and made, where the
 * first failed, then the rounds. */
enum { COMMS_STATUS = 0, COMMS_BAD, COMMS_CHECKED, COMMS_FIRST_BAD, COMMS_ROUND0 };
#define COMMS_SLOTS (COMMS_ROUND0 + COMMS_ROUNDS * COMMS_ROUND_SLOTS)

/* The barrier case: iterations, and the largest put (past the network
 * path's read threshold, 32 KiB, and not a multiple of anything). */
#define COMMS_ITERS 6
#define COMMS_PUT_MAX 40000u
#define COMMS_TAG 7

typedef struct comms_data {
    int32_t test_case;
    uint32_t seed;
    uint64_t region;    /* bytes of buf per rank */
    unsigned char *buf; /* [own ranks][region], rank-visible */
    int64_t *res;       /* [own ranks][COMMS_SLOTS], rank-visible */
} comms_data_t;

/* A value of the model: (seed, what, a, b) hashed. */
TEST_FN uint32_t comms_hash(uint32_t seed, uint32_t what, uint32_t a, uint32_t b)
{
    return test_mix(test_mix(seed * 0x9e3779b9u + what) ^ test_mix(a + 0x632be5abu * b));
}

/* Round COMMS_OF_WORLD and COMMS_OF_SPLIT: WORLD rank w's colour (-1:
 * DCUDA_UNDEFINED) and key. */
TEST_FN int comms_colour(uint32_t seed, int round, int w)
{
    uint32_t colours = 1u + comms_hash(seed, 1u, (uint32_t)round, 0u) % 3u;
    uint32_t h = comms_hash(seed, 2u, (uint32_t)round, (uint32_t)w);
    return h % 7u == 3u ? -1 : (int)(h % colours);
}

TEST_FN int comms_key(uint32_t seed, int round, int w)
{
    return (int)(comms_hash(seed, 3u, (uint32_t)round, (uint32_t)w) % 5u) - 2;
}

/* The barrier case, iteration it: does member i of a communicator of n put
 * to member (i + step) % n, and how many bytes (0: none)? step is 1 + the
 * hash mod (n - 1), so nobody puts to itself. */
TEST_FN int comms_put_step(uint32_t seed, int it, int i, int n)
{
    return n < 2 ? 0
                 : 1 + (int)(comms_hash(seed, 4u, (uint32_t)it, (uint32_t)i) % (uint32_t)(n - 1));
}

TEST_FN uint32_t comms_put_bytes(uint32_t seed, int it, int i)
{
    static const uint32_t sizes[] = { 0u, 1u, 4u, 16u, 17u, 4096u, 32767u, 32768u, COMMS_PUT_MAX };
    uint32_t h = comms_hash(seed, 5u, (uint32_t)it, (uint32_t)i);
    uint32_t base = sizes[h % 9u];
    return base >= 17u && base < COMMS_PUT_MAX ? base - (h >> 8) % 7u : base;
}

/* Does member i notify its target before the barrier too? */
TEST_FN int comms_put_notifies(uint32_t seed, int it, int i)
{
    return (int)(comms_hash(seed, 6u, (uint32_t)it, (uint32_t)i) & 1u);
}

#endif /* DCUDA_TESTS_COMMS_H */
