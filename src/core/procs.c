/*
 * The process group of a dcuda program (see procs.h): bootstrap by fork or
 * by MPI, the node segment, host-level barriers and the detection of peers
 * that died.
 *
 * The node segment is a memfd. Forked processes inherit its mapping; under
 * MPI process 0 creates it and the others open it through /proc/<pid>/fd,
 * which is all MPI is used for. Death: a peer whose pid is gone, or is a
 * zombie, without having marked itself departed (at exit()) has died.
 */
#include "procs.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(DCUDA_HAVE_MPI)
#include <mpi.h>
#endif

#include "host_internal.h"
#include "hostlog.h"

#define NODE_MAGIC 0x6e6f6465u /* "node" */

enum procs_mode { MODE_NONE = 0, MODE_SINGLE, MODE_FORK, MODE_MPI };

static struct {
    int mode;
    int count;
    int index;
    dcuda_node_t *node;
    pid_t children[DCUDA_MAX_PROCESSES]; /* forked mode, process 0 */
    int child_status[DCUDA_MAX_PROCESSES];
    int child_reaped[DCUDA_MAX_PROCESSES];
    int lost;      /* a peer died */
    int mpi_owned; /* MPI was initialised here */
    char why[512]; /* why the last barrier failed */
} procs;

const char *dcuda_procs_why(void) { return procs.why; }

int dcuda_procs_started(void) { return procs.mode != MODE_NONE; }
int dcuda_procs_count(void) { return procs.count ? procs.count : 1; }
int dcuda_procs_index(void) { return procs.index; }
dcuda_node_t *dcuda_procs_node(void) { return procs.node; }

const char *dcuda_procs_mode(void)
{
    return procs.mode == MODE_FORK ? "forked" : procs.mode == MODE_MPI ? "MPI" : "one process";
}

static dcuda_node_t *node_create(int *fd_out)
{
    int fd = memfd_create("dcuda-node", 0);
    if (fd < 0 || ftruncate(fd, (off_t)sizeof(dcuda_node_t)) != 0) {
        dcuda_hostlog_error("cannot create the node segment: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    void *p = mmap(NULL, sizeof(dcuda_node_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        dcuda_hostlog_error("cannot map the node segment: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    *fd_out = fd;
    return (dcuda_node_t *)p;
}

static void mark_up(void)
{
    dcuda_node_proc_t *me = &procs.node->procs[procs.index];
    atomic_store(&me->pid, (int32_t)getpid());
    atomic_store_explicit(&me->state, DCUDA_PROC_UP, memory_order_release);
}

/* At exit: tell the peers this process left on purpose; process 0 of a
 * forked group waits for the others and fails if any of them failed. */
static void procs_at_exit(void)
{
    if (!procs.node)
        return;
    atomic_store_explicit(&procs.node->procs[procs.index].state, DCUDA_PROC_DEPARTED,
                          memory_order_release);
    int failed = procs.lost;
    if (procs.mode == MODE_FORK && procs.index == 0) {
        for (int p = 1; p < procs.count; p++) {
            int status = procs.child_status[p];
            if (!procs.child_reaped[p] && waitpid(procs.children[p], &status, 0) < 0)
                continue;
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                continue;
            failed = 1;
            if (WIFSIGNALED(status))
                dcuda_hostlog_error("process %d (pid %d) was killed by signal %d (%s)", p,
                                    (int)procs.children[p], WTERMSIG(status),
                                    strsignal(WTERMSIG(status)));
            else
                dcuda_hostlog_error("process %d (pid %d) exited with status %d", p,
                                    (int)procs.children[p], WEXITSTATUS(status));
        }
    }
#if defined(DCUDA_HAVE_MPI)
    if (procs.mode == MODE_MPI && procs.mpi_owned && !procs.lost)
        MPI_Finalize();
#endif
    if (failed) {
        fflush(NULL);
        _exit(1);
    }
}

static dcuda_status_t start_fork(int count)
{
    int fd;
    procs.node = node_create(&fd);
    if (!procs.node)
        return DCUDA_ERR_SYSTEM;
    close(fd); /* the mapping is inherited; nobody opens it by name */
    procs.node->magic = NODE_MAGIC;
    procs.node->count = (uint32_t)count;
    procs.count = count;
    procs.index = 0;
    procs.mode = MODE_FORK;
    procs.children[0] = getpid();
    fflush(NULL); /* buffered output must not be written twice */
    for (int k = 1; k < count; k++) {
        pid_t pid = fork();
        if (pid < 0) {
            dcuda_hostlog_error("cannot start process %d of %d: %s", k, count, strerror(errno));
            return DCUDA_ERR_SYSTEM;
        }
        if (pid == 0) {
            procs.index = k;
            memset(procs.children, 0, sizeof procs.children);
            break;
        }
        procs.children[k] = pid;
        atomic_store(&procs.node->procs[k].pid, (int32_t)pid);
    }
    mark_up();
    return DCUDA_OK;
}

/* Was this process started by an MPI launcher? */
static int launched_by_mpi(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                                 "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

#if defined(DCUDA_HAVE_MPI)
static dcuda_status_t mpi_fail(const char *what, int err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, text, &len);
    dcuda_hostlog_error("MPI bootstrap: %s: %s", what, text);
    return DCUDA_ERR_SYSTEM;
}

/* Process 0 creates the node segment, the others open it by its pid and
 * descriptor number. */
static dcuda_status_t mpi_share_node(int rank)
{
    int where[2] = {0, -1};
    if (rank == 0) {
        procs.node = node_create(&where[1]);
        if (procs.node) {
            procs.node->magic = NODE_MAGIC;
            procs.node->count = (uint32_t)procs.count;
            where[0] = (int)getpid();
        }
    }
    int err = MPI_Bcast(where, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (err != MPI_SUCCESS)
        return mpi_fail("sharing the node segment", err);
    if (where[1] < 0)
        return DCUDA_ERR_SYSTEM;
    if (rank != 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd/%d", where[0], where[1]);
        int fd = open(path, O_RDWR);
        void *p = fd < 0 ? MAP_FAILED
                         : mmap(NULL, sizeof(dcuda_node_t), PROT_READ | PROT_WRITE, MAP_SHARED,
                                fd, 0);
        if (fd >= 0)
            close(fd);
        if (p == MAP_FAILED) {
            dcuda_hostlog_error("MPI bootstrap: cannot map process 0's node segment %s: %s", path,
                                strerror(errno));
            return DCUDA_ERR_SYSTEM;
        }
        procs.node = (dcuda_node_t *)p;
    }
    return DCUDA_OK;
}

static dcuda_status_t start_mpi(const dcuda_settings_t *s)
{
    int inited = 0, provided, rank, size, local = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int err = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
        if (err != MPI_SUCCESS)
            return mpi_fail("MPI_Init_thread", err);
        procs.mpi_owned = 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node_comm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    MPI_Comm_size(node_comm, &local);
    MPI_Comm_free(&node_comm);
    if (local != size) {
        dcuda_hostlog_error("MPI bootstrap: the %d processes span several nodes (%d on this "
                            "one); this build of dcuda runs on one node",
                            size, local);
        return DCUDA_ERR_UNSUPPORTED;
    }
    if (size > DCUDA_MAX_PROCESSES || (s->processes && s->processes != size)) {
        dcuda_hostlog_error("MPI bootstrap: %d processes, but %s", size,
                            size > DCUDA_MAX_PROCESSES ? "at most 16 are supported"
                                                       : "DCUDA_PROCESSES asks for another count");
        return DCUDA_ERR_SETTING;
    }
    procs.count = size;
    procs.index = rank;
    procs.mode = MODE_MPI;
    dcuda_status_t st = mpi_share_node(rank);
    if (st != DCUDA_OK)
        return st;
    mark_up();
    MPI_Barrier(MPI_COMM_WORLD);
    return DCUDA_OK;
}
#endif

dcuda_status_t dcuda_procs_start(const dcuda_settings_t *s, int count)
{
    if (procs.mode != MODE_NONE)
        return DCUDA_OK;
    dcuda_status_t st = DCUDA_OK;
    if (launched_by_mpi()) {
#if defined(DCUDA_HAVE_MPI)
        st = start_mpi(s);
#else
        dcuda_hostlog_error("started by an MPI launcher, but this build of dcuda has no MPI "
                            "(install an MPI and rebuild)");
        st = DCUDA_ERR_UNSUPPORTED;
#endif
    } else if (count > 1) {
        st = start_fork(count);
    } else {
        procs.mode = MODE_SINGLE;
        procs.count = 1;
    }
    if (st == DCUDA_OK && procs.node)
        atexit(procs_at_exit);
    if (st != DCUDA_OK && procs.mode == MODE_NONE)
        procs.mode = MODE_SINGLE; /* keep going as one process after reporting */
    return st;
}

/* ---- liveness ------------------------------------------------------------ */

/* 1 if pid has ended or is a zombie. */
static int pid_ended(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT || errno == ESRCH;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *close_paren = strrchr(text, ')');
    return close_paren && (close_paren[2] == 'Z' || close_paren[2] == 'X');
}

/* Describes how process p ended, reaping it when it is a child (a dying
 * process is a zombie before its last threads are gone: give it a second). */
static void describe_end(int p, char *out, size_t size)
{
    for (int tries = 0; procs.mode == MODE_FORK && procs.index == 0 && !procs.child_reaped[p] &&
                        tries < 200;
         tries++) {
        if (waitpid(procs.children[p], &procs.child_status[p], WNOHANG) > 0) {
            procs.child_reaped[p] = 1;
            break;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    int status = procs.child_status[p];
    if (!procs.child_reaped[p])
        snprintf(out, size, "ended");
    else if (WIFSIGNALED(status))
        snprintf(out, size, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(out, size, "ended with status %d without exit()", WEXITSTATUS(status));
}

static int peer_died(int p, char *why, size_t why_size)
{
    dcuda_node_proc_t *q = &procs.node->procs[p];
    pid_t pid = (pid_t)atomic_load(&q->pid);
    if (pid <= 0 || atomic_load_explicit(&q->state, memory_order_acquire) == DCUDA_PROC_DEPARTED ||
        !pid_ended(pid))
        return 0;
    char how[96];
    describe_end(p, how, sizeof how);
    snprintf(why, why_size, "process %d (pid %d, %d rank(s) from WORLD rank %d) %s", p, (int)pid,
             q->rank_count, q->world_first, how);
    procs.lost = 1;
    return 1;
}

int dcuda_procs_lost(char *why, size_t why_size)
{
    for (int p = 0; p < procs.count && procs.node; p++)
        if (p != procs.index && peer_died(p, why, why_size))
            return 1;
    return 0;
}

/* ---- host-level barrier ------------------------------------------------- */

static void pause_briefly(unsigned *spins)
{
    if ((*spins)++ < 100) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, 50 * 1000};
    nanosleep(&ts, NULL);
}

/* Waits until process p has reached host barrier `target`. */
static dcuda_status_t wait_for(int p, uint32_t target, const char *where)
{
    dcuda_node_proc_t *q = &procs.node->procs[p];
    unsigned spins = 0;
    uint64_t start = dcuda_now_ns(), warned = start;
    char why[200];
    while ((int32_t)(atomic_load_explicit(&q->host_arrived, memory_order_acquire) - target) < 0) {
        pause_briefly(&spins);
        if ((spins & 63u) != 0)
            continue;
        if (atomic_load_explicit(&q->state, memory_order_acquire) == DCUDA_PROC_DEPARTED) {
            snprintf(procs.why, sizeof procs.why,
                     "process %d ended while process %d waits for it in %s: every process must "
                     "make the same dcuda_host_* calls",
                     p, procs.index, where);
            dcuda_hostlog_error("%s", procs.why);
            return DCUDA_ERR_PEER;
        }
        if (peer_died(p, why, sizeof why)) {
            snprintf(procs.why, sizeof procs.why, "%s while process %d waits for it in %s", why,
                     procs.index, where);
            dcuda_hostlog_error("%s", procs.why);
            return DCUDA_ERR_PEER;
        }
        uint64_t now = dcuda_now_ns();
        if (now - warned > 10ull * 1000 * 1000 * 1000) {
            dcuda_hostlog_warn("process %d has waited %.0f s for process %d in %s",
                               procs.index, (double)(now - start) / 1e9, p, where);
            warned = now;
        }
    }
    return DCUDA_OK;
}

dcuda_status_t dcuda_procs_barrier(const char *where)
{
    if (procs.count <= 1 || !procs.node)
        return DCUDA_OK;
    dcuda_node_proc_t *me = &procs.node->procs[procs.index];
    uint32_t target =
        atomic_fetch_add_explicit(&me->host_arrived, 1u, memory_order_acq_rel) + 1u;
    for (int p = 0; p < procs.count; p++) {
        if (p == procs.index)
            continue;
        dcuda_status_t st = wait_for(p, target, where);
        if (st != DCUDA_OK)
            return st;
    }
    return DCUDA_OK;
}
