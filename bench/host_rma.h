/*
 * Shared by dcuda_host_rma (the host) and its rank code: the words through
 * which device rank 0 and its host meet.
 */
#ifndef DCUDA_BENCH_HOST_RMA_H
#define DCUDA_BENCH_HOST_RMA_H

#include <stdint.h>

enum { HRB_READY = 0, HRB_GATE = 1, HRB_HANDLE = 2, HRB_WORDS = 4 };

typedef struct host_rma_bench {
    unsigned char *part; /* device rank 0's part (dcuda_host_alloc) */
    uint64_t part_bytes;
    int64_t *words; /* HRB_WORDS (dcuda_host_alloc) */
} host_rma_bench_t;

#endif /* DCUDA_BENCH_HOST_RMA_H */
