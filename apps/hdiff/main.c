/*
 * The horizontal diffusion case study (thesis 5.5), dcuda variant: builds
 * the grid (nz levels of ny rows per process by nx columns: weak scaling),
 * hands each rank its tiles (hdiff.h), runs the iterations on the ranks,
 * runs the very same iterations serially and compares every point bit for
 * bit. Prints the time per iteration (the ranks' timer) and exits 0 only
 * when every point matches.
 *
 * Options (besides the --dcuda-* settings), thesis sizes by default:
 *   --hdiff-nx=128 --hdiff-ny=320 (rows per process) --hdiff-nz=26
 *   --hdiff-iters=200 --hdiff-bands=B (bands per level; default: the ranks
 *   over the levels, at least 1, at most rows / 2)
 */
#include <stdio.h>
#include <stdlib.h>

#include "app_skip.h"
#include "dcuda/dcuda_host.h"
#include "hdiff.h"
#include "hdiff_host.h"

DCUDA_KERNEL_DECLARE(hdiff);

/* Reads the --hdiff-* options (others are dcuda's); 0 if all are valid. */
static int parse(int argc, char **argv, hdiff_options_t *o)
{
    for (int i = 1; i < argc; i++)
        if (hdiff_option("hdiff", argv[i], o) < 0)
            return 1;
    return 0;
}

/* The bands per level: asked for, or enough for every rank to get a tile. */
static int pick_bands(const hdiff_options_t *o, int world, int ny)
{
    int bands = o->bands ? o->bands : world / o->nz;
    if (bands < 1)
        bands = 1;
    return bands > ny / HDIFF_HALO ? ny / HDIFF_HALO : bands;
}

/* Calls f on every tile of this process's ranks, with the tile's buffer 0
 * in mem (a host copy of the process's memory). */
typedef void (*tile_fn)(const hdiff_data_t *d, int tile, double *buf0, const double *ref,
                        size_t *bad);

static void each_tile(const hdiff_data_t *d, const dcuda_rank_info_t *info, double *mem, tile_fn f,
                      const double *ref, size_t *bad)
{
    int tiles = d->nz * d->bands, world = info->rank_count;
    for (int r = info->rank_start; r < info->rank_start + info->rank_responsible; r++) {
        double *part = mem + hdiff_rank_offset(d, r, world);
        size_t offset = 0;
        for (int t = r; t < tiles; t += world) {
            f(d, t, part + offset, ref, bad);
            offset += hdiff_tile_doubles(d, t % d->bands);
        }
    }
}

/* Buffer 0 of a tile: its rows and halo rows of the initial grid (0 beyond
 * the ends); buffer 1 stays 0 until the ranks write it. */
static void fill(const hdiff_data_t *d, int t, double *buf0, const double *ref, size_t *bad)
{
    (void)ref;
    (void)bad;
    int z = t / d->bands, band = t % d->bands;
    int first = hdiff_band_first(d->ny, d->bands, band);
    int rows = hdiff_band_rows(d->ny, d->bands, band);
    for (int i = 0; i < rows + 2 * HDIFF_HALO; i++) {
        int y = first - HDIFF_HALO + i;
        for (int x = 0; x < d->nx; x++)
            buf0[(size_t)i * (size_t)d->nx + (size_t)x] =
                y >= 0 && y < d->ny ? hdiff_initial(z, y, x) : 0.0;
    }
}

/* Counts the points of a tile's result that differ from the reference. */
static void compare(const hdiff_data_t *d, int t, double *buf0, const double *ref, size_t *bad)
{
    int z = t / d->bands, band = t % d->bands;
    int first = hdiff_band_first(d->ny, d->bands, band);
    int rows = hdiff_band_rows(d->ny, d->bands, band);
    size_t nx = (size_t)d->nx, level = ((size_t)d->ny + 2 * HDIFF_HALO) * nx;
    const double *res = buf0 + (size_t)(d->iters % 2) * (size_t)(rows + 2 * HDIFF_HALO) * nx;
    for (int i = 0; i < rows; i++)
        for (size_t x = 0; x < nx; x++)
            *bad += res[(size_t)(i + HDIFF_HALO) * nx + x] !=
                    ref[(size_t)z * level + (size_t)(first + i + HDIFF_HALO) * nx + x];
}

/* Runs the case once; 0 when every point of this process matches. */
static int run(dcuda_host_h h, const dcuda_rank_info_t *info, hdiff_data_t *d)
{
    size_t doubles = 0;
    for (int r = info->rank_start; r < info->rank_start + info->rank_responsible; r++)
        doubles += hdiff_rank_doubles(d, r, info->rank_count, -1);
    double *host = calloc(doubles ? doubles : 1, sizeof(double)), ref_ms = 0, ms = 0;
    double *ref = hdiff_reference(d, &ref_ms);
    size_t bad = 0;
    if (!host || !ref || dcuda_host_alloc(h, doubles * sizeof(double), (void **)&d->mem)) {
        fprintf(stderr, "hdiff: out of memory\n");
        return 1;
    }
    each_tile(d, info, host, fill, NULL, NULL);
    dcuda_status_t st = dcuda_host_copy_in(h, d->mem, host, doubles * sizeof(double));
    if (st == DCUDA_OK)
        st = dcuda_host_run(h, d, sizeof *d, &ms);
    if (st == DCUDA_OK)
        st = dcuda_host_copy_out(h, host, d->mem, doubles * sizeof(double));
    if (st == DCUDA_OK)
        each_tile(d, info, host, compare, ref, &bad);
    const double *timings = NULL;
    int count = 0;
    dcuda_host_get_timings(h, &timings, &count);
    double iter_us = count > 0 ? timings[0] * 1e3 / d->iters : -1;
    double points = (double)d->nx * d->ny * d->nz;
    printf("hdiff: dcuda, %d ranks (%s, %s), process %d of %d, %dx%dx%d (%d bands), %d "
           "iterations: %.2f us per iteration (%.0f Mpoints/s), run %.3f ms; serial %.1f us per "
           "iteration; %s\n",
           info->rank_count, info->backend, info->device_name, info->process_index,
           info->process_count, d->nx, d->ny, d->nz, d->bands, d->iters, iter_us,
           iter_us > 0 ? points / iter_us : 0, ms, ref_ms * 1e3 / d->iters,
           st != DCUDA_OK ? dcuda_status_name(st)
           : bad          ? "MISMATCH"
                          : "MATCH");
    if (bad)
        printf("hdiff: %zu points differ from the serial reference\n", bad);
    dcuda_host_free(h, d->mem);
    free(host);
    free(ref);
    return st != DCUDA_OK || bad;
}

int main(int argc, char **argv)
{
    hdiff_options_t o = HDIFF_OPTIONS_DEFAULT;
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (parse(argc, argv, &o))
        return 2;
    if (app_backend_missing("hdiff"))
        return APP_SKIP;
    dcuda_status_t st = dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(hdiff), 128, &h);
    if (st != DCUDA_OK)
        return dcuda_host_exit_status(1);
    dcuda_host_get_rank_info(h, &info);
    hdiff_data_t d = { NULL, o.nx, o.ny * info.process_count, o.nz, 0, o.iters, info.rank_start };
    d.bands = pick_bands(&o, info.rank_count, d.ny);
    int failed =
        d.ny < HDIFF_HALO ? (fprintf(stderr, "hdiff: at least 2 rows\n"), 1) : run(h, &info, &d);
    dcuda_host_finish(h);
    return dcuda_host_exit_status(failed);
}
