/*
 * What the bulk-synchronous baselines of the case studies (CUDA C++ with
 * MPI, one process a GPU) share: the check of CUDA calls, and the choice of
 * each process's GPU.
 */
#ifndef DCUDA_APPS_BSP_GPU_H
#define DCUDA_APPS_BSP_GPU_H

#include <mpi.h>
#include <stdio.h>

#include <cuda_runtime.h>

/* A failed CUDA call ends every process, naming the program and the call. */
#define BSP_CK(program, call)                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s: %s\n", program, #call, cudaGetErrorString(e_));               \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

/* Makes the process's GPU current: the node's processes take the GPUs in
 * turn. Returns its index, or -1 (said by process 0) when there is none. */
static inline int bsp_pick_gpu(const char *program)
{
    int devices = 0, local = 0, world_rank = 0;
    MPI_Comm node;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
        if (world_rank == 0)
            fprintf(stderr, "%s: no GPU here: skipped\n", program);
        return -1;
    }
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    BSP_CK(program, cudaSetDevice(local % devices));
    return local % devices;
}

#endif /* DCUDA_APPS_BSP_GPU_H */
