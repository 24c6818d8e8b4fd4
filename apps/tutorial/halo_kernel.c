/*
 * Rank code of the tutorial (docs/tutorial.md): 1D heat diffusion, written
 * once for CPU and GPU ranks. Every rank owns a piece of the line (halo.h);
 * each step it puts its edge cells into its neighbours' halos with
 * notified puts, waits for its own halos, and computes its new cells.
 */
#include "dcuda/dcuda_rank.h"
#include "halo.h"

/* Tags, named by where the notification comes from, as its receiver sees
 * it: a halo from my left or my right neighbour, and (ack scheme) word
 * from my left or my right neighbour that it has read the halo I wrote. */
#define TAG_HALO_FROM_LEFT 0
#define TAG_HALO_FROM_RIGHT 1
#define TAG_FREE_FROM_LEFT 2
#define TAG_FREE_FROM_RIGHT 3

/* What a rank knows of its piece of the line. */
typedef struct piece {
    double *slab;    /* halo slots and both copies of my cells (halo.h) */
    int cells;       /* cells I own */
    int left, right; /* neighbour ranks, -1 at an end of the line */
} piece_t;

/* My slab among the slabs of my process (the ranks of my device), and my
 * neighbours. */
DCUDA_RANK_FN void piece_init(piece_t *p, const halo_data_t *d, int rank, int size, int device_rank)
{
    p->cells = d->cells;
    p->slab = d->slabs + (size_t)device_rank * halo_slab_doubles(d->cells);
    p->left = rank > 0 ? rank - 1 : -1;
    p->right = rank + 1 < size ? rank + 1 : -1;
}

/* Initial values of my cells (copy 0), spread over the threads of the
 * rank, and the boundary values in the halos at the ends of the line,
 * which no neighbour writes. */
DCUDA_RANK_FN void piece_fill(piece_t *p, int rank)
{
    double *cells = p->slab + halo_cells_index(p->cells, 0);
    for (int i = dcuda_thread_index(); i < p->cells; i += dcuda_thread_count())
        cells[i] = halo_initial((size_t)rank * (size_t)p->cells + (size_t)i);
    if (dcuda_thread_index() == 0) {
        for (int slot = 0; slot < 2; slot++) {
            if (p->left < 0)
                p->slab[halo_index(slot, HALO_LEFT)] = HALO_BOUNDARY_LEFT;
            if (p->right < 0)
                p->slab[halo_index(slot, HALO_RIGHT)] = HALO_BOUNDARY_RIGHT;
        }
    }
    dcuda_rank_sync();
}

/* Puts my edge cells into my neighbours' halos of `slot`: my first cell
 * into my left neighbour's right halo, my last cell into my right
 * neighbour's left halo. Every slab has the same layout, so the offset in
 * the target's part of the window is the one in mine. Returns the first
 * failure. */
DCUDA_RANK_FN dcuda_status_t send_edges(dcuda_state_t *st, dcuda_win_t win, const piece_t *p,
                                        const double *cur, int slot)
{
    dcuda_status_t s = DCUDA_OK;
    if (p->left >= 0)
        s = dcuda_put_notify(st, win, p->left, halo_index(slot, HALO_RIGHT) * sizeof(double),
                             sizeof(double), &cur[0], TAG_HALO_FROM_RIGHT);
    if (s == DCUDA_OK && p->right >= 0)
        s = dcuda_put_notify(st, win, p->right, halo_index(slot, HALO_LEFT) * sizeof(double),
                             sizeof(double), &cur[p->cells - 1], TAG_HALO_FROM_LEFT);
    return s;
}

/* Step 6 of the tutorial: send_edges with a deliberate mistake in its put
 * to the right (rank 0, which has no left neighbour, calls it instead). */
DCUDA_RANK_FN dcuda_status_t send_edges_mistaken(dcuda_state_t *st, dcuda_win_t win,
                                                 const piece_t *p, const double *cur, int slot,
                                                 int mistake)
{
    size_t offset = halo_index(slot, HALO_LEFT) * sizeof(double);
    double edge = cur[p->cells - 1]; /* a copy in the rank's own stack */
    if (p->right < 0)
        return DCUDA_OK;
    if (mistake == HALO_MISTAKE_SOURCE) /* the source lies in no window */
        return dcuda_put_notify(st, win, p->right, offset, sizeof(double), &edge,
                                TAG_HALO_FROM_LEFT);
    /* The other side's tag: my right neighbour waits for a halo that never comes. */
    return dcuda_put_notify(st, win, p->right, offset, sizeof(double), &cur[p->cells - 1],
                            TAG_HALO_FROM_RIGHT);
}

/* Waits until both of my halos of this step have arrived (one notification
 * from each neighbour). Returns the first failure: every thread of the rank
 * gets the same status. */
DCUDA_RANK_FN dcuda_status_t wait_halos(dcuda_state_t *st, const piece_t *p)
{
    dcuda_status_t s = DCUDA_OK;
    if (p->left >= 0)
        s = dcuda_wait_notifications(st, TAG_HALO_FROM_LEFT, 1);
    if (s == DCUDA_OK && p->right >= 0)
        s = dcuda_wait_notifications(st, TAG_HALO_FROM_RIGHT, 1);
    dcuda_rank_sync(); /* the halos are seen by every thread before they read them */
    return s;
}

/* New values of my cells from the old ones and the halos of `slot`. */
DCUDA_RANK_FN void compute(const piece_t *p, int slot, const double *cur, double *next)
{
    const double *halo = p->slab + halo_index(slot, 0);
    int n = p->cells;
    for (int i = dcuda_thread_index(); i < n; i += dcuda_thread_count()) {
        double left = i > 0 ? cur[i - 1] : halo[HALO_LEFT];
        double right = i < n - 1 ? cur[i + 1] : halo[HALO_RIGHT];
        next[i] = halo_update(left, cur[i], right);
    }
    dcuda_rank_sync(); /* every new cell is written before any is sent */
}

/* Ack scheme: tells my neighbours that I have read the halos they wrote,
 * so they may write them again. A notification is a release: my reads of
 * the halos come before it. */
DCUDA_RANK_FN void tell_free(dcuda_state_t *st, const piece_t *p)
{
    if (p->left >= 0)
        dcuda_notify(st, p->left, DCUDA_COMM_WORLD, TAG_FREE_FROM_RIGHT);
    if (p->right >= 0)
        dcuda_notify(st, p->right, DCUDA_COMM_WORLD, TAG_FREE_FROM_LEFT);
}

/* Ack scheme: waits until both neighbours have read the halos I wrote
 * them in the previous step; returns the first failure. */
DCUDA_RANK_FN dcuda_status_t wait_free(dcuda_state_t *st, const piece_t *p)
{
    dcuda_status_t s = DCUDA_OK;
    if (p->left >= 0)
        s = dcuda_wait_notifications(st, TAG_FREE_FROM_LEFT, 1);
    if (s == DCUDA_OK && p->right >= 0)
        s = dcuda_wait_notifications(st, TAG_FREE_FROM_RIGHT, 1);
    return s;
}

/* Step 7: after every `watch` steps (not the last: the host reads that
 * one after the run), tells the host that my cells of this step are
 * ready, and waits until it has read them. The notification is a
 * release: the host sees every cell I wrote before it. */
DCUDA_RANK_FN dcuda_status_t let_host_watch(dcuda_state_t *st, const halo_data_t *d, int k)
{
    if (d->watch == 0 || (k + 1) % d->watch != 0 || k + 1 == d->iters)
        return DCUDA_OK;
    dcuda_status_t s = dcuda_notify_host(st, HALO_TAG_CELLS_READY);
    if (s == DCUDA_OK)
        s = dcuda_wait_notifications(st, HALO_TAG_HOST_READ, 1);
    return s;
}

/* The Jacobi steps. Step k reads copy k % 2 of my cells and writes copy
 * (k + 1) % 2. Parity scheme: step k uses halo slot k % 2, and a neighbour
 * can be at most one step ahead of me (it cannot pass its step k + 1
 * without my halo of step k + 1, which I send after computing step k), so
 * it writes slot k % 2 again only after I have read it. Ack scheme: one
 * halo slot, and a neighbour writes it again only after I said so.
 * A failed call ends the loop: a put I got wrong (which also ends the run
 * for every rank, unless DCUDA_ON_ERROR=continue), or a wait that the end
 * of the run, or the watchdog, cancelled. */
DCUDA_RANK_FN void iterate(dcuda_state_t *st, dcuda_win_t win, const piece_t *p,
                           const halo_data_t *d, int rank)
{
    for (int k = 0; k < d->iters; k++) {
        int slot = d->scheme == HALO_SCHEME_PARITY ? k % 2 : 0;
        const double *cur = p->slab + halo_cells_index(p->cells, k % 2);
        double *next = p->slab + halo_cells_index(p->cells, (k + 1) % 2);
        if (d->scheme == HALO_SCHEME_ACK && k > 0 && wait_free(st, p) != DCUDA_OK)
            break;
        dcuda_status_t s = d->mistake != HALO_MISTAKE_NONE && rank == 0
                               ? send_edges_mistaken(st, win, p, cur, slot, d->mistake)
                               : send_edges(st, win, p, cur, slot);
        if (s != DCUDA_OK || wait_halos(st, p) != DCUDA_OK)
            break;
        compute(p, slot, cur, next);
        if (let_host_watch(st, d, k) != DCUDA_OK)
            break;
        if (d->scheme == HALO_SCHEME_ACK && k + 1 < d->iters)
            tell_free(st, p); /* none after the last step: nobody would wait for it */
    }
}

/* The hottest cell of the whole line after the last step, in peak[0] of
 * every rank: my hottest cell, then the maximum over all ranks. Every rank
 * calls dcuda_allreduce, on a window over its peak area (the call's scratch
 * follows the value). */
DCUDA_RANK_FN dcuda_status_t find_hottest(dcuda_state_t *st, const piece_t *p, double *peak,
                                          int iters)
{
    const double *cells = p->slab + halo_cells_index(p->cells, iters % 2);
    if (dcuda_thread_index() == 0) {
        double hottest = cells[0];
        for (int i = 1; i < p->cells; i++)
            hottest = cells[i] > hottest ? cells[i] : hottest;
        peak[0] = hottest;
    }
    dcuda_win_t peaks;
    dcuda_status_t s =
        dcuda_win_create(st, DCUDA_COMM_WORLD, peak, HALO_PEAK_DOUBLES * sizeof(double), &peaks);
    if (s == DCUDA_OK)
        s = dcuda_allreduce(st, peaks, 0, 1, DCUDA_DOUBLE, DCUDA_MAX);
    dcuda_win_free(st, peaks);
    return s;
}

DCUDA_KERNEL(halo, ctx)
{
    DCUDA_SHARED dcuda_state_t st; /* per-rank state (GPU shared memory) */
    int rank, size, device_rank;
    halo_data_t *d;
    piece_t p;
    dcuda_win_t win;

    dcuda_rank_init(ctx, &st);
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &device_rank);
    dcuda_get_data(&st, (void **)&d);
    piece_init(&p, d, rank, size, device_rank);
    piece_fill(&p, rank);

    /* My whole slab is my part of the window: neighbours write its halos,
     * and the cells I send from must lie in a window of mine too. */
    size_t bytes = halo_slab_doubles(p.cells) * sizeof(double);
    dcuda_win_create(&st, DCUDA_COMM_WORLD, p.slab, bytes, &win);
    if (d->watch && dcuda_thread_index() == 0) /* step 7: the host reads my cells */
        d->handles[device_rank] = (int64_t)win;

    dcuda_start_cpu_timer(&st);
    iterate(&st, win, &p, d, rank);
    dcuda_stop_cpu_timer(&st);
    if (d->mistake == HALO_MISTAKE_NONE) /* step 6's runs end in their mistake */
        find_hottest(&st, &p, d->peaks + (size_t)device_rank * HALO_PEAK_DOUBLES, d->iters);

    /* Every halo put to me was waited for: no put is in flight when the
     * window goes. Errors of the calls above were reported on the host and
     * make dcuda_host_run fail. */
    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}
