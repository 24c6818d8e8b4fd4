/*
 * The 2D heat stencil (5-point Jacobi): what the host side and the rank code
 * of the demo share. The decomposition, the buffer layout and the update of
 * one point are defined here once, so both sides agree exactly.
 *
 * Grid: nx columns by ny rows; rows 0 and ny-1 and columns 0 and nx-1 are a
 * fixed boundary. The ny-2 interior rows are split over the WORLD ranks as
 * evenly as possible: with q = (ny-2) / ranks and m = (ny-2) % ranks, ranks
 * 0..m-1 own q+1 rows and the others q. So when there are more ranks than
 * interior rows, the ranks that own no rows are exactly the last ones
 * (from stencil_active(...) on): the ranks that own rows form the prefix
 * 0..active-1, each one's neighbours are simply rank-1 and rank+1 of that
 * prefix, and rows-less ranks only join the collectives.
 *
 * Memory: every rank that owns n > 0 rows has two buffers, one after the
 * other, of n+2 rows each (its rows plus a halo row above and below; the
 * halo rows hold the neighbour's rows or the fixed boundary). The ranks of
 * one device keep their buffers back to back, in rank order, in one block.
 */
#ifndef DCUDA_DEMO_STENCIL_H
#define DCUDA_DEMO_STENCIL_H

#include <stddef.h>

#if defined(__CUDACC__)
#define STENCIL_FN static inline __host__ __device__
#else
#define STENCIL_FN static inline
#endif

/* User struct of the stencil kernel. */
typedef struct stencil_data {
    double *grid; /* buffers of this device's ranks, see above */
    int nx, ny;   /* global grid, including the boundary */
    int iters;    /* Jacobi iterations; the result is in buffer iters % 2 */
    int reserved;
} stencil_data_t;

/* First interior row of rank (0 <= rank <= ranks; rank == ranks gives ny-1). */
STENCIL_FN int stencil_first_row(int ny, int ranks, int rank)
{
    int q = (ny - 2) / ranks, m = (ny - 2) % ranks;
    return 1 + rank * q + (rank < m ? rank : m);
}

/* Interior rows owned by rank (0 for rank < 0 or rank >= ranks). */
STENCIL_FN int stencil_rows(int ny, int ranks, int rank)
{
    if (rank < 0 || rank >= ranks)
        return 0;
    return stencil_first_row(ny, ranks, rank + 1) - stencil_first_row(ny, ranks, rank);
}

/* Ranks that own rows: 0..stencil_active()-1. */
STENCIL_FN int stencil_active(int ny, int ranks) { return ny - 2 < ranks ? ny - 2 : ranks; }

/* Doubles from the start of the device's block (whose first rank is the
 * WORLD rank `first`) to the first buffer of rank. */
STENCIL_FN size_t stencil_offset(int nx, int ny, int ranks, int first, int rank)
{
    int active = stencil_active(ny, ranks);
    int halos = (rank < active ? rank : active) - (first < active ? first : active);
    int rows = stencil_first_row(ny, ranks, rank) - stencil_first_row(ny, ranks, first);
    return 2 * (size_t)nx * ((size_t)rows + 2 * (size_t)halos);
}

/* New value of a point from its four neighbours. The form 0.25 * (sum) has
 * no multiply-add that a compiler could fuse, so every compiler (host C,
 * CUDA) rounds it the same way and results stay bitwise comparable. */
STENCIL_FN double stencil_point(double north, double south, double west, double east)
{
    return 0.25 * ((north + south) + (west + east));
}

#endif /* DCUDA_DEMO_STENCIL_H */
