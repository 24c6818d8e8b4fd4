/*
 * Horizontal diffusion (thesis 5.5, the stencil case study): what the rank
 * code, the host and the serial reference share. Defined here once, so that
 * every variant computes the same points with the same operations.
 *
 * Grid: nz levels of ny rows (y) by nx columns (x); x is periodic, and the
 * rows beyond the global ends in y hold 0. Each iteration applies three
 * dependent stencils in the xy plane of each level (hdiff_point):
 *   lap = 4 u - (u west + u east + u north + u south)      (4 neighbours)
 *   flx = lap(x+1) - lap(x),  fly = lap(y+1) - lap(y)      (2 points each)
 *   out = u + (flx(x) - flx(x-1) + fly(y) - fly(y-1)) / 64
 * which is diffusion of the fourth order (stable: the factor of a Fourier
 * mode is 1 - lap^2/64, in [0, 1]). Every coefficient is a power of two, so
 * a fused multiply-add rounds as the separate operations do: CPU and GPU
 * results are bitwise equal. A point depends on u two rows away in y.
 *
 * Decomposition: each level is cut into `bands` bands of rows (as even as
 * possible, at least 2 rows each); a tile is a (level, band) pair, tile
 * t = level * bands + band, and WORLD rank t % world owns it (so with as
 * many ranks as tiles, one tile each, as the thesis' 26 levels x 8 bands).
 * A tile has two buffers of (rows + 4) x nx doubles: its rows with two halo
 * rows above and two below. A rank's tiles lie back to back in tile order
 * (its window part); the ranks of a process lie back to back in rank order.
 */
#ifndef DCUDA_APPS_HDIFF_H
#define DCUDA_APPS_HDIFF_H

#include <stddef.h>
#include <stdint.h>

#include "app_hash.h"
#include "app_parts.h"

#if defined(__CUDACC__)
#define HDIFF_FN static inline __host__ __device__
#else
#define HDIFF_FN static inline
#endif

#define HDIFF_HALO 2

/* User struct of the kernel. */
typedef struct hdiff_data {
    double *mem;    /* the tiles of this process's ranks (see above) */
    int nx, ny, nz; /* the global grid */
    int bands;      /* bands per level */
    int iters;      /* the result is in buffer iters % 2 */
    int first;      /* WORLD rank of the process's first rank */
} hdiff_data_t;

HDIFF_FN int hdiff_band_first(int ny, int bands, int band)
{
    return app_part_first(ny, bands, band);
}

HDIFF_FN int hdiff_band_rows(int ny, int bands, int band)
{
    return hdiff_band_first(ny, bands, band + 1) - hdiff_band_first(ny, bands, band);
}

HDIFF_FN int hdiff_owner(int tile, int world) { return tile % world; }

/* Doubles of a tile of that band: two buffers with their halo rows. */
HDIFF_FN size_t hdiff_tile_doubles(const hdiff_data_t *d, int band)
{
    return 2 * (size_t)(hdiff_band_rows(d->ny, d->bands, band) + 2 * HDIFF_HALO) * (size_t)d->nx;
}

/* Doubles of every tile of rank before tile `before` (all of them: -1). */
HDIFF_FN size_t hdiff_rank_doubles(const hdiff_data_t *d, int rank, int world, int before)
{
    size_t n = 0;
    int tiles = d->nz * d->bands;
    for (int t = rank; t < tiles && (before < 0 || t < before); t += world)
        n += hdiff_tile_doubles(d, t % d->bands);
    return n;
}

/* Where rank's part starts, from the start of its process's memory. */
HDIFF_FN size_t hdiff_rank_offset(const hdiff_data_t *d, int rank, int world)
{
    size_t n = 0;
    for (int r = d->first; r < rank; r++)
        n += hdiff_rank_doubles(d, r, world, -1);
    return n;
}

/* The initial value of a point: a fixed hash of its coordinates, in [0, 1). */
HDIFF_FN double hdiff_initial(int z, int y, int x)
{
    return app_hash01(((uint64_t)(uint32_t)z << 42) ^ ((uint64_t)(uint32_t)y << 21) ^ (uint32_t)x);
}

/* The negative Laplacian at (x, row) of a buffer with rows of nx (x wraps). */
HDIFF_FN double hdiff_lap(const double *u, int nx, int x, int row)
{
    const double *c = u + (size_t)row * (size_t)nx;
    int w = x == 0 ? nx - 1 : x - 1, e = x == nx - 1 ? 0 : x + 1;
    return 4.0 * c[x] - ((c[w] + c[e]) + (c[x - nx] + c[x + nx]));
}

/* The new value at (x, row): rows row-2..row+2 of u are read. */
HDIFF_FN double hdiff_point(const double *u, int nx, int x, int row)
{
    int w = x == 0 ? nx - 1 : x - 1, e = x == nx - 1 ? 0 : x + 1;
    double lc = hdiff_lap(u, nx, x, row);
    double flx = hdiff_lap(u, nx, e, row) - lc, flx_w = lc - hdiff_lap(u, nx, w, row);
    double fly = hdiff_lap(u, nx, x, row + 1) - lc, fly_s = lc - hdiff_lap(u, nx, x, row - 1);
    return u[(size_t)row * (size_t)nx + (size_t)x] + 0.015625 * ((flx - flx_w) + (fly - fly_s));
}

#endif /* DCUDA_APPS_HDIFF_H */
