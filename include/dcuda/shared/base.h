/*
 * What every shared layout needs: fixed-width integers, a way to declare
 * fields that several agents touch at once, and compile-time asserts.
 *
 * Fields declared with DCUDA_ATOMIC() are _Atomic in C11 (the CPU backend
 * operates on them with <stdatomic.h>) and the plain integer of the same
 * size and alignment in C++ and CUDA (device code uses PTX atomics on
 * them). The asserts of each layout pin both views to one image.
 */
#ifndef DCUDA_SHARED_BASE_H
#define DCUDA_SHARED_BASE_H

#include <stddef.h>
#include <stdint.h>

#if !defined(__cplusplus) && !defined(__CUDACC__) && !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
#define DCUDA_ATOMIC(T) _Atomic T
#else
#define DCUDA_ATOMIC(T) T
#endif

#if defined(__cplusplus)
#define DCUDA_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define DCUDA_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#endif /* DCUDA_SHARED_BASE_H */
