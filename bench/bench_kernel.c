/*
 * Rank code of the benchmark (CPU and GPU ranks alike): ping-pong latency
 * of notified puts and notifications, and put bandwidth from one or all
 * ranks. Every rank brackets the measured phase with the device timer; the
 * host reads the span from the earliest start to the latest stop.
 */
#include "bench.h"
#include "dcuda/dcuda_rank.h"

DCUDA_RANK_FN void bench_pingpong(dcuda_state_t *st, const bench_args_t *a, dcuda_win_t dst, int me,
                           const char *src)
{
    int put = a->mode == BENCH_PINGPONG_PUT;
    int other = me == 0 ? a->peer : 0;
    for (int i = 0; i < a->iters; i++) {
        if (me != 0)
            dcuda_wait_notifications(st, 0, 1);
        if (put)
            dcuda_put_notify(st, dst, other, 0, 4, src, 0);
        else
            dcuda_notify(st, other, DCUDA_COMM_DEVICE, 0);
        if (me == 0)
            dcuda_wait_notifications(st, 0, 1);
    }
}

DCUDA_RANK_FN void bench_bandwidth(dcuda_state_t *st, const bench_args_t *a, dcuda_win_t dst, int me,
                            int ranks, const char *src)
{
    int all = a->mode == BENCH_BW_ALL;
    if (all || me == 0) {
        int target = all ? (me + 1) % ranks : 1;
        /* One sender walks through its whole buffer, so the data comes from
         * and goes to memory rather than staying in L2. */
        for (int i = 0; i < a->iters; i++) {
            size_t off = all ? 0 : ((size_t)i * a->size) % a->stride;
            dcuda_put_notify(st, dst, target, off, a->size, src + off, 1);
        }
    }
    if (all || me == 1)
        dcuda_wait_notifications(st, 1, a->iters);
}

DCUDA_KERNEL(bench, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    bench_args_t *user, args;
    const bench_args_t *a = &args; /* a private copy: no global loads in the loops */
    int me, ranks;
    dcuda_win_t src_win, dst_win;
    dcuda_rank_init(ctx, &st);
    dcuda_get_data(&st, (void **)&user);
    args = *user;
    dcuda_comm_rank(&st, DCUDA_COMM_DEVICE, &me);
    dcuda_comm_size(&st, DCUDA_COMM_DEVICE, &ranks);
    char *src = a->src + (size_t)me * a->stride;
    dcuda_win_create(&st, DCUDA_COMM_DEVICE, src, a->stride, &src_win);
    dcuda_win_create(&st, DCUDA_COMM_DEVICE, a->dst + (size_t)me * a->stride, a->stride,
                     &dst_win);
    int active = a->mode == BENCH_BW_ALL || me == 0 ||
                 me == (a->mode <= BENCH_PINGPONG_NOTIFY ? a->peer : 1);

    dcuda_start_cpu_timer(&st);
    if (a->mode == BENCH_HOST_PING)
        for (int i = 0; me == 0 && i < a->iters; i++)
            dcuda_rank_ping_host(&st);
    else if (active && a->mode <= BENCH_PINGPONG_NOTIFY)
        bench_pingpong(&st, a, dst_win, me, src);
    else if (active)
        bench_bandwidth(&st, a, dst_win, me, ranks, src);
    dcuda_stop_cpu_timer(&st);

    dcuda_win_free(&st, dst_win);
    dcuda_win_free(&st, src_win);
    dcuda_rank_finish(&st);
}
