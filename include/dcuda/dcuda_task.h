/*
 * Tasks (host API): work the host hands to the runtime, on data that one
 * of this process's devices holds, run where there is room for it. A
 * pool's devices are CPU devices (each a worker thread with a queue of
 * its own; their memory is host memory) and, with the CUDA backend, this
 * process's GPU (a worker that launches each task's GPU form on a stream
 * of its own, two streams taking turns, so that one task's copies overlap
 * another's kernel; its memory is that of dcuda_host_alloc).
 *
 * A task names its home device, whose memory holds its input and output,
 * and has a CPU form, a GPU form or both. It is queued on its home, in
 * order; a synchronous one (created with no handle) goes before the
 * asynchronous ones waiting there. A device whose queue is empty steals
 * the last task of the busiest queue it has a form for: it copies the
 * input into memory of its own, runs the task there and writes the output
 * back to the home's memory (the seed's load balancing by stealing and
 * data migration). The task's functions must not touch other memory of
 * the home device.
 *
 * Thread safety: every call may come from any host thread. A task's
 * functions run on the pool's worker threads. On a GPU, a task's kernel
 * shares the GPU with a run's ranks: while a run's ranks fill every SM it
 * waits for them.
 */
#ifndef DCUDA_TASK_H
#define DCUDA_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "dcuda_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DCUDA_HOST_H
/* A host runtime (dcuda_host.h). */
typedef struct dcuda_host *dcuda_host_h;
#endif
/* A pool of this process's devices (dcuda_task_pool_create). */
typedef struct dcuda_task_pool *dcuda_task_pool_h;
/* A task queued with a handle (dcuda_task_create), until waited for. */
typedef struct dcuda_task *dcuda_task_h;

/* A task's CPU form: reads in_size bytes at in, writes out_size bytes at
 * out (host memory). */
typedef void (*dcuda_task_cpu_fn)(void *arg, const void *in, void *out);
/* A task's GPU form: enqueues its work on stream (a cudaStream_t) over
 * in and out (GPU memory) and returns; its status (not DCUDA_OK: the task
 * failed with it). The task is done once the stream's work is. */
typedef dcuda_status_t (*dcuda_task_gpu_fn)(void *arg, const void *in, void *out, void *stream);

/* A task: its forms, their argument, its data and its home. */
typedef struct dcuda_task_desc {
    dcuda_task_cpu_fn cpu; /* its CPU form, or NULL */
    dcuda_task_gpu_fn gpu; /* its GPU form, or NULL */
    void *arg;             /* passed to either as it is */
    const void *in;        /* its input: in_size bytes of its home's memory */
    size_t in_size;
    void *out; /* its output: out_size bytes of its home's memory */
    size_t out_size;
    int home; /* the device that holds in and out (dcuda_task_devices) */
} dcuda_task_desc_t;

/* A pool's options (flags). */
#define DCUDA_TASK_NO_STEAL 1u /* devices never steal: each runs its own queue */

/* A pool of cpu_devices CPU devices (1 to 64; 0: 1), devices 0 to
 * cpu_devices - 1, and, with the CUDA backend, the GPU, device
 * cpu_devices. */
DCUDA_API dcuda_status_t dcuda_task_pool_create(dcuda_host_h host, int cpu_devices, unsigned flags,
                                                dcuda_task_pool_h *pool);
/* Runs every task still queued, waits for them, and frees the pool and
 * every handle of it not yet waited for. dcuda_host_finish destroys the
 * pools left. */
DCUDA_API dcuda_status_t dcuda_task_pool_destroy(dcuda_task_pool_h pool);
/* The pool's devices (*count), and which is the GPU (*gpu; -1: none). */
DCUDA_API dcuda_status_t dcuda_task_devices(dcuda_task_pool_h pool, int *count, int *gpu);

/* Queues a task on its home device. With a task handle: returns at once
 * (wait for it, test it or cancel it). With task NULL: synchronous, it
 * returns the task's status once done. DCUDA_ERR_INVALID_ARG (nothing
 * queued, the reason printed) for a home that is no device of the pool, a
 * task with no form for its home, NULL in or out with a size. */
DCUDA_API dcuda_status_t dcuda_task_create(dcuda_task_pool_h pool, const dcuda_task_desc_t *desc,
                                           dcuda_task_h *task);
/* Waits until the task is done or cancelled; its status (DCUDA_OK, its GPU
 * form's error, a copy's error, DCUDA_ERR_CANCELED), after which the
 * handle is gone. */
DCUDA_API dcuda_status_t dcuda_task_wait(dcuda_task_h task);
/* *done: 1 once the task is done or cancelled (wait then returns at once). */
DCUDA_API dcuda_status_t dcuda_task_test(dcuda_task_h task, int *done);
/* Takes a task out of its queue: DCUDA_OK, and its wait returns
 * DCUDA_ERR_CANCELED; DCUDA_ERR_INVALID_ARG (nothing changes, nothing
 * printed: a race with its device) once it started. */
DCUDA_API dcuda_status_t dcuda_task_cancel(dcuda_task_h task);

/* What a device of the pool did so far. */
typedef struct dcuda_task_stats {
    uint64_t run;      /* tasks it ran */
    uint64_t stolen;   /* of them, taken from another device's queue */
    uint64_t migrated; /* bytes it copied for those (input in, output back) */
} dcuda_task_stats_t;
DCUDA_API dcuda_status_t dcuda_task_device_stats(dcuda_task_pool_h pool, int device,
                                                 dcuda_task_stats_t *stats);

#ifdef __cplusplus
}
#endif

#endif /* DCUDA_TASK_H */
