/*
 * What the bulk-synchronous baselines of the case studies (CUDA C++ with
 * MPI, one process a GPU) share: the check of CUDA calls, the start (one
 * process for a graph, each process's GPU), the timed run of the steps (as
 * one CUDA graph or one by one from the host), the slowest process's time,
 * a line's neighbours, a grid's communicators, and the variant's options
 * and name.
 */
#ifndef DCUDA_APPS_BSP_GPU_H
#define DCUDA_APPS_BSP_GPU_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>

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

/* The start every baseline makes once MPI runs and its options are read:
 * a CUDA graph is for one process (MPI runs on the host between steps),
 * and each process takes its GPU. Returns 0 to go on (*gpu set), else the
 * exit status after MPI_Finalize: 2 (said by process 0) or 77 (no GPU). */
static inline int bsp_begin(const char *program, int graph, int *gpu)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (graph && size > 1) {
        if (rank == 0)
            fprintf(stderr, "%s: --bsp-graph is for one process (MPI runs on the host)\n", program);
        MPI_Finalize();
        return 2;
    }
    *gpu = bsp_pick_gpu(program);
    if (*gpu < 0) {
        MPI_Finalize();
        return 77;
    }
    return 0;
}

/* Step k of a baseline's run on its stream; *comm adds the seconds it
 * spent communicating (host-driven steps only). */
typedef void (*bsp_step_fn)(void *app, int k, double *comm);

/* Runs `iters` steps timed from a barrier of every process to the end of
 * `stream`'s work: with graph, every captured(app, k) captured first into
 * one CUDA graph and launched once; else host(app, k, &comm) one by one.
 * Returns the milliseconds; *comm_ms those spent communicating. */
static inline double bsp_run_steps(const char *program, cudaStream_t stream, int iters, int graph,
                                   bsp_step_fn captured, bsp_step_fn host, void *app,
                                   double *comm_ms)
{
    cudaGraphExec_t exec = NULL;
    double comm = 0;
    if (graph) {
        cudaGraph_t g;
        BSP_CK(program, cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        for (int k = 0; k < iters; k++)
            captured(app, k, &comm);
        BSP_CK(program, cudaStreamEndCapture(stream, &g));
        BSP_CK(program, cudaGraphInstantiate(&exec, g, 0));
        BSP_CK(program, cudaGraphDestroy(g));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (exec)
        BSP_CK(program, cudaGraphLaunch(exec, stream));
    for (int k = 0; !exec && k < iters; k++)
        host(app, k, &comm);
    BSP_CK(program, cudaStreamSynchronize(stream));
    double t1 = MPI_Wtime();
    if (exec)
        BSP_CK(program, cudaGraphExecDestroy(exec));
    *comm_ms = comm * 1e3;
    return (t1 - t0) * 1e3;
}

/* The largest of every process's v (a time: the slowest process's), on
 * process 0. */
static inline double bsp_slowest(double v)
{
    double worst = 0;
    MPI_Reduce(&v, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return worst;
}

/* My neighbours in a line of `size` processes: near[0] the one before,
 * near[1] the one after (MPI_PROC_NULL beyond the ends). */
static inline void bsp_line_neighbours(int rank, int size, int near[2])
{
    near[0] = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    near[1] = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
}

/* An option every baseline has: --bsp-graph or --bsp-ipc sets its flag;
 * 1 if arg was one of them. */
static inline int bsp_variant_option(const char *arg, int *graph, int *ipc)
{
    int g = strcmp(arg, "--bsp-graph") == 0, i = strcmp(arg, "--bsp-ipc") == 0;
    *graph |= g, *ipc |= i;
    return g | i;
}

/* 1 (said when `say`) if both variants were asked for, else 0. */
static inline int bsp_variant_refused(const char *program, int graph, int ipc, int say)
{
    if (graph && ipc && say)
        fprintf(stderr, "%s: --bsp-graph or --bsp-ipc, not both\n", program);
    return graph && ipc;
}

/* The name a baseline prints for its variant: one CUDA graph, the
 * exchange GPU to GPU (--bsp-ipc), staged through the host, or one
 * process's streams. */
static inline const char *bsp_variant(int graph, int ipc, int size)
{
    return graph ? "graph" : ipc ? "ipc" : size > 1 ? "mpi-staged" : "streams";
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
