/*
 * Shared by the rank code and the host drivers of the test suites: function
 * qualifiers that work for both compilations of rank code (C and CUDA), and
 * the data patterns that senders write and both receivers and hosts
 * recompute independently. No libc: this header is included by rank code.
 */
#ifndef DCUDA_TESTS_TEST_COMMON_H
#define DCUDA_TESTS_TEST_COMMON_H

#include <stdint.h>

#include "dcuda/dcuda_status.h"

#if defined(__CUDACC__)
/* Pure helpers, callable from host and rank code. */
#define TEST_FN static __host__ __device__ __forceinline__
/* Helpers that call the rank API: rank code only. */
#define TEST_RANK_FN static __device__
#else
#define TEST_FN static inline
#define TEST_RANK_FN static
#endif

/* A 32-bit integer hash (good avalanche, cheap). */
TEST_FN uint32_t test_mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* Byte i of the pattern named by (a, b), e.g. (sender rank, iteration). */
TEST_FN uint8_t test_byte(uint32_t a, uint32_t b, uint64_t i)
{
    uint32_t key = test_mix(a * 0x9e3779b9u + test_mix(b ^ 0x632be5abu));
    return (uint8_t)test_mix(key + (uint32_t)i + (uint32_t)(i >> 32) * 0x85ebca6bu);
}

/* Word i of the pattern named by (a, b); never 0, so that a zeroed slot
 * never passes for a delivered one. */
TEST_FN uint64_t test_word(uint32_t a, uint32_t b, uint64_t i)
{
    uint32_t key = test_mix(a * 0x9e3779b9u + test_mix(b ^ 0x2545f491u));
    uint32_t lo = test_mix(key ^ (uint32_t)i), hi = test_mix(key + 0x68e31da4u + (uint32_t)i);
    return ((uint64_t)hi << 32 | lo) | 1u;
}

/* A word the host copies in while the ranks run (dcuda_host_copy_in),
 * polled whole: a volatile load on a GPU, an atomic one on CPU ranks (whose
 * host copies during a run are atomic word by word). */
#if defined(__CUDACC__)
TEST_FN int64_t test_poll_word(const int64_t *p) { return *(const volatile int64_t *)p; }
#else
TEST_FN int64_t test_poll_word(const int64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
#endif

/* A word a rank writes while the host may copy it out (dcuda_host_copy_out
 * or a host get during a run): a volatile store on a GPU, an atomic one
 * on CPU ranks (whose host copies during a run read word by word). */
#if defined(__CUDACC__)
TEST_FN void test_store_word(int64_t *p, int64_t v) { *(volatile int64_t *)p = v; }
#else
TEST_FN void test_store_word(int64_t *p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
#endif

/* Keeps the first failing status (negative) seen in *first. */
TEST_FN void test_note(int64_t *first, int status)
{
    if (status < 0 && *first == 0)
        *first = status;
}

/* The same, for a call a rank may be blocked in when another rank's error
 * ends the run (ON_ERROR=abort): DCUDA_ERR_ABORTED is then its documented
 * answer, whether the cancel or the call's completion reaches it first. */
TEST_FN void test_note_unless_aborted(int64_t *first, int status)
{
    if (status != DCUDA_ERR_ABORTED)
        test_note(first, status);
}

#endif /* DCUDA_TESTS_TEST_COMMON_H */
