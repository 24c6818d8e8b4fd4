/*
 * The bulk-synchronous baseline of the SpMV case study (thesis 5.6): the
 * two-model program a CUDA and MPI author writes instead of dcuda, on the
 * same grid, matrix and vector (spmv.h). Each multiplication:
 *   1. b_j goes down each grid column: copied to pinned host memory on the
 *      first grid row, MPI_Bcast over the column, copied to the GPU;
 *   2. one CSR-vector kernel over all rows (groups of lanes a row, the
 *      rule and the row loop of the dcuda variant), or with --bsp-cusparse
 *      the vendor's cusparseSpMV (where the build found cuSPARSE);
 *   3. the partial x is copied to the host and summed along each grid row
 *      with MPI_Reduce onto the first grid column, which copies it back;
 *   4. a global barrier (the stream synchronised, then MPI_Barrier).
 * Host staging works with any MPI. With --bsp-ipc the vectors go GPU to
 * GPU instead (bsp_ipc.h): the first grid row copies b_j straight into
 * its column's b (CUDA IPC, over NVLink between GPUs), the other columns
 * copy their partial x into a slot of the first column's, which sums them
 * in a kernel; a sync of the grid peers' events after each (so no global
 * barrier: the syncs order every access), the host never waiting for
 * the GPU. With one process there is nothing to
 * send, and --bsp-graph launches the multiplications as one CUDA graph (no
 * launch gaps): the strongest one-GPU program. The first grid column checks
 * x exactly against the serial reference shared with the dcuda variant.
 *
 * Options: --spmv-n= --spmv-nnz= --spmv-iters= as the dcuda variant;
 * --bsp-graph, --bsp-cusparse, --bsp-ipc. Run under mpirun for several GPUs (a square
 * count).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsp_gpu.h"
#include "bsp_ipc.h"
#include "spmv.h"
#if defined(SPMV_HAVE_CUSPARSE)
#include <cusparse.h>
#endif
#include "spmv_host.h"

#define CK(call) BSP_CK("spmv-bsp", call)
#define BSP_THREADS 256

/* x = A b for all n rows: a group of `lanes` threads a row. */
__global__ void bsp_spmv(const int *rowptr, const int *col, const double *val, const double *b,
                         double *x, int n, int lanes)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x, row = t / lanes, lane = t % lanes;
    double sum = row < n ? spmv_row_share(rowptr, col, val, b, row, lane, lanes) : 0.0;
    for (int offset = lanes / 2; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, offset, lanes);
    if (row < n && lane == 0)
        x[row] = sum;
}

/* --bsp-ipc, on the first grid column: x += the partial x of columns
 * 1..q-1 (slots of `parts`, n each), in column order. */
__global__ void bsp_sum_parts(double *x, const double *parts, int n, int q)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n)
        return;
    double sum = x[r];
    for (int j = 1; j < q; j++)
        sum += parts[(size_t)j * n + r];
    x[r] = sum;
}

typedef struct bsp {
    int rank, size, q, row, column, n, nnz, iters, graph, cusparse, lanes, ipc;
    MPI_Comm column_comm, row_comm; /* ranked by grid row / grid column */
    int *rowptr, *col;              /* device */
    double *val, *b, *x;            /* device */
    double *hb, *hx, *hsum;         /* pinned */
    cudaStream_t stream;
    double *parts;  /* device, --bsp-ipc: q slots of n, the row's partial x */
    bsp_ipc_t ipcx; /* --bsp-ipc: the grid peers' b and parts */
#if defined(SPMV_HAVE_CUSPARSE)
    cusparseHandle_t handle;
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t vb, vx;
    void *work; /* cuSPARSE's buffer */
#endif
} bsp_t;

/* Reads the options (the dcuda variant's and --bsp-graph); 0 if valid. */
static int parse(int argc, char **argv, bsp_t *p)
{
    spmv_options_t o = SPMV_OPTIONS_DEFAULT;
    for (int i = 1; i < argc; i++) {
        int cusparse = strcmp(argv[i], "--bsp-cusparse") == 0;
        int known = bsp_variant_option(argv[i], &p->graph, &p->ipc) || cusparse;
        p->cusparse |= cusparse;
        if (!known && (known = spmv_option("spmv-bsp", argv[i], &o)) < 0)
            return 1;
        if (!known) {
            fprintf(stderr, "spmv-bsp: unknown option %s\n", argv[i]);
            return 1;
        }
    }
    if (spmv_check("spmv-bsp", &o, p->size, &p->q) != 0)
        return 1;
    if (bsp_variant_refused("spmv-bsp", p->graph, p->ipc, p->rank == 0))
        return 1;
#if !defined(SPMV_HAVE_CUSPARSE)
    if (p->cusparse) {
        if (p->rank == 0)
            fprintf(stderr, "spmv-bsp: --bsp-cusparse: this build found no cuSPARSE\n");
        return 1;
    }
#endif
    p->n = o.n, p->nnz = o.nnz, p->iters = o.iters;
    p->lanes = spmv_lanes(o.nnz, BSP_THREADS);
    return 0;
}

#if defined(SPMV_HAVE_CUSPARSE)
#define CS(call)                                                                                   \
    do {                                                                                           \
        cusparseStatus_t s_ = (call);                                                              \
        if (s_ != CUSPARSE_STATUS_SUCCESS) {                                                       \
            fprintf(stderr, "spmv-bsp: %s: %s\n", #call, cusparseGetErrorString(s_));              \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static const double one = 1.0, zero = 0.0;

/* The block and both vectors described to cuSPARSE, its buffer sized. */
static void cusparse_setup(bsp_t *p)
{
    size_t bytes = 0, nnz = (size_t)p->n * p->nnz;
    CS(cusparseCreate(&p->handle));
    CS(cusparseSetStream(p->handle, p->stream));
    CS(cusparseCreateCsr(&p->mat, p->n, p->n, (int64_t)nnz, p->rowptr, p->col, p->val,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                         CUDA_R_64F));
    CS(cusparseCreateDnVec(&p->vb, p->n, p->b, CUDA_R_64F));
    CS(cusparseCreateDnVec(&p->vx, p->n, p->x, CUDA_R_64F));
    CS(cusparseSpMV_bufferSize(p->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, p->mat, p->vb,
                               &zero, p->vx, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    CK(cudaMalloc(&p->work, bytes ? bytes : 1));
}
#endif

static void multiply(bsp_t *p)
{
#if defined(SPMV_HAVE_CUSPARSE)
    if (p->cusparse) {
        CS(cusparseSpMV(p->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, p->mat, p->vb, &zero,
                        p->vx, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, p->work));
        return;
    }
#endif
    unsigned blocks = (unsigned)(((size_t)p->n * p->lanes + BSP_THREADS - 1) / BSP_THREADS);
    bsp_spmv<<<blocks, BSP_THREADS, 0, p->stream>>>(p->rowptr, p->col, p->val, p->b, p->x, p->n,
                                                    p->lanes);
    CK(cudaGetLastError());
}

/* Phase 1: b_j from the first grid row down the column. */
static void broadcast(bsp_t *p)
{
    size_t bytes = (size_t)p->n * sizeof(double);
    if (p->row == 0) {
        CK(cudaMemcpyAsync(p->hb, p->b, bytes, cudaMemcpyDeviceToHost, p->stream));
        CK(cudaStreamSynchronize(p->stream));
    }
    MPI_Bcast(p->hb, p->n, MPI_DOUBLE, 0, p->column_comm);
    if (p->row > 0)
        CK(cudaMemcpyAsync(p->b, p->hb, bytes, cudaMemcpyHostToDevice, p->stream));
}

/* Phase 3: the partial x summed along the grid row onto its first column. */
static void reduce(bsp_t *p)
{
    size_t bytes = (size_t)p->n * sizeof(double);
    CK(cudaMemcpyAsync(p->hx, p->x, bytes, cudaMemcpyDeviceToHost, p->stream));
    CK(cudaStreamSynchronize(p->stream));
    MPI_Reduce(p->hx, p->hsum, p->n, MPI_DOUBLE, MPI_SUM, 0, p->row_comm);
    if (p->column == 0)
        CK(cudaMemcpyAsync(p->x, p->hsum, bytes, cudaMemcpyHostToDevice, p->stream));
}

/* The same with CUDA IPC, multiplication k: phase 1 (sync 2k), the
 * kernel, phase 3 (sync 2k + 1). A column's b is read by its kernel of
 * k - 1 only, before that process's sync 2k - 1; a first column's slots
 * by its sum of k - 1 only, before its sync 2k. */
static void multiply_ipc(bsp_t *p, int k)
{
    size_t bytes = (size_t)p->n * sizeof(double);
    bsp_ipc_mark(&p->ipcx, p->stream);
    for (int i = 0; p->row == 0 && i < p->q; i++) { /* b_j down my column */
        double *b = (double *)bsp_ipc_buffer(&p->ipcx, p->column * p->q + i, 0);
        if (b)
            CK(cudaMemcpyAsync(b, p->b, bytes, cudaMemcpyDefault, p->stream));
    }
    bsp_ipc_sync(&p->ipcx, p->stream, 2 * k);
    bsp_ipc_mark(&p->ipcx, p->stream);
    multiply(p);
    bsp_ipc_mark(&p->ipcx, p->stream);
    if (p->column > 0) { /* my partial x into my slot of the first column's */
        double *parts = (double *)bsp_ipc_buffer(&p->ipcx, p->row, 1);
        CK(cudaMemcpyAsync(parts + (size_t)p->column * p->n, p->x, bytes, cudaMemcpyDefault,
                           p->stream));
    }
    bsp_ipc_sync(&p->ipcx, p->stream, 2 * k + 1);
    if (p->column == 0) {
        bsp_sum_parts<<<(unsigned)(p->n + 255) / 256, 256, 0, p->stream>>>(p->x, p->parts, p->n,
                                                                           p->q);
        CK(cudaGetLastError());
    }
    bsp_ipc_mark(&p->ipcx, p->stream);
}

/* Multiplication k on one process (what the graph captures). */
static void step_captured(void *app, int k, double *comm)
{
    (void)k, (void)comm;
    multiply((bsp_t *)app);
}

/* Multiplication k from the host: the communication (phases 1 and 3, with
 * their copies) timed apart from the kernel. */
static void step_host(void *app, int k, double *comm)
{
    bsp_t *p = (bsp_t *)app;
    if (p->ipc && p->q > 1) {
        multiply_ipc(p, k); /* its communication time: from the GPU's marks at the end */
        return;
    }
    double c0 = MPI_Wtime();
    if (p->q > 1)
        broadcast(p);
    *comm += MPI_Wtime() - c0;
    multiply(p);
    if (p->q > 1) /* the kernel's end: its time is not communication */
        CK(cudaStreamSynchronize(p->stream));
    c0 = MPI_Wtime();
    if (p->q > 1)
        reduce(p);
    CK(cudaStreamSynchronize(p->stream));
    MPI_Barrier(MPI_COMM_WORLD);
    *comm += p->q > 1 ? MPI_Wtime() - c0 : 0;
}

/* The block, b (first grid row only) and x = 0 on the GPU. */
static void setup(bsp_t *p)
{
    size_t nnz = (size_t)p->n * p->nnz, bytes = (size_t)p->n * sizeof(double);
    spmv_block_t blk;
    if (spmv_block_build(p->row, p->column, p->n, p->nnz, &blk) != 0) {
        fprintf(stderr, "spmv-bsp: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    CK(cudaMalloc((void **)&p->rowptr, ((size_t)p->n + 1) * sizeof(int)));
    CK(cudaMalloc((void **)&p->col, nnz * sizeof(int)));
    CK(cudaMalloc((void **)&p->val, nnz * sizeof(double)));
    CK(cudaMalloc((void **)&p->b, bytes));
    CK(cudaMalloc((void **)&p->x, bytes));
    CK(cudaMallocHost((void **)&p->hb, bytes));
    CK(cudaMallocHost((void **)&p->hx, bytes));
    CK(cudaMallocHost((void **)&p->hsum, bytes));
    CK(cudaMemcpy(p->rowptr, blk.rowptr, ((size_t)p->n + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(p->col, blk.col, nnz * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(p->val, blk.val, nnz * sizeof(double), cudaMemcpyHostToDevice));
    memset(p->hb, 0, bytes);
    if (p->row == 0)
        spmv_b_fill(p->column, p->n, p->hb);
    CK(cudaMemcpy(p->b, p->hb, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemset(p->x, 0, bytes));
    CK(cudaStreamCreate(&p->stream));
#if defined(SPMV_HAVE_CUSPARSE)
    if (p->cusparse)
        cusparse_setup(p);
#endif
    if (p->ipc && p->q > 1) {
        int peer[BSP_IPC_PEERS];
        CK(cudaMalloc((void **)&p->parts, (size_t)p->q * bytes));
        void *mine[2] = { p->b, p->parts };
        bsp_ipc_open(&p->ipcx, "spmv-bsp", peer, bsp_ipc_grid_peers(p->rank, p->q, peer), mine, 2,
                     2 * p->iters);
    }
    spmv_block_free(&blk);
}

/* Elements of x that differ from the reference (first grid column). */
static unsigned long long compare(bsp_t *p, double *ref_ms)
{
    if (p->column != 0)
        return 0;
    double *ref = spmv_reference(p->row, p->q, p->n, p->nnz, ref_ms);
    double *x = (double *)malloc((size_t)p->n * sizeof(double));
    unsigned long long bad = ref && x ? 0 : 1;
    if (ref && x) {
        CK(cudaMemcpy(x, p->x, (size_t)p->n * sizeof(double), cudaMemcpyDeviceToHost));
        for (int r = 0; r < p->n; r++)
            bad += x[r] != ref[r];
    }
    free(ref);
    free(x);
    return bad;
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
    int gpu, stop = bsp_begin("spmv-bsp", p.graph, &gpu);
    if (stop)
        return stop;
    bsp_grid_split(p.rank, p.q, &p.row, &p.column, &p.column_comm, &p.row_comm);
    setup(&p);

    double comm_ms = 0, ref_ms = 0;
    double ms = bsp_run_steps("spmv-bsp", p.stream, p.iters, p.graph, step_captured, step_host, &p,
                              &comm_ms);
    if (p.ipc && p.q > 1)
        comm_ms = bsp_ipc_close(&p.ipcx);
    double worst = bsp_slowest(ms), comm_worst = bsp_slowest(comm_ms);
    unsigned long long bad = compare(&p, &ref_ms), all_bad = 0;
    MPI_Reduce(&bad, &all_bad, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (p.rank == 0) {
        cudaDeviceProp prop;
        CK(cudaGetDeviceProperties(&prop, gpu));
        double us = worst * 1e3 / p.iters, flops = 2.0 * p.n * (double)p.nnz * p.size;
        printf("spmv: bsp-%s%s, %d process(es) (%s, grid %dx%d), blocks %dx%d with %d nonzeros a "
               "row, %d multiplications: %.2f us per multiplication (%.1f GFlop/s), "
               "communication %.2f us per multiplication; serial %.1f us; %s\n",
               bsp_variant(p.graph, p.ipc, p.size), p.cusparse ? "-cusparse" : "", p.size,
               prop.name, p.q, p.q, p.n, p.n, p.nnz, p.iters, us, flops / us / 1e3,
               comm_worst * 1e3 / p.iters, ref_ms * 1e3, all_bad ? "MISMATCH" : "MATCH");
        if (all_bad)
            printf("spmv: %llu elements of x differ from the serial reference\n", all_bad);
    }
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
