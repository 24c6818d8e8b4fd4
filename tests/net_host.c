/*
 * Host driver of the network-path fault test: dcuda_test_net lost_peer.
 *
 * Run with two processes and the network path forced between them
 * (DCUDA_NET_FORCE=1), forked: process 1 dies (SIGKILL) 0.3 s into a run in
 * which every rank waits forever, with the watchdog off. Process 0 must
 * learn it from its network manager (the peer's connection is lost): the
 * run fails with DCUDA_ERR_PEER and a message that names process 1, its pid
 * and host.
 *
 * dcuda_test_net stalled_peer: the same run, but process 1 stops
 * (SIGSTOP) 0.3 s into it. No manager notices a stopped process; the
 * proxies' beats do: process 0 names process 1 (its pid and host, and
 * that it sent nothing) within 5 s of the stop (checked with slack for a
 * loaded machine), both runs fail with DCUDA_ERR_PEER once process 0
 * resumed process 1 (the pid in the message), and both finish (under
 * mpirun the job then ends without MPI_Finalize, as after any lost peer:
 * judged by process 0's output).
 *
 * dcuda_test_net transports: with the UCX manager and no UCX_TLS, the
 * network path maps no shared-memory segment of UCX's (dcuda reaches
 * processes of a node by its own means; UCX's segments are mode 0660).
 *
 * dcuda_test_net connections: with the UCX manager, 8 or more processes
 * each a node, every rank notifies its counterpart in the next process.
 * A process connects on first use only: to the next process (the
 * notifications), the previous one (their acknowledgements), its partners
 * in the barrier's rounds (me + 2^k) and its neighbours in the tree of
 * processes (beats); never to all. The manager's verbose notes name each
 * process it connects to; they are read back and checked against that
 * set.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dcuda/dcuda_host.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(net_wait);
DCUDA_KERNEL_DECLARE(net_ring);

/* A thread that sends this process the signal *arg 0.3 s from now. */
static void *signal_self_later(void *arg)
{
    struct timespec ts = { 0, 300 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    kill(getpid(), *(const int *)arg);
    return NULL;
}

/* Init for a case of processes each a node of its own (2, or at least 2
 * when `more`), where only the fault may end the run (no watchdog, no
 * deadlock detector): 0, or what the case returns (1: init failed;
 * TEST_SKIP, said why). */
static int open_nodes(int argc, char **argv, const char *name, int more, dcuda_host_h *h,
                      dcuda_rank_info_t *info)
{
    setenv("DCUDA_WATCHDOG", "0", 1);
    setenv("DCUDA_DEADLOCK", "0", 1);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(net_wait), 32, h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(*h, info);
    int procs = info->process_count;
    if ((procs == 2 || (more && procs > 2)) && info->node_count == procs)
        return 0;
    printf("SKIP %s: needs 2%s processes each a node (DCUDA_NET_FORCE=1), have %d on %d\n", name,
           more ? " or more" : "", procs, info->node_count);
    dcuda_host_finish(*h);
    return TEST_SKIP;
}

static int open_two_nodes(int argc, char **argv, const char *name, dcuda_host_h *h,
                          dcuda_rank_info_t *info)
{
    return open_nodes(argc, argv, name, 0, h, info);
}

static int case_lost_peer(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    static const int sig = SIGKILL;
    int rc = open_nodes(argc, argv, "lost_peer", 1, &h, &info);
    if (rc)
        return rc;
    pthread_t killer;
    if (info.process_index == 1)
        pthread_create(&killer, NULL, signal_self_later, (void *)&sig);
    dcuda_status_t st = dcuda_host_run(h, NULL, 0, NULL);
    const char *why = dcuda_host_last_error(h);
    printf("process %d: run returned %s: %s\n", info.process_index, dcuda_status_name(st), why);
    TEST_STATUS(st, DCUDA_ERR_PEER);
    /* Every survivor names process 1, whoever told it (its own network
     * manager, or another process's news). */
    TEST_CONTAINS(why, "process 1 (pid ");
    if (info.process_count == 2)
        TEST_CONTAINS(why, "network");
    printf("process %d: %s lost_peer (%d failed checks)\n", info.process_index,
           test_failures ? "FAILED" : "PASSED", test_failures);
    /* Process 1's death was the point: leave without the exit-time check
     * that fails a program whose processes died. */
    fflush(NULL);
    _exit(test_failures ? 1 : 0);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int case_stalled_peer(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    static const int sig = SIGSTOP;
    int rc = open_two_nodes(argc, argv, "stalled_peer", &h, &info);
    if (rc)
        return rc;
    test_check_rank_setting(&info);
    pthread_t stopper;
    if (info.process_index == 1)
        pthread_create(&stopper, NULL, signal_self_later, (void *)&sig);
    double t0 = seconds_now();
    dcuda_status_t st = dcuda_host_run(h, NULL, 0, NULL);
    double took = seconds_now() - t0;
    const char *why = dcuda_host_last_error(h);
    printf("process %d: run returned %s after %.1f s: %s\n", info.process_index,
           dcuda_status_name(st), took, why);
    TEST_STATUS(st, DCUDA_ERR_PEER);
    TEST_CONTAINS(why, "process 1 (pid ");
    TEST_CONTAINS(why, "sent nothing for");
    if (info.process_index == 0) {
        const char *at = strstr(why, "(pid ");
        int pid = at ? atoi(at + 5) : 0;
        TEST_CHECK(pid > 0, "no pid in '%s'", why);
        if (pid > 0)
            kill(pid, SIGCONT);
        TEST_CHECK(took < 0.3 + 5.0 + 3.0, "process 1 named %.1f s into the run", took);
    } else {
        pthread_join(stopper, NULL);
    }
    dcuda_host_finish(h); /* the processes take no more steps together (a peer was lost) */
    return test_failures ? 1 : 0;
}

/* Lines of /proc/self/maps that name needle. */
static int maps_with(const char *needle)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return n;
}

static int case_transports(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (getenv("UCX_TLS")) {
        printf("SKIP transports: UCX_TLS is set (it decides the transports)\n");
        return TEST_SKIP;
    }
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(net_wait), 32, &h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(h, &info);
    TEST_CHECK(info.node_count == info.process_count, "%d processes on %d nodes",
               info.process_count, info.node_count);
    TEST_CHECK(maps_with("ucx_shm") == 0 && maps_with("/dev/shm/ucx") == 0,
               "UCX mapped shared-memory segments of its own");
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    return 0;
}

/* May process `me` of `procs` connect to process q (see the top)? */
static int may_connect(int me, int procs, int q)
{
    if (q == (me + 1) % procs || q == (me + procs - 1) % procs || q == (me - 1) / 2 ||
        q == 2 * me + 1 || q == 2 * me + 2)
        return 1;
    for (int step = 1; step < procs; step *= 2)
        if (q == (me + step) % procs)
            return 1;
    return 0;
}

/* The processes the captured notes say this one connected to, checked. */
static int check_connections(const char *out, int me, int procs)
{
    static const char note[] = "UCX network manager: connected to process ";
    int count = 0, next = 0;
    for (const char *at = out; (at = strstr(at, note)); at += sizeof note - 1) {
        int q = atoi(at + sizeof note - 1);
        count++;
        next |= q == (me + 1) % procs;
        TEST_CHECK(q != me && may_connect(me, procs, q),
                   "process %d connected to process %d, which it has nothing to send", me, q);
    }
    TEST_CHECK(next, "process %d never connected to the next process", me);
    TEST_CHECK(count < procs - 1, "process %d connected to %d of %d processes", me, count,
               procs - 1);
    return count;
}

static int case_connections(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    const char *net = getenv("DCUDA_NET");
    if (!net || strcmp(net, "ucx") != 0) {
        printf("SKIP connections: needs DCUDA_NET=ucx (the MPI manager's connections are MPI's)\n");
        return TEST_SKIP;
    }
    setenv("DCUDA_VERBOSE", "1", 1);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(net_ring), 32, &h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(h, &info);
    if (info.process_count < 8 || info.node_count != info.process_count) {
        printf("SKIP connections: needs 8 or more processes, each a node (DCUDA_NET_FORCE=1); "
               "have %d on %d\n",
               info.process_count, info.node_count);
        dcuda_host_finish(h);
        return TEST_SKIP;
    }
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    dcuda_status_t st = dcuda_host_run(h, NULL, 0, NULL);
    char *out = test_capture_end(&cap);
    TEST_STATUS(st, DCUDA_OK);
    TEST_CHECK(out != NULL, "no captured output");
    if (out) {
        int count = check_connections(out, info.process_index, info.process_count);
        printf("process %d: connected to %d of %d processes\n", info.process_index, count,
               info.process_count - 1);
    }
    free(out);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    return test_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "lost_peer", case_lost_peer },
        { "stalled_peer", case_stalled_peer },
        { "transports", case_transports },
        { "connections", case_connections },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
