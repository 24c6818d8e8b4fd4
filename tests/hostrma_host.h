/*
 * Shared by the host driver of the host RMA test (hostrma_host.c: the
 * runtime, the gates, the model and misuse cases) and its notify cases
 * (hostrma_notify.c).
 */
#ifndef DCUDA_TESTS_HOSTRMA_HOST_H
#define DCUDA_TESTS_HOSTRMA_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "dcuda/dcuda_host.h"
#include "hostrma.h"

#define HR_CHUNK (1024u * 1024u) /* the network path's chunk (DCU_NET_PUT_CHUNK) */

typedef struct hr {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    int gpu, procs, me, per_proc;
    hostrma_data_t d;
    int64_t *words; /* host copy */
    size_t word_count;
    uint32_t win[HR_WINDOWS][2]; /* handles: [w][colour] (DEVICE's: [w][0]) */
    int ops;                     /* of each host's program */
    int staged;                  /* the staged case's draws */
} hr_t;

/* The runtime and the test's memory for a case; 0 if it could not start. */
int hr_open(hr_t *t, int argc, char **argv, int misuse, uint64_t stripe_max, int ops);
void hr_close(hr_t *t);
/* Meeting the ranks: their word i (waited for, a minute at most), the
 * host's gate words, the handles they published. */
int await_ranks(hr_t *t, int i);
void write_word(hr_t *t, int i, int64_t v);
void read_handles(hr_t *t);
/* After the run: every rank's status. */
void check_ranks(hr_t *t);
/* Bytes of WORLD rank r's part of window w that a host owns; the seed of
 * host q's program. */
uint64_t stripe_of(const hr_t *t, int r, int w);
uint64_t program_seed(const hr_t *t, int q);

/* The notify cases (hostrma_notify.c). */
int case_notify(int argc, char **argv);
int case_notify_large(int argc, char **argv);
/* The fault cases (hostrma_faults.c). */
int case_dead_owner(int argc, char **argv);

#endif /* DCUDA_TESTS_HOSTRMA_HOST_H */
