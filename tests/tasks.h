/*
 * Shared by the host driver of the test of tasks (tasks_host.c) and the
 * GPU form of its task (tasks_gpu.cu, built with CUDA): what a task
 * computes, out = in * mul + add over `words` 32-bit words.
 */
#ifndef DCUDA_TESTS_TASKS_H
#define DCUDA_TESTS_TASKS_H

#include <stdint.h>

#include "dcuda/dcuda_task.h"

typedef struct tasks_arg {
    uint32_t words, mul, add;
    uint32_t spin_us; /* the CPU form pauses this long after (0: not) */
} tasks_arg_t;

#ifdef __cplusplus
extern "C" {
#endif
/* The task's GPU form (NULL in a build without CUDA). */
dcuda_task_gpu_fn tasks_gpu_form(void);
#ifdef __cplusplus
}
#endif

#endif /* DCUDA_TESTS_TASKS_H */
