/*
 * Host driver of the integration suite: dcuda_test_integration <case>. The
 * calls an application needs to fit dcuda into a program it already has.
 *   shared        dcuda_host_init_params with shared_bytes: every rank gets
 *                 that much scratch memory of its own (dcuda_rank_shared),
 *                 16-byte aligned, holding what its threads wrote (checked
 *                 against the host's own checksum); without it, none
 *   shared_bounds GPU ranks: scratch sizes at both sides of every limit of a
 *                 block's shared memory, and too many threads a rank
 *   shared_limit  more than a GPU block can have is refused at init, naming
 *                 the limit; bad params are refused
 *   mpi_comm      (under mpirun -np 4) the program splits MPI_COMM_WORLD in
 *                 two and starts dcuda on its half: two independent groups
 *                 of 2 processes, each a WORLD of its own (its size, a ring
 *                 of notifications around it); another communicator later
 *                 is refused, none reuses the group
 *   async         dcuda_host_run_start returns while the ranks run (WORLD
 *                 rank 0 waits for the host to open a gate; run_test says
 *                 "not done"; the calls that must wait are refused with
 *                 DCUDA_ERR_IN_PROGRESS); run_wait hands back the results
 *                 and the user data. On a GPU, on an application's stream:
 *                 the ranks see what the stream did before (after a 50 ms
 *                 pause on it), and a copy enqueued after the start sees
 *                 what the ranks wrote. Then a run of each kind again.
 *   register      windows on memory the application allocated itself (on a
 *                 GPU: inside a cudaMalloc allocation) and registered: a
 *                 ring of put_notify across every process, checked in the
 *                 memory by the host; misuse refused, naming the reason. CPU
 *                 ranks with other processes on the node cannot share it:
 *                 refused, and the ring runs on dcuda_host_alloc memory
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(TEST_HAVE_MPI)
#include <mpi.h>
#endif
#if defined(TEST_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif
#include <time.h>

#include "dcuda/dcuda_host.h"
#include "integration.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(integration);

/* What a run must leave besides its ring: `pre` read by every rank, and
 * the value of its left neighbour in its part of the registered memory. */
typedef struct expect {
    int64_t pre;
    int puts; /* the ring of puts ran */
} expect_t;

/* Checks every rank this process owns in the results of one run. */
static void check_ranks(const dcuda_rank_info_t *info, const int64_t *res, size_t bytes,
                        const expect_t *e)
{
    int n = info->rank_count;
    for (int k = test_first_rank(info); k < test_end_rank(info); k++) {
        const int64_t *r = res + (size_t)k * INT_SLOTS;
        TEST_STATUS(r[INT_RES_STATUS], DCUDA_OK);
        TEST_CHECK(r[INT_RES_BYTES] == (int64_t)bytes, "rank %d got %lld bytes, asked %zu", k,
                   (long long)r[INT_RES_BYTES], bytes);
        TEST_CHECK(r[INT_RES_SUM] == integration_sum(k, bytes),
                   "rank %d read back other bytes than its threads wrote (%zu bytes)", k, bytes);
        TEST_CHECK(r[INT_RES_ALIGNED] == 1, "rank %d's scratch memory is not 16-byte aligned", k);
        TEST_STATUS(r[INT_RES_RING], DCUDA_OK);
        TEST_CHECK(r[INT_RES_WORLD] == n, "rank %d saw WORLD of %lld ranks, not %d", k,
                   (long long)r[INT_RES_WORLD], n);
        if (!e)
            continue;
        TEST_CHECK(r[INT_RES_PRE] == e->pre, "rank %d read %#llx in pre, expected %#llx", k,
                   (unsigned long long)r[INT_RES_PRE], (unsigned long long)e->pre);
        int64_t put = e->puts ? integration_put_value((k + n - 1) % n) : 0;
        TEST_CHECK(r[INT_RES_PUT] == put, "rank %d received %lld, expected %lld", k,
                   (long long)r[INT_RES_PUT], (long long)put);
    }
}

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
    check_ranks(&info, res, params->shared_bytes, NULL);
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

/* GPU ranks: scratch sizes at both sides of every limit of a block's
 * shared memory, for a kernel with static shared memory of its own (its
 * rank state): what every block gets unasked (48 KiB, static and dynamic
 * together: just below, just above, and 48 KiB of scratch alone, which
 * was refused), the most a block can be allowed (accepted, and one byte
 * more refused naming the limit); and more threads than a block has,
 * refused naming them. Each size accepted runs and uses all of it. */
static int case_shared_bounds(int argc, char **argv)
{
    const char *backend = getenv("DCUDA_BACKEND");
    if (!backend || strcmp(backend, "cuda") != 0) {
        printf("SKIP %s: the limits are a GPU block's\n", argv[1]);
        return TEST_SKIP;
    }
#if defined(TEST_HAVE_CUDA)
    dcuda_host_h h;
    dcuda_kernel_t k = DCUDA_KERNEL_REF(integration);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, k, 64, &h), DCUDA_OK))
        return 0;
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK); /* the group and this process's GPU chosen */
    struct cudaFuncAttributes attr;
    struct cudaDeviceProp prop;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess ||
        cudaFuncGetAttributes(&attr, k.gpu) != cudaSuccess) {
        TEST_CHECK(0, "cannot ask CUDA for the kernel's and the GPU's limits");
        return 0;
    }
    size_t fixed = attr.sharedSizeBytes, unasked = prop.sharedMemPerBlock;
    size_t most = prop.sharedMemPerBlockOptin - fixed;
    printf("%s: %zu bytes of static shared memory; %zu a block unasked, %zu at most\n", argv[1],
           fixed, unasked, (size_t)prop.sharedMemPerBlockOptin);
    const size_t fits[] = { unasked - fixed, unasked - fixed + 1, 48u * 1024u, most };
    for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++)
        run_with_shared(argc, argv, fits[i]);
    dcuda_init_params_t params = DCUDA_INIT_PARAMS_DEFAULT;
    params.threads_per_rank = 64;
    params.shared_bytes = most + 1;
    char limit[64];
    snprintf(limit, sizeof limit, "at most %zu bytes", most);
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    TEST_STATUS(dcuda_host_init_params(argc, argv, k, &params, &h), DCUDA_ERR_SETTING);
    params.shared_bytes = 0;
    params.threads_per_rank = attr.maxThreadsPerBlock + 1;
    TEST_STATUS(dcuda_host_init_params(argc, argv, k, &params, &h), DCUDA_ERR_BACKEND);
    char *out = test_capture_end(&cap);
    printf("%s", out ? out : "");
    TEST_CHECK(out && test_find_line(out, "dcuda: error:", limit), "no line names %s", limit);
    TEST_CHECK(out && test_find_line(out, "dcuda: error:", "threads"),
               "the refusal of %d threads does not say why", attr.maxThreadsPerBlock + 1);
    free(out);
#else
    (void)argc;
#endif
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
        TEST_CHECK(info.process_count == 2,
                   "without a communicator: %d processes, not the "
                   "group's 2",
                   info.process_count);
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

/* ---- runs that do not block the host ------------------------------------- */

static int on_gpu(const dcuda_rank_info_t *info) { return strcmp(info->backend, "cuda") == 0; }

static void sleep_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

/* A results array of the run: every slot INT64_MIN, in rank-visible memory. */
static int64_t *results_alloc(dcuda_host_h h, const dcuda_rank_info_t *info, int64_t **dev)
{
    size_t n = (size_t)info->rank_count * INT_SLOTS;
    int64_t *res = calloc(n, sizeof *res);
    if (!res || !TEST_STATUS(dcuda_host_alloc(h, n * sizeof *res, (void **)dev), DCUDA_OK)) {
        free(res);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        res[i] = INT64_MIN;
    TEST_STATUS(dcuda_host_copy_in(h, *dev, res, n * sizeof *res), DCUDA_OK);
    return res;
}

static void results_check(dcuda_host_h h, const dcuda_rank_info_t *info, int64_t *res,
                          const int64_t *dev, const expect_t *e)
{
    size_t n = (size_t)info->rank_count * INT_SLOTS;
    TEST_STATUS(dcuda_host_copy_out(h, res, dev, n * sizeof *res), DCUDA_OK);
    check_ranks(info, res, 0, e);
}

/* The user data came back: WORLD rank 0 (in the first process) left its marker. */
static void check_marker(const dcuda_rank_info_t *info, const integration_data_t *d)
{
    if (info->rank_start == 0)
        TEST_CHECK(d->marker == integration_marker(info->rank_count),
                   "the user data did not come back: marker %lld", (long long)d->marker);
}

#if defined(TEST_HAVE_CUDA)
static void CUDART_CB pause_50ms(void *arg)
{
    (void)arg;
    sleep_ms(50);
}
#endif

/* The application's stream (GPU ranks; NULL on CPU ranks) and what it does
 * before the run: pauses, then sets `pre`. CPU ranks: the host sets it. */
static void *stream_before(dcuda_host_h h, int gpu, int64_t *pre, int64_t value)
{
#if defined(TEST_HAVE_CUDA)
    cudaStream_t s = NULL;
    if (gpu) {
        TEST_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess,
                   "cudaStreamCreateWithFlags");
        TEST_CHECK(cudaLaunchHostFunc(s, pause_50ms, NULL) == cudaSuccess, "cudaLaunchHostFunc");
        TEST_CHECK(cudaMemsetAsync(pre, (int)(value & 0xff), sizeof *pre, s) == cudaSuccess,
                   "cudaMemsetAsync");
        return s;
    }
#endif
    TEST_CHECK(!gpu, "a GPU run, but the test was built without CUDA");
    TEST_STATUS(dcuda_host_copy_in(h, pre, &value, sizeof value), DCUDA_OK);
    return NULL;
}

/* After the start (GPU): a copy of the results enqueued on the stream. */
static int64_t *stream_after(void *stream, const int64_t *dev, size_t bytes)
{
#if defined(TEST_HAVE_CUDA)
    int64_t *seen = NULL;
    if (stream && cudaMallocHost((void **)&seen, bytes) == cudaSuccess) {
        memset(seen, 0, bytes);
        TEST_CHECK(cudaMemcpyAsync(seen, dev, bytes, cudaMemcpyDeviceToHost,
                                   (cudaStream_t)stream) == cudaSuccess,
                   "cudaMemcpyAsync");
        return seen;
    }
#endif
    (void)stream;
    (void)dev;
    (void)bytes;
    return NULL;
}

/* The stream's copy ran after the ranks: it holds their results. */
static void stream_check(void *stream, int64_t *seen, const dcuda_rank_info_t *info,
                         const expect_t *e)
{
#if defined(TEST_HAVE_CUDA)
    if (stream) {
        TEST_CHECK(cudaStreamSynchronize((cudaStream_t)stream) == cudaSuccess,
                   "cudaStreamSynchronize");
        if (seen)
            check_ranks(info, seen, 0, e);
        cudaFreeHost(seen);
        cudaStreamDestroy((cudaStream_t)stream);
    }
#endif
    (void)stream;
    (void)seen;
    (void)info;
    (void)e;
}

/* While the run is in flight: not done (rank 0 waits at the gate), and
 * every call that must wait for it is refused. */
static void check_in_flight(dcuda_host_h h, integration_data_t *d)
{
    int done = -1;
    const double *t = NULL;
    int count = 0;
    void *p = NULL;
    dcuda_rank_info_t info;
    TEST_STATUS(dcuda_host_run_test(h, &done), DCUDA_OK);
    TEST_CHECK(done == 0, "run_test says done while rank 0 waits for the host (%d)", done);
    TEST_STATUS(dcuda_host_run_test(h, NULL), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_run(h, d, sizeof *d, NULL), DCUDA_ERR_IN_PROGRESS);
    TEST_STATUS(dcuda_host_run_start(h, d, sizeof *d, NULL), DCUDA_ERR_IN_PROGRESS);
    TEST_STATUS(dcuda_host_alloc(h, 64, &p), DCUDA_ERR_IN_PROGRESS);
    TEST_STATUS(dcuda_host_free(h, d->res), DCUDA_ERR_IN_PROGRESS);
    TEST_STATUS(dcuda_host_get_timings(h, &t, &count), DCUDA_ERR_IN_PROGRESS);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_ERR_IN_PROGRESS);
    TEST_STATUS(dcuda_host_get_rank_info(h, &info), DCUDA_OK);
}

/* Opens the gate while the ranks run, and waits (at most a minute) until
 * run_test says done. */
static void open_gate(dcuda_host_h h, int gpu, int64_t *gate)
{
    int64_t one = 1;
    if (gpu)
        TEST_STATUS(dcuda_host_copy_in(h, gate, &one, sizeof one), DCUDA_OK);
    else /* host memory the ranks read with an atomic load */
        __atomic_store_n(gate, one, __ATOMIC_RELEASE);
    int done = 0;
    for (int i = 0; i < 60000 && !done; i++) {
        TEST_STATUS(dcuda_host_run_test(h, &done), DCUDA_OK);
        if (!done)
            sleep_ms(1);
    }
    TEST_CHECK(done, "the run did not end within a minute of opening the gate");
}

static int case_async(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    int done = -1;
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(integration), 64, &h), DCUDA_OK))
        return 0;
    dcuda_host_get_rank_info(h, &info);
    test_check_rank_setting(&info);
    TEST_STATUS(dcuda_host_run_test(h, &done), DCUDA_ERR_INVALID_ARG); /* nothing started */
    TEST_STATUS(dcuda_host_run_wait(h, NULL), DCUDA_ERR_INVALID_ARG);
    int gpu = on_gpu(&info);
    integration_data_t d;
    memset(&d, 0, sizeof d);
    int64_t *res = results_alloc(h, &info, &d.res), zero = 0;
    size_t res_bytes = (size_t)info.rank_count * INT_SLOTS * sizeof *res;
    if (!res || !TEST_STATUS(dcuda_host_alloc(h, sizeof zero, (void **)&d.gate), DCUDA_OK) ||
        !TEST_STATUS(dcuda_host_alloc(h, sizeof zero, (void **)&d.pre), DCUDA_OK))
        return 0;
    const int64_t pre = 0x1111111111111111;
    expect_t e = { pre, 0 };
    void *stream = stream_before(h, gpu, d.pre, pre);
    TEST_STATUS(dcuda_host_run_start(h, &d, sizeof d, stream), DCUDA_OK);
    int64_t *seen = stream_after(stream, d.res, res_bytes);
    check_in_flight(h, &d);
    open_gate(h, gpu, d.gate);
    double ms = -1;
    TEST_STATUS(dcuda_host_run_wait(h, &ms), DCUDA_OK);
    TEST_CHECK(ms >= 0, "elapsed %f ms", ms);
    TEST_STATUS(dcuda_host_run_wait(h, NULL), DCUDA_ERR_INVALID_ARG); /* waited for already */
    check_marker(&info, &d);
    results_check(h, &info, res, d.res, &e);
    stream_check(stream, seen, &info, &e);
    /* Again without a gate or stream, then a run that blocks: nothing of
     * the first is left over. */
    integration_data_t again = d;
    again.gate = NULL;
    again.marker = 0;
    TEST_STATUS(dcuda_host_run_start(h, &again, sizeof again, NULL), DCUDA_OK);
    TEST_STATUS(dcuda_host_run_wait(h, NULL), DCUDA_OK);
    check_marker(&info, &again);
    results_check(h, &info, res, d.res, &e);
    again.marker = 0;
    TEST_STATUS(dcuda_host_run(h, &again, sizeof again, NULL), DCUDA_OK);
    check_marker(&info, &again);
    results_check(h, &info, res, d.res, &e);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    free(res);
    return 0;
}

/* ---- windows on the application's memory --------------------------------- */

/* Memory the application allocates itself: `bytes` (and more around them)
 * of device memory on a GPU, of host memory on CPU ranks; *reg is 512
 * bytes in. */
static void *app_alloc(int gpu, size_t bytes, int64_t **reg)
{
    void *block = NULL;
#if defined(TEST_HAVE_CUDA)
    if (gpu) {
        if (cudaMalloc(&block, bytes + 1024) != cudaSuccess ||
            cudaMemset(block, 0, bytes + 1024) != cudaSuccess)
            return NULL;
    }
#endif
    if (!gpu)
        block = calloc(1, bytes + 1024);
    *reg = block ? (int64_t *)((char *)block + 512) : NULL;
    return block;
}

static void app_free(int gpu, void *block)
{
#if defined(TEST_HAVE_CUDA)
    if (gpu) {
        cudaFree(block);
        return;
    }
#endif
    free(block);
}

/* Refusals, each naming its reason. */
static void check_register_misuse(dcuda_host_h h, int gpu, void *block, int64_t *reg, size_t bytes)
{
    char host_word[8];
    TEST_STATUS(dcuda_host_register(h, NULL, 8), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_register(h, reg, 0), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_deregister(h, reg), DCUDA_ERR_INVALID_ARG); /* not registered */
    if (gpu) {
        TEST_STATUS(dcuda_host_register(h, host_word, sizeof host_word), DCUDA_ERR_INVALID_ARG);
        TEST_STATUS(dcuda_host_register(h, reg, bytes + 1024), DCUDA_ERR_INVALID_ARG);
    }
    (void)block;
}

/* Where the second of the two registrations of the ring's memory starts
 * (its first ranks' parts in one, the others in the other). */
static size_t second_part(const dcuda_rank_info_t *info)
{
    return (size_t)(info->rank_responsible / 2) * INT_REG_WORDS;
}

/* The application's memory is registered, as two ranges of one allocation
 * (the ring's first parts, then the others; with one process as with
 * several), or (CPU ranks sharing the node with other processes) refused:
 * then the ring runs on dcuda's. */
static int64_t *register_or_alloc(dcuda_host_h h, const dcuda_rank_info_t *info, int64_t *reg,
                                  size_t bytes, void *block, int *registered)
{
    int gpu = on_gpu(info), shared_node = !gpu && info->process_count > info->node_count;
    size_t split = second_part(info);
    *registered = 0;
    if (shared_node) {
        TEST_STATUS(dcuda_host_register(h, reg, bytes), DCUDA_ERR_UNSUPPORTED);
        void *mem = NULL;
        TEST_STATUS(dcuda_host_alloc(h, bytes, &mem), DCUDA_OK);
        return mem;
    }
    if (split && !TEST_STATUS(dcuda_host_register(h, reg, split * sizeof *reg), DCUDA_OK))
        return NULL;
    if (!TEST_STATUS(dcuda_host_register(h, reg + split, bytes - split * sizeof *reg), DCUDA_OK))
        return NULL;
    *registered = 1;
    TEST_STATUS(dcuda_host_register(h, reg + split + 1, 8), DCUDA_ERR_INVALID_ARG); /* overlaps */
    TEST_STATUS(dcuda_host_free(h, reg + split), DCUDA_ERR_INVALID_ARG); /* the application's */
    (void)block;
    return reg;
}

/* What the ring left in the memory itself, read by the host. */
static void check_parts(dcuda_host_h h, const dcuda_rank_info_t *info, const int64_t *mem,
                        size_t bytes)
{
    int64_t *words = calloc(1, bytes);
    int n = info->rank_count;
    if (!words || !TEST_STATUS(dcuda_host_copy_out(h, words, mem, bytes), DCUDA_OK)) {
        free(words);
        return;
    }
    for (int i = 0; i < info->rank_responsible; i++) {
        int k = info->rank_start + i;
        const int64_t *part = words + (size_t)i * INT_REG_WORDS;
        TEST_CHECK(part[0] == integration_put_value((k + n - 1) % n) &&
                       part[1] == integration_put_value(k),
                   "rank %d's part holds %lld, %lld", k, (long long)part[0], (long long)part[1]);
    }
    free(words);
}

static int case_register(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(integration), 64, &h), DCUDA_OK))
        return 0;
    dcuda_host_get_rank_info(h, &info);
    test_check_rank_setting(&info);
    int gpu = on_gpu(&info), registered = 0;
    size_t bytes = (size_t)info.rank_responsible * INT_REG_WORDS * sizeof(int64_t);
    int64_t *reg = NULL;
    void *block = app_alloc(gpu, bytes, &reg);
    TEST_CHECK(block, "the application's allocation of %zu bytes failed", bytes + 1024);
    if (!block)
        return 0;
    check_register_misuse(h, gpu, block, reg, bytes);
    integration_data_t d;
    memset(&d, 0, sizeof d);
    int64_t *res = results_alloc(h, &info, &d.res);
    d.reg = register_or_alloc(h, &info, reg, bytes, block, &registered);
    if (res && d.reg) {
        /* Memory that is reachable draws no warning (the network path's
         * registrations once drew "only N of M allocations can be
         * reached"). */
        test_capture_t cap;
        int capturing = test_capture_begin(&cap);
        TEST_STATUS(dcuda_host_run(h, &d, sizeof d, NULL), DCUDA_OK);
        char *out = capturing ? test_capture_end(&cap) : NULL;
        if (out) {
            printf("%s", out);
            TEST_CHECK(!strstr(out, "warning"), "the run printed a warning: %s", out);
        }
        free(out);
        expect_t e = { 0, 1 };
        results_check(h, &info, res, d.res, &e);
        check_parts(h, &info, d.reg, bytes);
    }
    if (registered) {
        size_t split = second_part(&info);
        if (split)
            TEST_STATUS(dcuda_host_deregister(h, reg), DCUDA_OK);
        TEST_STATUS(dcuda_host_deregister(h, reg + split), DCUDA_OK);
        TEST_STATUS(dcuda_host_deregister(h, reg + split), DCUDA_ERR_INVALID_ARG);
    }
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    app_free(gpu, block);
    free(res);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "shared", case_shared },
        { "shared_limit", case_shared_limit },
        { "shared_bounds", case_shared_bounds },
        { "mpi_comm", case_mpi_comm },
        { "async", case_async },
        { "register", case_register },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
