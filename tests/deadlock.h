/*
 * Shared between the rank code (deadlock_kernels.c) and the host driver
 * (deadlock_host.c) of the deadlock suite: case ids, the user struct and
 * per-rank result slots.
 */
#ifndef DCUDA_TESTS_DEADLOCK_H
#define DCUDA_TESTS_DEADLOCK_H

#include "test_common.h"

enum dl_case {
    DL_WRONG_TAG = 1,   /* each rank notifies its right neighbour with tag 1, waits for tag 2 */
    DL_MISSING_NOTIFY,  /* each rank waits for 2 notifications of tag 3; 1 is sent */
    DL_MISSING_BARRIER, /* rank 0 waits for a notification nobody sends; the rest in a barrier */
    DL_DEVICE_BARRIER,  /* the last rank of each device skips a DEVICE barrier, waiting */
    DL_SLOW,            /* not a deadlock: rank 0 computes a while, then notifies */
    DL_SLOW_PROCESS,    /* not a deadlock: every rank of the last process computes a while */
    DL_PROCESS_ENDS     /* the last process's ranks return at once; the rest wait for nobody */
};

/* Result slots of each rank: res[DEVICE rank * DL_SLOTS + slot]. */
enum dl_slot {
    DL_RES_CALL = 0, /* status of the call that blocks (or the case's last call) */
    DL_RES_FINISH,   /* status of dcuda_rank_finish */
    DL_RES_SETUP,    /* first failing other call (0: none) */
    DL_RES_WORK,     /* what a slow rank computed (so that it computes) */
    DL_SLOTS
};

#define DL_TAG_SENT 1
#define DL_TAG_WAITED 2
#define DL_TAG_COUNT 3
#define DL_TAG_NOBODY 4
#define DL_TAG_SLOW 5

typedef struct dl_data {
    int32_t test_case;
    int32_t reserved;
    uint64_t work; /* DL_SLOW, DL_SLOW_PROCESS: steps a slow rank computes before going on */
    int64_t *res;  /* [device ranks * DL_SLOTS], rank-visible */
} dl_data_t;

#endif /* DCUDA_TESTS_DEADLOCK_H */
