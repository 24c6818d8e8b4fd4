/*
 * Sparse matrix-vector multiplication (thesis 5.6, the SpMV case study):
 * what the rank code, the hosts and the serial reference share. Defined
 * here once, so that every variant multiplies the same matrix and vector.
 *
 * Grid: P = q * q devices (processes) form a q x q grid, numbered column
 * by column: device d is in grid row d % q and grid column d / q (the
 * thesis' figure 5.9: devices 0 and 1 form the first column, 0 and 2 the
 * first row). The global matrix has q * n rows and columns; device (i, j)
 * owns its block A_ij, n x n in CSR, and the part b_j of the vector (only
 * the first grid row holds it at first). x = A b: x_i = sum over j of
 * A_ij b_j, which ends on the first grid column.
 *
 * Matrix: every row has the same count of nonzeros, k (the thesis spreads
 * the work evenly), one in each of k equal strata of the n columns, at a
 * hashed place in it (random uniform within its stratum: distinct and
 * sorted by construction). Values are small nonzero integers, and so are
 * those of b: every sum is exact in double, in any order, so CPU ranks, GPU
 * ranks, MPI's reductions and the serial reference agree bit for bit.
 *
 * Work: a device's rows are cut into as many parts as it has ranks (as
 * even as possible: app_parts.h); part l belongs to its l-th rank, in every device
 * alike, and so does the same range of b_j. A row's nonzeros are summed
 * by a group of `lanes` threads (spmv_lanes), as a CSR-vector kernel does.
 */
#ifndef DCUDA_APPS_SPMV_H
#define DCUDA_APPS_SPMV_H

#include <stddef.h>
#include <stdint.h>

#include "app_parts.h"

#if defined(__CUDACC__)
#define SPMV_FN static inline __host__ __device__
#else
#define SPMV_FN static inline
#endif

/* User struct of the kernel. */
typedef struct spmv_data {
    double *vec;       /* the window: b_j | x | recv[steps], n doubles each (power.h: its own) */
    const int *rowptr; /* my block in CSR: n + 1 offsets */
    const int *col;    /* the column of each nonzero, within the block */
    const double *val;
    int n;      /* rows (and columns) of a block */
    int q;      /* devices per side of the grid */
    int iters;  /* multiplications, a global barrier after each */
    int device; /* my place in the grid (process index) */
} spmv_data_t;

/* Steps of a binomial tree over q devices: ceil(log2 q). */
SPMV_FN int spmv_steps(int q)
{
    int s = 0;
    while ((1 << s) < q)
        s++;
    return s;
}

/* Offsets in the window, in doubles: b_j at 0, then the partial (at last
 * the final) x, then the partial sums received at each step of the row
 * reduction. */
SPMV_FN size_t spmv_at_x(int n) { return (size_t)n; }
SPMV_FN size_t spmv_at_recv(int n, int step) { return (size_t)(2 + step) * (size_t)n; }
SPMV_FN size_t spmv_window_doubles(int n, int q) { return spmv_at_recv(n, spmv_steps(q)); }

/* The parts of a sum of squares a multiplication may take its scale from
 * (spmv_rank.h: spmv_multiply; the power iteration keeps its sum in this
 * many parts, so that fewer of the ranks' atomic adds meet at one place). */
#define SPMV_SCALE_PARTS 32

/* Threads that sum one row: a power of two near a quarter of the nonzeros
 * per row, at most 32 (a warp) and at most `threads`, dividing it. */
SPMV_FN int spmv_lanes(int nnz_per_row, int threads)
{
    int lanes = 1;
    while (lanes < 32 && lanes * 2 <= threads && threads % (lanes * 2) == 0 &&
           lanes * 8 <= nnz_per_row)
        lanes *= 2;
    return lanes;
}

/* This lane's share of a row times b, the row's nonzeros ending at `end`
 * and the lane's being e, e + lanes, ...: four loads in flight at a time
 * (the gathers from b are independent). The shares of a row's group sum to
 * the row's product. */
SPMV_FN double spmv_span_share(const int *col, const double *val, const double *b, int e, int end,
                               int lanes)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (; e + 3 * lanes < end; e += 4 * lanes) {
        int c0 = col[e], c1 = col[e + lanes], c2 = col[e + 2 * lanes], c3 = col[e + 3 * lanes];
        s0 += val[e] * b[c0];
        s1 += val[e + lanes] * b[c1];
        s2 += val[e + 2 * lanes] * b[c2];
        s3 += val[e + 3 * lanes] * b[c3];
    }
    for (; e < end; e += lanes)
        s0 += val[e] * b[col[e]];
    return (s0 + s1) + (s2 + s3);
}

/* This lane's share of row `row` of a block times b (spmv_span_share with
 * nonzeros lane, lane + lanes, ... of the row). */
SPMV_FN double spmv_row_share(const int *rowptr, const int *col, const double *val, const double *b,
                              int row, int lane, int lanes)
{
    return spmv_span_share(col, val, b, rowptr[row] + lane, rowptr[row + 1], lanes);
}

/* A 64-bit mix of a key (splitmix64's finaliser). */
SPMV_FN uint64_t spmv_hash(uint64_t h)
{
    h += 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

/* Nonzero e (0..k-1) of row `row` of block (i, j): its column and value. */
SPMV_FN int spmv_entry_col(int i, int j, int row, int e, int n, int k)
{
    int first = app_part_first(n, k, e), width = app_part_first(n, k, e + 1) - first;
    uint64_t h = spmv_hash(((uint64_t)(uint32_t)(i * 4099 + j) << 40) ^
                           ((uint64_t)(uint32_t)row << 12) ^ (uint64_t)e);
    return first + (int)(h % (uint64_t)width);
}

SPMV_FN double spmv_entry_val(int i, int j, int row, int e)
{
    uint64_t h = spmv_hash(((uint64_t)(uint32_t)(j * 4099 + i) << 40) ^
                           ((uint64_t)(uint32_t)row << 12) ^ (uint64_t)e ^ 0x5bd1e995ull);
    int v = (int)(h % 8) - 4; /* -4..3, then 0 becomes 4 */
    return (double)(v ? v : 4);
}

/* Element c of the global vector b: an integer in -8..8. */
SPMV_FN double spmv_initial_b(int c)
{
    return (double)((int)(spmv_hash((uint64_t)(uint32_t)c ^ 0x2545f491ull) % 17) - 8);
}

#endif /* DCUDA_APPS_SPMV_H */
