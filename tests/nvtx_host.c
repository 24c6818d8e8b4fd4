/*
 * Host driver of the NVTX test: dcuda_test_nvtx <tool> [loop]
 * What a profiler sees of dcuda, without a GPU or a profiler: before its
 * first dcuda call the program sets NVTX_INJECTION64_PATH to <tool>
 * (nvtx_tool.c, attached as nsys attaches its own), then on CPU ranks of
 * one process runs a ring with a ping (dcuda_host_run, then run_start and
 * run_wait), a rank's misuse, an aborted run and a deadlocked one, and
 * finishes. The tool must have seen one domain "dcuda" with registered
 * names; each init step, finish, each run and its phases by name, as
 * often as they happened; the proxy serving commands; every push popped,
 * every run's range ended; and marks for the rank's error, the abort and
 * the deadlock. With "loop" (NET_LOOPBACK=1 over a network manager) also
 * the manager's plugin load, frames received and the proxies' drains
 * (on every lane's thread with PROXY_LANES).
 * Built where the library has NVTX ranges (the CUDA backend, DCUDA_NVTX).
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvtx_test.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(nvtx_ranks);

#define RUNS 5 /* ring, ring (run_start), misuse, abort, deadlock */

typedef struct {
    int (*count)(const char *name, int started);
    const char *(*mark)(const char *prefix);
    int (*balanced)(char *why, size_t size);
} tool_t;

/* One run of `mode`; with `started`, by run_start and run_wait (and an
 * abort in between for NVTX_TEST_WAIT). Every rank must have seen what
 * it should (res). */
static void run_mode(dcuda_host_h h, nvtx_test_data_t *d, int n, int mode, int started,
                     dcuda_status_t want)
{
    d->mode = mode;
    int64_t *res = calloc((size_t)n, sizeof *res);
    TEST_STATUS(dcuda_host_copy_in(h, d->res, res, (size_t)n * sizeof *res), DCUDA_OK);
    if (!started) {
        TEST_STATUS(dcuda_host_run(h, d, sizeof *d, NULL), want);
    } else {
        TEST_STATUS(dcuda_host_run_start(h, d, sizeof *d, NULL), DCUDA_OK);
        if (mode == NVTX_TEST_WAIT)
            TEST_STATUS(dcuda_host_abort(h, "nvtx test"), DCUDA_OK);
        TEST_STATUS(dcuda_host_run_wait(h, NULL), want);
    }
    TEST_STATUS(dcuda_host_copy_out(h, res, d->res, (size_t)n * sizeof *res), DCUDA_OK);
    for (int r = 0; r < n; r++)
        TEST_CHECK(res[r] == 1, "mode %d: rank %d did not see what it should", mode, r);
    free(res);
}

/* The runs; *ranks: this process's ranks. */
static int runs(int *ranks)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (!TEST_STATUS(dcuda_host_init(0, NULL, DCUDA_KERNEL_REF(nvtx_ranks), 1, &h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(h, &info);
    int n = *ranks = info.rank_responsible;
    nvtx_test_data_t d = { 0, NULL };
    TEST_STATUS(dcuda_host_alloc(h, (size_t)n * sizeof *d.res, (void **)&d.res), DCUDA_OK);
    run_mode(h, &d, n, NVTX_TEST_RING, 0, DCUDA_OK);
    run_mode(h, &d, n, NVTX_TEST_RING, 1, DCUDA_OK);
    run_mode(h, &d, n, NVTX_TEST_MISUSE, 0, DCUDA_ERR_RANK);
    run_mode(h, &d, n, NVTX_TEST_WAIT, 1, DCUDA_ERR_ABORTED);
    run_mode(h, &d, n, NVTX_TEST_WAIT, 0, DCUDA_ERR_DEADLOCK);
    TEST_STATUS(dcuda_host_free(h, d.res), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    return 0;
}

/* `name` was pushed (or started) `want` times, or at least `least` times
 * when want is -1. */
static void expect(const tool_t *t, const char *name, int started, int want, int least)
{
    int got = t->count(name, started);
    if (want >= 0)
        TEST_CHECK(got == want, "'%s' %s %d times, expected %d", name,
                   started ? "started" : "pushed", got, want);
    else
        TEST_CHECK(got >= least, "'%s' %s %d times, expected %d or more", name,
                   started ? "started" : "pushed", got, least);
}

static void expect_mark(const tool_t *t, const char *prefix)
{
    const char *m = t->mark(prefix);
    TEST_CHECK(m != NULL, "no mark begins with '%s'", prefix);
    if (m)
        printf("mark: %s\n", m);
}

static void check_tool(const tool_t *t, int loop, int ranks)
{
    static const char *const once[] = { "dcuda_init",
                                        "dcuda_init: bootstrap",
                                        "dcuda_init: node",
                                        "dcuda_init: backend",
                                        "dcuda_init: peers",
                                        "dcuda_init: context",
                                        "dcuda_init: proxy start",
                                        "dcuda_finish" };
    static const char *const each_run[] = { "run: prepare", "run: launch", "run: serve",
                                            "run: conclude" };
    for (size_t i = 0; i < sizeof once / sizeof once[0]; i++)
        expect(t, once[i], 0, 1, 0);
    expect(t, "dcuda_init: agree", 0, -1, 1);
    expect(t, "run", 1, RUNS, 0);
    for (size_t i = 0; i < sizeof each_run / sizeof each_run[0]; i++)
        expect(t, each_run[i], 0, RUNS, 0);
    expect(t, "proxy: serve", 0, -1, 1); /* at least the pings */
    /* Without the loopback path the proxy's only commands are the two
     * rings' pings: a pass that found none pushed nothing. */
    int served = t->count("proxy: serve", 0);
    TEST_CHECK(loop || served <= 2 * ranks, "'proxy: serve' pushed %d times for %d pings", served,
               2 * ranks);
    expect(t, "dcuda_init: network plugin", 0, loop ? 1 : 0, 0);
    if (loop) {
        expect(t, "proxy: receive", 0, -1, 1);
        const char *lanes = getenv("DCUDA_PROXY_LANES"); /* each drains its proxy */
        expect(t, "proxy: drain", 0, RUNS * (lanes ? atoi(lanes) : 1), 0);
    }
    char why[512];
    TEST_CHECK(t->balanced(why, sizeof why), "%s", why);
    printf("tool: %s\n", why);
    expect_mark(t, "rank 0 error: ");
    expect_mark(t, "run ends: the application of process 0 (dcuda_host_abort: nvtx test)");
    expect_mark(t, "deadlock: ");
}

static int case_ranges(int argc, char **argv)
{
    const char *path = argc > 2 ? argv[2] : "";
    int loop = argc > 3 && strcmp(argv[3], "loop") == 0;
    setenv("NVTX_INJECTION64_PATH", path, 1);
    int ranks = 0;
    if (runs(&ranks) != 0)
        return 1;
    /* NVTX loaded the tool at the library's first range; a library built
     * without NVTX never did. */
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    TEST_CHECK(lib != NULL, "the library never loaded the NVTX tool %s (%s)", path, dlerror());
    if (!lib)
        return 0;
    tool_t t;
    *(void **)&t.count = dlsym(lib, "nvtx_tool_count");
    *(void **)&t.mark = dlsym(lib, "nvtx_tool_mark");
    *(void **)&t.balanced = dlsym(lib, "nvtx_tool_balanced");
    TEST_CHECK(t.count && t.mark && t.balanced, "%s lacks the nvtx_tool_* functions", path);
    if (t.count && t.mark && t.balanced)
        check_tool(&t, loop, ranks);
    dlclose(lib);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = { { "ranges", case_ranges } };
    return test_main(argc, argv, cases, 1);
}
