/*
 * The node segment, host-level barriers and liveness (see node.h).
 *
 * Each node's segment is a memfd of the node's first process; the node's
 * other processes open it through /proc/<pid>/fd after the bootstrap's
 * allgather told them the pid and descriptor. Death, on a node: a peer
 * whose pid is gone, or is a zombie, without having marked itself departed
 * (at exit()) has died. Processes of other nodes are the launcher's and
 * the network's to watch.
 */
#include "node.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bootstrap/boot.h"
#include "util/clock.h"
#include "util/memfd.h"
#include "util/msg.h"
#include "util/proc.h"

#define NODE_MAGIC 0x6e6f6465u /* "node" */
/* How long a dying child may take to be reaped before it is described. */
#define NODE_REAP_PATIENCE_MS 1000

/* The node's processes are numbered 0 .. count - 1 here (their place in
 * the segment); member[] maps that place to the program's numbering. */
static struct {
    dcu_node_t *seg;
    int fd; /* the node's first process: the segment's memfd, kept open for the others */
    int count, index;
    int member[DCUDA_MAX_NODE_PROCESSES];
    pid_t pids[DCUDA_MAX_NODE_PROCESSES];
    int lost;        /* a peer died */
    int exit_marked; /* the peers were told how this process exits */
} node = { NULL, -1, 1, 0, { 0 }, { 0 }, 0, 0 };

dcu_node_t *dcu_node(void) { return node.seg; }
int dcu_node_index(void) { return node.index; }
int dcu_node_count(void) { return node.count; }

dcu_node_proc_t *dcu_node_proc(int p)
{
    for (int l = 0; l < node.count; l++)
        if (node.member[l] == p)
            return &node.seg->procs[l];
    return NULL;
}

/* My node's processes, in the program's order (the first owns the
 * segment), and my place among them. */
static void find_members(void)
{
    int mine = dcu_boot_node(dcu_boot_rank());
    node.count = 0;
    for (int p = 0; p < dcu_boot_size() && node.count < DCUDA_MAX_NODE_PROCESSES; p++) {
        if (dcu_boot_node(p) != mine)
            continue;
        if (p == dcu_boot_rank())
            node.index = node.count;
        node.member[node.count++] = p;
    }
}

/* ---- sharing the segment ------------------------------------------------------ */

static dcu_node_t *map_fd(int fd)
{
    void *p = mmap(NULL, sizeof(dcu_node_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? NULL : (dcu_node_t *)p;
}

static dcuda_status_t create_segment(void)
{
    int fd = dcu_memfd_create("dcuda-node", sizeof(dcu_node_t));
    dcu_node_t *seg = fd >= 0 ? map_fd(fd) : NULL;
    if (!seg) {
        dcu_msg_error("cannot create the node segment: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return DCUDA_ERR_SYSTEM;
    }
    seg->magic = NODE_MAGIC;
    seg->count = (uint32_t)node.count;
    node.seg = seg;
    node.fd = fd;
    return DCUDA_OK;
}

static dcuda_status_t open_segment(pid_t owner, int fd_there)
{
    char path[64];
    int fd = dcu_memfd_open_peer(owner, fd_there, path, sizeof path);
    dcu_node_t *seg = fd < 0 ? NULL : map_fd(fd);
    int err = errno;
    if (fd >= 0)
        close(fd);
    if (!seg || seg->magic != NODE_MAGIC) {
        dcu_msg_error("cannot map the node segment %s: %s", path,
                      seg ? "not a node segment" : strerror(err));
        return DCUDA_ERR_SYSTEM;
    }
    node.seg = seg;
    return DCUDA_OK;
}

/* At exit: tell the peers this process left on purpose, and whether its
 * ranks were still running (then it is lost to their run). Once: the run
 * may end while the exit handlers run, and must not turn "left its run"
 * into "departed" afterwards. */
void dcu_node_mark_exit(void)
{
    if (!node.seg || node.exit_marked)
        return;
    node.exit_marked = 1;
    dcu_node_proc_t *me = &node.seg->procs[node.index];
    int in_run = atomic_load_explicit(&me->in_run, memory_order_relaxed) != 0;
    atomic_store_explicit(&me->state, in_run ? DCU_PROC_LEFT_RUN : DCU_PROC_DEPARTED,
                          memory_order_release);
    if (in_run) /* the peers will not end the launcher's job with this one */
        dcu_boot_abandon("this process left while its ranks ran");
}

static void node_at_exit(void) { dcu_node_mark_exit(); }

void dcu_node_run_begin(void)
{
    if (!node.seg)
        return;
    dcu_node_proc_t *me = &node.seg->procs[node.index];
    atomic_store_explicit(&me->alive_ns, dcu_clock_ns(), memory_order_relaxed);
    atomic_store_explicit(&me->in_run, 1u, memory_order_relaxed);
    atomic_fetch_add_explicit(&me->runs, 1u, memory_order_release);
}

void dcu_node_run_end(void)
{
    if (node.seg)
        atomic_store_explicit(&node.seg->procs[node.index].in_run, 0u, memory_order_release);
}

void dcu_node_abort_run(const char *why)
{
    if (!node.seg)
        return;
    dcu_node_proc_t *me = &node.seg->procs[node.index];
    uint32_t run = atomic_load_explicit(&me->runs, memory_order_relaxed);
    if (atomic_load_explicit(&me->aborted_run, memory_order_relaxed) == run)
        return;
    snprintf(me->abort_why, sizeof me->abort_why, "%s", why);
    atomic_store_explicit(&me->aborted_run, run, memory_order_release);
}

int dcu_node_peer_aborted(char *why, size_t why_size)
{
    if (!node.seg)
        return 0;
    uint32_t run = atomic_load_explicit(&node.seg->procs[node.index].runs, memory_order_relaxed);
    for (int l = 0; l < node.count; l++) {
        dcu_node_proc_t *q = &node.seg->procs[l];
        if (l == node.index || atomic_load_explicit(&q->aborted_run, memory_order_acquire) != run)
            continue;
        snprintf(why, why_size, "%s", q->abort_why);
        return 1;
    }
    return 0;
}

dcuda_status_t dcu_node_open(void)
{
    if (node.seg || dcu_boot_size() <= 1)
        return DCUDA_OK;
    find_members();
    struct pid_fd {
        int32_t pid, fd;
    } mine = { (int32_t)getpid(), -1 }, *all = malloc((size_t)dcu_boot_size() * sizeof *all);
    if (!all)
        return DCUDA_ERR_NO_MEMORY; /* the others' next step fails on this one's absence */
    int leader = node.member[0];
    dcuda_status_t st = node.index == 0 ? create_segment() : DCUDA_OK;
    mine.fd = node.fd;
    /* A leader takes part even when it failed (fd -1), so nobody waits. */
    dcuda_status_t gathered = dcu_boot_allgather(&mine, all, sizeof mine);
    struct pid_fd lead = all[leader];
    for (int l = 0; gathered == DCUDA_OK && l < node.count; l++)
        node.pids[l] = (pid_t)all[node.member[l]].pid;
    free(all);
    if (st != DCUDA_OK || gathered != DCUDA_OK)
        return st != DCUDA_OK ? st : gathered;
    if (lead.fd < 0)
        return DCUDA_ERR_SYSTEM; /* the leader reported why */
    if (node.index != 0 && (st = open_segment((pid_t)lead.pid, lead.fd)) != DCUDA_OK)
        return st;
    dcu_node_proc_t *me = &node.seg->procs[node.index];
    atomic_store(&me->pid, (int32_t)getpid());
    atomic_store_explicit(&me->state, DCU_PROC_UP, memory_order_release);
    atexit(node_at_exit);
    return DCUDA_OK;
}

/* ---- liveness ------------------------------------------------------------------ */

/* How process p ended, reaping it when it is a forked child. */
static void describe_end(int p, char *out, size_t size)
{
    int status = 0;
    if (!dcu_boot_child_status(p, NODE_REAP_PATIENCE_MS, &status))
        snprintf(out, size, "ended");
    else if (WIFSIGNALED(status))
        snprintf(out, size, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(out, size, "ended with status %d without exit()", WEXITSTATUS(status));
}

static int peer_died(int l, char *why, size_t why_size)
{
    dcu_node_proc_t *q = &node.seg->procs[l];
    pid_t pid = node.pids[l];
    int p = node.member[l];
    uint32_t state = atomic_load_explicit(&q->state, memory_order_acquire);
    char how[96];
    if (state == DCU_PROC_LEFT_RUN)
        snprintf(how, sizeof how, "left (exit() or a return from main) while its ranks ran");
    else if (pid <= 0 || state == DCU_PROC_DEPARTED || !dcu_proc_ended(pid))
        return 0;
    else
        describe_end(p, how, sizeof how);
    snprintf(why, why_size, "process %d (pid %d, %d rank(s) from WORLD rank %d) %s", p, (int)pid,
             q->rank_count, q->world_first, how);
    if (!node.lost)
        dcu_boot_abandon(why);
    node.lost = 1;
    return 1;
}

int dcu_node_lost(char *why, size_t why_size)
{
    for (int l = 0; l < node.count && node.seg; l++)
        if (l != node.index && peer_died(l, why, why_size))
            return 1;
    return 0;
}

/* ---- the deadlock detector's rounds ----------------------------------------------- */

static uint64_t dl_key(uint32_t round)
{
    uint32_t run = atomic_load_explicit(&node.seg->procs[node.index].runs, memory_order_relaxed);
    return (uint64_t)run << 32 | round;
}

void dcu_node_dl_ask(uint32_t round)
{
    atomic_store_explicit(&node.seg->procs[0].dl_ask, dl_key(round), memory_order_release);
}

uint32_t dcu_node_dl_asked(void)
{
    uint64_t ask = atomic_load_explicit(&node.seg->procs[0].dl_ask, memory_order_acquire);
    uint64_t done =
        atomic_load_explicit(&node.seg->procs[node.index].dl_answer, memory_order_relaxed);
    return ask >> 32 == dl_key(0) >> 32 && ask != done ? (uint32_t)ask : 0u;
}

void dcu_node_dl_answer(uint32_t round, const dcu_quiet_t *q)
{
    dcu_node_proc_t *me = &node.seg->procs[node.index];
    me->dl_quiet = *q;
    atomic_store_explicit(&me->dl_answer, dl_key(round), memory_order_release);
}

int dcu_node_dl_collect(uint32_t round, dcu_quiet_t *sum)
{
    uint64_t want = dl_key(round);
    *sum = dcu_quiet_none();
    for (int p = 0; p < node.count; p++) {
        dcu_node_proc_t *q = &node.seg->procs[p];
        if (atomic_load_explicit(&q->dl_answer, memory_order_acquire) != want)
            return 0;
        dcu_quiet_fold(sum, &q->dl_quiet);
    }
    return 1;
}

uint32_t dcu_node_run_mark(void)
{
    return node.seg ? atomic_load_explicit(&node.seg->procs[node.index].runs, memory_order_relaxed)
                    : 0u;
}

void dcu_node_dl_declare(void)
{
    if (node.seg)
        atomic_store_explicit(&node.seg->deadlocked, dcu_node_run_mark(), memory_order_release);
}

int dcu_node_dl_declared(void)
{
    return node.seg &&
           atomic_load_explicit(&node.seg->deadlocked, memory_order_acquire) == dcu_node_run_mark();
}

void dcu_node_alive(void)
{
    if (node.seg)
        atomic_store_explicit(&node.seg->procs[node.index].alive_ns, dcu_clock_ns(),
                              memory_order_relaxed);
}

int dcu_node_stalled(uint64_t ns, char *why, size_t why_size)
{
    uint64_t now = dcu_clock_ns();
    for (int l = 0; l < node.count && node.seg; l++) {
        dcu_node_proc_t *q = &node.seg->procs[l];
        uint64_t alive = atomic_load_explicit(&q->alive_ns, memory_order_relaxed);
        if (l == node.index || !atomic_load_explicit(&q->in_run, memory_order_relaxed) ||
            alive == 0 || now - alive < ns)
            continue;
        snprintf(why, why_size,
                 "process %d (pid %d, %d rank(s) from WORLD rank %d) has not served its ranks "
                 "for %.1f s (stopped, or its host thread held up)",
                 node.member[l], (int)node.pids[l], q->rank_count, q->world_first,
                 (double)(now - alive) / DCU_NS_PER_S);
        return 1;
    }
    return 0;
}
