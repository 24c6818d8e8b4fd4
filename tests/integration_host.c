/*
 * Host driver of the integration suite: dcuda_test_integration <case>. The
 * calls an application needs to fit dcuda into a program it already has.
 *   shared        dcuda_host_init_params with shared_bytes: every rank gets
 *                 that much scratch memory of its own (dcuda_rank_shared),
 *                 16-byte aligned, holding what its threads wrote (checked
 *                 against the host's own checksum); without it, none
 *   shared_limit  more than a GPU block can have is refused at init, naming
 *                 the limit; bad params are refused
 *   mpi_comm      (under mpirun -np 4) the program splits MPI_COMM_WORLD in
 *                 two and starts dcuda on its half: two independent groups
 *                 of 2 processes, each a WORLD of its own (its size, a ring
 *                 of notifications around it); another communicator later
 *                 is refused, none reuses the group
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(TEST_HAVE_MPI)
#include <mpi.h>
#endif

#include "dcuda/dcuda_host.h"
#include "integration.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(integration);

/* One init with `params` and one run; checks every rank this process owns:
 * its scratch memory, and that a ring over WORLD went round. */
static void run_with(int argc, char **argv, const dcuda_init_params_t *params)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (!TEST_STATUS(dcuda_host_init_params(argc, argv, DCUDA_KERNEL_REF(integration), params, &h),
                     DCUDA_OK))
        return;
    dcuda_host_get_rank_info(h, &info);
    if (!params->mpi_comm) /* on a communicator, the launcher's count is not the group's */
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
    size_t bytes = params->shared_bytes;
    for (int k = test_first_rank(&info); k < test_end_rank(&info); k++) {
        const int64_t *r = res + (size_t)k * INT_SLOTS;
        TEST_STATUS(r[INT_RES_STATUS], DCUDA_OK);
        TEST_CHECK(r[INT_RES_BYTES] == (int64_t)bytes, "rank %d got %lld bytes, asked %zu", k,
                   (long long)r[INT_RES_BYTES], bytes);
        TEST_CHECK(r[INT_RES_SUM] == integration_sum(k, bytes),
                   "rank %d read back other bytes than its threads wrote (%zu bytes)", k, bytes);
        TEST_CHECK(r[INT_RES_ALIGNED] == 1, "rank %d's scratch memory is not 16-byte aligned", k);
        TEST_STATUS(r[INT_RES_RING], DCUDA_OK);
        TEST_CHECK(r[INT_RES_WORLD] == info.rank_count, "rank %d saw WORLD of %lld ranks, not %d",
                   k, (long long)r[INT_RES_WORLD], info.rank_count);
    }
    TEST_STATUS(dcuda_host_free(h, d.res), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    free(res);
}

static void run_with_shared(int argc, char **argv, size_t shared_bytes)
{
    dcuda_init_params_t params = DCUDA_INIT_PARAMS_DEFAULT;
    params.threads_per_rank = 64;
    params.shared_bytes = shared_bytes;
    run_with(argc, argv, &params);
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

#if defined(TEST_HAVE_MPI)
/* This process's dcuda group: the members of its half of MPI_COMM_WORLD. */
static void check_half(int argc, char **argv, MPI_Comm half, int world_rank)
{
    dcuda_init_params_t params = DCUDA_INIT_PARAMS_DEFAULT;
    params.mpi_comm = &half;
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (!TEST_STATUS(dcuda_host_init_params(argc, argv, DCUDA_KERNEL_REF(integration), &params, &h),
                     DCUDA_OK))
        return;
    dcuda_host_get_rank_info(h, &info);
    TEST_CHECK(info.process_count == 2 && info.process_index == world_rank / 2,
               "MPI rank %d: process %d of %d, expected %d of 2", world_rank, info.process_index,
               info.process_count, world_rank / 2);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    run_with(argc, argv, &params); /* a ring around the half's ranks */
    /* The group is the half's: another communicator is refused, none
     * reuses it. */
    MPI_Comm world = MPI_COMM_WORLD;
    params.mpi_comm = &world;
    TEST_STATUS(dcuda_host_init_params(argc, argv, DCUDA_KERNEL_REF(integration), &params, &h),
                DCUDA_ERR_INVALID_ARG);
    params.mpi_comm = NULL;
    if (TEST_STATUS(dcuda_host_init_params(argc, argv, DCUDA_KERNEL_REF(integration), &params, &h),
                    DCUDA_OK)) {
        dcuda_host_get_rank_info(h, &info);
        TEST_CHECK(info.process_count == 2, "without a communicator: %d processes, not the "
                                            "group's 2", info.process_count);
        TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    }
}
#endif

static int case_mpi_comm(int argc, char **argv)
{
#if defined(TEST_HAVE_MPI)
    int world_rank = 0, world_size = 0;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (world_size != 4) {
        printf("SKIP %s: needs mpirun -np 4, has %d process(es)\n", argv[1], world_size);
        MPI_Finalize();
        return TEST_SKIP;
    }
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
    check_half(argc, argv, half, world_rank);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
#else
    printf("SKIP %s: built without MPI\n", argv[1]);
    return TEST_SKIP;
#endif
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "shared", case_shared },
        { "shared_limit", case_shared_limit },
        { "mpi_comm", case_mpi_comm },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
