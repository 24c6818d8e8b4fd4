/*
 * Rank code of the heat stencil demo, written once for CPU and GPU ranks.
 * Each rank owns a band of rows (stencil.h) in two buffers: every iteration
 * computes the new buffer from the old one, puts its first and last rows
 * into the halo rows of its neighbours' new buffers with notified puts, and
 * waits for its own halo rows before the next iteration.
 *
 * Why two buffers and one wait per neighbour are enough (no other
 * synchronisation): iteration k reads buffer k%2 and writes buffer
 * (k+1)%2, and ends by waiting for both halos of iteration k. So a rank can
 * only start iteration k+1 once each neighbour has finished computing
 * iteration k: a rank is at most one iteration ahead of its neighbours.
 * When rank r, in iteration k, puts into the halo of buffer (k+1)%2 of its
 * neighbour q, q has at least finished computing iteration k-1, the last
 * iteration that read buffer (k+1)%2 (as its old buffer); q's iteration k
 * writes only the interior rows of that buffer, never the halo rows; and q
 * reads that halo only in iteration k+1, after its wait of iteration k has
 * seen r's notification. Conversely r cannot put into buffer k%2 of q (its
 * iteration k+1) before q has computed iteration k, which reads buffer k%2.
 * The tag names the buffer parity and the direction (tag = 2 * parity +
 * direction), so a notification always says which halo row of which buffer
 * has arrived.
 */
#include "dcuda/dcuda_rank.h"
#include "stencil.h"

/* Directions, as part of the tag: a row sent down lands in the target's
 * top halo, a row sent up in its bottom halo. */
#define STENCIL_DOWN 0
#define STENCIL_UP 1

/* What a rank knows of its band and its neighbours. */
typedef struct stencil_band {
    double *buf[2];         /* my two buffers of (rows + 2) x nx doubles */
    int nx, rows;           /* row length, interior rows owned */
    int up, down;           /* neighbour ranks, -1 where the boundary is */
    int rows_up, rows_down; /* their interior rows (for the put offsets) */
} stencil_band_t;

/* Finds my band from the decomposition; rows 0 means no part in the work. */
DCUDA_RANK_FN void band_init(stencil_band_t *b, const stencil_data_t *d, int rank, int size,
                             int first)
{
    int active = stencil_active(d->ny, size);
    double *mine = d->grid + stencil_offset(d->nx, d->ny, size, first, rank);
    b->nx = d->nx;
    b->rows = stencil_rows(d->ny, size, rank);
    b->buf[0] = mine;
    b->buf[1] = mine + (size_t)(b->rows + 2) * (size_t)d->nx;
    b->up = rank > 0 && rank < active ? rank - 1 : -1;
    b->down = rank + 1 < active ? rank + 1 : -1;
    b->rows_up = stencil_rows(d->ny, size, b->up);
    b->rows_down = stencil_rows(d->ny, size, b->down);
}

/* New interior from old: rows one after the other, the points of a row
 * spread over the threads of the rank. Boundary columns are not written. */
DCUDA_RANK_FN void band_compute(const stencil_band_t *b, const double *old, double *next)
{
    int nx = b->nx;
    for (int y = 1; y <= b->rows; y++) {
        const double *c = old + (size_t)y * (size_t)nx;
        double *out = next + (size_t)y * (size_t)nx;
        for (int x = 1 + dcuda_thread_index(); x < nx - 1; x += dcuda_thread_count())
            out[x] = stencil_point(c[x - nx], c[x + nx], c[x - 1], c[x + 1]);
    }
}

/* Sends my first and last rows of buffer p into my neighbours' halo rows of
 * their buffer p, then waits until both of my halo rows of buffer p have
 * arrived. Offsets are relative to the target's window, i.e. its buffer 0. */
DCUDA_RANK_FN void band_exchange(dcuda_state_t *st, dcuda_win_t win, const stencil_band_t *b, int p)
{
    size_t row = (size_t)b->nx * sizeof(double);
    const double *next = b->buf[p];
    if (b->up >= 0) {
        size_t halo = (size_t)p * (size_t)(b->rows_up + 2) + (size_t)b->rows_up + 1;
        dcuda_put_notify(st, win, b->up, halo * row, row, next + b->nx, 2 * p + STENCIL_UP);
    }
    if (b->down >= 0) {
        size_t halo = (size_t)p * (size_t)(b->rows_down + 2);
        dcuda_put_notify(st, win, b->down, halo * row, row, next + (size_t)b->rows * b->nx,
                         2 * p + STENCIL_DOWN);
    }
    if (b->up >= 0)
        dcuda_wait_notifications(st, 2 * p + STENCIL_DOWN, 1);
    if (b->down >= 0)
        dcuda_wait_notifications(st, 2 * p + STENCIL_UP, 1);
}

DCUDA_KERNEL(stencil, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    int rank, size, local_rank;
    stencil_data_t *d;
    stencil_band_t b;
    dcuda_win_t win;

    dcuda_rank_init(ctx, &st);
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &local_rank);
    dcuda_get_data(&st, (void **)&d);
    band_init(&b, d, rank, size, rank - local_rank);
    if (rank == 0 && dcuda_thread_index() == 0)
        dcuda_log(&st, "stencil: %d of %d ranks own rows, %d to %d rows each",
                  stencil_active(d->ny, size), size, stencil_rows(d->ny, size, size - 1),
                  stencil_rows(d->ny, size, 0));

    /* My window: both buffers (empty for a rank without rows). The rows I
     * send lie in it too, as puts require of their source. */
    size_t bytes = b.rows ? 2 * (size_t)(b.rows + 2) * (size_t)b.nx * sizeof(double) : 0;
    dcuda_win_create(&st, DCUDA_COMM_WORLD, b.buf[0], bytes, &win);
    dcuda_start_cpu_timer(&st);

    for (int k = 0; b.rows > 0 && k < d->iters; k++) {
        int p = (k + 1) % 2;
        band_compute(&b, b.buf[k % 2], b.buf[p]);
        dcuda_rank_sync(); /* all of the new rows written before they are sent */
        band_exchange(&st, win, &b, p);
        dcuda_rank_sync(); /* halos seen by all threads before the next reads */
    }

    dcuda_stop_cpu_timer(&st);
    /* Errors of any call above are reported on the host and make
     * dcuda_host_run fail. Every halo put to me was waited for, so no put
     * is in flight when the window goes. */
    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}
