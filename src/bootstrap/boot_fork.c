/*
 * Fork mode: the process that calls dcuda_host_init first becomes process 0
 * and forks the others; all of them then run the program's main (SPMD, as
 * under MPI). A small anonymous shared mapping, inherited by every child,
 * carries the pids and the allgathers of the start.
 *
 * Process 0 reaps the others: when a peer is described after its death,
 * when the program asks for its exit status (dcuda_host_exit_status), and
 * at exit, where it waits for those still running and reports the ones that
 * failed. It never ends the process itself.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot.h"
#include "dcuda/shared/layout.h"
#include "modes.h"
#include "util/clock.h"
#include "util/msg.h"
#include "util/proc.h"

/* Polls of an allgather before each pause, and the pause. */
#define FORK_SPINS_BEFORE_SLEEP 100u
#define FORK_PAUSE_NS (50 * DCU_NS_PER_US)
/* Reaping a child that is ending: one try per step, and how long. */
#define FORK_REAP_STEP_NS (5 * DCU_NS_PER_MS)
#define FORK_REAP_PATIENCE_MS 1000

/* Shared by the group: each process writes only its own entries. Slots are
 * double-buffered by round, so a process may write round r + 1 while the
 * others still read round r. */
typedef struct fork_area {
    _Atomic int32_t pid[DCUDA_MAX_NODE_PROCESSES];
    _Atomic uint32_t round[DCUDA_MAX_NODE_PROCESSES]; /* allgathers contributed to */
    unsigned char slot[2][DCUDA_MAX_NODE_PROCESSES][DCU_BOOT_RECORD_BYTES];
} fork_area_t;

static struct {
    fork_area_t *area;
    int count, index;
    uint32_t rounds;
    pid_t children[DCUDA_MAX_NODE_PROCESSES]; /* process 0 */
    int status[DCUDA_MAX_NODE_PROCESSES];
    int reaped[DCUDA_MAX_NODE_PROCESSES];
    int waited; /* process 0 has waited for every other */
} fk;

/* ---- reaping (process 0) ---------------------------------------------------- */

static int reap(int p, int block)
{
    if (fk.reaped[p])
        return 1;
    if (waitpid(fk.children[p], &fk.status[p], block ? 0 : WNOHANG) <= 0)
        return 0;
    fk.reaped[p] = 1;
    return 1;
}

static int fork_child_status(int p, int patience_ms, int *status)
{
    if (fk.index != 0 || p <= 0 || p >= fk.count)
        return 0;
    uint64_t steps = (uint64_t)patience_ms * DCU_NS_PER_MS / FORK_REAP_STEP_NS;
    for (uint64_t k = 0; !reap(p, 0) && k < steps; k++)
        dcu_clock_sleep_ns(FORK_REAP_STEP_NS);
    if (!fk.reaped[p])
        return 0;
    *status = fk.status[p];
    return 1;
}

/* An exit code for a wait status: its exit status, or 128 + signal. */
static int exit_code(int status)
{
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* Waits for every other process; reports those that failed. Returns the
 * first failure's exit code, or 0. */
static int wait_all(void)
{
    int first = 0;
    for (int p = 1; p < fk.count; p++) {
        if (!reap(p, 1))
            continue;
        int status = fk.status[p];
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            continue;
        if (WIFSIGNALED(status))
            dcu_msg_error("process %d (pid %d) was killed by signal %d (%s)", p,
                          (int)fk.children[p], WTERMSIG(status), strsignal(WTERMSIG(status)));
        else
            dcu_msg_error("process %d (pid %d) exited with status %d", p, (int)fk.children[p],
                          WEXITSTATUS(status));
        if (!first)
            first = exit_code(status);
    }
    fk.waited = 1;
    return first;
}

static int fork_exit_status(int status)
{
    if (fk.index != 0 || fk.waited)
        return status;
    int others = wait_all();
    return status ? status : others;
}

/* At exit of process 0: wait for the others, so the program ends after all
 * of its processes; say when a failure cannot show in the exit status. */
static void fork_at_exit(void)
{
    if (fk.waited)
        return;
    fflush(NULL);
    if (wait_all())
        dcu_msg_error("the exit status of process 0 does not include the failures above: end "
                      "main with `return dcuda_host_exit_status(status);`");
}

/* ---- start and allgather ------------------------------------------------------- */

dcuda_status_t dcu_boot_fork_start(int count, int *index)
{
    fork_area_t *a =
        mmap(NULL, sizeof *a, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) {
        dcu_msg_error("cannot map memory to start %d processes: %s", count, strerror(errno));
        return DCUDA_ERR_SYSTEM;
    }
    fk.area = a;
    fk.count = count;
    fk.index = 0;
    fk.children[0] = getpid();
    atomic_store(&a->pid[0], (int32_t)getpid());
    fflush(NULL); /* buffered output must not be written twice */
    for (int k = 1; k < count; k++) {
        pid_t pid = fork();
        if (pid < 0) {
            dcu_msg_error("cannot start process %d of %d: %s", k, count, strerror(errno));
            fk.count = k; /* the ones started are reaped at exit */
            atexit(fork_at_exit);
            return DCUDA_ERR_SYSTEM;
        }
        if (pid == 0) {
            fk.index = k;
            memset(fk.children, 0, sizeof fk.children);
            atomic_store(&a->pid[k], (int32_t)getpid());
            *index = k;
            return DCUDA_OK;
        }
        fk.children[k] = pid;
        atomic_store(&a->pid[k], (int32_t)pid);
    }
    atexit(fork_at_exit);
    *index = 0;
    return DCUDA_OK;
}

static int contributed(int p, uint32_t r)
{
    return (int32_t)(atomic_load_explicit(&fk.area->round[p], memory_order_acquire) - r) >= 0;
}

/* How process p (pid) ended: reaped and described in process 0, its
 * parent; "ended" elsewhere. */
static void describe_end(int p, pid_t pid, char *out, size_t size)
{
    int status = 0;
    if (!fork_child_status(p, FORK_REAP_PATIENCE_MS, &status))
        snprintf(out, size, "process %d (pid %d) ended", p, (int)pid);
    else if (WIFSIGNALED(status))
        snprintf(out, size, "process %d (pid %d) was killed by signal %d (%s)", p, (int)pid,
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(out, size, "process %d (pid %d) ended with status %d", p, (int)pid,
                 WEXITSTATUS(status));
}

/* Has process p contributed round r, or ended without (then why says so)?
 * (A process may contribute and end between two looks: its round is read
 * again once it is seen ended.) A long wait is reported now and then. */
static dcuda_status_t await_round(int p, uint32_t r, const char *where, char *why, size_t why_size)
{
    unsigned spins = 0;
    uint64_t start = 0, warned = 0;
    while (!contributed(p, r)) {
        dcu_boot_waiting();
        if (spins++ < FORK_SPINS_BEFORE_SLEEP) {
            sched_yield();
            continue;
        }
        pid_t pid = (pid_t)atomic_load(&fk.area->pid[p]);
        if (pid > 0 && dcu_proc_ended(pid) && !contributed(p, r)) {
            char how[160];
            describe_end(p, pid, how, sizeof how);
            snprintf(why, why_size, "%s while process %d waits for it in %s", how, fk.index, where);
            return DCUDA_ERR_PEER;
        }
        uint64_t now = dcu_clock_ns();
        if (!start)
            start = warned = now;
        if (now - warned >= DCU_BOOT_WARN_NS) {
            dcu_msg_warn("process %d has waited %.0f s for process %d (pid %d) in %s", fk.index,
                         (double)(now - start) / DCU_NS_PER_S, p, (int)pid, where);
            warned = now;
        }
        dcu_clock_sleep_ns(FORK_PAUSE_NS);
    }
    return DCUDA_OK;
}

static dcuda_status_t fork_allgather(const void *mine, void *all, size_t size, const char *where,
                                     char *why, size_t why_size)
{
    uint32_t r = ++fk.rounds;
    unsigned char(*slots)[DCU_BOOT_RECORD_BYTES] = fk.area->slot[r & 1u];
    if (size > DCU_BOOT_RECORD_BYTES)
        return DCUDA_ERR_INVALID_ARG;
    memcpy(slots[fk.index], mine, size);
    atomic_store_explicit(&fk.area->round[fk.index], r, memory_order_release);
    for (int p = 0; p < fk.count; p++) {
        dcuda_status_t st = await_round(p, r, where, why, why_size);
        if (st != DCUDA_OK)
            return st;
        memcpy((char *)all + (size_t)p * size, slots[p], size);
    }
    return DCUDA_OK;
}

const dcu_boot_ops_t dcu_boot_fork_ops = {
    .version = DCU_BOOT_OPS_VERSION,
    .name = "forked",
    .allgather = fork_allgather,
    .node_key = NULL, /* one host: found from what each tells */
    .usable = NULL,
    .abandon = NULL,
    .exit_status = fork_exit_status,
    .child_status = fork_child_status,
};
