/*
 * The bulk-synchronous baseline of the horizontal diffusion case study
 * (thesis 5.5): the two-model program a CUDA and MPI author writes instead
 * of dcuda. Each process owns ny rows of every level on its GPU; each
 * iteration first exchanges the two border rows of every level with the
 * processes above and below (copied to pinned host memory, MPI_Sendrecv,
 * copied back: host staging, which works with any MPI), then runs one
 * kernel over all its points (the three stencils fused, hdiff_point).
 * With --bsp-ipc the border rows go GPU to GPU instead: copied straight
 * into the neighbours' halo rows with CUDA IPC (over NVLink between GPUs),
 * the steps ordered by interprocess events (bsp_ipc.h), the host never
 * waiting for the GPU: the strongest exchange between kernels. With
 * one process there is nothing to exchange, and --bsp-graph launches the
 * iterations as one CUDA graph (no launch gaps): the strongest one-GPU
 * program. Checked bit for bit against the serial reference shared with
 * the dcuda variant.
 *
 * Options: --hdiff-nx= --hdiff-ny= (rows per process) --hdiff-nz=
 * --hdiff-iters= as the dcuda variant; --bsp-graph or --bsp-ipc. Run under mpirun for
 * several GPUs (one process each).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsp_gpu.h"
#include "bsp_ipc.h"
#include "hdiff.h"
#include "hdiff_host.h"

#define CK(call) BSP_CK("hdiff-bsp", call)

/* One thread per point: x from the block's threads, a row per block in y,
 * a level per block in z; rows 2..ny+1 of each level's (ny + 4) x nx
 * buffer. */
__global__ void bsp_step(const double *old, double *next, int nx, int ny)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y + HDIFF_HALO;
    size_t level = (size_t)(ny + 2 * HDIFF_HALO) * nx * blockIdx.z;
    if (x < nx)
        next[level + (size_t)row * nx + x] = hdiff_point(old + level, nx, x, row);
}

typedef struct bsp {
    int rank, size, nx, ny, nz, iters, graph, ipc;
    size_t level;              /* doubles of one level's buffer */
    double *buf[2];            /* device, nz levels each */
    double *send[2], *recv[2]; /* pinned: [0] to/from above, [1] below */
    cudaStream_t stream;
    bsp_ipc_t x; /* --bsp-ipc: the neighbours' buffers */
} bsp_t;

/* Reads the options (those of the dcuda variant but --hdiff-bands, and
 * --bsp-graph); 0 if all are valid. */
static int parse(int argc, char **argv, bsp_t *b)
{
    hdiff_options_t o = HDIFF_OPTIONS_DEFAULT;
    for (int i = 1; i < argc; i++) {
        int known = bsp_variant_option(argv[i], &b->graph, &b->ipc);
        if (!known && (known = hdiff_option("hdiff-bsp", argv[i], &o)) < 0)
            return 1;
        if (!known || o.bands) {
            fprintf(stderr, "hdiff-bsp: unknown option %s\n", argv[i]);
            return 1;
        }
    }
    b->nx = o.nx, b->ny = o.ny, b->nz = o.nz, b->iters = o.iters;
    if (bsp_variant_refused("hdiff-bsp", b->graph, b->ipc, 1))
        return 1;
    if (b->ny < HDIFF_HALO || b->ny > 65535 || b->nz > 65535) {
        fprintf(stderr, "hdiff-bsp: 2 to 65535 rows and at most 65535 levels (one block each)\n");
        return 1;
    }
    return 0;
}

/* Copies rows [row, row + 2) of every level between the device buffer and
 * a packed host buffer (to_host: device -> host). */
static void copy_rows(bsp_t *b, double *dev, int row, double *host, int to_host)
{
    size_t width = HDIFF_HALO * (size_t)b->nx * sizeof(double), pitch = b->level * sizeof(double);
    double *d = dev + (size_t)row * b->nx;
    if (to_host)
        CK(cudaMemcpy2DAsync(host, width, d, pitch, width, b->nz, cudaMemcpyDeviceToHost,
                             b->stream));
    else
        CK(cudaMemcpy2DAsync(d, pitch, host, width, width, b->nz, cudaMemcpyHostToDevice,
                             b->stream));
}

/* The halo rows of buffer p from the neighbours (none beyond the ends:
 * those halo rows stay 0). */
static void exchange(bsp_t *b, int p)
{
    int near[2];
    bsp_line_neighbours(b->rank, b->size, near);
    int up = near[0], down = near[1];
    int count = HDIFF_HALO * b->nx * b->nz;
    copy_rows(b, b->buf[p], HDIFF_HALO, b->send[0], 1);
    copy_rows(b, b->buf[p], b->ny, b->send[1], 1);
    CK(cudaStreamSynchronize(b->stream));
    MPI_Sendrecv(b->send[0], count, MPI_DOUBLE, up, 0, b->recv[1], count, MPI_DOUBLE, down, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(b->send[1], count, MPI_DOUBLE, down, 1, b->recv[0], count, MPI_DOUBLE, up, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (up != MPI_PROC_NULL)
        copy_rows(b, b->buf[p], 0, b->recv[0], 0);
    if (down != MPI_PROC_NULL)
        copy_rows(b, b->buf[p], b->ny + HDIFF_HALO, b->recv[1], 0);
}

/* The same with CUDA IPC before iteration k (buffer p = k % 2): my
 * border rows straight into the neighbours' halo rows of their buffer p,
 * then the step's events. Their iteration k - 2, the last to read those
 * rows, is done: it came before their pushes of iteration k - 1, which
 * my stream waited for. */
static void exchange_ipc(bsp_t *b, int k)
{
    int p = k % 2;
    size_t width = HDIFF_HALO * (size_t)b->nx * sizeof(double), pitch = b->level * sizeof(double);
    double *up = (double *)bsp_ipc_buffer(&b->x, b->rank - 1, p);
    double *down = (double *)bsp_ipc_buffer(&b->x, b->rank + 1, p);
    bsp_ipc_mark(&b->x, b->stream);
    if (up) /* my first rows: its halo rows below */
        CK(cudaMemcpy2DAsync(up + (size_t)(b->ny + HDIFF_HALO) * b->nx, pitch,
                             b->buf[p] + (size_t)HDIFF_HALO * b->nx, pitch, width, b->nz,
                             cudaMemcpyDefault, b->stream));
    if (down) /* my last rows: its halo rows above */
        CK(cudaMemcpy2DAsync(down, pitch, b->buf[p] + (size_t)b->ny * b->nx, pitch, width, b->nz,
                             cudaMemcpyDefault, b->stream));
    bsp_ipc_sync(&b->x, b->stream, k);
    bsp_ipc_mark(&b->x, b->stream);
}

static void step(bsp_t *b, int k)
{
    dim3 threads(128), blocks((unsigned)(b->nx + 127) / 128, (unsigned)b->ny, (unsigned)b->nz);
    bsp_step<<<blocks, threads, 0, b->stream>>>(b->buf[k % 2], b->buf[(k + 1) % 2], b->nx, b->ny);
    CK(cudaGetLastError());
}

/* Iteration k on one process (what the graph captures). */
static void step_captured(void *app, int k, double *comm)
{
    (void)comm;
    step((bsp_t *)app, k);
}

/* Iteration k from the host: the halo exchange first (timed as
 * communication), then the kernel. */
static void step_host(void *app, int k, double *comm)
{
    bsp_t *b = (bsp_t *)app;
    if (b->size > 1 && b->ipc) {
        exchange_ipc(b, k); /* its time: from the GPU's marks at the end */
    } else if (b->size > 1) {
        double c0 = MPI_Wtime();
        exchange(b, k % 2);
        *comm += MPI_Wtime() - c0;
    }
    step(b, k);
}

/* Fills buffer 0 with the initial grid (rows of this process). */
static void fill(bsp_t *b)
{
    size_t total = b->level * b->nz;
    double *h = (double *)calloc(total, sizeof(double));
    for (int z = 0; z < b->nz; z++)
        for (int y = 0; y < b->ny; y++)
            for (int x = 0; x < b->nx; x++)
                h[z * b->level + (size_t)(y + HDIFF_HALO) * b->nx + x] =
                    hdiff_initial(z, b->rank * b->ny + y, x);
    CK(cudaMemcpy(b->buf[0], h, total * sizeof(double), cudaMemcpyHostToDevice));
    free(h);
}

/* Points of this process's result that differ from the reference. */
static size_t compare(bsp_t *b, const double *ref)
{
    size_t total = b->level * b->nz, bad = 0, gy = (size_t)b->ny * b->size;
    size_t ref_level = (gy + 2 * HDIFF_HALO) * b->nx;
    double *h = (double *)malloc(total * sizeof(double));
    CK(cudaMemcpy(h, b->buf[b->iters % 2], total * sizeof(double), cudaMemcpyDeviceToHost));
    for (int z = 0; z < b->nz; z++)
        for (int y = 0; y < b->ny; y++)
            for (int x = 0; x < b->nx; x++)
                bad += h[z * b->level + (size_t)(y + HDIFF_HALO) * b->nx + x] !=
                       ref[z * ref_level + (size_t)(b->rank * b->ny + y + HDIFF_HALO) * b->nx + x];
    free(h);
    return bad;
}

int main(int argc, char **argv)
{
    bsp_t b;
    memset(&b, 0, sizeof b);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    if (parse(argc, argv, &b)) {
        MPI_Finalize();
        return 2;
    }
    int gpu, stop = bsp_begin("hdiff-bsp", b.graph, &gpu);
    if (stop)
        return stop;
    b.level = (size_t)(b.ny + 2 * HDIFF_HALO) * b.nx;
    size_t bytes = b.level * b.nz * sizeof(double),
           halo = HDIFF_HALO * (size_t)b.nx * b.nz * sizeof(double);
    for (int i = 0; i < 2; i++) {
        CK(cudaMalloc((void **)&b.buf[i], bytes));
        CK(cudaMemset(b.buf[i], 0, bytes));
        CK(cudaMallocHost((void **)&b.send[i], halo));
        CK(cudaMallocHost((void **)&b.recv[i], halo));
    }
    CK(cudaStreamCreate(&b.stream));
    fill(&b);
    if (b.ipc) {
        int near[2];
        bsp_line_neighbours(b.rank, b.size, near);
        void *mine[2] = { b.buf[0], b.buf[1] };
        bsp_ipc_open(&b.x, "hdiff-bsp", near, 2, mine, 2, b.iters);
    }

    double comm_ms = 0, ref_ms = 0;
    double ms = bsp_run_steps("hdiff-bsp", b.stream, b.iters, b.graph, step_captured, step_host, &b,
                              &comm_ms);
    if (b.ipc)
        comm_ms = bsp_ipc_close(&b.x);
    double worst = bsp_slowest(ms), comm_worst = bsp_slowest(comm_ms);
    hdiff_data_t d = { NULL, b.nx, b.ny * b.size, b.nz, 1, b.iters, 0 };
    double *ref = hdiff_reference(&d, &ref_ms);
    unsigned long long bad = ref ? compare(&b, ref) : 1, all_bad = 0;
    MPI_Reduce(&bad, &all_bad, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (b.rank == 0) {
        cudaDeviceProp prop;
        CK(cudaGetDeviceProperties(&prop, gpu));
        double us = worst * 1e3 / b.iters, points = (double)b.nx * b.ny * b.size * b.nz;
        printf("hdiff: bsp-%s, %d process(es) (%s), %dx%dx%d, %d iterations: %.2f us per "
               "iteration (%.0f Mpoints/s), exchange %.2f us per iteration; %s\n",
               bsp_variant(b.graph, b.ipc, b.size), b.size, prop.name, b.nx, b.ny * b.size, b.nz,
               b.iters, us, points / us, comm_worst * 1e3 / b.iters,
               all_bad ? "MISMATCH" : "MATCH");
        if (all_bad)
            printf("hdiff: %llu points differ from the serial reference\n", all_bad);
    }
    free(ref);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
