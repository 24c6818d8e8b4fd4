/*
 * The bulk-synchronous baseline of the power iteration case study (thesis
 * 5.7): the two-model program a CUDA and MPI author writes instead of
 * dcuda, on the same grid, matrix and vectors (power.h). The steps run one
 * after another; every kernel's end and every exchange synchronise:
 *   1. y_k goes down each grid column (pinned host memory, MPI_Bcast), to
 *      the GPU;
 *   2+3. one kernel: x = fac_k * A y_k (the CSR-vector row loop SpMV's
 *      variants share);
 *   4. x to the host, summed along the grid row with MPI_Reduce onto the
 *      first grid column;
 *   5. the first grid column's x_i goes across to the first grid row as the
 *      next y_i (MPI_Send / MPI_Recv; device 0 keeps its own);
 *   6. the first column sums the squares of its x_i on the host (it is
 *      there already), MPI_Allreduce gives every process fac_{k+1}.
 * With one process nothing moves: the kernel also sums the squares of the
 * rows it wrote (a block sum and an atomic add per block), and the next
 * kernel takes fac from that sum in GPU memory, so the iterations need no
 * host at all; --bsp-graph launches them as one CUDA graph. With
 * --bsp-ipc on several, the same steps go GPU to GPU (bsp_ipc.h: CUDA IPC,
 * over NVLink between GPUs; the host never waits for the GPU): 1. the
 * first grid row copies y_j into its column's y; 4. the other columns copy
 * x into slots of the first column's, which sums them and the squares in
 * a kernel; 5+6. the first column copies x_i into the first row's y and
 * its sum of squares into slot i of every process's norms, from which the
 * next kernel takes fac (the slots summed in order: every process gets the
 * same). A sync of every process's events after 1, 4 and 5+6. The first
 * grid row checks b_K against the serial reference shared with dcuda.
 *
 * Options: --power-n= --power-nnz= --power-iters= as the dcuda variant;
 * --bsp-graph (one process) or --bsp-ipc. Run under mpirun for several GPUs
 * (a square count).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsp_gpu.h"
#include "bsp_ipc.h"
#include "power_host.h"

#define CK(call) BSP_CK("power-bsp", call)
#define BSP_THREADS 256

/* Adds the block's `square`s to *out (an atomic add a block). */
__device__ void bsp_add_squares(double square, double *out)
{
    __shared__ double warp_sums[BSP_THREADS / 32];
    for (int offset = 16; offset > 0; offset /= 2)
        square += __shfl_down_sync(0xffffffffu, square, offset);
    if (threadIdx.x % 32 == 0)
        warp_sums[threadIdx.x / 32] = square;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < BSP_THREADS / 32; w++)
            square += warp_sums[w];
        atomicAdd(out, square);
    }
}

/* x = fac * A y for all n rows, a group of `lanes` threads a row; fac from
 * norm2_in[0..parts) (1 / the square root of their sum, in order) when
 * that is given. When norm2_out is given, the squares of the rows written
 * are added to it. */
__global__ void bsp_power_step(const int *rowptr, const int *col, const double *val,
                               const double *y, double *x, int n, int lanes, double fac,
                               const double *norm2_in, int parts, double *norm2_out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x, row = t / lanes, lane = t % lanes;
    if (norm2_in) {
        double norm2 = norm2_in[0];
        for (int i = 1; i < parts; i++)
            norm2 += norm2_in[i];
        fac = 1.0 / sqrt(norm2);
    }
    double sum = row < n ? spmv_row_share(rowptr, col, val, y, row, lane, lanes) : 0.0;
    for (int offset = lanes / 2; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, offset, lanes);
    double square = 0.0;
    if (row < n && lane == 0) {
        x[row] = fac * sum;
        square = x[row] * x[row];
    }
    if (norm2_out)
        bsp_add_squares(square, norm2_out);
}

/* --bsp-ipc, on the first grid column: x += the partial x of columns
 * 1..q-1 (slots of `parts`, n each) in column order, and the squares of
 * the sums added to *square. */
__global__ void bsp_sum_parts(double *x, const double *parts, int n, int q, double *square)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    double sum = 0.0;
    if (r < n) {
        sum = x[r];
        for (int j = 1; j < q; j++)
            sum += parts[(size_t)j * n + r];
        x[r] = sum;
    }
    bsp_add_squares(sum * sum, square);
}

typedef struct bsp {
    int rank, size, q, row, column, n, nnz, iters, graph, lanes, ipc;
    MPI_Comm column_comm, row_comm; /* ranked by grid row / grid column */
    int *rowptr, *col;              /* device */
    double *val, *y, *x, *norm2;    /* device; norm2: iters + 1 sums of squares */
    double *hy, *hx, *hsum;         /* pinned */
    double fac;                     /* fac_k, on the host (several processes) */
    cudaStream_t stream;
    /* --bsp-ipc (device): the row's partial x (q slots of n, first column),
     * the first column's sums of squares (q slots), my sum of squares */
    double *parts, *norms, *square;
    bsp_ipc_t ipcx; /* every other process's y, parts and norms */
} bsp_t;

/* Reads the options (the dcuda variant's and --bsp-graph); 0 if valid. */
static int parse(int argc, char **argv, bsp_t *p)
{
    spmv_options_t o = POWER_OPTIONS_DEFAULT;
    for (int i = 1; i < argc; i++) {
        int known = bsp_variant_option(argv[i], &p->graph, &p->ipc);
        if (!known && (known = power_option("power-bsp", argv[i], &o)) < 0)
            return 1;
        if (!known) {
            fprintf(stderr, "power-bsp: unknown option %s\n", argv[i]);
            return 1;
        }
    }
    if (spmv_check("power-bsp", &o, p->size, &p->q) != 0)
        return 1;
    if (bsp_variant_refused("power-bsp", p->graph, p->ipc, p->rank == 0))
        return 1;
    p->n = o.n, p->nnz = o.nnz, p->iters = o.iters;
    p->lanes = spmv_lanes(o.nnz, BSP_THREADS);
    return 0;
}

static void multiply(bsp_t *p, const double *norm2_in, int parts, double *norm2_out)
{
    unsigned blocks = (unsigned)(((size_t)p->n * p->lanes + BSP_THREADS - 1) / BSP_THREADS);
    bsp_power_step<<<blocks, BSP_THREADS, 0, p->stream>>>(
        p->rowptr, p->col, p->val, p->y, p->x, p->n, p->lanes, p->fac, norm2_in, parts, norm2_out);
    CK(cudaGetLastError());
}

/* One iteration on one GPU: x = A b_k and its squares, then x is y. */
static void iterate_alone(bsp_t *p, int k)
{
    multiply(p, p->norm2 + k, 1, p->norm2 + k + 1);
    double *t = p->y;
    p->y = p->x, p->x = t;
}

/* One iteration on several (steps 1 to 6); its communication's time is
 * added to *comm. */
static void iterate_grid(bsp_t *p, double *comm)
{
    size_t bytes = (size_t)p->n * sizeof(double);
    double c0 = MPI_Wtime();
    MPI_Bcast(p->hy, p->n, MPI_DOUBLE, 0, p->column_comm); /* 1 */
    CK(cudaMemcpyAsync(p->y, p->hy, bytes, cudaMemcpyHostToDevice, p->stream));
    *comm += MPI_Wtime() - c0;
    multiply(p, NULL, 0, NULL); /* 2 + 3 */
    CK(cudaMemcpyAsync(p->hx, p->x, bytes, cudaMemcpyDeviceToHost, p->stream));
    CK(cudaStreamSynchronize(p->stream));
    c0 = MPI_Wtime();
    MPI_Reduce(p->hx, p->hsum, p->n, MPI_DOUBLE, MPI_SUM, 0, p->row_comm); /* 4 */
    double square = 0.0, all = 0.0;
    if (p->column == 0 && p->row == 0) /* 5 */
        memcpy(p->hy, p->hsum, bytes);
    else if (p->column == 0)
        MPI_Send(p->hsum, p->n, MPI_DOUBLE, p->row * p->q, 0, MPI_COMM_WORLD);
    else if (p->row == 0)
        MPI_Recv(p->hy, p->n, MPI_DOUBLE, p->column, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int r = 0; p->column == 0 && r < p->n; r++) /* 6 */
        square += p->hsum[r] * p->hsum[r];
    MPI_Allreduce(&square, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    p->fac = 1.0 / sqrt(all);
    *comm += MPI_Wtime() - c0;
}

/* Buffer j of process r (my own where r is me; bsp_ipc_open's order:
 * y, parts, norms). */
static double *ipc_buffer(bsp_t *p, int r, int j)
{
    double *mine[3] = { p->y, p->parts, p->norms };
    return r == p->rank ? mine[j] : (double *)bsp_ipc_buffer(&p->ipcx, r, j);
}

/* The same with CUDA IPC, iteration k: steps 1 (sync 3k), 2 + 3, 4 (sync
 * 3k + 1), 5 + 6 (sync 3k + 2). Each buffer written in one step is read
 * by its owner only before its record of the sync before that step: a
 * column's y by its kernel (and, on the first row, step 1), the slots of
 * parts by the sum of step 4, the norms by the kernel. */
static void iterate_ipc(bsp_t *p, int k)
{
    size_t bytes = (size_t)p->n * sizeof(double);
    bsp_ipc_mark(&p->ipcx, p->stream);
    for (int i = 1; p->row == 0 && i < p->q; i++) /* 1: y_j down my column */
        CK(cudaMemcpyAsync(ipc_buffer(p, p->column * p->q + i, 0), p->y, bytes, cudaMemcpyDefault,
                           p->stream));
    bsp_ipc_sync(&p->ipcx, p->stream, 3 * k);
    bsp_ipc_mark(&p->ipcx, p->stream);
    multiply(p, p->norms, p->q, NULL); /* 2 + 3 */
    bsp_ipc_mark(&p->ipcx, p->stream);
    if (p->column > 0) /* 4: my partial x into my slot of the first column's */
        CK(cudaMemcpyAsync(ipc_buffer(p, p->row, 1) + (size_t)p->column * p->n, p->x, bytes,
                           cudaMemcpyDefault, p->stream));
    bsp_ipc_sync(&p->ipcx, p->stream, 3 * k + 1);
    if (p->column == 0) {
        CK(cudaMemsetAsync(p->square, 0, sizeof(double), p->stream));
        bsp_sum_parts<<<(unsigned)(p->n + BSP_THREADS - 1) / BSP_THREADS, BSP_THREADS, 0,
                        p->stream>>>(p->x, p->parts, p->n, p->q, p->square);
        CK(cudaGetLastError());
    }
    bsp_ipc_mark(&p->ipcx, p->stream);
    bsp_ipc_mark(&p->ipcx, p->stream);
    if (p->column == 0) { /* 5: x_i across to the first row; 6: my squares to all */
        CK(cudaMemcpyAsync(ipc_buffer(p, p->row * p->q, 0), p->x, bytes, cudaMemcpyDefault,
                           p->stream));
        for (int r = 0; r < p->size; r++)
            CK(cudaMemcpyAsync(ipc_buffer(p, r, 2) + p->row, p->square, sizeof(double),
                               cudaMemcpyDefault, p->stream));
    }
    bsp_ipc_sync(&p->ipcx, p->stream, 3 * k + 2);
    bsp_ipc_mark(&p->ipcx, p->stream);
}

/* Iteration k on one process (what the graph captures; capturing swaps y
 * and x as running does, so p->y ends as y_K's). */
static void step_captured(void *app, int k, double *comm)
{
    (void)comm;
    iterate_alone((bsp_t *)app, k);
}

/* Iteration k from the host: alone, or on the grid with its MPI steps. */
static void step_host(void *app, int k, double *comm)
{
    bsp_t *p = (bsp_t *)app;
    if (p->size == 1)
        iterate_alone(p, k);
    else if (p->ipc)
        iterate_ipc(p, k); /* its communication time: from the GPU's marks at the end */
    else
        iterate_grid(p, comm);
}

/* --bsp-ipc: the slots, fac_0's square in norms[0], every other process
 * as a peer. */
static void ipc_setup(bsp_t *p, double norm2)
{
    size_t bytes = (size_t)p->n * sizeof(double);
    CK(cudaMalloc((void **)&p->parts, (size_t)p->q * bytes));
    CK(cudaMalloc((void **)&p->norms, (size_t)p->q * sizeof(double)));
    CK(cudaMalloc((void **)&p->square, sizeof(double)));
    CK(cudaMemset(p->norms, 0, (size_t)p->q * sizeof(double)));
    CK(cudaMemcpy(p->norms, &norm2, sizeof norm2, cudaMemcpyHostToDevice));
    int peer[BSP_IPC_PEERS + 1], n = 0;
    for (int r = 0; r < p->size && n <= BSP_IPC_PEERS; r++)
        if (r != p->rank)
            peer[n++] = r;
    void *mine[3] = { p->y, p->parts, p->norms };
    bsp_ipc_open(&p->ipcx, "power-bsp", peer, p->size - 1, mine, 3, 3 * p->iters);
}

/* The block, y_0 (first grid row), fac_0 and the sums of squares. */
static void setup(bsp_t *p)
{
    size_t nnz = (size_t)p->n * p->nnz, bytes = (size_t)p->n * sizeof(double);
    spmv_block_t blk;
    if (power_block_build(p->row, p->column, p->n, p->nnz, &blk) != 0) {
        fprintf(stderr, "power-bsp: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    CK(cudaMalloc((void **)&p->rowptr, ((size_t)p->n + 1) * sizeof(int)));
    CK(cudaMalloc((void **)&p->col, nnz * sizeof(int)));
    CK(cudaMalloc((void **)&p->val, nnz * sizeof(double)));
    CK(cudaMalloc((void **)&p->y, bytes));
    CK(cudaMalloc((void **)&p->x, bytes));
    CK(cudaMalloc((void **)&p->norm2, ((size_t)p->iters + 1) * sizeof(double)));
    CK(cudaMallocHost((void **)&p->hy, bytes));
    CK(cudaMallocHost((void **)&p->hx, bytes));
    CK(cudaMallocHost((void **)&p->hsum, bytes));
    CK(cudaMemcpy(p->rowptr, blk.rowptr, ((size_t)p->n + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(p->col, blk.col, nnz * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(p->val, blk.val, nnz * sizeof(double), cudaMemcpyHostToDevice));
    memset(p->hy, 0, bytes);
    if (p->row == 0)
        power_y_fill(p->column, p->n, p->hy);
    CK(cudaMemcpy(p->y, p->hy, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemset(p->x, 0, bytes));
    double norm = power_initial_norm(p->q, p->n), norm2 = norm * norm;
    p->fac = 1.0 / norm;
    CK(cudaMemset(p->norm2, 0, ((size_t)p->iters + 1) * sizeof(double)));
    CK(cudaMemcpy(p->norm2, &norm2, sizeof norm2, cudaMemcpyHostToDevice));
    CK(cudaStreamCreate(&p->stream));
    if (p->ipc && p->size > 1) /* fac_0 from the norms: norm^2 in slot 0 */
        ipc_setup(p, norm2);
    spmv_block_free(&blk);
}

/* On the first grid row: elements of b_K's part (or the eigenvalue) off
 * the reference, the eigenvalue in *lambda and the reference in *ref. */
static unsigned long long compare(bsp_t *p, double *lambda, power_result_t *ref)
{
    if (p->row != 0)
        return 0;
    double *y = p->hy, fac = p->fac, norm2 = 0, norms[BSP_IPC_PEERS + 1];
    if (p->size == 1) {
        CK(cudaMemcpy(y, p->y, (size_t)p->n * sizeof(double), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&norm2, p->norm2 + p->iters, sizeof norm2, cudaMemcpyDeviceToHost));
        fac = 1.0 / sqrt(norm2);
    } else if (p->ipc) { /* y_K and its norm's parts are on the GPU */
        CK(cudaMemcpy(y, p->y, (size_t)p->n * sizeof(double), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(norms, p->norms, (size_t)p->q * sizeof(double), cudaMemcpyDeviceToHost));
        for (int i = 0; i < p->q; i++)
            norm2 += norms[i];
        fac = 1.0 / sqrt(norm2);
    }
    if (power_reference(p->q, p->n, p->nnz, p->iters, ref) != 0)
        return 1;
    return power_mismatches(ref, p->column, p->n, y, fac, lambda);
}

int main(int argc, char **argv)
{
    bsp_t p;
    memset(&p, 0, sizeof p);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p.size);
    if (parse(argc, argv, &p)) {
        MPI_Finalize();
        return 2;
    }
    int gpu, stop = bsp_begin("power-bsp", p.graph, &gpu);
    if (stop)
        return stop;
    bsp_grid_split(p.rank, p.q, &p.row, &p.column, &p.column_comm, &p.row_comm);
    setup(&p);

    double comm_ms = 0, lambda = 0;
    double ms = bsp_run_steps("power-bsp", p.stream, p.iters, p.graph, step_captured, step_host, &p,
                              &comm_ms);
    if (p.ipc && p.size > 1)
        comm_ms = bsp_ipc_close(&p.ipcx);
    double worst = bsp_slowest(ms), comm_worst = bsp_slowest(comm_ms);
    power_result_t ref = { NULL, 0, 0, 0 };
    unsigned long long bad = compare(&p, &lambda, &ref), all_bad = 0;
    MPI_Reduce(&bad, &all_bad, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (p.rank == 0) {
        cudaDeviceProp prop;
        CK(cudaGetDeviceProperties(&prop, gpu));
        double us = worst * 1e3 / p.iters, flops = 2.0 * p.n * (double)p.nnz * p.size;
        printf("power: bsp-%s, %d process(es) (%s, grid %dx%d), blocks %dx%d with %d nonzeros a "
               "row, %d iterations: %.2f us per iteration (%.1f GFlop/s), communication %.2f us "
               "per iteration; eigenvalue %.12g (serial %.12g, residual %.2g); serial %.1f ms; "
               "%s\n",
               bsp_variant(p.graph, p.ipc, p.size), p.size, prop.name, p.q, p.q, p.n, p.n, p.nnz,
               p.iters, us, flops / us / 1e3, comm_worst * 1e3 / p.iters, lambda, ref.lambda,
               ref.residual, ref.ms, all_bad ? "MISMATCH" : "MATCH");
        if (all_bad)
            printf("power: %llu elements of b differ from the serial reference\n", all_bad);
    }
    free(ref.b);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
