/*
 * The strip task's GPU form (tasks_stencil.h), built where CUDA is: a
 * thread a cell of the strip, on the task's stream, with the same sums in
 * the same order as the CPU form.
 */
#include <cuda_runtime_api.h>

#include "tasks_stencil.h"

__global__ void tasks_stencil_kernel(const float *in, float *out, int n, int rows)
{
    long cells = (long)n * rows;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < cells;
         i += (long)gridDim.x * blockDim.x) {
        int r = (int)(i / n), c = (int)(i % n);
        const float *mid = in + (size_t)(r + 1) * (size_t)n;
        out[i] = c == 0 || c == n - 1
                     ? mid[c]
                     : 0.25f * (mid[c - (long)n] + mid[c + (long)n] + mid[c - 1] + mid[c + 1]);
    }
}

static dcuda_status_t tasks_stencil_gpu(void *arg, const void *in, void *out, void *stream)
{
    const tasks_strip_t *s = (const tasks_strip_t *)arg;
    long cells = (long)s->n * s->rows;
    long blocks = (cells + 255) / 256;
    const unsigned grid = (unsigned)(blocks < 1024 ? blocks : 1024);
    cudaStream_t on = (cudaStream_t)stream;
    tasks_stencil_kernel<<<grid, 256, 0, on>>>((const float *)in, (float *)out, s->n, s->rows);
    return cudaGetLastError() == cudaSuccess ? DCUDA_OK : DCUDA_ERR_BACKEND;
}

extern "C" dcuda_task_gpu_fn tasks_stencil_gpu_form(void) { return tasks_stencil_gpu; }
