/*
 * Shared between the CPU backend's host side (threads) and its rank API:
 * which rank the calling thread is, and how a blocked rank backs off so that
 * hundreds of ranks on two cores do not starve the rank they wait for.
 */
#ifndef DCUDA_CPU_INTERNAL_H
#define DCUDA_CPU_INTERNAL_H

#include "dcuda/dcuda_layout.h"

/* Set by the backend on each rank thread before it enters the kernel. */
extern _Thread_local const dcuda_context_t *dcuda_cpu_thread_ctx;
extern _Thread_local int dcuda_cpu_thread_rank;

/* One step of waiting: spin briefly, then yield, then sleep (growing up to
 * about a millisecond). `spins` counts the steps taken in this wait. */
void dcuda_cpu_backoff(unsigned *spins);
/* After this many backoff steps a rank counts as blocked for the watchdog. */
#define DCUDA_CPU_BLOCKED_STEPS 256u

#endif /* DCUDA_CPU_INTERNAL_H */
