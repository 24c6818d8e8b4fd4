/*
 * Shared by the scale benchmark's host (dcuda_scale.c) and rank code
 * (scale_kernel.c): what each run measures.
 */
#ifndef DCUDA_BENCH_SCALE_H
#define DCUDA_BENCH_SCALE_H

#include <stdint.h>

typedef struct scale_args {
    int32_t barriers; /* WORLD barriers timed */
    int32_t windows;  /* WORLD window creations (+ frees) timed */
    int32_t messages; /* notifications each rank sends to a rank of the next process */
    int32_t reserved;
    char *part; /* [device ranks][SCALE_PART] window memory */
} scale_args_t;

#define SCALE_PART 64
/* The timer pairs of a run, in order. */
enum { SCALE_T_BARRIER, SCALE_T_WINDOW, SCALE_T_MESSAGES, SCALE_TIMERS };

#endif /* DCUDA_BENCH_SCALE_H */
