/*
 * Fault injection: dcuda_test_inject <trials> [mpirun]. Starts this program
 * as a group of 3 processes of CPU ranks (forked, or under mpirun with
 * "mpirun") running a long ring of puts, many times, and at a random moment
 * of each run does one thing to one random process:
 *   kill   SIGKILL;
 *   stop   SIGSTOP, and SIGCONT 200 ms later;
 *   exit   it calls exit() (a thread of its own, woken by SIGUSR1).
 * Then it checks how the run ended: after a stop every process finishes
 * the ring with every value right; after a kill or an exit every survivor's
 * dcuda_host_run returns DCUDA_ERR_PEER (under mpirun the launcher may end
 * the job first: then it must fail). Every process of the group must be
 * gone within a bound, nothing may be left in /dev/shm (forked), and no
 * trial may hang. The seed is printed; DCUDA_TEST_SEED replays it.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "faults_run.h"

#define GROUP 3        /* processes of a group */
#define ROUNDS 400     /* of the ring, a millisecond each at least */
#define START_MS 20000 /* for a group to start its run */
#define END_MS 30000   /* for a group to end after the injection */
#define OUT_BYTES 65536

enum { DO_KILL, DO_STOP, DO_EXIT, ACTIONS };
static const char *action_names[] = { "kill", "stop", "exit" };

/* ---- the group: one process of it ------------------------------------------------- */

static void *exit_on_signal(void *arg)
{
    sigset_t *set = arg;
    int sig = 0;
    sigwait(set, &sig);
    fflush(NULL);
    exit(7);
}

static int group_main(int argc, char **argv)
{
    static sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL); /* inherited by rank threads and forks */
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    pthread_t waiter;
    pthread_create(&waiter, NULL, exit_on_signal, &usr1);
    size_t part_bytes = (size_t)r.info.rank_responsible * FAULT_PART_WORDS * sizeof(int64_t);
    if (dcuda_host_alloc(r.h, part_bytes, (void **)&r.d.parts) != DCUDA_OK)
        return 1;
    r.d.test_case = FAULT_LONG_RING;
    r.d.count = ROUNDS;
    r.d.delay_ms = 1;
    printf("READY %d %d\n", r.info.process_index, (int)getpid());
    fflush(stdout);
    dcuda_status_t st = fault_exec_loose(&r);
    int right = 1;
    for (int k = test_first_rank(&r.info); k < test_end_rank(&r.info); k++)
        right &= res(&r, k, FAULT_RES_CALL) == 0 && res(&r, k, FAULT_RES_VALUE) == ROUNDS;
    printf("RESULT %d %s %s\n", r.info.process_index, dcuda_status_name(st),
           right ? "right" : "wrong");
    fflush(stdout);
    if (st == DCUDA_OK) { /* an ordinary end (under mpirun: MPI is finalised) */
        TEST_STATUS(dcuda_host_free(r.h, r.d.parts), DCUDA_OK);
        fault_close(&r);
        return dcuda_host_exit_status(0);
    }
    /* A lost peer was the point: no exit-time report of it. */
    _exit(0);
}

/* ---- the controller ------------------------------------------------------------------ */

static uint64_t rng;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

typedef struct trial {
    pid_t leader; /* process 0 (forked) or mpirun */
    int fd;       /* the group's output */
    char out[OUT_BYTES];
    size_t len;
    pid_t pids[GROUP];
    int ready;
} trial_t;

/* Starts the group: this program again, its output in a pipe. */
static int start_group(trial_t *t, char **argv, int mpi)
{
    int fds[2];
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || pipe(fds) != 0)
        return -1;
    self[n] = '\0';
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        setenv("TEST_INJECT_GROUP", "1", 1);
        setenv("DCUDA_BACKEND", "cpu", 1);
        setenv("DCUDA_RANKS", "3", 1);
        setenv("DCUDA_WATCHDOG", "20", 1);
        if (mpi) {
            execlp("mpirun", "mpirun", "--oversubscribe", "--allow-run-as-root", "-x",
                   "TEST_INJECT_GROUP", "-x", "DCUDA_BACKEND", "-x", "DCUDA_RANKS", "-x",
                   "DCUDA_WATCHDOG", "-np", "3", self, "group", (char *)NULL);
        } else {
            setenv("DCUDA_PROCESSES", "3", 1);
            execl(self, argv[0], "group", (char *)NULL);
        }
        _exit(127);
    }
    close(fds[1]);
    t->leader = pid;
    t->fd = fds[0];
    return pid < 0 ? -1 : 0;
}

/* Notes the READY lines of the group's output. */
static void note_ready(trial_t *t)
{
    for (const char *line = t->out; (line = strstr(line, "READY ")) != NULL; line++) {
        int index, pid;
        if (sscanf(line, "READY %d %d", &index, &pid) == 2 && index >= 0 && index < GROUP &&
            !t->pids[index]) {
            t->pids[index] = pid;
            t->ready++;
        }
    }
}

/* Reads what the group writes until `deadline`, the end of its output (1),
 * or, with `until_ready`, every process being ready. */
static int read_until(trial_t *t, uint64_t deadline, int until_ready)
{
    while (now_ms() < deadline && !(until_ready && t->ready == GROUP)) {
        struct pollfd p = { t->fd, POLLIN, 0 };
        if (poll(&p, 1, 50) <= 0)
            continue;
        char chunk[4096];
        ssize_t n = read(t->fd, chunk, sizeof chunk);
        if (n <= 0)
            return 1;
        size_t keep =
            (size_t)n < sizeof t->out - 1 - t->len ? (size_t)n : sizeof t->out - 1 - t->len;
        memcpy(t->out + t->len, chunk, keep); /* beyond the buffer, output is dropped */
        t->len += keep;
        t->out[t->len] = '\0';
        note_ready(t);
    }
    return 0;
}

/* Reaps every child (the group, and its orphans: this process is their
 * subreaper) until `deadline`; 1 if none is left. */
static int reap_all(pid_t leader, uint64_t deadline, int *leader_status)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid == leader)
            *leader_status = status;
        if (pid < 0 && errno == ECHILD)
            return 1;
        if (pid <= 0) {
            if (now_ms() > deadline)
                return 0;
            sleep_ms(10);
        }
    }
}

/* Entries of the library's in /dev/shm (it uses memfds, so there should
 * never be any; other programs' entries are not counted). */
static int shm_entries(void)
{
    int n = 0;
    DIR *dir = opendir("/dev/shm");
    struct dirent *e;
    while (dir && (e = readdir(dir)) != NULL)
        n += strstr(e->d_name, "dcuda") != NULL;
    if (dir)
        closedir(dir);
    return n;
}

/* Counts the RESULT lines of processes other than `skip` (-1: none): all
 * of them, those with `status`, and those that say "right". */
static int results(const trial_t *t, int skip, const char *status, int *with_status, int *right)
{
    int n = 0;
    *with_status = *right = 0;
    for (const char *line = t->out; (line = strstr(line, "RESULT ")) != NULL; line++) {
        char name[64], verdict[16];
        int index;
        if (sscanf(line, "RESULT %d %63s %15s", &index, name, verdict) != 3 || index == skip)
            continue;
        n++;
        *with_status += strcmp(name, status) == 0;
        *right += strcmp(verdict, "right") == 0;
    }
    return n;
}

/* The outcome a trial must have. The victim's own line does not count: a
 * process that calls exit() runs on while its exit handlers run, and may
 * report the end of its run too. */
static void judge(const trial_t *t, int action, int victim, int mpi, int leader_status)
{
    int with, right;
    if (action == DO_STOP) {
        int all = results(t, -1, "DCUDA_OK", &with, &right);
        TEST_CHECK(all == GROUP && with == GROUP && right == GROUP,
                   "after a stop: %d of %d processes reported, %d ended well, %d with every "
                   "value right",
                   all, GROUP, with, right);
        if (mpi)
            TEST_CHECK(WIFEXITED(leader_status) && WEXITSTATUS(leader_status) == 0,
                       "after a stop mpirun failed");
        return;
    }
    int all = results(t, victim, "DCUDA_ERR_PEER", &with, &right);
    if (mpi) {
        /* The launcher may end the job before a survivor reports. */
        TEST_CHECK(!(WIFEXITED(leader_status) && WEXITSTATUS(leader_status) == 0),
                   "mpirun succeeded although process %d was hit by %s", victim,
                   action_names[action]);
        TEST_CHECK(with == all,
                   "after a %s of process %d a survivor's run did not end with "
                   "DCUDA_ERR_PEER",
                   action_names[action], victim);
        return;
    }
    TEST_CHECK(all == GROUP - 1 && with == GROUP - 1,
               "after a %s of process %d: %d of %d survivor(s) reported, %d with DCUDA_ERR_PEER",
               action_names[action], victim, all, GROUP - 1, with);
}

static int one_trial(char **argv, int mpi, int trial)
{
    int action = (int)(test_rng(&rng) % ACTIONS), victim = (int)(test_rng(&rng) % GROUP);
    int delay = 20 + (int)(test_rng(&rng) % 250);
    int shm = mpi ? 0 : shm_entries();
    static trial_t t;
    memset(&t, 0, sizeof t);
    printf("trial %d: %s process %d %d ms into the run\n", trial, action_names[action], victim,
           delay);
    if (start_group(&t, argv, mpi) != 0)
        return 1;
    read_until(&t, now_ms() + START_MS, 1);
    TEST_CHECK(t.ready == GROUP, "trial %d: only %d of %d processes started", trial, t.ready,
               GROUP);
    if (t.ready == GROUP) {
        sleep_ms(delay);
        pid_t pid = t.pids[victim];
        if (action == DO_KILL) {
            kill(pid, SIGKILL);
        } else if (action == DO_STOP) {
            kill(pid, SIGSTOP);
            sleep_ms(200);
            kill(pid, SIGCONT);
        } else {
            kill(pid, SIGUSR1);
        }
    }
    int ended = read_until(&t, now_ms() + END_MS, 0);
    TEST_CHECK(ended, "trial %d (%s process %d) did not end within %d s", trial,
               action_names[action], victim, END_MS / 1000);
    int leader_status = 0;
    if (!ended)
        for (int p = 0; p < GROUP; p++)
            if (t.pids[p])
                kill(t.pids[p], SIGKILL);
    TEST_CHECK(reap_all(t.leader, now_ms() + 10000, &leader_status),
               "trial %d: processes of the group were left running", trial);
    close(t.fd);
    if (ended && t.ready == GROUP)
        judge(&t, action, victim, mpi, leader_status);
    if (!mpi)
        TEST_CHECK(shm_entries() == shm, "trial %d left %d entries in /dev/shm", trial,
                   shm_entries() - shm);
    if (test_failures)
        printf("---- output of trial %d ----\n%s---- end ----\n", trial, t.out);
    return 0;
}

static int run_trials(int argc, char **argv)
{
    int trials = argc > 2 ? atoi(argv[2]) : 6, mpi = argc > 3 && !strcmp(argv[3], "mpirun");
    const char *seed = getenv("DCUDA_TEST_SEED");
    rng = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL) * 2654435761u + (uint64_t)getpid();
    printf("seed %llu (DCUDA_TEST_SEED replays it)\n", (unsigned long long)rng);
    prctl(PR_SET_CHILD_SUBREAPER, 1); /* orphans of a killed process 0 come here */
    for (int i = 0; i < trials && !test_failures; i++)
        one_trial(argv, mpi, i);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "group") == 0)
        return group_main(argc - 1, argv + 1);
    static const test_case_t cases[] = { { "trials", run_trials } };
    return test_main(argc, argv, cases, 1);
}
