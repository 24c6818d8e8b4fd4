/*
 * The host RMA test's fault cases (dcuda_test_hostrma dead_owner): two
 * processes on one node (their parts in each other's shared memory, or
 * over NVLink), a run started with dcuda_host_run_start; once the ranks
 * have published their windows, process 1 dies (SIGKILL) and process 0
 * keeps putting into, and getting from, a part of process 1's rank. Within
 * two seconds of the death a request must fail with DCUDA_ERR_PEER (before,
 * they succeeded until process 0's ranks returned, or for as long as they
 * computed), and the run must end with DCUDA_ERR_PEER naming process 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hostrma_host.h"
#include "test_util.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int case_dead_owner(int argc, char **argv)
{
    hr_t t;
    unsigned char buf[8] = { 0 };
    setenv("DCUDA_WATCHDOG", "0", 1);
    setenv("DCUDA_DEADLOCK", "0", 1);
    if (!hr_open(&t, argc, argv, 1, 4096, 0))
        return 0;
    if (t.procs != 2 || t.info.node_count != 1) {
        printf("SKIP dead_owner: needs 2 processes of one node, has %d on %d\n", t.procs,
               t.info.node_count);
        hr_close(&t);
        return TEST_SKIP;
    }
    TEST_STATUS(dcuda_host_run_start(t.h, &t.d, sizeof t.d, NULL), DCUDA_OK);
    if (!await_ranks(&t, HR_READY))
        return 0;
    read_handles(&t);
    if (t.me == 1) { /* the owner dies; its part stays mapped in process 0 */
        fflush(NULL);
        kill(getpid(), SIGKILL);
    }
    const int owner = t.per_proc; /* process 1's first rank */
    const dcuda_gptr_t at = dcuda_gptr(t.win[HR_WORLD][0], owner, 0);
    dcuda_status_t put = DCUDA_OK, get = DCUDA_OK;
    double start = now_s(), waited = 0;
    while (put == DCUDA_OK && waited < 10.0) {
        put = dcuda_host_put(t.h, at, buf, sizeof buf, NULL);
        get = dcuda_host_get(t.h, buf, at, sizeof buf, NULL);
        struct timespec ts = { 0, 2 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        waited = now_s() - start;
    }
    printf("process 0: the put returned %s after %.2f s\n", dcuda_status_name(put), waited);
    TEST_STATUS(put, DCUDA_ERR_PEER);
    TEST_STATUS(dcuda_host_get(t.h, buf, at, sizeof buf, NULL), DCUDA_ERR_PEER);
    TEST_CHECK(waited < 2.0, "the host's requests succeeded for %.2f s after the owner died",
               waited);
    (void)get;
    write_word(&t, HR_GATE, 1); /* the ranks poll the gates: let them go on to their end */
    write_word(&t, HR_GATE2, 1);
    dcuda_status_t run = dcuda_host_run_wait(t.h, NULL);
    printf("process 0: the run returned %s: %s\n", dcuda_status_name(run),
           dcuda_host_last_error(t.h));
    TEST_STATUS(run, DCUDA_ERR_PEER);
    TEST_CONTAINS(dcuda_host_last_error(t.h), "process 1 (pid ");
    printf("process 0: %s dead_owner (%d failed checks)\n", test_failures ? "FAILED" : "PASSED",
           test_failures);
    /* Process 1's death was the point: leave without the exit-time check
     * that fails a program whose processes died. */
    fflush(NULL);
    _exit(test_failures ? 1 : 0);
}
