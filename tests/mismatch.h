/*
 * The mismatch suite (dcuda_test_mismatch), shared by its rank code
 * (mismatch_kernels.c) and its host driver (mismatch_host.c). In each
 * case every member of a communicator makes the same calls but one, the
 * culprit (the last member), which calls another collective, gives
 * another argument, skips a call, or makes one its own checks refuse.
 * Where the case's first call is a collective, every member makes it
 * first twice as the others do (the culprit departs from a run of
 * agreeing calls).
 * Every run must end with DCUDA_ERR_MISMATCH or DCUDA_ERR_DEADLOCK and a
 * report that names the calls, never crash, and no collective may
 * return DCUDA_OK with a result other than the one its own arguments
 * give (each rank checks what an OK call left against a serial
 * reference).
 */
#ifndef DCUDA_TESTS_MISMATCH_H
#define DCUDA_TESTS_MISMATCH_H

#include "dcuda/dcuda_rank.h"
#include "test_common.h"

enum mm_case {
    MM_OTHER_CALL = 0, /* allreduce(16 x int32, sum); the culprit: broadcast(64 B, root 0) */
    MM_OTHER_GATHER,   /* allgather(8 B); the culprit: alltoall(8 B) */
    MM_TWO_BARRIERS,   /* a barrier, then allreduce; the culprit: two barriers */
    MM_ROOT,           /* broadcast(64 B, root 0); the culprit: root 1 */
    MM_SIZE_UP,        /* broadcast(64 B); the culprit: 128 B */
    MM_SIZE_DOWN,      /* broadcast(64 B); the culprit: 32 B */
    MM_TYPE,           /* allreduce(16 x int32, sum); the culprit: float */
    MM_OP,             /* allreduce(16 x int32, sum); the culprit: max */
    MM_COUNT,          /* allreduce(16 x int32, sum); the culprit: 8 */
    MM_OFFSET,         /* allreduce at offset 0; the culprit: at 256 */
    MM_REDUCE_ROOT,    /* reduce(16 x int32, sum, root 0); the culprit: root itself */
    MM_RS_COUNT,       /* reduce_scatter(4 x int32 a rank); the culprit: 2 */
    MM_SKIP,           /* allreduce; the culprit skips it and frees the window */
    MM_REFUSED,        /* allreduce; the culprit's op is refused, then it frees the window */
    MM_SPLIT_SKIP,     /* a split of the communicator; the culprit: a barrier on it */
    MM_SPLIT_OFFSET,   /* a split; the culprit's entries at another offset */
    MM_CASES
};

/* The communicator of the cases. */
enum mm_on { MM_ON_WORLD = 0, MM_ON_DEVICE = 1, MM_ON_SPLIT = 2 };

/* Result slots of each rank: res[device rank * MM_SLOTS + slot]. */
enum mm_slot {
    MM_RES_CALL = 0, /* first failing status of the case's calls (0: all OK) */
    MM_RES_BAD,      /* an OK collective left a result its arguments do not give */
    MM_RES_SETUP,    /* first failing call before or after the case (aborted aside) */
    MM_RES_OKS,      /* collectives of the case that returned DCUDA_OK */
    MM_SLOTS
};

/* A rank's part of the WORLD window: the split's entries, then the data
 * area the case's window covers. */
#define MM_SPLIT_AT 0u
#define MM_DATA_AT 4096u
#define MM_DATA_BYTES 16384u
#define MM_PART_BYTES (MM_DATA_AT + MM_DATA_BYTES)
#define MM_MAX_RANKS 64 /* a split's entries (16 B a rank) fit before the data */
#define MM_OFFSET_OTHER 256u

typedef struct mm_data {
    int32_t test_case;
    int32_t on;
    int64_t *res;       /* [device ranks * MM_SLOTS] */
    unsigned char *buf; /* [device ranks * MM_PART_BYTES] */
} mm_data_t;

/* What member m (its rank in the communicator) holds before a call:
 * element i of a reduction, byte i of the rest. */
TEST_FN int32_t mm_value(int m, uint64_t i) { return (int32_t)(1000 * (m + 1) + (int)i); }
TEST_FN unsigned char mm_byte(int m, uint64_t i) { return test_byte((uint32_t)m, 77u, i); }

#endif /* DCUDA_TESTS_MISMATCH_H */
