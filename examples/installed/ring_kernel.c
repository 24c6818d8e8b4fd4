/* The README's example: every rank passes its number to its right neighbour. */
#include "dcuda/dcuda_rank.h"
#include "ring.h"

DCUDA_KERNEL(ring, ctx)
{
    DCUDA_SHARED dcuda_state_t st; /* per-rank state (GPU shared memory) */
    int rank, size;
    ring_t *r;
    dcuda_win_t win;

    dcuda_rank_init(ctx, &st);
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &rank);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &size);
    dcuda_get_data(&st, (void **)&r);
    /* All ranks expose the whole array: parts on one device may overlap. */
    dcuda_win_create(&st, DCUDA_COMM_WORLD, r->slots, size * sizeof(int), &win);

    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    if (dcuda_thread_index() == 0)
        r->slots[rank] = 1000 + rank;
    /* Into slot `rank` of my right neighbour's part. On one device that is
     * my own slot, so nothing is copied: the put releases it and notifies. */
    dcuda_put_notify(&st, win, right, rank * sizeof(int), sizeof(int), &r->slots[rank], 7);
    dcuda_wait_notifications(&st, 7, 1); /* tag 7, one notification */
    if (dcuda_thread_index() == 0 && r->slots[left] != 1000 + left)
        r->wrong = 1;

    dcuda_win_free(&st, win);
    dcuda_rank_finish(&st);
}
