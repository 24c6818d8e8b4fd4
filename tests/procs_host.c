/*
 * Host driver of the process-fault tests: dcuda_test_procs <case>, run with
 * two or more processes (DCUDA_PROCESSES=2, or mpirun -np 2). Process 1
 * dies (SIGKILL) before or during a run in which every rank waits forever;
 * process 0 must get DCUDA_ERR_PEER with a message naming process 1 instead
 * of hanging (the watchdog is off, so nothing else can end the wait).
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "dcuda/dcuda_host.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(procs_wait);

static void *kill_self_later(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    kill(getpid(), SIGKILL);
    return NULL;
}

/* Process 1 dies before its run (during_run = 0) or 0.3 s into it. */
static int run_death(int argc, char **argv, int during_run)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    setenv("DCUDA_WATCHDOG", "0", 1);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(procs_wait), 32, &h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(h, &info);
    if (info.process_count < 2) {
        printf("SKIP %s: needs 2 processes (DCUDA_PROCESSES=2 or mpirun -np 2), have %d\n",
               argv[1], info.process_count);
        dcuda_host_finish(h);
        return TEST_SKIP;
    }
    pthread_t killer;
    if (info.process_index == 1) {
        if (!during_run)
            kill(getpid(), SIGKILL);
        pthread_create(&killer, NULL, kill_self_later, NULL);
    }
    dcuda_status_t st = dcuda_host_run(h, NULL, 0, NULL);
    if (info.process_index != 0) {
        /* Other survivors: the same outcome, nothing more to check. */
        TEST_STATUS(st, DCUDA_ERR_PEER);
        fflush(NULL);
        _exit(test_failures ? 1 : 0);
    }
    TEST_STATUS(st, DCUDA_ERR_PEER);
    const char *why = dcuda_host_last_error(h);
    TEST_CONTAINS(why, "process 1");
    if (!getenv("OMPI_COMM_WORLD_SIZE")) /* forked: process 0 saw its child end */
        TEST_CONTAINS(why, "killed by signal 9");
    printf("%s %s (%d failed checks)\n", test_failures ? "FAILED" : "PASSED", argv[1],
           test_failures);
    /* Process 1's death was the point: leave without the exit-time check
     * that fails a program whose processes died. */
    fflush(NULL);
    _exit(test_failures ? 1 : 0);
}

static int case_before_run(int argc, char **argv) { return run_death(argc, argv, 0); }
static int case_during_run(int argc, char **argv) { return run_death(argc, argv, 1); }

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        {"before_run", case_before_run},
        {"during_run", case_during_run},
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
