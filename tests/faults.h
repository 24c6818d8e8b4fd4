/*
 * Shared between the rank code (faults_kernels.c) and the host driver
 * (faults_host.c) of the faults suite: case ids, the user struct and the
 * per-rank result slots.
 */
#ifndef DCUDA_TESTS_FAULTS_H
#define DCUDA_TESTS_FAULTS_H

#include "test_common.h"

enum fault_case {
    FAULT_NONE = 0,     /* rank_init and rank_finish only */
    FAULT_LATE,         /* the last WORLD rank joins a WORLD barrier delay_ms late */
    FAULT_LEFTOVER,     /* rank 0 notifies the last rank `count` times; it consumes one */
    FAULT_RING_PUT,     /* each rank puts into its right neighbour's part of `parts` */
    FAULT_FIRST_ERROR,  /* rank `culprit` notifies with a bad tag; then every rank waits for
                         * a notification nobody sends */
    FAULT_EVERY_ERROR,  /* every rank notifies with a bad tag, then all meet in a barrier */
    FAULT_WATCH_COUNTS, /* rank 0 sends the last rank `count` notifications of tag 0 and one
                         * of tag 2; it consumes those of tag 0, then waits for tag 1 */
    FAULT_EARLY_RETURN, /* rank `culprit` returns from the kernel without rank_finish */
    FAULT_THREAD_EXIT,  /* CPU ranks: the thread of rank `culprit` calls pthread_exit */
    FAULT_LONG_RING,    /* `count` rounds of a ring of puts with acks, delay_ms each */
    FAULT_MISUSE_AFTER  /* a rank whose rank_init failed goes on: a put with no window
                         * (each such rank reports a misuse) */
};

/* What rank `rank` sends in round `round` of FAULT_LONG_RING. */
#define FAULT_ROUND_VALUE(rank, round) (1000000 * ((int64_t)(rank) + 1) + (int64_t)(round))
#define FAULT_ACK_TAG 4

/* The tag FAULT_FIRST_ERROR and FAULT_EVERY_ERROR notify with (out of range). */
#define FAULT_BAD_TAG 300
/* The tag FAULT_FIRST_ERROR waits for (nobody sends it). */
#define FAULT_NEVER_TAG 9

/* Result slots of each rank: res[rank * FAULT_SLOTS + slot]. */
enum fault_slot {
    FAULT_RES_CALL = 0, /* status of the call the case is about */
    FAULT_RES_VALUE,    /* FAULT_RING_PUT: what arrived from the left neighbour; the
                         * error cases: status of the faulty call; FAULT_LONG_RING:
                         * rounds in which the right value arrived */
    FAULT_RES_SETUP,    /* first failing other call (0: none) */
    FAULT_SLOTS
};

/* Words of each rank's part in FAULT_RING_PUT: [0] what it sends, [1] what
 * it receives. */
#define FAULT_PART_WORDS 2
#define FAULT_RING_TAG 3
#define FAULT_RING_VALUE(rank) (1000 + (int64_t)(rank))

typedef struct fault_data {
    int32_t test_case;
    int32_t tag;      /* FAULT_LEFTOVER */
    int32_t count;    /* FAULT_LEFTOVER, FAULT_WATCH_COUNTS, FAULT_LONG_RING */
    int32_t delay_ms; /* FAULT_LATE, FAULT_LONG_RING */
    int32_t culprit;  /* FAULT_FIRST_ERROR, FAULT_EARLY_RETURN, FAULT_THREAD_EXIT: WORLD rank */
    int32_t reserved;
    int64_t *res;   /* [WORLD ranks * FAULT_SLOTS], rank-visible */
    int64_t *parts; /* FAULT_RING_PUT, FAULT_LONG_RING: [device ranks * FAULT_PART_WORDS] of
                       * this process */
} fault_data_t;

#endif /* DCUDA_TESTS_FAULTS_H */
