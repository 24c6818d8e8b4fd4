/*
 * Host driver of the process-fault tests: dcuda_test_procs <case>.
 *
 * before_run, during_run: run with two or more processes (DCUDA_PROCESSES=2,
 * or mpirun -np 2). Process 1 dies (SIGKILL) before or during a run in
 * which every rank waits forever; process 0 must get DCUDA_ERR_PEER with a
 * message naming process 1 instead of hanging (the watchdog is off, so
 * nothing else can end the wait).
 *
 * exit_during_run: the same, but process 1 leaves with exit() 0.3 s into
 * the run (as a program that returns from main would): process 0 must
 * learn it as it learns of a death, not wait forever.
 * exit_during_run_first: process 0 leaves so, and process 1 checks: the
 * first process of a forked group waits for the others at exit, so they
 * must learn it without its death (also on the network path).
 *
 * skip_run_first, skip_run_last: process 0 (or the last) skips
 * dcuda_host_run and calls dcuda_host_finish: the others' run and its
 * finish fail with DCUDA_ERR_PEER, each naming the other's call, instead of
 * waiting for each other (forked, under mpirun, on the network path).
 *
 * settings_differ NAME, settings_same NAME: under mpirun, one process is
 * given a setting the other is not; its init and every other's fail with
 * DCUDA_ERR_SETTING naming it (differ), or succeed when the values mean
 * the same (same: NET=mpi against auto under mpirun).
 *
 * init_fails: under mpirun, one process's dcuda_host_init fails; every
 * process's must then fail, and every process end normally.
 *
 * exit_status, exit_report: a forked group whose process 1 exits with
 * status 3. The first process learns it from dcuda_host_exit_status; a
 * program that does not ask still ends with its own status (the library
 * never ends the process), after process 0 named the failed one. These run
 * the group as a child of the test, to see its exit status and output.
 *
 * exit_signal: a group of three whose process 1 is killed by SIGUSR1 after
 * dcuda_host_finish: process 0's dcuda_host_exit_status(0) says 128 + 10,
 * process 2's says 0 (its own status: only the first process reports the
 * group's failures), though process 2 waited for process 1 in the end.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dcuda/dcuda_host.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(procs_wait);

static void *kill_self_later(void *arg)
{
    (void)arg;
    struct timespec ts = { 0, 300 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    kill(getpid(), SIGKILL);
    return NULL;
}

/* As a program does that returns from main (or calls exit) while its
 * ranks still run: exit() runs the atexit handlers, the library's too. */
static void *exit_later(void *arg)
{
    (void)arg;
    struct timespec ts = { 0, 300 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    fflush(NULL);
    exit(0);
}

enum { DIE_BEFORE_RUN, DIE_DURING_RUN, EXIT_DURING_RUN };

/* Process `victim` dies before its run, or 0.3 s into it, or leaves with
 * exit() 0.3 s into it; the other of processes 0 and 1 checks. */
static int run_death(int argc, char **argv, int how, int victim)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    setenv("DCUDA_WATCHDOG", "0", 1);
    setenv("DCUDA_DEADLOCK", "0", 1); /* only the fault may end the run */
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(procs_wait), 32, &h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(h, &info);
    if (info.process_count < 2) {
        printf("SKIP %s: needs 2 processes (DCUDA_PROCESSES=2 or mpirun -np 2), have %d\n", argv[1],
               info.process_count);
        dcuda_host_finish(h);
        return TEST_SKIP;
    }
    pthread_t killer;
    int checker = 1 - victim;
    if (info.process_index == victim) {
        if (how == DIE_BEFORE_RUN)
            kill(getpid(), SIGKILL);
        pthread_create(&killer, NULL, how == EXIT_DURING_RUN ? exit_later : kill_self_later, NULL);
    }
    dcuda_status_t st = dcuda_host_run(h, NULL, 0, NULL);
    if (info.process_index != checker) {
        /* Other survivors: the same outcome, nothing more to check. Under
         * mpirun, a process that ends without MPI_Finalize makes the
         * launcher end the job: linger so that the checker's verdict is
         * printed first (else the job may end on this process's exit). */
        TEST_STATUS(st, DCUDA_ERR_PEER);
        fflush(NULL);
        if (getenv("OMPI_COMM_WORLD_SIZE") && !test_failures)
            sleep(3);
        _exit(test_failures ? 1 : 0);
    }
    TEST_STATUS(st, DCUDA_ERR_PEER);
    const char *why = dcuda_host_last_error(h);
    char named[32];
    snprintf(named, sizeof named, "process %d", victim);
    TEST_CONTAINS(why, named);
    if (how == EXIT_DURING_RUN)
        TEST_CONTAINS(why, "exit()");
    else if (!getenv("OMPI_COMM_WORLD_SIZE") && checker == 0 && info.node_count == 1)
        TEST_CONTAINS(why, "killed by signal 9"); /* it saw its child end (first: one node) */
    printf("%s %s (%d failed checks)\n", test_failures ? "FAILED" : "PASSED", argv[1],
           test_failures);
    /* Process 1's death was the point: leave without the exit-time check
     * that fails a program whose processes died. */
    fflush(NULL);
    _exit(test_failures ? 1 : 0);
}

static int case_before_run(int argc, char **argv)
{
    return run_death(argc, argv, DIE_BEFORE_RUN, 1);
}
static int case_during_run(int argc, char **argv)
{
    return run_death(argc, argv, DIE_DURING_RUN, 1);
}
static int case_exit_during_run(int argc, char **argv)
{
    return run_death(argc, argv, EXIT_DURING_RUN, 1);
}
static int case_exit_during_run_first(int argc, char **argv)
{
    return run_death(argc, argv, EXIT_DURING_RUN, 0);
}

/* One process skips dcuda_host_run (process 0 or the last): it calls
 * dcuda_host_finish while the others are in dcuda_host_run. Every process
 * learns it and fails, naming the other's call; all end normally. */
static int run_skip(int argc, char **argv, int first)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    setenv("DCUDA_WATCHDOG", "0", 1);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(procs_wait), 32, &h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(h, &info);
    if (info.process_count < 2) {
        printf("SKIP %s: needs 2 processes, have %d\n", argv[1], info.process_count);
        dcuda_host_finish(h);
        return TEST_SKIP;
    }
    snprintf(test_who, sizeof test_who, "process %d of %d: ", info.process_index,
             info.process_count);
    int skipper = first ? 0 : info.process_count - 1;
    char named[32];
    snprintf(named, sizeof named, "process %d", skipper);
    if (info.process_index == skipper) {
        test_capture_t cap;
        int capturing = test_capture_begin(&cap);
        TEST_STATUS(dcuda_host_finish(h), DCUDA_ERR_PEER);
        char *out = capturing ? test_capture_end(&cap) : NULL;
        printf("%s", out ? out : "");
        TEST_CHECK(out && test_find_line(out, "is in dcuda_host_run", "dcuda_host_finish"),
                   "no line names the process in dcuda_host_run");
        free(out);
        return 0;
    }
    TEST_STATUS(dcuda_host_run(h, NULL, 0, NULL), DCUDA_ERR_PEER);
    const char *why = dcuda_host_last_error(h);
    TEST_CONTAINS(why, named);
    TEST_CONTAINS(why, "is in dcuda_host_finish");
    dcuda_status_t fin = dcuda_host_finish(h);
    TEST_CHECK(fin == DCUDA_OK || fin == DCUDA_ERR_PEER, "dcuda_host_finish returned %s",
               dcuda_status_name(fin));
    return 0;
}

static int case_skip_run_first(int argc, char **argv) { return run_skip(argc, argv, 1); }
static int case_skip_run_last(int argc, char **argv) { return run_skip(argc, argv, 0); }

/* dcuda_host_init with its output captured (and printed): its status in
 * *st, the text in *out (NULL if it could not be read back); 0 if the
 * output could not be captured at all. */
static int init_captured(int argc, char **argv, dcuda_host_h *h, dcuda_status_t *st, char **out)
{
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 0;
    *st = dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(procs_wait), 32, h);
    *out = test_capture_end(&cap);
    printf("%s", *out ? *out : "");
    return 1;
}

/* Under mpirun: argv[2] names the setting; a process given one more
 * argument (the launch's) has a value the others have not. */
static int run_settings(int argc, char **argv, int differ)
{
    dcuda_host_h h;
    const char *name = argc > 2 ? argv[2] : "?";
    dcuda_status_t st;
    char *out;
    if (!init_captured(argc, argv, &h, &st, &out))
        return 1;
    if (differ) {
        char line[64];
        snprintf(line, sizeof line, "setting %s differs between processes", name);
        TEST_STATUS(st, DCUDA_ERR_SETTING);
        TEST_CHECK(out && test_find_line(out, "dcuda: error:", line), "no line '%s'", line);
    } else {
        TEST_STATUS(st, DCUDA_OK);
    }
    free(out);
    if (st == DCUDA_OK)
        TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    return 0;
}

static int case_settings_differ(int argc, char **argv) { return run_settings(argc, argv, 1); }
static int case_settings_same(int argc, char **argv) { return run_settings(argc, argv, 0); }

/* Under mpirun, process 1 is given an argument its dcuda_host_init refuses
 * while opening its backend (more CPU ranks than a process can run): every
 * process's dcuda_host_init fails, none waits for the others, and every
 * process ends normally (mpirun's exit status is 0). */
static int case_init_fails(int argc, char **argv)
{
    dcuda_host_h h;
    int refused_here = argc > 2; /* the launch gave this process the bad argument */
    dcuda_status_t st;
    char *out;
    if (!init_captured(argc, argv, &h, &st, &out))
        return 1;
    if (refused_here) {
        TEST_STATUS(st, DCUDA_ERR_SETTING);
    } else {
        TEST_STATUS(st, DCUDA_ERR_PEER);
        TEST_CHECK(out && test_find_line(out, "dcuda: error:", "failed opening its backend"),
                   "no line names the process whose dcuda_host_init failed");
    }
    free(out);
    if (st == DCUDA_OK)
        dcuda_host_finish(h);
    return 0;
}

/* A group's process: starts (forking `count` processes in all), learns
 * who it is and finishes; exits 10 if init fails, 11 if the group is not
 * of `count`. */
static dcuda_rank_info_t join_group(int argc, char **argv, int count)
{
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(procs_wait), 32, &h) != DCUDA_OK)
        exit(10);
    dcuda_host_get_rank_info(h, &info);
    dcuda_host_finish(h);
    if (info.process_count != count)
        exit(11);
    return info;
}

/* Inside the group (TEST_PROCS_GROUP set): two forked processes run the
 * kernel's empty cousin; process 1 then exits with status 3, process 0
 * ends with dcuda_host_exit_status(0) (ask = 1) or plain exit(0). */
static void group_main(int argc, char **argv, int ask)
{
    dcuda_rank_info_t info = join_group(argc, argv, 2);
    if (info.process_index == 1)
        exit(3);
    if (ask) {
        int got = dcuda_host_exit_status(0), again = dcuda_host_exit_status(7);
        printf("group: exit status %d, then %d\n", got, again);
        fflush(stdout);
        exit(got == 3 && again == 7 ? 0 : 12);
    }
    exit(0);
}

/* exit_signal's group of three: process 1 dies by SIGUSR1 once finished;
 * process 2 says what dcuda_host_exit_status(0) gave it and exits 0 if it
 * was 0; process 0 exits with what it gave. */
static void signal_group_main(int argc, char **argv)
{
    dcuda_rank_info_t info = join_group(argc, argv, 3);
    if (info.process_index == 1)
        raise(SIGUSR1);
    int got = dcuda_host_exit_status(0);
    printf("group: process %d: exit status %d\n", info.process_index, got);
    fflush(stdout);
    exit(info.process_index == 0 ? got : got == 0 ? 0 : 13);
}

/* Runs this program as the group (forked processes of its own) with its
 * output in a pipe; the group's exit status and output. */
static int run_group(char **argv, const char *name, char *out, size_t out_size)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        setenv("TEST_PROCS_GROUP", "1", 1);
        setenv("DCUDA_PROCESSES", strcmp(name, "exit_signal") == 0 ? "3" : "2", 1);
        setenv("DCUDA_BACKEND", "cpu", 1);
        setenv("DCUDA_RANKS", "2", 1);
        execl("/proc/self/exe", argv[0], name, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t got;
    while (n + 1 < out_size && (got = read(fds[0], out + n, out_size - 1 - n)) > 0)
        n += (size_t)got;
    out[n] = '\0';
    close(fds[0]);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_exit_case(int argc, char **argv, int ask)
{
    if (getenv("TEST_PROCS_GROUP"))
        group_main(argc, argv, ask);
    char out[8192];
    int rc = run_group(argv, argv[1], out, sizeof out);
    printf("%s", out);
    TEST_CONTAINS(out, "process 1 (pid ");
    TEST_CONTAINS(out, "exited with status 3");
    if (ask) {
        TEST_CHECK(rc == 0, "the group's process 0 saw the wrong statuses (exit %d)", rc);
        TEST_CONTAINS(out, "group: exit status 3, then 7");
    } else {
        TEST_CHECK(rc == 0, "the library changed the exit status of process 0 to %d", rc);
        TEST_CONTAINS(out, "does not include the failures above");
    }
    return 0;
}

static int case_exit_signal(int argc, char **argv)
{
    if (getenv("TEST_PROCS_GROUP"))
        signal_group_main(argc, argv);
    char out[8192];
    int rc = run_group(argv, argv[1], out, sizeof out);
    printf("%s", out);
    TEST_CONTAINS(out, "group: process 2: exit status 0");
    TEST_CHECK(rc == 128 + SIGUSR1, "the group's process 0 exited %d, not 128 + %d", rc, SIGUSR1);
    TEST_CONTAINS(out, "process 1 (pid ");
    return 0;
}

static int case_exit_status(int argc, char **argv) { return run_exit_case(argc, argv, 1); }
static int case_exit_report(int argc, char **argv) { return run_exit_case(argc, argv, 0); }

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "before_run", case_before_run },
        { "during_run", case_during_run },
        { "exit_during_run", case_exit_during_run },
        { "exit_during_run_first", case_exit_during_run_first },
        { "skip_run_first", case_skip_run_first },
        { "skip_run_last", case_skip_run_last },
        { "settings_differ", case_settings_differ },
        { "settings_same", case_settings_same },
        { "init_fails", case_init_fails },
        { "exit_status", case_exit_status },
        { "exit_report", case_exit_report },
        { "exit_signal", case_exit_signal },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
