/*
 * The randomized flood test of the network path's credits, shared by its
 * rank code (flood_kernels.c) and its host driver (flood_host.c), which
 * both regenerate every rank's program from the seed alone.
 *
 * In each round every rank first issues FLOOD_PUTS notified puts, to
 * targets drawn among the other ranks, of sizes across the inbox's
 * thresholds (inline bytes, whole entries, the eager limit and past it),
 * before it consumes anything: every rank sends while its own inbox fills,
 * so senders must wait for their targets' credit while those targets wait
 * to send too (the waits apply what arrived meanwhile, or the run hangs).
 * Put k of source s lands in slot (s, k) of its target's region, so no two
 * puts cover the same bytes. Then each rank waits for the puts it was sent
 * and checks each slot it was sent into; the host checks every region
 * against a replay of all rounds. Run with a small NET_CREDIT, a receiver
 * that was sent beyond the credit fails the run.
 */
#ifndef DCUDA_TESTS_FLOOD_H
#define DCUDA_TESTS_FLOOD_H

#include "test_common.h"

#define FLOOD_PUTS 24   /* puts of each rank in a round */
#define FLOOD_MAX 6000u /* bytes of a put at most (past the inbox's 4 KiB) */
#define FLOOD_TAG 3

/* Result slots of each rank: res[rank * FLOOD_SLOTS + slot]. */
enum flood_res {
    FLOOD_RES_STATUS = 0, /* first failing rank API call (0: none) */
    FLOOD_RES_BAD,        /* wrong bytes seen */
    FLOOD_RES_RECEIVED,   /* puts received */
    FLOOD_SLOTS
};

/* The user struct; each process has its own buf and res, of its ranks. */
typedef struct flood_data {
    uint32_t seed;
    int32_t rounds;
    int32_t world;      /* WORLD size the host expects */
    unsigned char *buf; /* [device ranks][flood_bytes(world)] */
    int64_t *res;       /* [device ranks][FLOOD_SLOTS] */
} flood_data_t;

/* A rank's share of buf: its staging area, then a slot per (source, put). */
TEST_FN uint64_t flood_bytes(int world)
{
    return (uint64_t)FLOOD_MAX * (1u + (uint64_t)world * FLOOD_PUTS);
}

TEST_FN uint64_t flood_slot(int s, int k)
{
    return (uint64_t)FLOOD_MAX * (1u + (uint64_t)s * FLOOD_PUTS + (uint64_t)k);
}

TEST_FN uint32_t flood_hash(uint32_t seed, uint32_t r, uint32_t s, uint32_t k)
{
    return test_mix(seed ^ test_mix(r * 0x9e3779b9u ^ test_mix(s * 0x85ebca6bu ^ test_mix(k))));
}

/* Put k of rank s in round r: its target (never s) and size. */
TEST_FN int flood_target(uint32_t seed, int r, int s, int k, int world)
{
    int d =
        1 + (int)(flood_hash(seed, (uint32_t)r, (uint32_t)s, (uint32_t)k) % (uint32_t)(world - 1));
    return (s + d) % world;
}

TEST_FN uint64_t flood_size(uint32_t seed, int r, int s, int k)
{
    static const uint32_t sizes[] = { 0u, 1u, 12u, 13u, 64u, 700u, 4095u, 4096u, 4097u };
    uint32_t h = flood_hash(seed ^ 0x51e5u, (uint32_t)r, (uint32_t)s, (uint32_t)k);
    return h % 4u == 0u ? (uint64_t)(h >> 8) % (FLOOD_MAX + 1u) : sizes[(h >> 2) % 9u];
}

/* Byte i of put k of rank s in round r. */
TEST_FN uint8_t flood_byte(uint32_t seed, int r, int s, int k, uint64_t i)
{
    return test_byte(seed ^ (uint32_t)s * 0x2545f491u, (uint32_t)(r * FLOOD_PUTS + k), i);
}

#endif /* DCUDA_TESTS_FLOOD_H */
