/*
 * The GPU's side of tasks (backend.h's dcu_task_gpu_ops_t, for src/task):
 * a worker thread's two streams, which it takes turns on so that one
 * task's copies overlap the other's kernel, and memory of the GPU for the
 * tasks it took from CPU devices. The worker has bound itself to the
 * device (bind_thread) before it opens them.
 */
#include <cuda_runtime_api.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "util/msg.h"

typedef struct task_gpu {
    cudaStream_t lane[2];
    dcuda_status_t failed[2]; /* the lane's first error since its last finish */
} task_gpu_t;

static dcuda_status_t gpu_err(cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        return DCUDA_OK;
    dcu_msg_error("task on the GPU: %s: %s (%s)", what, cudaGetErrorString(err),
                  cudaGetErrorName(err));
    return DCUDA_ERR_BACKEND;
}

static dcuda_status_t task_gpu_open(void **out)
{
    task_gpu_t *g = calloc(1, sizeof *g);
    if (!g)
        return DCUDA_ERR_NO_MEMORY;
    for (int i = 0; i < 2; i++) {
        dcuda_status_t st = gpu_err(cudaStreamCreateWithFlags(&g->lane[i], cudaStreamNonBlocking),
                                    "cudaStreamCreateWithFlags");
        if (st != DCUDA_OK) {
            if (i)
                cudaStreamDestroy(g->lane[0]);
            free(g);
            return st;
        }
    }
    *out = g;
    return DCUDA_OK;
}

static void task_gpu_close(void *gpu)
{
    task_gpu_t *g = gpu;
    for (int i = 0; i < 2; i++) {
        cudaStreamSynchronize(g->lane[i]);
        cudaStreamDestroy(g->lane[i]);
    }
    free(g);
}

static dcuda_status_t task_gpu_alloc(void *gpu, size_t size, void **ptr)
{
    (void)gpu;
    *ptr = NULL;
    return size ? gpu_err(cudaMalloc(ptr, size), "cudaMalloc") : DCUDA_OK;
}

static void task_gpu_free(void *gpu, void *ptr)
{
    (void)gpu;
    if (ptr)
        cudaFree(ptr);
}

static dcuda_status_t task_gpu_issue(void *gpu, int lane, const dcu_task_gpu_job_t *job)
{
    task_gpu_t *g = gpu;
    cudaStream_t s = g->lane[lane];
    dcuda_status_t st = DCUDA_OK;
    if (job->in_from != job->in && job->in_size)
        st = gpu_err(cudaMemcpyAsync(job->in, job->in_from, job->in_size, cudaMemcpyDefault, s),
                     "cudaMemcpyAsync (its input)");
    if (st == DCUDA_OK)
        st = job->fn(job->arg, job->in, job->out, (void *)s);
    if (st == DCUDA_OK)
        st = gpu_err(cudaGetLastError(), "its GPU form's launch");
    if (st == DCUDA_OK && job->out_to && job->out_size)
        st = gpu_err(cudaMemcpyAsync(job->out_to, job->out, job->out_size, cudaMemcpyDefault, s),
                     "cudaMemcpyAsync (its output)");
    if (st != DCUDA_OK && g->failed[lane] == DCUDA_OK)
        g->failed[lane] = st;
    return st;
}

static dcuda_status_t task_gpu_finish(void *gpu, int lane)
{
    task_gpu_t *g = gpu;
    dcuda_status_t st = gpu_err(cudaStreamSynchronize(g->lane[lane]), "cudaStreamSynchronize");
    if (g->failed[lane] != DCUDA_OK)
        st = g->failed[lane];
    g->failed[lane] = DCUDA_OK;
    return st;
}

const dcu_task_gpu_ops_t dcu_cuda_task_gpu_ops = {
    .open = task_gpu_open,
    .close = task_gpu_close,
    .alloc = task_gpu_alloc,
    .free = task_gpu_free,
    .issue = task_gpu_issue,
    .finish = task_gpu_finish,
};
