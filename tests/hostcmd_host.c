/*
 * Host side of the host command test: each rank's pings must all have been
 * answered (the command ring has 256 entries; 16 ranks send 1600 pings),
 * also when one rank pings only after the others wrapped the ring
 * (laggard). With several processes, each checks its own ranks (each host
 * runtime serves its own ranks' commands).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>

#include "dcuda/dcuda_host.h"
#include "hostcmd.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(hostcmd);

static int run_pings(int argc, char **argv, int laggard)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(hostcmd), 64, &h), DCUDA_OK))
        return 1;
    TEST_STATUS(dcuda_host_get_rank_info(h, &info), DCUDA_OK);
    test_check_rank_setting(&info);
    size_t bytes = (size_t)info.rank_count * sizeof(int64_t);
    int64_t *ok = calloc((size_t)info.rank_count, sizeof *ok), *dev = NULL;
    for (int r = 0; r < info.rank_count; r++)
        ok[r] = -1;
    TEST_STATUS(dcuda_host_alloc(h, bytes, (void **)&dev), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_in(h, dev, ok, bytes), DCUDA_OK);
    hostcmd_t user = { dev, laggard, 0 };
    TEST_STATUS(dcuda_host_run(h, &user, sizeof user, NULL), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_out(h, ok, dev, bytes), DCUDA_OK);
    for (int r = test_first_rank(&info); r < test_end_rank(&info); r++)
        TEST_CHECK(ok[r] == HOSTCMD_PINGS, "rank %d: %lld of %d pings answered", r,
                   (long long)ok[r], HOSTCMD_PINGS);
    TEST_STATUS(dcuda_host_free(h, dev), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    free(ok);
    return 0;
}

static int run_ping(int argc, char **argv) { return run_pings(argc, argv, 0); }
static int run_laggard(int argc, char **argv) { return run_pings(argc, argv, 1); }

int main(int argc, char **argv)
{
    static const test_case_t cases[] = { { "ping", run_ping }, { "laggard", run_laggard } };
    return test_main(argc, argv, cases, 2);
}
