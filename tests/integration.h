/*
 * Shared between the rank code (integration_kernels.c) and the host driver
 * (integration_host.c) of the integration suite: the calls an application
 * needs to fit dcuda into a program it already has: each rank's scratch
 * memory (dcuda_init_params_t.shared_bytes, dcuda_rank_shared), and init on
 * an application's MPI communicator (dcuda_init_params_t.mpi_comm).
 */
#ifndef DCUDA_TESTS_INTEGRATION_H
#define DCUDA_TESTS_INTEGRATION_H

#include "test_common.h"

/* Result slots of each rank: res[rank * INT_SLOTS + slot]. */
enum integration_slot {
    INT_RES_STATUS = 0, /* dcuda_rank_shared's status */
    INT_RES_BYTES,      /* the bytes it gave */
    INT_RES_SUM,        /* the checksum of what the rank's threads wrote and read back */
    INT_RES_ALIGNED,    /* 1 if the memory is 16-byte aligned (or there is none) */
    INT_RES_RING,       /* status of the ring of notifications over WORLD */
    INT_RES_WORLD,      /* WORLD's size as the rank sees it */
    INT_SLOTS
};

#define INT_RING_TAG 1

typedef struct integration_data {
    int64_t *res; /* [WORLD ranks * INT_SLOTS], rank-visible */
} integration_data_t;

/* The checksum a rank's scratch memory of `bytes` must give when byte i
 * holds test_byte(rank, 11, i): computed by the rank (over what it reads
 * back) and by the host (independently). */
TEST_FN int64_t integration_sum(int rank, uint64_t bytes)
{
    int64_t sum = 0;
    for (uint64_t i = 0; i < bytes; i++)
        sum += (int64_t)test_byte((uint32_t)rank, 11u, i) * (int64_t)((i % 7u) + 1u);
    return sum;
}

#endif /* DCUDA_TESTS_INTEGRATION_H */
