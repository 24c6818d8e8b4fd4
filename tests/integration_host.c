/*
 * Host driver of the integration suite: dcuda_test_integration <case>. The
 * calls an application needs to fit dcuda into a program it already has.
 *   shared        dcuda_host_init_params with shared_bytes: every rank gets
 *                 that much scratch memory of its own (dcuda_rank_shared),
 *                 16-byte aligned, holding what its threads wrote (checked
 *                 against the host's own checksum); without it, none
 *   shared_limit  more than a GPU block can have is refused at init, naming
 *                 the limit; bad params are refused
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "integration.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(integration);

/* One init with shared_bytes and one run; checks every rank this process
 * owns. */
static void run_with_shared(int argc, char **argv, size_t shared_bytes)
{
    dcuda_init_params_t params = DCUDA_INIT_PARAMS_DEFAULT;
    params.threads_per_rank = 64;
    params.shared_bytes = shared_bytes;
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (!TEST_STATUS(dcuda_host_init_params(argc, argv, DCUDA_KERNEL_REF(integration), &params, &h),
                     DCUDA_OK))
        return;
    dcuda_host_get_rank_info(h, &info);
    test_check_rank_setting(&info);
    size_t n = (size_t)info.rank_count * INT_SLOTS;
    int64_t *res = calloc(n, sizeof *res);
    integration_data_t d = { NULL };
    if (!res || !TEST_STATUS(dcuda_host_alloc(h, n * sizeof *res, (void **)&d.res), DCUDA_OK))
        return;
    for (size_t i = 0; i < n; i++)
        res[i] = INT64_MIN;
    TEST_STATUS(dcuda_host_copy_in(h, d.res, res, n * sizeof *res), DCUDA_OK);
    TEST_STATUS(dcuda_host_run(h, &d, sizeof d, NULL), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_out(h, res, d.res, n * sizeof *res), DCUDA_OK);
    for (int k = test_first_rank(&info); k < test_end_rank(&info); k++) {
        const int64_t *r = res + (size_t)k * INT_SLOTS;
        TEST_STATUS(r[INT_RES_STATUS], DCUDA_OK);
        TEST_CHECK(r[INT_RES_BYTES] == (int64_t)shared_bytes, "rank %d got %lld bytes, asked %zu",
                   k, (long long)r[INT_RES_BYTES], shared_bytes);
        TEST_CHECK(r[INT_RES_SUM] == integration_sum(k, shared_bytes),
                   "rank %d read back other bytes than its threads wrote (%zu bytes)", k,
                   shared_bytes);
        TEST_CHECK(r[INT_RES_ALIGNED] == 1, "rank %d's scratch memory is not 16-byte aligned", k);
    }
    TEST_STATUS(dcuda_host_free(h, d.res), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    free(res);
}

static int case_shared(int argc, char **argv)
{
    run_with_shared(argc, argv, 0);
    run_with_shared(argc, argv, 4096 + 24); /* not a multiple of anything */
    run_with_shared(argc, argv, 64 * 1024); /* past the 48 KiB a GPU block gets unasked */
    return 0;
}

static int case_shared_limit(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_init_params_t params = DCUDA_INIT_PARAMS_DEFAULT;
    /* params that are not from DCUDA_INIT_PARAMS_DEFAULT */
    params.size = 0;
    TEST_STATUS(dcuda_host_init_params(argc, argv, DCUDA_KERNEL_REF(integration), &params, &h),
                DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_init_params(argc, argv, DCUDA_KERNEL_REF(integration), NULL, &h),
                DCUDA_ERR_INVALID_ARG);
    const char *backend = getenv("DCUDA_BACKEND");
    if (!backend || strcmp(backend, "cuda") != 0) {
        printf("%s: the size limit is a GPU block's (CPU ranks take what memory allows): only "
               "the bad params were checked\n",
               argv[1]);
        return 0;
    }
    params = (dcuda_init_params_t)DCUDA_INIT_PARAMS_DEFAULT;
    params.shared_bytes = 1u << 20; /* more than any GPU block has */
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    dcuda_status_t st =
        dcuda_host_init_params(argc, argv, DCUDA_KERNEL_REF(integration), &params, &h);
    char *out = test_capture_end(&cap);
    printf("%s", out ? out : "");
    TEST_STATUS(st, DCUDA_ERR_SETTING);
    TEST_CHECK(out && test_find_line(out, "dcuda: error:", "at most"),
               "the refusal does not name the limit");
    free(out);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "shared", case_shared },
        { "shared_limit", case_shared_limit },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
