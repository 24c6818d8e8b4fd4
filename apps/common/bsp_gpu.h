/*
 * What the bulk-synchronous baselines of the case studies (CUDA C++ with
 * MPI, one process a GPU) share: the check of CUDA calls, the choice of
 * each process's GPU, the slowest process's time, and a grid's
 * communicators.
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

/* The largest of every process's v (a time: the slowest process's), on
 * process 0. */
static inline double bsp_slowest(double v)
{
    double worst = 0;
    MPI_Reduce(&v, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return worst;
}

/* My place in a q x q grid of processes numbered column by column (SpMV's
 * and the power iteration's), and the communicators of my grid column
 * (ranked by grid row) and of my grid row (ranked by grid column). */
static inline void bsp_grid_split(int rank, int q, int *row, int *column, MPI_Comm *column_comm,
                                  MPI_Comm *row_comm)
{
    *row = rank % q, *column = rank / q;
    MPI_Comm_split(MPI_COMM_WORLD, *column, *row, column_comm);
    MPI_Comm_split(MPI_COMM_WORLD, *row, *column, row_comm);
}

#endif /* DCUDA_APPS_BSP_GPU_H */
