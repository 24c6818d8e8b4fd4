/*
 * The second bulk-synchronous baseline's exchange (--bsp-ipc): GPU to GPU
 * with CUDA IPC between kernels, no host staging and no host wait. Each
 * process exports some device buffers and two interprocess events; its
 * neighbours open them once. A step then pushes its data straight into
 * the neighbours' buffers (copies or a kernel's stores over NVLink, on the
 * process's stream), and bsp_ipc_sync(k) records my event of parity k,
 * trades a token with each neighbour on the host (so that each waits on
 * the record of this step, not an older one) and makes the stream wait for
 * the neighbours' events. The host never waits for the GPU: it queues the
 * steps ahead while they run.
 *
 * What makes it safe, given that every neighbour syncs every step: a push
 * of step k follows my wait for the neighbours' step k - 1, which follows
 * all they did up to their push of step k - 1. So a buffer read up to
 * their step k - 1's push may be written at step k, and one read after it
 * (by the kernels of their step k) needs a second buffer: the callers keep
 * two, by parity. Two events by parity, for the same reason: a neighbour
 * records step k + 2 only after my token of step k + 1, sent after my wait
 * for its step k.
 *
 * The communication time is measured on the GPU: bsp_ipc_mark before a
 * step's pushes and after its wait (timing events, a pair a step),
 * summed by bsp_ipc_comm_ms at the end.
 */
#ifndef DCUDA_APPS_BSP_IPC_H
#define DCUDA_APPS_BSP_IPC_H

#include <stdlib.h>
#include <string.h>

#include "bsp_gpu.h"

#define BSP_IPC_PEERS 2 /* neighbours: above and below, left and right */
#define BSP_IPC_BUFS 4  /* buffers a process exports */

typedef struct bsp_ipc {
    const char *program;
    int peers;                                 /* neighbours that exist */
    int peer[BSP_IPC_PEERS];                   /* their ranks */
    void *theirs[BSP_IPC_PEERS][BSP_IPC_BUFS]; /* their buffers, opened here */
    cudaEvent_t done[2];                       /* mine, by parity (interprocess) */
    cudaEvent_t their_done[BSP_IPC_PEERS][2];  /* theirs, opened here */
    cudaEvent_t *marks;                        /* timing: two a step */
    int steps, marked;
} bsp_ipc_t;

/* What a process gives each neighbour once. */
typedef struct bsp_ipc_handles {
    cudaIpcMemHandle_t buf[BSP_IPC_BUFS];
    cudaIpcEventHandle_t done[2];
} bsp_ipc_handles_t;

#define BSP_IPC_CK(x, call) BSP_CK((x)->program, call)

/* Opens the exchange with the neighbours of rank[0..n) that are not
 * MPI_PROC_NULL (every process calls it, its neighbours with it): exports
 * my nbufs device buffers (each the start of a cudaMalloc) and my events,
 * opens theirs (x->theirs[i][j]: buffer j of x->peer[i]). steps: how many
 * bsp_ipc_mark pairs the run makes at most. */
static inline void bsp_ipc_open(bsp_ipc_t *x, const char *program, const int *rank, int n,
                                void *const *bufs, int nbufs, int steps)
{
    bsp_ipc_handles_t mine, got[BSP_IPC_PEERS];
    memset(x, 0, sizeof *x);
    memset(&mine, 0, sizeof mine);
    x->program = program;
    for (int j = 0; j < nbufs; j++)
        BSP_IPC_CK(x, cudaIpcGetMemHandle(&mine.buf[j], bufs[j]));
    for (int p = 0; p < 2; p++) {
        BSP_IPC_CK(x, cudaEventCreateWithFlags(&x->done[p],
                                               cudaEventDisableTiming | cudaEventInterprocess));
        BSP_IPC_CK(x, cudaIpcGetEventHandle(&mine.done[p], x->done[p]));
    }
    MPI_Request req[2 * BSP_IPC_PEERS];
    for (int i = 0; i < n; i++)
        if (rank[i] != MPI_PROC_NULL)
            x->peer[x->peers++] = rank[i];
    for (int i = 0; i < x->peers; i++) {
        MPI_Irecv(&got[i], (int)sizeof got[i], MPI_BYTE, x->peer[i], 90, MPI_COMM_WORLD, &req[i]);
        MPI_Isend(&mine, (int)sizeof mine, MPI_BYTE, x->peer[i], 90, MPI_COMM_WORLD,
                  &req[x->peers + i]);
    }
    MPI_Waitall(2 * x->peers, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < x->peers; i++) {
        for (int j = 0; j < nbufs; j++)
            BSP_IPC_CK(x, cudaIpcOpenMemHandle(&x->theirs[i][j], got[i].buf[j],
                                               cudaIpcMemLazyEnablePeerAccess));
        for (int p = 0; p < 2; p++)
            BSP_IPC_CK(x, cudaIpcOpenEventHandle(&x->their_done[i][p], got[i].done[p]));
    }
    x->steps = steps;
    x->marks = (cudaEvent_t *)calloc(2 * (size_t)steps, sizeof(cudaEvent_t));
    for (int m = 0; m < 2 * steps; m++)
        BSP_IPC_CK(x, cudaEventCreate(&x->marks[m]));
}

/* Buffer j of the neighbour of rank r, or NULL if r is not a neighbour. */
static inline void *bsp_ipc_buffer(const bsp_ipc_t *x, int r, int j)
{
    for (int i = 0; i < x->peers; i++)
        if (x->peer[i] == r)
            return x->theirs[i][j];
    return NULL;
}

/* A timing mark on the stream: the first of a step before its pushes,
 * the second after its wait (beyond `steps` pairs: none). */
static inline void bsp_ipc_mark(bsp_ipc_t *x, cudaStream_t stream)
{
    if (x->marked < 2 * x->steps)
        BSP_IPC_CK(x, cudaEventRecord(x->marks[x->marked++], stream));
}

/* Step k's pushes are queued on stream: tells the neighbours, and makes
 * the stream wait for theirs of step k. */
static inline void bsp_ipc_sync(bsp_ipc_t *x, cudaStream_t stream, int k)
{
    int token = k, got[BSP_IPC_PEERS];
    MPI_Request req[2 * BSP_IPC_PEERS];
    BSP_IPC_CK(x, cudaEventRecord(x->done[k % 2], stream));
    for (int i = 0; i < x->peers; i++) {
        MPI_Irecv(&got[i], 1, MPI_INT, x->peer[i], 91, MPI_COMM_WORLD, &req[i]);
        MPI_Isend(&token, 1, MPI_INT, x->peer[i], 91, MPI_COMM_WORLD, &req[x->peers + i]);
    }
    MPI_Waitall(2 * x->peers, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < x->peers; i++)
        BSP_IPC_CK(x, cudaStreamWaitEvent(stream, x->their_done[i][k % 2], 0));
}

/* The milliseconds between each step's pair of marks, summed (the stream
 * is done). */
static inline double bsp_ipc_comm_ms(bsp_ipc_t *x)
{
    double sum = 0;
    for (int m = 0; m + 1 < x->marked; m += 2) {
        float ms = 0;
        BSP_IPC_CK(x, cudaEventElapsedTime(&ms, x->marks[m], x->marks[m + 1]));
        sum += ms;
    }
    return sum;
}

/* Closes what bsp_ipc_open opened (the stream is done). */
static inline void bsp_ipc_close(bsp_ipc_t *x)
{
    for (int i = 0; i < x->peers; i++) {
        for (int j = 0; j < BSP_IPC_BUFS; j++)
            if (x->theirs[i][j])
                BSP_IPC_CK(x, cudaIpcCloseMemHandle(x->theirs[i][j]));
        for (int p = 0; p < 2; p++)
            BSP_IPC_CK(x, cudaEventDestroy(x->their_done[i][p]));
    }
    for (int m = 0; m < 2 * x->steps; m++)
        BSP_IPC_CK(x, cudaEventDestroy(x->marks[m]));
    for (int p = 0; p < 2; p++)
        BSP_IPC_CK(x, cudaEventDestroy(x->done[p]));
    free(x->marks);
    /* every neighbour closed mine before I free the buffers they mapped */
    MPI_Barrier(MPI_COMM_WORLD);
}

#endif /* DCUDA_APPS_BSP_IPC_H */
