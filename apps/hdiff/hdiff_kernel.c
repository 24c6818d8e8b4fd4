/*
 * Rank code of the horizontal diffusion case study, written once for CPU
 * and GPU ranks. Each rank computes its tiles (hdiff.h) and sends each
 * tile's border rows to the tiles above and below it on its own, as soon as
 * they are computed: one notified put per neighbour and level (26 messages
 * per border of a device at the thesis' 26 levels), while other ranks still
 * compute.
 *
 * Why two buffers and the waits suffice: iteration k reads buffer k%2 and
 * writes buffer (k+1)%2, whose halo rows the neighbours fill, and ends by
 * waiting for all of them. A rank starts iteration k+1 only once every
 * neighbour tile's owner has computed iteration k (it sent those rows
 * after computing), so it is at most one iteration ahead of them: its puts
 * into buffer k%2 of a neighbour (iteration k+1) come after that neighbour
 * read buffer k%2 (iteration k). The tag says the buffer's parity and the
 * direction; notifications of one tag are counted, one per tile that
 * expects them.
 */
#include "dcuda/dcuda_rank.h"
#include "hdiff.h"

#define HDIFF_FROM_ABOVE 0 /* rows that land in a tile's top halo */
#define HDIFF_FROM_BELOW 1 /* rows that land in a tile's bottom halo */

/* Buffer p of tile t of this rank (offset: the tile's start in my part). */
DCUDA_RANK_FN double *tile_buffer(double *part, const hdiff_data_t *d, size_t offset, int band,
                                  int p)
{
    size_t rows = (size_t)hdiff_band_rows(d->ny, d->bands, band) + 2 * HDIFF_HALO;
    return part + offset + (size_t)p * rows * (size_t)d->nx;
}

/* The new interior of a tile: its points spread over the rank's threads. */
DCUDA_RANK_FN void tile_compute(const hdiff_data_t *d, int rows, const double *old, double *next)
{
    int nx = d->nx, n = rows * nx;
    for (int i = dcuda_thread_index(); i < n; i += dcuda_thread_count()) {
        int row = HDIFF_HALO + i / nx, x = i % nx;
        next[(size_t)row * (size_t)nx + (size_t)x] = hdiff_point(old, nx, x, row);
    }
}

/* Sends the border rows of my tile t (buffer p) into the halo rows of
 * buffer p of the tiles above and below it. Window offsets are relative to
 * the target rank's part. */
DCUDA_RANK_FN void tile_send(dcuda_state_t *st, dcuda_win_t win, const hdiff_data_t *d, int world,
                             int t, const double *buf, int p)
{
    int band = t % d->bands, rows = hdiff_band_rows(d->ny, d->bands, band);
    size_t row = (size_t)d->nx * sizeof(double), halo = HDIFF_HALO * row;
    if (band > 0) { /* my first rows: the bottom halo of the tile above */
        int up = t - 1, up_rows = hdiff_band_rows(d->ny, d->bands, band - 1);
        int owner = hdiff_owner(up, world);
        size_t at =
            hdiff_rank_doubles(d, owner, world, up) * sizeof(double) +
            ((size_t)p * (size_t)(up_rows + 2 * HDIFF_HALO) + (size_t)up_rows + HDIFF_HALO) * row;
        dcuda_put_notify(st, win, owner, at, halo, buf + HDIFF_HALO * d->nx,
                         2 * p + HDIFF_FROM_BELOW);
    }
    if (band + 1 < d->bands) { /* my last rows: the top halo of the tile below */
        int down = t + 1, down_rows = hdiff_band_rows(d->ny, d->bands, band + 1);
        int owner = hdiff_owner(down, world);
        size_t at = hdiff_rank_doubles(d, owner, world, down) * sizeof(double) +
                    (size_t)p * (size_t)(down_rows + 2 * HDIFF_HALO) * row;
        dcuda_put_notify(st, win, owner, at, halo, buf + (size_t)rows * (size_t)d->nx,
                         2 * p + HDIFF_FROM_ABOVE);
    }
}

DCUDA_KERNEL(hdiff, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    int rank, world;
    hdiff_data_t *d;
    dcuda_win_t win;

    dcuda_rank_init(ctx, &st);
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &world);
    dcuda_get_data(&st, (void **)&d);
    double *part = d->mem + hdiff_rank_offset(d, rank, world);
    int tiles = d->nz * d->bands, from_above = 0, from_below = 0;
    for (int t = rank; t < tiles; t += world) {
        from_above += t % d->bands > 0;
        from_below += t % d->bands + 1 < d->bands;
    }
    /* My window: all of my tiles (empty for a rank without tiles). The
     * rows I send lie in it too, as puts require of their source. */
    size_t bytes = hdiff_rank_doubles(d, rank, world, -1) * sizeof(double);
    dcuda_win_create(&st, DCUDA_COMM_WORLD, part, bytes, &win);
    dcuda_start_cpu_timer(&st);

    for (int k = 0; k < d->iters && from_above + from_below + (rank < tiles) > 0; k++) {
        int p = (k + 1) % 2;
        size_t offset = 0;
        for (int t = rank; t < tiles; t += world) {
            int band = t % d->bands;
            double *next = tile_buffer(part, d, offset, band, p);
            tile_compute(d, hdiff_band_rows(d->ny, d->bands, band),
                         tile_buffer(part, d, offset, band, k % 2), next);
            dcuda_rank_sync(); /* the tile's new rows written before they are sent */
            tile_send(&st, win, d, world, t, next, p);
            offset += hdiff_tile_doubles(d, band);
        }
        if (from_above)
            dcuda_wait_notifications(&st, 2 * p + HDIFF_FROM_ABOVE, from_above);
        if (from_below)
            dcuda_wait_notifications(&st, 2 * p + HDIFF_FROM_BELOW, from_below);
        dcuda_rank_sync(); /* halos seen by all threads before the next reads */
    }

    dcuda_stop_cpu_timer(&st);
    /* Every halo put to me was waited for: none is in flight when the
     * window goes. Errors of any call are reported on the host. */
    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}
