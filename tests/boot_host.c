/*
 * Host driver of the bootstrap test (the ways a group starts):
 *   dcuda_test_boot ring [NODES]
 *       the group runs a ring of notifications around WORLD; with NODES,
 *       the processes must form that many nodes (simulated hosts are
 *       nodes apart; processes of one host share one);
 *   dcuda_test_boot init_fails TEXT
 *       dcuda_host_init must fail (it never runs alone) and print TEXT;
 *   dcuda_test_boot host_lost HOSTS VICTIM SECONDS
 *       the ranks wait for ever; host VICTIM of HOSTS is killed SECONDS
 *       after the start (tests/run_rendezvous.sh --kill-host): every
 *       survivor's run ends with DCUDA_ERR_PEER within 5 s of it, naming
 *       a process of that host;
 *   dcuda_test_boot host_cut HOSTS VICTIM SECONDS
 *       the same with host VICTIM's link cut (--cut-host): every process
 *       ends so, those of the cut host naming one of another host.
 * Started by tests/run_rendezvous.sh, or with a Slurm step's variables.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dcuda/dcuda_host.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(boot_ring);
DCUDA_KERNEL_DECLARE(boot_wait);

/* A survivor learns of a lost host within this many seconds. */
#define BOOT_LOST_WITHIN_S 5.0

static int case_ring(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    long nodes = test_arg(argc, argv, 2, 0);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(boot_ring), 32, &h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(h, &info);
    snprintf(test_who, sizeof test_who, "process %d of %d: ", info.process_index,
             info.process_count);
    long want = test_processes_asked();
    TEST_CHECK(want <= 0 || info.process_count == want, "%d processes, %ld asked",
               info.process_count, want);
    TEST_CHECK(nodes <= 0 || info.node_count == nodes, "%d nodes, %ld expected", info.node_count,
               nodes);
    int n = info.rank_responsible;
    int64_t *ok = calloc((size_t)n, sizeof *ok), *dev = NULL;
    TEST_STATUS(dcuda_host_alloc(h, (size_t)n * sizeof *ok, (void **)&dev), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_in(h, dev, ok, (size_t)n * sizeof *ok), DCUDA_OK);
    TEST_STATUS(dcuda_host_run(h, &dev, sizeof dev, NULL), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_out(h, ok, dev, (size_t)n * sizeof *ok), DCUDA_OK);
    for (int r = 0; r < n; r++)
        TEST_CHECK(ok[r] == 1, "rank %d: its ring failed", info.rank_start + r);
    printf("%s%d processes on %d node(s) (node %d), %d ranks in WORLD\n", test_who,
           info.process_count, info.node_count, info.node_index, info.rank_count);
    TEST_STATUS(dcuda_host_free(h, dev), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    free(ok);
    return 0;
}

static int case_init_fails(int argc, char **argv)
{
    dcuda_host_h h = NULL;
    const char *text = argc > 2 ? argv[2] : "";
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    dcuda_status_t st = dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(boot_ring), 32, &h);
    char *out = test_capture_end(&cap);
    printf("%s", out ? out : "");
    TEST_CHECK(st != DCUDA_OK, "dcuda_host_init succeeded (the process would run alone)");
    TEST_CHECK(out && strstr(out, text), "the output does not say '%s'", text);
    if (st == DCUDA_OK)
        dcuda_host_finish(h);
    free(out);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The run ends within BOOT_LOST_WITHIN_S of the fault (a host killed, or
 * with `cut` its link cut), naming a process the fault took from this one. */
static int lost_run(int argc, char **argv, int cut)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    long hosts = test_arg(argc, argv, 2, 2), victim = test_arg(argc, argv, 3, 1);
    double kill_at = argc > 4 ? atof(argv[4]) : 1.0, start = now_s();
    setenv("DCUDA_WATCHDOG", "0", 1);
    setenv("DCUDA_DEADLOCK", "0", 1); /* only the lost host may end the run */
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(boot_wait), 32, &h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(h, &info);
    snprintf(test_who, sizeof test_who, "process %d of %d: ", info.process_index,
             info.process_count);
    TEST_STATUS(dcuda_host_run(h, NULL, 0, NULL), DCUDA_ERR_PEER);
    double took = now_s() - start - kill_at;
    const char *why = dcuda_host_last_error(h);
    printf("%sthe run ended %.2f s after host %ld was %s: %s\n", test_who, took, victim,
           cut ? "cut off" : "killed", why);
    TEST_CHECK(took <= BOOT_LOST_WITHIN_S, "the lost host was known after %.2f s (at most %.0f)",
               took, BOOT_LOST_WITHIN_S);
    /* A survivor names a process of the lost host; a process of a cut
     * host, one of another host (it lost them all). */
    int mine_lost = cut && info.process_index % hosts == victim, named = 0;
    for (long p = 0; p < info.process_count; p++) {
        char text[32];
        snprintf(text, sizeof text, "process %ld ", p);
        if ((p % hosts == victim) != mine_lost)
            named |= strstr(why, text) != NULL;
    }
    TEST_CHECK(named, "the error names no process of %s host %ld", mine_lost ? "a host but" : "",
               victim);
    fflush(NULL);
    _exit(test_failures ? 1 : 0); /* a peer is gone: no collective end */
}

static int case_host_lost(int argc, char **argv) { return lost_run(argc, argv, 0); }
static int case_host_cut(int argc, char **argv) { return lost_run(argc, argv, 1); }

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "ring", case_ring },
        { "init_fails", case_init_fails },
        { "host_lost", case_host_lost },
        { "host_cut", case_host_cut },
    };
    return test_main(argc, argv, cases, 4);
}
