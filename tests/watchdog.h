/*
 * Shared between the rank code (watchdog_kernels.c) and the host driver
 * (watchdog_host.c) of the watchdog suite: case ids, the user struct and
 * per-rank result slots.
 */
#ifndef DCUDA_TESTS_WATCHDOG_H
#define DCUDA_TESTS_WATCHDOG_H

#include "test_common.h"

enum wd_case {
    WD_WAIT = 1, /* rank 0 waits for a tag nobody sends */
    WD_BARRIER   /* the last rank of each device skips a DEVICE barrier */
};

/* Result slots of each rank: res[rank * WD_SLOTS + slot]. */
enum wd_slot {
    WD_RES_CALL = 0, /* status of the call that blocks for ever */
    WD_RES_FINISH,   /* status of dcuda_rank_finish */
    WD_RES_SETUP,    /* first failing other call (0: none) */
    WD_SLOTS
};

#define WD_TAG_GO 1 /* rank 0 to the others: it is about to block */

typedef struct wd_data {
    int32_t test_case;
    int32_t tag;        /* WD_WAIT: the tag rank 0 waits for */
    int32_t log_marker; /* WD_WAIT: rank 0 logs a marker line first */
    uint32_t nonce;     /* named in the marker line */
    int64_t *res;       /* [ranks * WD_SLOTS], rank-visible */
} wd_data_t;

#endif /* DCUDA_TESTS_WATCHDOG_H */
