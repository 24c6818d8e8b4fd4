/*
 * The bulk-synchronous baseline of the particle case study (thesis 5.4):
 * the two-model program a CUDA and MPI author writes instead of dcuda. Each
 * process owns segs segments on its GPU plus a halo segment at each end
 * (local 0 and segs + 1). A step is two kernels:
 *   move:   a block per segment; each particle's new state from its own
 *           and the two next segments (pt_step, as every variant);
 *   gather: a block per destination segment, halos included; it collects,
 *           in order, the particles that moved into it (a block scan).
 * The halo segments then hold what moved out of the process. Between
 * steps, each process sends each neighbour its boundary segment and what
 * moved into the neighbour's segment (pinned host memory, MPI_Sendrecv:
 * host staging, which works with any MPI), appends the movers it receives
 * to its boundary segment and the neighbour's boundary segment to its
 * halo, which so holds that whole segment. With one process there is
 * nothing to exchange, and --bsp-graph launches every step as one CUDA
 * graph (no launch gaps): the strongest one-GPU program. With --bsp-ipc
 * the exchange goes GPU to GPU instead, with no host in between: a kernel
 * stores my boundary segment and movers straight into the neighbours'
 * inboxes with CUDA IPC (over NVLink between GPUs), the steps are ordered
 * by interprocess events (bsp_ipc.h), and a kernel appends what came in,
 * so the host never waits for the GPU (it does not need the counts).
 * Checked particle
 * by particle against the serial reference shared with the dcuda variant.
 *
 * Options: --particles-n= --particles-w= --particles-segs= (per process)
 * --particles-iters= --particles-cap= as the dcuda variant; --bsp-graph or
 * --bsp-ipc.
 * Run under mpirun for several GPUs (one process each).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/block/block_scan.cuh>

#include "bsp_gpu.h"
#include "bsp_ipc.h"
#include "particles.h"
#include "particles_host.h"

#define CK(call) BSP_CK("particles-bsp", call)

typedef cub::BlockScan<int, PT_THREADS> scan_t;

/* Segment t of a parity's buffer (cap particles each). */
__device__ pt_particle_t *seg_of(pt_particle_t *buf, int cap, int t)
{
    return buf + (size_t)t * cap;
}

/* Block b: the new states of local segment b + 1, into moved[b]. */
__global__ void bsp_move(pt_particle_t *old, const long long *count, pt_particle_t *moved, int cap,
                         int w, int h)
{
    int t = blockIdx.x + 1;
    pt_span_t s[3];
    for (int i = 0; i < 3; i++) {
        s[i].p = seg_of(old, cap, t - 1 + i);
        s[i].n = count[t - 1 + i];
    }
    pt_particle_t *out = seg_of(moved, cap, blockIdx.x);
    for (long long j = threadIdx.x; j < s[1].n; j += blockDim.x)
        out[j] = pt_step(&s[1].p[j], s, 3, w, h);
}

/* Block t: the particles that moved into local segment t (global segment
 * first + t - 1) from segments t - 1, t, t + 1, in their order, into
 * next; its count into next_count[t] (at most cap; *over set beyond). */
__global__ void bsp_gather(const pt_particle_t *moved, const long long *count, pt_particle_t *next,
                           long long *next_count, int cap, int segs, int first, int h, int *over)
{
    __shared__ typename scan_t::TempStorage temp;
    __shared__ int total;
    int t = blockIdx.x, target = first + t - 1, filled = 0;
    pt_particle_t *dst = seg_of(next, cap, t);
    for (int src = t - 1; src <= t + 1; src++) {
        if (src < 1 || src > segs)
            continue;
        const pt_particle_t *from = moved + (size_t)(src - 1) * cap;
        int n = (int)count[src], chunk = (n + blockDim.x - 1) / blockDim.x;
        int lo = threadIdx.x * chunk, hi = min(lo + chunk, n), mine = 0, at;
        for (int j = lo; j < hi; j++)
            mine += pt_cell(from[j].y, h) == target;
        scan_t(temp).ExclusiveSum(mine, at);
        if (threadIdx.x == blockDim.x - 1)
            total = at + mine;
        for (int j = lo; j < hi; j++)
            if (pt_cell(from[j].y, h) == target && filled + at < cap)
                dst[filled + at++] = from[j];
        __syncthreads();
        filled += total;
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        next_count[t] = min(filled, cap);
        if (filled > cap)
            *over = 1;
    }
}

/* --bsp-ipc: what one side of a process's inbox holds for one parity:
 * the neighbour's boundary segment, then its movers into mine. */
typedef struct ipc_side {
    long long count[2]; /* boundary particles, movers */
} ipc_side_t;

/* Block s (0: left, 1: right): my boundary segment on that side (local
 * 1 or segs) and what moved out there (halo 0 or segs + 1) into the
 * neighbour's inbox (to[s]: its side facing me; NULL where none). */
__global__ void ipc_push(const pt_particle_t *seg, const long long *count, int cap, int segs,
                         ipc_side_t *to_count0, pt_particle_t *to0, ipc_side_t *to_count1,
                         pt_particle_t *to1)
{
    int s = blockIdx.x, i = s ? segs : 1, j = s ? segs + 1 : 0;
    ipc_side_t *c = s ? to_count1 : to_count0;
    pt_particle_t *to = s ? to1 : to0;
    if (!to)
        return;
    long long n0 = count[i], n1 = count[j];
    for (long long q = threadIdx.x; q < n0 + n1; q += blockDim.x)
        to[q] = q < n0 ? seg[(size_t)i * cap + q] : seg[(size_t)j * cap + (q - n0)];
    if (threadIdx.x == 0)
        c->count[0] = n0, c->count[1] = n1;
}

/* Block s: what the neighbour on side s sent (in my inbox of this parity),
 * its movers appended to my boundary segment and its boundary segment to
 * my halo there (*over set, nothing appended, where one would not fit). */
__global__ void ipc_append(pt_particle_t *seg, long long *count, int cap, int segs,
                           const ipc_side_t *in_count, const pt_particle_t *in, int left, int right,
                           int *over)
{
    int s = blockIdx.x, i = s ? segs : 1, j = s ? segs + 1 : 0;
    if (!(s ? right : left))
        return;
    const pt_particle_t *from = in + (size_t)s * 2 * cap;
    long long n0 = in_count[s].count[0], n1 = in_count[s].count[1];
    long long at_i = count[i], at_j = count[j];
    if (at_i + n1 > cap || at_j + n0 > cap) {
        if (threadIdx.x == 0)
            atomicExch(over, 1);
        return;
    }
    for (long long q = threadIdx.x; q < n1; q += blockDim.x)
        seg[(size_t)i * cap + at_i + q] = from[n0 + q];
    for (long long q = threadIdx.x; q < n0; q += blockDim.x)
        seg[(size_t)j * cap + at_j + q] = from[q];
    __syncthreads(); /* every thread read the counts */
    if (threadIdx.x == 0)
        count[i] = at_i + n1, count[j] = at_j + n0;
}

typedef struct bsp {
    int rank, size, w, h, segs, iters, cap, graph, ipc;
    long long n;                      /* particles, all processes */
    pt_particle_t *seg[2], *moved;    /* device: (segs + 2) x cap, segs x cap */
    long long *count[2];              /* device: segs + 2 */
    long long *host_count;            /* pinned: segs + 2 */
    pt_particle_t *send[2], *recv[2]; /* pinned: [0] left, [1] right; 2 cap each */
    int *over;                        /* device: a segment overflowed */
    int exchange_over;                /* a segment overflowed in an exchange */
    cudaStream_t stream;
    /* --bsp-ipc: my inbox by parity, [0] from the left, [1] from the right */
    ipc_side_t *in_count[2]; /* device: 2 sides */
    pt_particle_t *in[2];    /* device: 2 sides x 2 cap */
    bsp_ipc_t x;             /* the neighbours' inboxes */
} bsp_t;

/* Reads the options (those of the dcuda variant, and --bsp-graph); 0 if
 * all are valid. */
static int parse(int argc, char **argv, bsp_t *b)
{
    pt_options_t o = PT_OPTIONS_DEFAULT;
    for (int i = 1; i < argc; i++) {
        int known = bsp_variant_option(argv[i], &b->graph, &b->ipc);
        if (!known && (known = pt_option("particles-bsp", argv[i], &o)) < 0)
            return 1;
        if (!known) {
            fprintf(stderr, "particles-bsp: unknown option %s\n", argv[i]);
            return 1;
        }
    }
    b->w = o.w, b->segs = o.segs, b->iters = o.iters, b->cap = pt_capacity(&o);
    b->h = o.segs * b->size, b->n = (long long)o.n * b->size;
    if (bsp_variant_refused("particles-bsp", b->graph, b->ipc, 1))
        return 1;
    if (b->size > 1 && b->segs < 2) {
        fprintf(stderr, "particles-bsp: at least 2 segments a process (a boundary segment "
                        "takes movers from one neighbour only)\n");
        return 1;
    }
    return 0;
}

/* Sends my boundary segment on one side (local i) and what moved out on
 * that side (halo j) to the neighbour, and receives its pair: returns the
 * counts received (boundary, movers) in got. */
static void swap_side(bsp_t *b, int p, int side, int peer, long long got[2])
{
    int i = side ? b->segs : 1, j = side ? b->segs + 1 : 0;
    long long mine[2] = { b->host_count[i], b->host_count[j] };
    size_t size = sizeof(pt_particle_t);
    got[0] = got[1] = 0;
    if (peer == MPI_PROC_NULL)
        return;
    CK(cudaMemcpyAsync(b->send[side], b->seg[p] + (size_t)i * b->cap, mine[0] * size,
                       cudaMemcpyDeviceToHost, b->stream));
    CK(cudaMemcpyAsync(b->send[side] + mine[0], b->seg[p] + (size_t)j * b->cap, mine[1] * size,
                       cudaMemcpyDeviceToHost, b->stream));
    CK(cudaStreamSynchronize(b->stream));
    MPI_Sendrecv(mine, 2, MPI_LONG_LONG, peer, 0, got, 2, MPI_LONG_LONG, peer, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(b->send[side], (int)((mine[0] + mine[1]) * size), MPI_BYTE, peer, 1, b->recv[side],
                 (int)((got[0] + got[1]) * size), MPI_BYTE, peer, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

/* Appends count particles from host memory to local segment t of parity
 * p; 1 if they do not fit. */
static int append(bsp_t *b, int p, int t, const pt_particle_t *from, long long count)
{
    long long at = b->host_count[t];
    if (at + count > b->cap)
        return 1;
    CK(cudaMemcpyAsync(b->seg[p] + (size_t)t * b->cap + at, from, count * sizeof(pt_particle_t),
                       cudaMemcpyHostToDevice, b->stream));
    b->host_count[t] = at + count;
    return 0;
}

/* The exchange after a step into parity p; 1 if a segment overflowed. */
static int exchange(bsp_t *b, int p)
{
    int near[2], over = 0;
    bsp_line_neighbours(b->rank, b->size, near);
    int left = near[0], right = near[1];
    long long got[2][2];
    CK(cudaMemcpyAsync(b->host_count, b->count[p], (b->segs + 2) * sizeof(long long),
                       cudaMemcpyDeviceToHost, b->stream));
    CK(cudaStreamSynchronize(b->stream));
    swap_side(b, p, 0, left, got[0]);
    swap_side(b, p, 1, right, got[1]);
    for (int side = 0; side < 2; side++) {
        int i = side ? b->segs : 1, j = side ? b->segs + 1 : 0;
        over |= append(b, p, i, b->recv[side] + got[side][0], got[side][1]);
        over |= append(b, p, j, b->recv[side], got[side][0]);
    }
    CK(cudaMemcpyAsync(b->count[p], b->host_count, (b->segs + 2) * sizeof(long long),
                       cudaMemcpyHostToDevice, b->stream));
    return over;
}

/* The same with CUDA IPC after step k (into parity p): pushed into the
 * neighbours' inboxes of parity k % 2, the step's events, then appended
 * from mine. Their append of step k - 2, the last to read that inbox, is
 * done: it came before their push of step k - 1, which my stream waited
 * for. The buffers a process exports: its inboxes' counts, then their
 * particles. */
static void exchange_ipc(bsp_t *b, int k)
{
    int p = (k + 1) % 2, q = k % 2;
    ipc_side_t *left_count = (ipc_side_t *)bsp_ipc_buffer(&b->x, b->rank - 1, q);
    ipc_side_t *right_count = (ipc_side_t *)bsp_ipc_buffer(&b->x, b->rank + 1, q);
    pt_particle_t *left = (pt_particle_t *)bsp_ipc_buffer(&b->x, b->rank - 1, 2 + q);
    pt_particle_t *right = (pt_particle_t *)bsp_ipc_buffer(&b->x, b->rank + 1, 2 + q);
    size_t side = 2 * (size_t)b->cap; /* particles a side of an inbox holds */
    bsp_ipc_mark(&b->x, b->stream);
    /* to the left neighbour's right side, and the right one's left side */
    ipc_push<<<2, PT_THREADS, 0, b->stream>>>(b->seg[p], b->count[p], b->cap, b->segs,
                                              left_count ? left_count + 1 : NULL,
                                              left ? left + side : NULL, right_count, right);
    CK(cudaGetLastError());
    bsp_ipc_sync(&b->x, b->stream, k);
    ipc_append<<<2, PT_THREADS, 0, b->stream>>>(b->seg[p], b->count[p], b->cap, b->segs,
                                                b->in_count[q], b->in[q], left != NULL,
                                                right != NULL, b->over);
    CK(cudaGetLastError());
    bsp_ipc_mark(&b->x, b->stream);
}

static void step(bsp_t *b, int k)
{
    int q = k % 2, p = 1 - q;
    bsp_move<<<b->segs, PT_THREADS, 0, b->stream>>>(b->seg[q], b->count[q], b->moved, b->cap, b->w,
                                                    b->h);
    bsp_gather<<<b->segs + 2, PT_THREADS, 0, b->stream>>>(b->moved, b->count[q], b->seg[p],
                                                          b->count[p], b->cap, b->segs,
                                                          b->rank * b->segs, b->h, b->over);
    CK(cudaGetLastError());
}

/* Step k on one process (what the graph captures). */
static void step_captured(void *app, int k, double *comm)
{
    (void)comm;
    step((bsp_t *)app, k);
}

/* Step k from the host: the kernels, then the exchange (timed as
 * communication; an overflow in it is remembered in exchange_over). */
static void step_host(void *app, int k, double *comm)
{
    bsp_t *b = (bsp_t *)app;
    step(b, k);
    if (b->size > 1 && b->ipc) {
        exchange_ipc(b, k); /* its time: from the GPU's marks at the end */
    } else if (b->size > 1) {
        double c0 = MPI_Wtime();
        b->exchange_over |= exchange(b, (k + 1) % 2);
        *comm += MPI_Wtime() - c0;
    }
}

/* Parity 0: my segments' particles and my halos' (the neighbours' boundary
 * segments); 1 if a segment holds more than cap. */
static int fill(bsp_t *b)
{
    size_t slots = (size_t)(b->segs + 2) * b->cap;
    pt_particle_t *h = (pt_particle_t *)malloc(slots * sizeof(pt_particle_t));
    long long *c = b->host_count;
    int over = 0;
    memset(c, 0, (b->segs + 2) * sizeof(long long));
    for (long long id = 0; id < b->n; id++) {
        pt_particle_t p = pt_initial(id, b->w, b->h);
        int t = pt_cell(p.y, b->h) - b->rank * b->segs + 1;
        if (t < 0 || t > b->segs + 1)
            continue;
        if (c[t] < b->cap)
            h[(size_t)t * b->cap + c[t]++] = p;
        else
            over = 1;
    }
    CK(cudaMemcpy(b->seg[0], h, slots * sizeof(pt_particle_t), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b->count[0], c, (b->segs + 2) * sizeof(long long), cudaMemcpyHostToDevice));
    free(h);
    return over;
}

/* Particles of this process that differ from the reference, are missing
 * or are there twice. */
static long long compare(bsp_t *b, const pt_particle_t *ref)
{
    int p = b->iters % 2, first = b->rank * b->segs;
    size_t slots = (size_t)(b->segs + 2) * b->cap;
    pt_particle_t *h = (pt_particle_t *)malloc(slots * sizeof(pt_particle_t));
    unsigned char *seen = (unsigned char *)calloc((size_t)b->n + 1, 1);
    long long *c = b->host_count, bad = 0, found = 0;
    CK(cudaMemcpy(h, b->seg[p], slots * sizeof(pt_particle_t), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(c, b->count[p], (b->segs + 2) * sizeof(long long), cudaMemcpyDeviceToHost));
    for (int t = 1; t <= b->segs; t++) {
        bad += pt_check_segment(ref, b->n, b->h, first + t - 1, h + (size_t)t * b->cap, c[t], seen);
        found += c[t];
    }
    long long expected = pt_expected(ref, b->n, b->h, first, first + b->segs);
    free(h);
    free(seen);
    return bad + (found > expected ? found - expected : expected - found);
}

static void allocate(bsp_t *b)
{
    size_t slots = (size_t)(b->segs + 2) * b->cap, size = sizeof(pt_particle_t);
    for (int i = 0; i < 2; i++) {
        CK(cudaMalloc((void **)&b->seg[i], slots * size));
        CK(cudaMalloc((void **)&b->count[i], (b->segs + 2) * sizeof(long long)));
        CK(cudaMemset(b->count[i], 0, (b->segs + 2) * sizeof(long long)));
        CK(cudaMallocHost((void **)&b->send[i], 2 * (size_t)b->cap * size));
        CK(cudaMallocHost((void **)&b->recv[i], 2 * (size_t)b->cap * size));
    }
    CK(cudaMalloc((void **)&b->moved, (size_t)b->segs * b->cap * size));
    CK(cudaMallocHost((void **)&b->host_count, (b->segs + 2) * sizeof(long long)));
    CK(cudaMalloc((void **)&b->over, sizeof(int)));
    CK(cudaMemset(b->over, 0, sizeof(int)));
    CK(cudaStreamCreate(&b->stream));
    for (int i = 0; b->ipc && i < 2; i++) {
        CK(cudaMalloc((void **)&b->in_count[i], 2 * sizeof(ipc_side_t)));
        CK(cudaMalloc((void **)&b->in[i], 4 * (size_t)b->cap * size));
    }
    if (b->ipc) {
        int near[2];
        bsp_line_neighbours(b->rank, b->size, near);
        void *mine[4] = { b->in_count[0], b->in_count[1], b->in[0], b->in[1] };
        bsp_ipc_open(&b->x, "particles-bsp", near, 2, mine, 4, b->iters);
    }
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
    int gpu, stop = bsp_begin("particles-bsp", b.graph, &gpu);
    if (stop)
        return stop;
    allocate(&b);
    int over = fill(&b), dev_over = 0;
    MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* all run, or none */
    double comm_ms = 0, ref_ms = 0;
    double ms = over ? 0
                     : bsp_run_steps("particles-bsp", b.stream, b.iters, b.graph, step_captured,
                                     step_host, &b, &comm_ms);
    over |= b.exchange_over;
    if (b.ipc)
        comm_ms = bsp_ipc_close(&b.x);
    double worst = bsp_slowest(ms), comm_worst = bsp_slowest(comm_ms);
    CK(cudaMemcpy(&dev_over, b.over, sizeof(int), cudaMemcpyDeviceToHost));
    over |= dev_over;
    pt_particle_t *ref = pt_reference(b.n, b.w, b.h, b.iters, &ref_ms);
    long long bad = ref && !over ? compare(&b, ref) : 1, all_bad = 0;
    MPI_Reduce(&bad, &all_bad, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (over)
        fprintf(stderr,
                "particles-bsp: a segment overflowed (more than %d particles): raise "
                "--particles-cap\n",
                b.cap);
    if (b.rank == 0) {
        cudaDeviceProp prop;
        CK(cudaGetDeviceProperties(&prop, gpu));
        double us = worst * 1e3 / b.iters;
        printf("particles: bsp-%s, %d process(es) (%s), %lld particles in %d x %d, %d steps: "
               "%.2f us per step (%.0f Mparticles/s), exchange %.2f us per step; %s\n",
               bsp_variant(b.graph, b.ipc, b.size), b.size, prop.name, b.n, b.w, b.h, b.iters, us,
               b.n / us, comm_worst * 1e3 / b.iters, all_bad ? "MISMATCH" : "MATCH");
        if (all_bad)
            printf("particles: %lld particles differ from the serial reference\n", all_bad);
    }
    free(ref);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
