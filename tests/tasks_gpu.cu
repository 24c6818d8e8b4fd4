/*
 * The GPU form of the test's task (tasks.h), built where CUDA is: a grid
 * over the words on the task's stream.
 */
#include <cuda_runtime_api.h>

#include "tasks.h"

__global__ void tasks_axpb(const uint32_t *in, uint32_t *out, uint32_t n, uint32_t mul,
                           uint32_t add)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = in[i] * mul + add;
}

static dcuda_status_t tasks_gpu(void *arg, const void *in, void *out, void *stream)
{
    const tasks_arg_t *a = (const tasks_arg_t *)arg;
    if (!a->words)
        return DCUDA_OK;
    const unsigned blocks = (a->words + 255u) / 256u, grid = blocks < 64u ? blocks : 64u;
    cudaStream_t on = (cudaStream_t)stream;
    tasks_axpb<<<grid, 256, 0, on>>>((const uint32_t *)in, (uint32_t *)out, a->words, a->mul,
                                     a->add);
    return cudaGetLastError() == cudaSuccess ? DCUDA_OK : DCUDA_ERR_BACKEND;
}

extern "C" dcuda_task_gpu_fn tasks_gpu_form(void) { return tasks_gpu; }
