/*
 * Shared between the rank code (nvtx_kernels.c) and the host driver
 * (nvtx_host.c) of the NVTX test: the user struct.
 */
#ifndef DCUDA_TESTS_NVTX_TEST_H
#define DCUDA_TESTS_NVTX_TEST_H

#include "test_common.h"

enum {
    NVTX_TEST_RING = 0,   /* a ping to the proxy, a ring of notifications, a barrier */
    NVTX_TEST_MISUSE = 1, /* rank 0 notifies a rank that does not exist */
    NVTX_TEST_WAIT = 2    /* every rank waits for a notification nobody sends */
};
#define NVTX_TEST_TAG 9

typedef struct nvtx_test_data {
    int64_t mode;
    int64_t *res; /* [device ranks]: 1 where the rank saw what it should */
} nvtx_test_data_t;

#endif /* DCUDA_TESTS_NVTX_TEST_H */
