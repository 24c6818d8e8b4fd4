/*
 * Host side of the route test: runs the kernel once and checks each put's
 * status, and that the refused puts left rank 1's part untouched. With
 * several processes, rank 0's process checks the statuses, rank 1's the
 * part, each its ranks' setup.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "routes.h"
#include "test_common.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(routes);

static int run_invalidation(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(routes), 64, &h), DCUDA_OK))
        return 1;
    TEST_STATUS(dcuda_host_get_rank_info(h, &info), DCUDA_OK);
    test_check_rank_setting(&info);
    int ranks = info.rank_count;
    if (!test_have_ranks(&info, 2, "routes")) {
        TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
        return TEST_SKIP;
    }
    size_t stride = ROUTE_PART + ROUTE_SRC, bytes = stride * (size_t)ranks;
    unsigned char *init = malloc(bytes), *out = malloc(bytes);
    int64_t *res = calloc((size_t)ranks * ROUTE_RESULTS, sizeof *res);
    route_data_t d = { 0 };
    for (size_t i = 0; i < bytes; i++)
        init[i] = test_byte(7, (uint32_t)(i / stride), i % stride);
    TEST_STATUS(dcuda_host_alloc(h, bytes, (void **)&d.buf), DCUDA_OK);
    TEST_STATUS(dcuda_host_alloc(h, (size_t)ranks * ROUTE_RESULTS * sizeof *res, (void **)&d.res),
                DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_in(h, d.buf, init, bytes), DCUDA_OK);
    dcuda_status_t st = dcuda_host_run(h, &d, sizeof d, NULL);
    /* The first refusal, in rank 0's process (others: OK, or passed on). */
    TEST_RUN_STATUS(&info, st, DCUDA_ERR_SOURCE, 0);
    TEST_STATUS(dcuda_host_copy_out(h, res, d.res, (size_t)ranks * ROUTE_RESULTS * sizeof *res),
                DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_out(h, out, d.buf, bytes), DCUDA_OK);
    if (test_owns(&info, 0)) {
        TEST_STATUS(res[ROUTE_FIRST], DCUDA_OK);
        TEST_STATUS(res[ROUTE_AFTER_SRC], DCUDA_ERR_SOURCE);
        TEST_STATUS(res[ROUTE_STALE], DCUDA_ERR_WIN);
        TEST_STATUS(res[ROUTE_REPLACED], DCUDA_ERR_BOUNDS);
        TEST_STATUS(res[ROUTE_NONE], DCUDA_ERR_WIN);
    }
    for (int r = test_first_rank(&info); r < test_end_rank(&info); r++)
        TEST_CHECK(res[(size_t)r * ROUTE_RESULTS + ROUTE_SETUP] == 0,
                   "rank %d: setup call "
                   "failed with %lld",
                   r, (long long)res[(size_t)r * ROUTE_RESULTS + ROUTE_SETUP]);
    /* Rank 1's part: bytes 0..7 hold rank 0's source, everything else is
     * as it was (the refused puts wrote nothing). */
    for (size_t i = 0; test_owns(&info, 1) && i < stride; i++) {
        unsigned char want = i < 8 ? init[ROUTE_PART + i] : init[stride + i];
        TEST_CHECK(out[stride + i] == want, "rank 1 byte %zu is %u, expected %u", i,
                   out[stride + i], want);
    }
    TEST_STATUS(dcuda_host_free(h, d.buf), DCUDA_OK);
    TEST_STATUS(dcuda_host_free(h, d.res), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    free(init);
    free(out);
    free(res);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = { { "invalidation", run_invalidation } };
    return test_main(argc, argv, cases, 1);
}
