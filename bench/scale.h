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
    int32_t flood;    /* SCALE_FLOOD_PUT puts each rank sends it before it consumes any */
    char *part;       /* [device ranks][SCALE_PART] window memory: a target, then a source */
} scale_args_t;

/* Notifications go in batches, each waited for before the next: a
 * pipeline the target's inbox (256 entries a rank) holds, so that the rate
 * is the path's and not that of messages held for lack of room. */
#define SCALE_BATCH 128
#define SCALE_FLOOD_PUT 4096
#define SCALE_PART (2 * SCALE_FLOOD_PUT)
/* The timer pairs of a run, in order. */
enum { SCALE_T_BARRIER, SCALE_T_WINDOW, SCALE_T_MESSAGES, SCALE_T_FLOOD, SCALE_TIMERS };

#endif /* DCUDA_BENCH_SCALE_H */
