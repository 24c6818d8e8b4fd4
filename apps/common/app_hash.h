/*
 * What the case studies' initial data share: a fixed 64-bit mixer (the
 * finaliser of a well-known hash) turning a key into a value in [0, 1), so
 * that every variant and reference starts from the same numbers without
 * storing them. Callable on the host and on a GPU.
 */
#ifndef DCUDA_APPS_APP_HASH_H
#define DCUDA_APPS_APP_HASH_H

#include <stdint.h>

#if defined(__CUDACC__)
#define APP_HASH_FN static inline __host__ __device__
#else
#define APP_HASH_FN static inline
#endif

/* A value in [0, 1) that depends on every bit of key. */
APP_HASH_FN double app_hash01(uint64_t key)
{
    uint64_t h = key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return (double)(h >> 11) / 9007199254740992.0;
}

#endif /* DCUDA_APPS_APP_HASH_H */
