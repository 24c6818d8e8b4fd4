/*
 * dcuda rank API: what rank code calls (thesis chapter 3, Listings 3.4/3.5).
 *
 * A rank is a GPU thread block (CUDA backend) or a CPU thread (CPU backend).
 * Rank code is written once and compiled twice: as C11 for CPU ranks and as
 * CUDA for GPU ranks. This header gives both the same names:
 *
 *   DCUDA_KERNEL(name, ctx) { DCUDA_SHARED dcuda_state_t st;
 *                             dcuda_rank_init(ctx, &st); ... }
 *
 * Unless noted, every call is collective over the threads of the calling
 * rank (all threads call it with the same arguments) and returns the same
 * status to all of them. Misuse returns a negative dcuda_status_t, leaves
 * memory untouched and is reported on the host with rank, call and values.
 *
 * Self-contained: compiles as C11, as C++ and with nvcc.
 */
#ifndef DCUDA_RANK_H
#define DCUDA_RANK_H

#include "dcuda_layout.h"
#include "dcuda_status.h"

/* Handle passed to every kernel: the device's shared context. */
#ifndef DCUDA_CONTEXT_H_DEFINED
#define DCUDA_CONTEXT_H_DEFINED
typedef struct dcuda_context *dcuda_context_h;
#endif

/* Communicators: all ranks, and the ranks of my device. */
typedef int dcuda_comm_t;
#define DCUDA_COMM_WORLD 0
#define DCUDA_COMM_DEVICE 1

/* Window handle (DCUDA_WIN_NONE when creation failed). */
typedef uint32_t dcuda_win_t;

#if defined(__CUDACC__)
#include "detail/rank_cuda.cuh"
#else
#include "detail/rank_cpu.h"
#endif

/* Thesis names, so its listings port with little change. */
#define dcuda_gpu_init dcuda_rank_init
#define dcuda_gpu_finish dcuda_rank_finish

#endif /* DCUDA_RANK_H */
