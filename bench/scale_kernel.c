/*
 * Rank code of the scale benchmark: WORLD barriers, WORLD window creation
 * and free, a message rate (every rank notifies a rank of the next
 * process, in batches of SCALE_BATCH, and waits for as many from the
 * previous one after each batch), and a flood (every rank sends that rank its 4 KiB puts before it
 * waits for any: what a receiver holds meanwhile is what the network
 * path's credits bound), each between a timer pair. Rank API only; CPU
 * and GPU ranks.
 */
#include "dcuda/dcuda_rank.h"
#include "scale.h"

DCUDA_KERNEL(scale, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    scale_args_t *a;
    int me = 0, world = 0, mine = 0, drank = 0;
    dcuda_win_t w;
    if (dcuda_rank_init(ctx, &st) != DCUDA_OK)
        return;
    dcuda_get_data(&st, (void **)&a);
    dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &me);
    dcuda_comm_size(&st, DCUDA_COMM_WORLD, &world);
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &drank);
    dcuda_comm_size(&st, DCUDA_COMM_DEVICE, &mine);
    char *part = a->part + (size_t)drank * SCALE_PART;
    dcuda_comm_barrier(&st, DCUDA_COMM_WORLD); /* every process started */

    dcuda_start_cpu_timer(&st);
    for (int i = 0; i < a->barriers; i++)
        dcuda_comm_barrier(&st, DCUDA_COMM_WORLD);
    dcuda_stop_cpu_timer(&st);

    dcuda_start_cpu_timer(&st);
    for (int i = 0; i < a->windows; i++) {
        dcuda_win_create(&st, DCUDA_COMM_WORLD, part, SCALE_PART, &w);
        dcuda_win_free(&st, w);
    }
    dcuda_stop_cpu_timer(&st);

    /* Ranks of a process are contiguous and as many in each process here
     * (the host checks): the rank `mine` further is in the next process. */
    int next = (me + mine) % world;
    dcuda_comm_barrier(&st, DCUDA_COMM_WORLD);
    dcuda_start_cpu_timer(&st);
    for (int i = 0; i < a->messages; i += SCALE_BATCH) {
        int n = a->messages - i < SCALE_BATCH ? a->messages - i : SCALE_BATCH;
        for (int k = 0; k < n; k++)
            dcuda_notify(&st, next, DCUDA_COMM_WORLD, 1);
        dcuda_wait_notifications(&st, 1, n);
    }
    dcuda_stop_cpu_timer(&st);

    dcuda_win_create(&st, DCUDA_COMM_WORLD, part, SCALE_PART, &w);
    dcuda_start_cpu_timer(&st);
    for (int i = 0; i < a->flood; i++)
        dcuda_put_notify(&st, w, next, 0, SCALE_FLOOD_PUT, part + SCALE_FLOOD_PUT, 2);
    if (a->flood > 0)
        dcuda_wait_notifications(&st, 2, a->flood);
    dcuda_stop_cpu_timer(&st);
    dcuda_win_free(&st, w);
    dcuda_rank_finish(&st);
}
