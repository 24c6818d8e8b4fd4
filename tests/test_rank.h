/*
 * Helpers of the tests' rank code (the *_kernels.c files) that use the
 * rank API, compiled like them for CPU and GPU ranks.
 */
#ifndef DCUDA_TESTS_TEST_RANK_H
#define DCUDA_TESTS_TEST_RANK_H

#include "dcuda/dcuda_rank.h"
#include "test_common.h"

/* 1 if any thread of the rank saw `bad` (every thread gets the answer),
 * through `flag`, an int the rank's threads share. */
TEST_RANK_FN int test_rank_any(int32_t *flag, int bad)
{
    if (dcuda_thread_index() == 0)
        *flag = 0;
    dcuda_rank_sync();
    if (bad)
        *flag = 1;
    dcuda_rank_sync();
    int any = *flag;
    dcuda_rank_sync(); /* every thread read it before thread 0 clears it again */
    return any;
}

#endif /* DCUDA_TESTS_TEST_RANK_H */
