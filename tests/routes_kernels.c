/*
 * Rank code of the route test. Rank 0 puts into rank 1's part of window A
 * from its part of window B, so the put's route is remembered; then B is
 * freed, then A is freed and a smaller window takes its slot. Each later put
 * must be refused by the full checks, as if no route had been remembered.
 * Last, a put along the route of a window in slot 7 (which shares its
 * route entry with DCUDA_WIN_NONE), that window's free, and a put with
 * DCUDA_WIN_NONE: refused, and nothing written.
 * Rank API only; written once for CPU and GPU ranks.
 */
#include "dcuda/dcuda_rank.h"
#include "routes.h"
#include "test_common.h"

DCUDA_KERNEL(routes, ctx)
{
    DCUDA_SHARED dcuda_state_t st;
    route_data_t *d;
    int me;
    dcuda_win_t a, b, small;
    int64_t setup = 0, r[ROUTE_RESULTS];
    for (int i = 0; i < ROUTE_RESULTS; i++)
        r[i] = 0;
    test_note(&setup, dcuda_rank_init(ctx, &st));
    test_note(&setup, dcuda_get_data(&st, (void **)&d));
    test_note(&setup, dcuda_comm_rank(&st, DCUDA_COMM_WORLD, &me));
    unsigned char *part = d->buf + (size_t)me * (ROUTE_PART + ROUTE_SRC);
    test_note(&setup, dcuda_win_create(&st, DCUDA_COMM_WORLD, part, ROUTE_PART, &a));
    test_note(&setup, dcuda_win_create(&st, DCUDA_COMM_WORLD, part + ROUTE_PART, ROUTE_SRC, &b));

    const unsigned char *src = part + ROUTE_PART;
    if (me == 0)
        r[ROUTE_FIRST] = dcuda_put(&st, a, 1, 0, 8, src);
    test_note(&setup, dcuda_win_free(&st, b));
    if (me == 0)
        r[ROUTE_AFTER_SRC] = dcuda_put(&st, a, 1, 8, 8, src);
    test_note(&setup, dcuda_win_free(&st, a));
    test_note(&setup, dcuda_win_create(&st, DCUDA_COMM_WORLD, part, ROUTE_SMALL, &small));
    if (me == 0) {
        r[ROUTE_STALE] = dcuda_put(&st, a, 1, 0, 8, part);
        r[ROUTE_REPLACED] = dcuda_put(&st, small, 1, ROUTE_SMALL, 8, part);
    }
    test_note(&setup, dcuda_win_free(&st, small));

    dcuda_win_t many[ROUTE_SLOTS];
    for (int i = 0; i < ROUTE_SLOTS; i++)
        test_note(&setup,
                  dcuda_win_create(&st, DCUDA_COMM_WORLD, part, ROUTE_PART + ROUTE_SRC, &many[i]));
    if (me == 0) /* the bytes the first put wrote, again */
        test_note(&setup, dcuda_put(&st, many[ROUTE_SLOTS - 1], 1, 0, 8, src));
    for (int i = ROUTE_SLOTS - 1; i >= 0; i--)
        test_note(&setup, dcuda_win_free(&st, many[i]));
    if (me == 0)
        r[ROUTE_NONE] = dcuda_put(&st, DCUDA_WIN_NONE, 1, 8, 8, src);
    r[ROUTE_SETUP] = setup;
    if (dcuda_thread_index() == 0)
        for (int i = 0; i < ROUTE_RESULTS; i++)
            d->res[(size_t)me * ROUTE_RESULTS + (size_t)i] = r[i];
    dcuda_rank_finish(&st);
}
