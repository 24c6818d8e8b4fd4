/*
 * Shared by dcuda_host_rma (the host) and its rank code: the words through
 * which device rank 0 and its host meet.
 */
#ifndef DCUDA_BENCH_HOST_RMA_H
#define DCUDA_BENCH_HOST_RMA_H

#include <stdint.h>

enum { HRB_READY = 0, HRB_GATE = 1, HRB_HANDLE = 2, HRB_WORDS = 4 };

/* The notification rows: device rank 0 of every process counts the
 * notifications of HRB_TAG it takes and writes the count at HRB_COUNT of
 * its part; it echoes the word the host puts at HRB_PING to HRB_ECHO (the
 * reference: a flag instead of a notification). Process 0's rank 0
 * stops at its gate; the others at a notification of HRB_STOP, which
 * process 0's host sends when it is done. The put rows use the part from
 * HRB_PUTS on. */
enum { HRB_TAG = 1, HRB_STOP = 2 };
#define HRB_COUNT 0u
#define HRB_ECHO 8u
#define HRB_PING 64u
#define HRB_NOTE_BYTES 128u /* a notified put's bytes land here */
#define HRB_PUTS 256u

typedef struct host_rma_bench {
    unsigned char *part; /* device rank 0's part (dcuda_host_alloc) */
    uint64_t part_bytes;
    int64_t *words; /* HRB_WORDS (dcuda_host_alloc) */
} host_rma_bench_t;

#endif /* DCUDA_BENCH_HOST_RMA_H */
