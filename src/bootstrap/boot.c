/*
 * The process group's start and its one policy: how many processes, and
 * which way they start (see boot.h). Single mode lives here; fork and MPI
 * modes in their own files.
 */
#include "boot.h"

#include <stdlib.h>
#include <string.h>

#include "dcuda/shared/layout.h"
#include "modes.h"
#include "util/msg.h"

typedef enum boot_mode { BOOT_NONE = 0, BOOT_SINGLE, BOOT_FORK, BOOT_MPI } boot_mode_t;

static struct {
    boot_mode_t mode;
    int count;
    int index;
    int nodes;                     /* node count */
    int node[DCUDA_MAX_PROCESSES]; /* node of each process */
    int host[DCUDA_MAX_PROCESSES]; /* host key of each process */
} boot;

int dcu_boot_started(void) { return boot.mode != BOOT_NONE; }
int dcu_boot_size(void) { return boot.count ? boot.count : 1; }
int dcu_boot_rank(void) { return boot.index; }

const char *dcu_boot_mode_name(void)
{
    return boot.mode == BOOT_FORK ? "forked" : boot.mode == BOOT_MPI ? "MPI" : "one process";
}

/* Was this process started by an MPI launcher? */
static int launched_by_mpi(void)
{
    static const char *vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                                  "MPI_LOCALNRANKS" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

/* Processes wanted when no launcher decides: the setting, else one per GPU
 * (at most DCUDA_MAX_PROCESSES), else one. */
static int wanted_processes(long processes, dcu_boot_count_fn count_gpus)
{
    if (processes > 0)
        return (int)processes;
    int gpus = count_gpus ? count_gpus() : 0;
    if (gpus > 1)
        return gpus < DCUDA_MAX_PROCESSES ? gpus : DCUDA_MAX_PROCESSES;
    return 1;
}

static dcuda_status_t start_under_launcher(long processes)
{
#if defined(DCUDA_HAVE_MPI)
    dcuda_status_t st = dcu_boot_mpi_start(processes, &boot.count, &boot.index);
    if (st == DCUDA_OK)
        boot.mode = BOOT_MPI;
    return st;
#else
    (void)processes;
    dcu_msg_error("started by an MPI launcher, but this build of dcuda has no MPI "
                  "(install an MPI and rebuild)");
    return DCUDA_ERR_UNSUPPORTED;
#endif
}

int dcu_boot_node(int p) { return p >= 0 && p < boot.count ? boot.node[p] : 0; }
int dcu_boot_node_count(void) { return boot.nodes ? boot.nodes : 1; }

int dcu_boot_host_index(int p)
{
    int i = 0;
    for (int q = 0; q < p && q < boot.count; q++)
        i += boot.host[q] == boot.host[p];
    return i;
}

int dcu_boot_host_size(int p)
{
    int n = 0;
    for (int q = 0; q < boot.count; q++)
        n += boot.host[q] == boot.host[p];
    return n > 0 ? n : 1;
}

/* Every process learns every process's host key (the launcher's view of
 * shared memory; forked processes share one host) and numbers the nodes in
 * order of their first process: one per host, or one per process with
 * own_nodes. */
static dcuda_status_t find_nodes(int own_nodes)
{
    int32_t key = 0;
#if defined(DCUDA_HAVE_MPI)
    if (boot.mode == BOOT_MPI)
        key = (int32_t)dcu_boot_mpi_node_key();
#endif
    int32_t keys[DCUDA_MAX_PROCESSES];
    dcuda_status_t st = dcu_boot_allgather(&key, keys, sizeof key);
    if (st != DCUDA_OK)
        return st;
    boot.nodes = 0;
    for (int p = 0; p < boot.count; p++) {
        int q = 0;
        while (q < p && keys[q] != keys[p])
            q++;
        boot.host[p] = keys[p];
        boot.node[p] = own_nodes ? boot.nodes++ : q < p ? boot.node[q] : boot.nodes++;
    }
    return DCUDA_OK;
}

dcuda_status_t dcu_boot_barrier(void)
{
#if defined(DCUDA_HAVE_MPI)
    if (boot.mode == BOOT_MPI && dcu_boot_node_count() > 1)
        return dcu_boot_mpi_barrier();
#endif
    /* Forked processes that count as nodes of their own (NET_FORCE): an
     * allgather of one byte joins them. */
    if (boot.mode == BOOT_FORK && dcu_boot_node_count() > 1) {
        char none = 0, all[DCUDA_MAX_PROCESSES];
        return dcu_boot_fork_allgather(&none, all, 1);
    }
    return DCUDA_OK;
}

/* More than one process is wanted but this one must not fork them. */
static dcuda_status_t refuse_fork(int count, const char *why)
{
    dcu_msg_error("%d processes are wanted (one per GPU, or the PROCESSES setting), but %s, so "
                  "they cannot be forked from it: call dcuda_host_init before any CUDA call, "
                  "start the processes with mpirun -np %d, or set DCUDA_PROCESSES=1",
                  count, why, count);
    return DCUDA_ERR_UNSUPPORTED;
}

dcuda_status_t dcu_boot_start(long processes, dcu_boot_count_fn count_gpus,
                              dcu_boot_hazard_fn fork_hazard, int own_nodes)
{
    if (boot.mode != BOOT_NONE)
        return DCUDA_OK;
    dcuda_status_t st = DCUDA_OK;
    if (launched_by_mpi()) {
        st = start_under_launcher(processes);
    } else {
        int count = wanted_processes(processes, count_gpus);
        const char *hazard = count > 1 && fork_hazard ? fork_hazard() : NULL;
        if (hazard)
            st = refuse_fork(count, hazard);
        else if (count > 1 && (st = dcu_boot_fork_start(count, &boot.index)) == DCUDA_OK) {
            boot.mode = BOOT_FORK;
            boot.count = count;
        }
    }
    if (boot.mode == BOOT_NONE) { /* alone, or going on alone after reporting */
        boot.mode = BOOT_SINGLE;
        boot.count = 1;
        boot.index = 0;
    }
    dcu_msg_set_process(boot.index, boot.count);
    if (st == DCUDA_OK)
        st = find_nodes(own_nodes);
    return st;
}

dcuda_status_t dcu_boot_agree(dcuda_status_t mine, int *who)
{
    int32_t status = (int32_t)mine, all[DCUDA_MAX_PROCESSES];
    *who = mine != DCUDA_OK ? boot.index : -1;
    if (dcu_boot_size() <= 1)
        return mine;
    dcuda_status_t st = dcu_boot_allgather(&status, all, sizeof status);
    if (st != DCUDA_OK) {
        *who = -1;
        return st;
    }
    for (int p = 0; p < boot.count; p++)
        if (all[p] != DCUDA_OK) {
            *who = p;
            return (dcuda_status_t)all[p];
        }
    return DCUDA_OK;
}

dcuda_status_t dcu_boot_start_comm(long processes, const void *mpi_comm, int own_nodes)
{
#if defined(DCUDA_HAVE_MPI)
    if (boot.mode != BOOT_NONE) {
        if (boot.mode == BOOT_MPI && dcu_boot_mpi_same_comm(mpi_comm))
            return DCUDA_OK;
        dcu_msg_error("dcuda_host_init: the process group was started already (%s), not on this "
                      "MPI communicator: the first dcuda_host_init of a program decides it",
                      dcu_boot_mode_name());
        return DCUDA_ERR_INVALID_ARG;
    }
    dcuda_status_t st = dcu_boot_mpi_start_comm(processes, mpi_comm, &boot.count, &boot.index);
    if (st != DCUDA_OK)
        return st;
    boot.mode = BOOT_MPI;
    dcu_msg_set_process(boot.index, boot.count);
    return find_nodes(own_nodes);
#else
    (void)processes, (void)mpi_comm, (void)own_nodes;
    dcu_msg_error("dcuda_host_init: an MPI communicator was given, but this build of dcuda has "
                  "no MPI (install an MPI and rebuild)");
    return DCUDA_ERR_UNSUPPORTED;
#endif
}

const void *dcu_boot_mpi_comm(void)
{
#if defined(DCUDA_HAVE_MPI)
    if (boot.mode == BOOT_MPI)
        return dcu_boot_mpi_comm_used();
#endif
    return NULL;
}

dcuda_status_t dcu_boot_allgather(const void *mine, void *all, size_t size)
{
    if (size > DCU_BOOT_GATHER_MAX)
        return DCUDA_ERR_INVALID_ARG;
    switch (boot.mode) {
    case BOOT_FORK:
        return dcu_boot_fork_allgather(mine, all, size);
#if defined(DCUDA_HAVE_MPI)
    case BOOT_MPI:
        return dcu_boot_mpi_allgather(mine, all, size);
#endif
    default:
        memcpy(all, mine, size);
        return DCUDA_OK;
    }
}

int dcu_boot_child_status(int p, int patience_ms, int *status)
{
    return boot.mode == BOOT_FORK ? dcu_boot_fork_child_status(p, patience_ms, status) : 0;
}

void dcu_boot_abandon(void)
{
#if defined(DCUDA_HAVE_MPI)
    if (boot.mode == BOOT_MPI)
        dcu_boot_mpi_abandon();
#endif
}

int dcu_boot_exit_status(int status)
{
    return boot.mode == BOOT_FORK ? dcu_boot_fork_exit_status(status) : status;
}
