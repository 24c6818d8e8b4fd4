/*
 * The process group's start and its one policy: how many processes, and
 * which way they start; and the host steps every collective exchange of
 * the host runtimes goes through (see boot.h). Single mode lives here; the
 * others (forked, MPI, rendezvous) in their own files, each a table of
 * operations (modes.h) that moves fixed-size records.
 */
#include "boot.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcuda/shared/layout.h"
#include "launch_env.h"
#include "modes.h"
#include "plugin/loader.h"
#include "util/msg.h"
#include "util/proc.h"

/* What one process contributes to a step: which call it is in, how many
 * steps it took before, and its bytes. Every step moves one record a
 * process, whatever its size, so that steps of different calls still
 * match each other as exchanges and the mismatch is seen, not waited on. */
typedef struct boot_record {
    uint16_t call;
    uint16_t size;
    uint32_t seq;
    unsigned char data[DCU_BOOT_GATHER_MAX];
} boot_record_t;
_Static_assert(sizeof(boot_record_t) == DCU_BOOT_RECORD_BYTES, "boot record");

/* Who a process is, for messages: its pid and host. */
typedef struct boot_who {
    int32_t pid;
    int32_t key;  /* its host, as the launcher sees shared memory */
    int32_t kind; /* of its ranks (dcu_boot_find_nodes) */
    char host[DCU_BOOT_GATHER_MAX - 12];
} boot_who_t;

static struct {
    int started;
    const dcu_boot_ops_t *ops; /* NULL: one process alone */
    const dcu_plugin_t *mpi;   /* MPI's plugin, when the group started through it */
    int count;
    int index;
    int nodes;            /* node count (0: not found yet) */
    int kind;             /* of this process's ranks when the nodes were found */
    int *node;            /* [count]: node of each process, once found */
    int64_t *host;        /* [count]: host key and kind of ranks of each process */
    int *host_index;      /* [count]: its index among its host's processes */
    boot_who_t *who;      /* [count], once the nodes are found */
    dcu_boot_call_t call; /* the call this process's steps belong to */
    uint32_t steps;       /* steps taken */
    int stopped;          /* no more steps together (why says why) */
    int ended;            /* the program's end was stepped */
    char why[512];
    int exit_registered;
} boot;

int dcu_boot_started(void) { return boot.started; }
int dcu_boot_size(void) { return boot.count ? boot.count : 1; }
int dcu_boot_rank(void) { return boot.index; }
const char *dcu_boot_why(void) { return boot.why; }
void dcu_boot_enter(dcu_boot_call_t call) { boot.call = call; }

const char *dcu_boot_mode_name(void) { return boot.ops ? boot.ops->name : "one process"; }
int dcu_boot_is_mpi(void) { return boot.ops && (boot.ops->caps & DCU_BOOT_CAP_MPI); }

const char *dcu_boot_call_name(dcu_boot_call_t call)
{
    switch (call) {
    case DCU_CALL_INIT:
        return "dcuda_host_init";
    case DCU_CALL_RUN:
        return "dcuda_host_run";
    case DCU_CALL_FINISH:
        return "dcuda_host_finish";
    case DCU_CALL_EXIT:
        return "the program's end (dcuda_host_exit_status, or exit)";
    default:
        return "a host call";
    }
}

const char *dcu_boot_describe(int p, char *buf, size_t size)
{
    if (boot.who && p >= 0 && p < boot.count)
        snprintf(buf, size, "process %d (pid %d on %s)", p, (int)boot.who[p].pid, boot.who[p].host);
    else
        snprintf(buf, size, "process %d", p);
    return buf;
}

/* Was this process started by a launcher (or told where to meet)? */
int dcu_boot_under_launcher(void)
{
    char buf[160], why[8];
    dcu_boot_tcp_plan_t plan;
    return dcu_launch_mpi_seen(buf, sizeof buf) || (getenv("DCUDA_BOOT_ADDR") != NULL) ||
           dcu_launch_slurm(0, &plan, why, sizeof why) != 0;
}

/* Processes wanted when no launcher decides: the setting, else one per GPU
 * (at most a node's), else one. */
static int wanted_processes(long processes, dcu_boot_count_fn count_gpus)
{
    if (processes > 0)
        return (int)processes;
    int gpus = count_gpus ? count_gpus() : 0;
    if (gpus > 1)
        return gpus < DCUDA_MAX_NODE_PROCESSES ? gpus : DCUDA_MAX_NODE_PROCESSES;
    return 1;
}

/* A mode of this contract's version becomes the group's. */
static dcuda_status_t take_mode(const dcu_boot_ops_t *ops)
{
    if (ops->version != DCU_BOOT_OPS_VERSION) {
        dcu_msg_error("the %s bootstrap is of contract version %u, this library's is %u", ops->name,
                      ops->version, DCU_BOOT_OPS_VERSION);
        return DCUDA_ERR_UNSUPPORTED;
    }
    boot.ops = ops;
    return DCUDA_OK;
}

static dcuda_status_t start_rendezvous(const dcu_boot_tcp_plan_t *plan)
{
    dcuda_status_t st = dcu_boot_tcp_start(plan);
    if (st != DCUDA_OK)
        return st;
    boot.count = plan->count;
    boot.index = plan->index;
    return take_mode(&dcu_boot_tcp_ops);
}

/* MPI's bootstrap, from its plugin: NULL and why when there is none. */
static const dcu_plugin_t *mpi_plugin(char *why, size_t why_size)
{
    dcu_plugin_set_waiting(dcu_boot_waiting);
    const dcu_plugin_t *p = dcu_plugin_get("mpi", why, why_size);
    if (p && !p->boot) {
        snprintf(why, why_size, "the MPI plugin has no bootstrap");
        return NULL;
    }
    return p;
}

/* PMIx's plan (its plugin): 1 and the plan, 0 when there is none (why
 * says so), -1 when PMIx started this process and the plan failed. */
static int pmix_plan(long processes, dcu_boot_tcp_plan_t *plan, char *why, size_t why_size)
{
    const dcu_plugin_t *p = dcu_plugin_get("pmix", why, why_size);
    if (!p || !p->boot_plan)
        return 0;
    int told = p->boot_plan(processes, plan, why, why_size);
    plan->timeout_s = dcu_launch_timeout();
    if (told == 0)
        snprintf(why, why_size, "no PMIx server started this process");
    return told;
}

/* DCUDA_BOOT: the way in to take first where several could be. */
enum boot_want { BOOT_WANT_AUTO, BOOT_WANT_PMIX, BOOT_WANT_SLURM };

/* DCUDA_BOOT's value (unset or empty: the usual order); -1, said, for a
 * value that names no way in. */
static int boot_wanted(void)
{
    const char *want = getenv("DCUDA_BOOT");
    if (!want || !*want)
        return BOOT_WANT_AUTO;
    if (strcmp(want, "pmix") == 0)
        return BOOT_WANT_PMIX;
    if (strcmp(want, "slurm") == 0)
        return BOOT_WANT_SLURM;
    dcu_msg_error("DCUDA_BOOT=%s names no way to start: it takes pmix (PMIx before MPI "
                  "under a launcher) or slurm (a Slurm step's variables, though a launcher's "
                  "MPI variables are there too); unset, dcuda takes the first way that "
                  "applies (docs/clusters.md)",
                  want);
    return -1;
}

/* Started by an MPI launcher: MPI when its plugin loads (unless
 * DCUDA_BOOT=pmix); else PMIx's plan when its server started the process;
 * else a Slurm step's rendezvous when there is one; else the process must
 * not run alone, and says how to start it. */
static dcuda_status_t start_under_mpi_launcher(long processes, const char *launcher, int want)
{
    char why[1100] = "", pmix_why[1100] = "", plan_why[400];
    int pmix_first = want == BOOT_WANT_PMIX;
    const dcu_plugin_t *mpi = pmix_first ? NULL : mpi_plugin(why, sizeof why);
    if (mpi) {
        dcuda_status_t st = mpi->boot_start(processes, &boot.count, &boot.index);
        boot.mpi = mpi;
        return st == DCUDA_OK ? take_mode(mpi->boot) : st;
    }
    if (pmix_first)
        snprintf(why, sizeof why, "DCUDA_BOOT=pmix");
    dcu_boot_tcp_plan_t plan;
    int told = pmix_plan(processes, &plan, pmix_why, sizeof pmix_why);
    if (told == 0)
        told = dcu_launch_slurm(processes, &plan, plan_why, sizeof plan_why);
    else if (told < 0)
        snprintf(plan_why, sizeof plan_why, "%s", pmix_why);
    if (told > 0)
        return start_rendezvous(&plan);
    if (told < 0)
        dcu_msg_error("%s", plan_why);
    else
        dcu_msg_error("started by %s, but dcuda cannot join its processes: no MPI (%s), no "
                      "PMIx (%s); install those plugins, or start the processes with "
                      "DCUDA_BOOT_ADDR, DCUDA_PROCESS_INDEX and DCUDA_PROCESSES "
                      "(docs/clusters.md)",
                      launcher, why, pmix_why);
    return told < 0 ? DCUDA_ERR_SETTING : DCUDA_ERR_UNSUPPORTED;
}

/* A launcher's or the user's plan decides: 1 and *st when one did (the
 * group started, or why not), 0 when none is there. */
static int start_as_told(long processes, dcuda_status_t *st)
{
    char why[400], launcher[160];
    dcu_boot_tcp_plan_t plan;
    const int want = boot_wanted();
    if (want < 0) {
        *st = DCUDA_ERR_SETTING;
        return 1;
    }
    int told = dcu_launch_rendezvous(processes, &plan, why, sizeof why);
    if (told == 0 && want == BOOT_WANT_SLURM) {
        told = dcu_launch_slurm(processes, &plan, why, sizeof why);
        if (told == 0)
            snprintf(why, sizeof why,
                     "DCUDA_BOOT=slurm, but this process is not a task of a Slurm step of "
                     "two or more tasks (SLURM_STEP_NUM_TASKS is %s)",
                     getenv("SLURM_STEP_NUM_TASKS") ? getenv("SLURM_STEP_NUM_TASKS") : "unset");
        told = told == 0 ? -1 : told;
    }
    if (told == 0 && dcu_launch_mpi_seen(launcher, sizeof launcher)) {
        *st = start_under_mpi_launcher(processes, launcher, want);
        return 1;
    }
    if (told == 0 && want == BOOT_WANT_PMIX) {
        snprintf(why, sizeof why,
                 "DCUDA_BOOT=pmix, but no PMIx server started this process (no PMIX_RANK): "
                 "start it with mpirun, prterun or srun --mpi=pmix, or unset DCUDA_BOOT");
        told = -1;
    }
    if (told == 0)
        told = dcu_launch_slurm(processes, &plan, why, sizeof why);
    if (told == 0)
        return 0;
    if (told < 0)
        dcu_msg_error("%s", why);
    *st = told < 0 ? DCUDA_ERR_SETTING : start_rendezvous(&plan);
    return 1;
}

int dcu_boot_node(int p) { return boot.node && p >= 0 && p < boot.count ? boot.node[p] : 0; }
int dcu_boot_node_count(void) { return boot.nodes ? boot.nodes : 1; }

int dcu_boot_host_index(int p)
{
    return boot.host_index && p >= 0 && p < boot.count ? boot.host_index[p] : 0;
}

int dcu_boot_host_size(int p)
{
    int n = 0;
    for (int q = 0; boot.host && q < boot.count; q++)
        n += boot.host[q] == boot.host[p];
    return n > 0 ? n : 1;
}

/* ---- steps ------------------------------------------------------------------- */

/* The host steps stop: every later one fails at once, saying why. When a
 * peer was lost, MPI is not finalised at exit either (a collective
 * finalise would wait for it forever); after a mismatch every process is
 * still there to finalise. */
static void stop_steps(const char *why, int lost)
{
    if (lost && boot.ops && boot.ops->abandon)
        boot.ops->abandon();
    if (boot.stopped)
        return;
    boot.stopped = 1;
    snprintf(boot.why, sizeof boot.why, "%s", why);
}

void dcu_boot_abandon(const char *why) { stop_steps(why, 1); }

/* Process p's record differs from mine: says so, and the steps stop. */
static void mismatch(const boot_record_t *mine, const boot_record_t *theirs, int p)
{
    char who[160], why[sizeof boot.why];
    dcu_boot_describe(p, who, sizeof who);
    if (theirs->call != mine->call)
        snprintf(why, sizeof why,
                 "%s is in %s while process %d is in %s: every process must make the same "
                 "dcuda_host_* calls in the same order",
                 who, dcu_boot_call_name((dcu_boot_call_t)theirs->call), boot.index,
                 dcu_boot_call_name((dcu_boot_call_t)mine->call));
    else
        snprintf(why, sizeof why,
                 "%s is at host step %u of the program and process %d at step %u, both in %s: "
                 "every process must make the same dcuda_host_* calls in the same order",
                 who, (unsigned)theirs->seq, boot.index, (unsigned)mine->seq,
                 dcu_boot_call_name((dcu_boot_call_t)mine->call));
    dcu_msg_error("%s", why);
    stop_steps(why, 0);
}

/* Moves one record a process through the group's mode; why says what
 * went wrong when it fails. */
static dcuda_status_t exchange(const boot_record_t *mine, boot_record_t *all, char *why,
                               size_t why_size)
{
    const char *where = dcu_boot_call_name(boot.call);
    if (boot.ops)
        return boot.ops->allgather(mine, all, sizeof *mine, where, why, why_size);
    memcpy(all, mine, sizeof *mine);
    return DCUDA_OK;
}

dcuda_status_t dcu_boot_allgather(const void *mine, void *all, size_t size)
{
    if (size > DCU_BOOT_GATHER_MAX)
        return DCUDA_ERR_INVALID_ARG;
    if (boot.count <= 1) {
        memcpy(all, mine, size);
        return DCUDA_OK;
    }
    if (boot.stopped) {
        dcu_msg_error("%s: the processes take no more host steps together: %s",
                      dcu_boot_call_name(boot.call), boot.why);
        return DCUDA_ERR_PEER;
    }
    boot_record_t rec, *recs = malloc((size_t)boot.count * sizeof *recs);
    if (!recs)
        return DCUDA_ERR_NO_MEMORY;
    memset(&rec, 0, sizeof rec);
    rec.call = (uint16_t)boot.call;
    rec.size = (uint16_t)size;
    rec.seq = boot.steps++;
    memcpy(rec.data, mine, size);
    char why[sizeof boot.why] = "";
    dcuda_status_t st = exchange(&rec, recs, why, sizeof why);
    if (st != DCUDA_OK) {
        if (st == DCUDA_ERR_PEER)
            dcu_msg_error("%s", why);
        stop_steps(why, 1);
    }
    for (int p = 0; st == DCUDA_OK && p < boot.count; p++) {
        if (recs[p].call != rec.call || recs[p].seq != rec.seq || recs[p].size != rec.size) {
            mismatch(&rec, &recs[p], p);
            st = DCUDA_ERR_PEER;
        }
    }
    for (int p = 0; st == DCUDA_OK && p < boot.count; p++)
        memcpy((char *)all + (size_t)p * size, recs[p].data, size);
    free(recs);
    return st;
}

dcuda_status_t dcu_boot_barrier(void)
{
    char none = 0, *all = malloc((size_t)dcu_boot_size());
    dcuda_status_t st = all ? dcu_boot_allgather(&none, all, 1) : DCUDA_ERR_NO_MEMORY;
    free(all);
    return st;
}

dcuda_status_t dcu_boot_agree(dcuda_status_t mine, int *who)
{
    int32_t status = (int32_t)mine, *all = malloc((size_t)dcu_boot_size() * sizeof *all);
    *who = mine != DCUDA_OK ? boot.index : -1;
    if (!all)
        return DCUDA_ERR_NO_MEMORY;
    dcuda_status_t st = dcu_boot_allgather(&status, all, sizeof status);
    if (st != DCUDA_OK)
        *who = -1;
    for (int p = 0; st == DCUDA_OK && p < boot.count; p++)
        if (all[p] != DCUDA_OK) {
            *who = p;
            st = (dcuda_status_t)all[p];
            break;
        }
    free(all);
    return st == DCUDA_OK ? DCUDA_OK : st;
}

/* ---- the program's end ---------------------------------------------------------- */

/* The last step, once: the processes still in a host call learn that this
 * one reached its end. 0 if it went as it should. */
static int last_step(void)
{
    if (boot.ended || boot.count <= 1)
        return boot.ended < 0;
    boot.ended = 1;
    if (boot.stopped)
        return 0; /* the failure was reported when the steps stopped */
    if (boot.ops && boot.ops->usable && !boot.ops->usable())
        return 0;
    boot.call = DCU_CALL_EXIT;
    if (dcu_boot_barrier() == DCUDA_OK)
        return 0;
    boot.ended = -1;
    return 1;
}

/* At exit: the last step, unless the program took it already. Registered
 * after the mode's own handler, so that it runs first (before MPI is
 * finalised, before process 0 of a forked group waits for the others). */
static void boot_at_exit(void)
{
    fflush(NULL);
    (void)last_step();
}

static void register_exit(void)
{
    if (boot.exit_registered || boot.count <= 1)
        return;
    boot.exit_registered = 1;
    atexit(boot_at_exit);
}

/* The first process of a forked group reports the group's failures in
 * its exit status; every other process (another of the group, one under a
 * launcher, which reports itself) returns its own `status`, even when a
 * process it waited for in the last step was gone (it said so). */
int dcu_boot_exit_status(int status)
{
    int failed = last_step();
    int own = boot.ops && boot.ops->exit_status ? boot.ops->exit_status(status) : status;
    return boot.ops == &dcu_boot_fork_ops && boot.index == 0 && own == 0 ? failed : own;
}

/* ---- the start -------------------------------------------------------------------- */

/* A process's host as nodes count it: its key, and the kind of its
 * ranks (processes of another kind on the same host are another host). */
static int64_t host_of(const boot_who_t *w) { return (int64_t)w->key * 2 + w->kind; }

/* The nodes, numbered in order of their first process: a host's processes
 * in groups of DCUDA_MAX_NODE_PROCESSES (in process order), or one a
 * process with own_nodes. A host's previous process is found through a
 * table of the hosts seen so far (few: a linear search). */
static dcuda_status_t number_nodes(const boot_who_t *all, int own_nodes)
{
    int *last = malloc((size_t)boot.count * sizeof *last); /* a host's latest process */
    boot.node = malloc((size_t)boot.count * sizeof *boot.node);
    boot.host = malloc((size_t)boot.count * sizeof *boot.host);
    boot.host_index = malloc((size_t)boot.count * sizeof *boot.host_index);
    if (!last || !boot.node || !boot.host || !boot.host_index) {
        free(last);
        return DCUDA_ERR_NO_MEMORY;
    }
    int hosts = 0;
    for (int p = 0; p < boot.count; p++) {
        int h = 0;
        while (h < hosts && host_of(&all[last[h]]) != host_of(&all[p]))
            h++;
        int before = h < hosts ? last[h] : -1;
        boot.host[p] = host_of(&all[p]);
        boot.host_index[p] = before < 0 ? 0 : boot.host_index[before] + 1;
        if (own_nodes || before < 0 || boot.host_index[p] % DCUDA_MAX_NODE_PROCESSES == 0)
            boot.node[p] = boot.nodes++;
        else
            boot.node[p] = boot.node[before];
        last[h] = p;
        hosts += h == hosts;
    }
    free(last);
    return DCUDA_OK;
}

/* What a process tells of its host when no launcher knows which processes
 * share memory: the machine's boot, and the IPC namespace and /dev/shm it
 * sees. Processes that share all three share memory; processes in other
 * network, IPC and mount namespaces (containers, simulated hosts) do not,
 * even on one machine. */
typedef struct host_identity {
    uint64_t boot;    /* a hash of the kernel's boot id */
    uint64_t ipc;     /* the IPC namespace's inode */
    uint64_t shm_dev; /* /dev/shm's device, and its inode below */
    uint64_t shm_ino;
} host_identity_t;

static uint64_t hash_text(const char *s)
{
    uint64_t x = 0xcbf29ce484222325ull;
    for (; *s; s++)
        x = (x ^ (unsigned char)*s) * 0x100000001b3ull;
    return x;
}

static void identify_host(host_identity_t *id)
{
    char text[128] = "";
    struct stat st;
    memset(id, 0, sizeof *id);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(text, sizeof text, f))
            text[0] = '\0';
        fclose(f);
    }
    if (!text[0] && gethostname(text, sizeof text - 1) != 0)
        snprintf(text, sizeof text, "unknown");
    id->boot = hash_text(text);
    if (stat("/proc/self/ns/ipc", &st) == 0)
        id->ipc = (uint64_t)st.st_ino;
    if (stat("/dev/shm", &st) == 0) {
        id->shm_dev = (uint64_t)st.st_dev;
        id->shm_ino = (uint64_t)st.st_ino;
    }
}

/* This process's node key: the launcher's, or the lowest index of the
 * processes whose host identity is this one's (a step). */
static dcuda_status_t node_key(int32_t *key)
{
    if (boot.ops && boot.ops->node_key) {
        *key = (int32_t)boot.ops->node_key();
        return DCUDA_OK;
    }
    host_identity_t mine, *all = calloc((size_t)dcu_boot_size(), sizeof *all);
    if (!all)
        return DCUDA_ERR_NO_MEMORY;
    identify_host(&mine);
    dcuda_status_t st = dcu_boot_allgather(&mine, all, sizeof mine);
    *key = (int32_t)boot.index;
    for (int p = 0; st == DCUDA_OK && p < dcu_boot_size(); p++)
        if (memcmp(&all[p], &mine, sizeof mine) == 0) {
            *key = (int32_t)p;
            break;
        }
    free(all);
    return st;
}

/* Every process learns every process's host key (the launcher's view of
 * shared memory; forked processes share one host), pid and host name, and
 * numbers the nodes. */
dcuda_status_t dcu_boot_find_nodes(int own_nodes, int kind)
{
    if (boot.nodes && boot.kind != (kind != 0)) {
        dcu_msg_error("dcuda_host_init: this process ran %s ranks and now asks for %s ranks; a "
                      "process keeps the kind of ranks of its first dcuda_host_init (it shares "
                      "a node with processes of that kind)",
                      boot.kind ? "GPU" : "CPU", kind ? "GPU" : "CPU");
        return DCUDA_ERR_BACKEND;
    }
    if (boot.nodes)
        return DCUDA_OK;
    boot.kind = kind != 0;
    boot_who_t mine, *all = calloc((size_t)dcu_boot_size(), sizeof *all);
    if (!all)
        return DCUDA_ERR_NO_MEMORY;
    memset(&mine, 0, sizeof mine);
    mine.pid = (int32_t)getpid();
    mine.kind = kind != 0;
    dcuda_status_t st = node_key(&mine.key);
    if (st != DCUDA_OK) {
        free(all);
        return st;
    }
    if (gethostname(mine.host, sizeof mine.host - 1) != 0)
        snprintf(mine.host, sizeof mine.host, "an unnamed host");
    st = dcu_boot_allgather(&mine, all, sizeof mine);
    if (st != DCUDA_OK) {
        free(all);
        return st;
    }
    boot.who = all;
    boot.nodes = 0;
    return number_nodes(all, own_nodes);
}

/* Why this process must not fork the others, or NULL. */
static const char *fork_refusal(dcu_boot_hazard_fn fork_hazard)
{
    if (!dcu_proc_on_main_thread())
        return "dcuda_host_init was called from a thread other than main's, and a forked "
               "child would hold that thread alone";
    return fork_hazard ? fork_hazard() : NULL;
}

/* More than one process is wanted but this one must not fork them. */
static dcuda_status_t refuse_fork(int count, const char *why)
{
    dcu_msg_error("%d processes are wanted (one per GPU, or the PROCESSES setting), but %s, so "
                  "they cannot be forked from it: call dcuda_host_init from main, before any "
                  "CUDA call, start the processes with mpirun -np %d, or set DCUDA_PROCESSES=1",
                  count, why, count);
    return DCUDA_ERR_UNSUPPORTED;
}

dcuda_status_t dcu_boot_start(long processes, dcu_boot_count_fn count_gpus,
                              dcu_boot_hazard_fn fork_hazard)
{
    if (boot.started)
        return DCUDA_OK;
    dcuda_status_t st = DCUDA_OK;
    if (!start_as_told(processes, &st)) {
        int count = wanted_processes(processes, count_gpus);
        const char *hazard = count > 1 ? fork_refusal(fork_hazard) : NULL;
        if (count > DCUDA_MAX_NODE_PROCESSES) {
            dcu_msg_error("setting PROCESSES: %d forked processes share one node, which holds "
                          "at most %d: start more with mpirun -np %d, or with DCUDA_BOOT_ADDR "
                          "(docs/clusters.md)",
                          count, DCUDA_MAX_NODE_PROCESSES, count);
            st = DCUDA_ERR_SETTING;
        } else if (hazard)
            st = refuse_fork(count, hazard);
        else if (count > 1 && (st = dcu_boot_fork_start(count, &boot.index)) == DCUDA_OK) {
            boot.count = count;
            st = take_mode(&dcu_boot_fork_ops);
        }
    }
    if (!boot.ops) { /* alone, or going on alone after reporting */
        boot.count = 1;
        boot.index = 0;
    }
    boot.started = 1;
    dcu_msg_set_process(boot.index, boot.count);
    register_exit();
    return st;
}

dcuda_status_t dcu_boot_start_comm(long processes, const void *mpi_comm)
{
    if (boot.started) {
        if (boot.mpi && boot.ops == boot.mpi->boot && boot.mpi->boot_same_comm(mpi_comm))
            return DCUDA_OK;
        dcu_msg_error("dcuda_host_init: the process group was started already (%s), not on this "
                      "MPI communicator: the first dcuda_host_init of a program decides it",
                      dcu_boot_mode_name());
        return DCUDA_ERR_INVALID_ARG;
    }
    char why[1100];
    const dcu_plugin_t *mpi = mpi_plugin(why, sizeof why);
    if (!mpi) {
        dcu_msg_error("dcuda_host_init: an MPI communicator was given, but %s", why);
        return DCUDA_ERR_UNSUPPORTED;
    }
    dcuda_status_t st = mpi->boot_start_comm(processes, mpi_comm, &boot.count, &boot.index);
    if (st == DCUDA_OK)
        st = take_mode(mpi->boot);
    if (st != DCUDA_OK)
        return st;
    boot.mpi = mpi;
    boot.started = 1;
    dcu_msg_set_process(boot.index, boot.count);
    register_exit();
    return DCUDA_OK;
}

const void *dcu_boot_mpi_comm(void)
{
    return boot.mpi && boot.ops == boot.mpi->boot ? boot.mpi->boot_comm_used() : NULL;
}

int dcu_boot_child_status(int p, int patience_ms, int *status)
{
    return boot.ops && boot.ops->child_status ? boot.ops->child_status(p, patience_ms, status) : 0;
}
