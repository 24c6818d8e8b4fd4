/*
 * Shared between the rank code (integration_kernels.c) and the host driver
 * (integration_host.c) of the integration suite: the calls an application
 * needs to fit dcuda into a program it already has: each rank's scratch
 * memory (dcuda_init_params_t.shared_bytes, dcuda_rank_shared), init on
 * an application's MPI communicator (dcuda_init_params_t.mpi_comm), runs
 * that do not block the host (dcuda_host_run_start) and windows on memory
 * the application allocated (dcuda_host_register).
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
    INT_RES_PRE,        /* what the rank read in `pre` */
    INT_RES_PUT,        /* what arrived in its part of `reg` (its left neighbour's value) */
    INT_SLOTS
};

#define INT_RING_TAG 1
#define INT_PUT_TAG 2
/* Words of `reg` per rank of the process: [0] receives, [1] is the source. */
#define INT_REG_WORDS 4

typedef struct integration_data {
    int64_t *res;   /* [WORLD ranks * INT_SLOTS], rank-visible */
    int64_t *gate;  /* NULL, or: WORLD rank 0 waits until the host stores nonzero here */
    int64_t *pre;   /* NULL, or a word each rank reads (what the application wrote first) */
    int64_t *reg;   /* NULL, or [ranks of the process * INT_REG_WORDS]: a window part each,
                    * a ring of put_notify into the right neighbour's */
    int64_t marker; /* WORLD rank 0 stores integration_marker(WORLD size) */
} integration_data_t;

/* The value rank r puts into its right neighbour's part of `reg`, and the
 * marker rank 0 leaves in the user data. */
TEST_FN int64_t integration_put_value(int rank) { return 1000003 * (int64_t)rank + 17; }
TEST_FN int64_t integration_marker(int world) { return 7000 + (int64_t)world; }

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
