/*
 * Between the CPU backend's host side and its ranks: the entry of a rank
 * thread.
 */
#ifndef DCU_BACKEND_CPU_RANK_H
#define DCU_BACKEND_CPU_RANK_H

#include "dcuda/dcuda_host.h"
#include "dcuda/shared/layout.h"

typedef dcuda_cpu_kernel_fn dcu_cpu_kernel_fn;

/* Runs rank `rank` of the kernel on this thread: makes the context known
 * to the rank calls, runs the rank code, tells the watchdog it returned. */
void dcu_cpu_rank_run(dcuda_context_t *ctx, int rank, dcu_cpu_kernel_fn kernel);
/* The thread of rank `rank` ends inside the kernel (a cleanup handler of
 * pthread_exit or cancellation): reports it and ends the run. */
void dcu_cpu_rank_vanished(dcuda_context_t *ctx, int rank);

#endif /* DCU_BACKEND_CPU_RANK_H */
