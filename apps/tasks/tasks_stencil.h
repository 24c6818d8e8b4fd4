/*
 * The tasks program's stencil (main.c, and stencil_gpu.cu where CUDA is):
 * a strip of rows, and the five-point step of its rows.
 */
#ifndef DCUDA_APPS_TASKS_STENCIL_H
#define DCUDA_APPS_TASKS_STENCIL_H

#include "dcuda/dcuda_task.h"

typedef struct tasks_strip {
    int n;    /* columns */
    int rows; /* rows of the strip (the task's input has one more above and below) */
} tasks_strip_t;

/* Row r, column c of the next grid from rows r - 1 .. r + 1 of `in` (in
 * points at the row above the strip): the boundary columns kept, inner
 * cells the mean of their four neighbours (summed in this order). */
static inline float tasks_stencil_cell(const float *in, int n, int r, int c)
{
    const float *mid = in + (size_t)(r + 1) * (size_t)n;
    if (c == 0 || c == n - 1)
        return mid[c];
    return 0.25f * (mid[c - (long)n] + mid[c + (long)n] + mid[c - 1] + mid[c + 1]);
}

static inline void tasks_stencil_rows(const float *in, float *out, int n, int rows)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < n; c++)
            out[(size_t)r * (size_t)n + (size_t)c] = tasks_stencil_cell(in, n, r, c);
}

#ifdef __cplusplus
extern "C" {
#endif
/* The strip task's GPU form (NULL in a build without CUDA). */
dcuda_task_gpu_fn tasks_stencil_gpu_form(void);
#ifdef __cplusplus
}
#endif

#endif /* DCUDA_APPS_TASKS_STENCIL_H */
