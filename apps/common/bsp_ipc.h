/*
 * The second bulk-synchronous baseline's exchange (--bsp-ipc): GPU to GPU
 * with CUDA IPC between kernels, no host staging and no host wait. Each
 * process exports some device buffers and two interprocess events; the
 * processes it exchanges with (its peers: neighbours, grid peers) open
 * them once. A phase pushes data straight into the peers' buffers (copies
 * or a kernel's stores, over NVLink between GPUs, on the process's
 * stream), then bsp_ipc_sync(s) records my event of parity s, trades a
 * token with each peer on the host (so that each waits on the record of
 * this sync, not an older one) and makes the stream wait for the peers'
 * events. The host never waits for the GPU: it queues the steps ahead
 * while they run.
 *
 * What makes it safe, given that every peer takes part in every sync: a
 * push after my wait of sync s follows all a peer did before its record
 * of sync s. So a buffer the peer reads only before that record may be
 * written after my wait of sync s; one it reads after it (until its next
 * record) needs a second buffer, by parity, or a sync between. Two events
 * by parity, for the same reason: a peer records sync s + 2 only after my
 * token of sync s + 1, sent after my wait for its sync s.
 *
 * The communication time is measured on the GPU: bsp_ipc_mark before a
 * phase's pushes and after its wait (timing events, a pair a phase),
 * summed by bsp_ipc_close at the end.
 */
#ifndef DCUDA_APPS_BSP_IPC_H
#define DCUDA_APPS_BSP_IPC_H

#include <stdlib.h>
#include <string.h>

#include "bsp_gpu.h"

#define BSP_IPC_PEERS 8 /* neighbours, grid peers or every other process */
#define BSP_IPC_BUFS 4  /* buffers a process exports */

typedef struct bsp_ipc {
    const char *program;
    int peers;                                 /* peers that exist */
    int peer[BSP_IPC_PEERS];                   /* their ranks */
    void *theirs[BSP_IPC_PEERS][BSP_IPC_BUFS]; /* their buffers, opened here */
    cudaEvent_t done[2];                       /* mine, by parity (interprocess) */
    cudaEvent_t their_done[BSP_IPC_PEERS][2];  /* theirs, opened here */
    cudaEvent_t *marks;                        /* timing: two a phase */
    int phases, marked;
} bsp_ipc_t;

/* What a process gives each peer once. */
typedef struct bsp_ipc_handles {
    cudaIpcMemHandle_t buf[BSP_IPC_BUFS];
    cudaIpcEventHandle_t done[2];
} bsp_ipc_handles_t;

#define BSP_IPC_CK(x, call) BSP_CK((x)->program, call)

/* Opens the exchange with the peers rank[0..n) that are not
 * MPI_PROC_NULL (every process calls it, its peers with it): exports my
 * nbufs device buffers (each the start of a cudaMalloc) and my events,
 * opens theirs (x->theirs[i][j]: buffer j of x->peer[i]). phases: how
 * many bsp_ipc_mark pairs the run makes at most. */
static inline void bsp_ipc_open(bsp_ipc_t *x, const char *program, const int *rank, int n,
                                void *const *bufs, int nbufs, int phases)
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
    if (n > BSP_IPC_PEERS) {
        fprintf(stderr, "%s: --bsp-ipc: %d processes to exchange with, at most %d\n", program, n,
                BSP_IPC_PEERS);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
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
    x->phases = phases;
    x->marks = (cudaEvent_t *)calloc(2 * (size_t)phases, sizeof(cudaEvent_t));
    for (int m = 0; m < 2 * phases; m++)
        BSP_IPC_CK(x, cudaEventCreate(&x->marks[m]));
}

/* The other processes of my grid column and of my grid row in a q x q
 * grid numbered column by column (bsp_grid_split's), the first
 * BSP_IPC_PEERS of them into peer; returns how many there are, 2 (q - 1). */
static inline int bsp_ipc_grid_peers(int rank, int q, int *peer)
{
    int row = rank % q, column = rank / q, n = 0;
    for (int i = 0; i < q; i++) {
        if (i != row && n < BSP_IPC_PEERS)
            peer[n] = column * q + i;
        n += i != row;
        if (i != column && n < BSP_IPC_PEERS)
            peer[n] = i * q + row;
        n += i != column;
    }
    return n;
}

/* Buffer j of peer r, or NULL if r is not a peer. */
static inline void *bsp_ipc_buffer(const bsp_ipc_t *x, int r, int j)
{
    for (int i = 0; i < x->peers; i++)
        if (x->peer[i] == r)
            return x->theirs[i][j];
    return NULL;
}

/* A timing mark on the stream: the first of a phase before its pushes,
 * the second after its wait (beyond `phases` pairs: none). */
static inline void bsp_ipc_mark(bsp_ipc_t *x, cudaStream_t stream)
{
    if (x->marked < 2 * x->phases)
        BSP_IPC_CK(x, cudaEventRecord(x->marks[x->marked++], stream));
}

/* Sync s: my pushes before it are queued on stream; tells the peers, and
 * makes the stream wait for theirs before sync s. */
static inline void bsp_ipc_sync(bsp_ipc_t *x, cudaStream_t stream, int s)
{
    int token = s, got[BSP_IPC_PEERS];
    MPI_Request req[2 * BSP_IPC_PEERS];
    BSP_IPC_CK(x, cudaEventRecord(x->done[s % 2], stream));
    for (int i = 0; i < x->peers; i++) {
        MPI_Irecv(&got[i], 1, MPI_INT, x->peer[i], 91, MPI_COMM_WORLD, &req[i]);
        MPI_Isend(&token, 1, MPI_INT, x->peer[i], 91, MPI_COMM_WORLD, &req[x->peers + i]);
    }
    MPI_Waitall(2 * x->peers, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < x->peers; i++)
        BSP_IPC_CK(x, cudaStreamWaitEvent(stream, x->their_done[i][s % 2], 0));
}

/* The milliseconds between each phase's pair of marks, summed (the stream
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

/* Closes what bsp_ipc_open opened (the stream is done); returns the
 * communication time, bsp_ipc_comm_ms. */
static inline double bsp_ipc_close(bsp_ipc_t *x)
{
    double comm_ms = bsp_ipc_comm_ms(x);
    for (int i = 0; i < x->peers; i++) {
        for (int j = 0; j < BSP_IPC_BUFS; j++)
            if (x->theirs[i][j])
                BSP_IPC_CK(x, cudaIpcCloseMemHandle(x->theirs[i][j]));
        for (int p = 0; p < 2; p++)
            BSP_IPC_CK(x, cudaEventDestroy(x->their_done[i][p]));
    }
    for (int m = 0; m < 2 * x->phases; m++)
        BSP_IPC_CK(x, cudaEventDestroy(x->marks[m]));
    for (int p = 0; p < 2; p++)
        BSP_IPC_CK(x, cudaEventDestroy(x->done[p]));
    free(x->marks);
    /* every peer closed mine before I free the buffers it mapped */
    MPI_Barrier(MPI_COMM_WORLD);
    return comm_ms;
}

#endif /* DCUDA_APPS_BSP_IPC_H */
