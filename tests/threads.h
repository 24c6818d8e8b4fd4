/*
 * Shared between the rank code (threads_kernels.c) and the host driver
 * (threads_host.c) of the host-thread suite: the user struct.
 */
#ifndef DCUDA_TESTS_THREADS_H
#define DCUDA_TESTS_THREADS_H

#include "test_common.h"

#define THREADS_TAG_NOBODY 7

typedef struct threads_data {
    int32_t wait_forever; /* every rank waits for a notification nobody sends */
    int32_t hold;         /* the ranks meet once their host set *release */
    int64_t *release;     /* rank-visible word the host sets during the run */
    uint64_t work;        /* otherwise: steps the last rank computes before a WORLD barrier */
    int64_t *res;         /* [device ranks]: the status of the wait or the barrier */
} threads_data_t;

#endif /* DCUDA_TESTS_THREADS_H */
