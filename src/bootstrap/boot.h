/*
 * Bootstrap: who am I and how many processes run this program, and a way to
 * exchange a few bytes among all of them before anything else is shared.
 *
 * A program starts its process group once, at its first dcuda_host_init:
 *   - under an MPI launcher (mpirun), MPI supplies the processes (MPI mode);
 *   - otherwise this process forks the others when more than one is wanted
 *     (fork mode), or runs alone (single mode).
 * How many are wanted is decided here and nowhere else: the PROCESSES
 * setting, else one per visible GPU when ranks will be GPU ranks, else one.
 * The library never ends the application's process: at exit, process 0 of
 * a forked group waits for the others and reports the ones that failed.
 */
#ifndef DCU_BOOTSTRAP_BOOT_H
#define DCU_BOOTSTRAP_BOOT_H

#include <stddef.h>

#include "dcuda/dcuda_status.h"

/* Bytes one process may contribute to an allgather. */
#define DCU_BOOT_GATHER_MAX 64

/* Counts the GPUs ranks could use, without leaving CUDA initialised in
 * this process (a process that forks must not have touched CUDA). */
typedef int (*dcu_boot_count_fn)(void);
/* Why this process must not fork the others (it initialised CUDA, and
 * their ranks would be GPU ranks), or NULL. */
typedef const char *(*dcu_boot_hazard_fn)(void);

/* Starts the group once per program (later calls return DCUDA_OK). A
 * launcher's size must match `processes` when that is set (> 0);
 * count_gpus is asked only when no launcher and no setting decide, and may
 * be NULL (CPU ranks: one process). When more than one process is wanted
 * and fork_hazard (may be NULL) names a reason, the start fails with
 * DCUDA_ERR_UNSUPPORTED and says what to do instead. own_nodes: every
 * process counts as a node of its own (the network path forced between
 * processes of one host). After a failure the program goes on as one
 * process. */
dcuda_status_t dcu_boot_start(long processes, dcu_boot_count_fn count_gpus,
                              dcu_boot_hazard_fn fork_hazard, int own_nodes);
/* The same on the processes of an application's MPI communicator (the
 * address of an MPI_Comm; MPI initialised), whatever started them. A later
 * call with another communicator than the group's is refused. */
dcuda_status_t dcu_boot_start_comm(long processes, const void *mpi_comm, int own_nodes);
/* MPI mode: the address of the communicator the processes use (a
 * duplicate of MPI_COMM_WORLD or of the application's), for the MPI
 * network manager; NULL otherwise. */
const void *dcu_boot_mpi_comm(void);
int dcu_boot_started(void);
int dcu_boot_size(void);
int dcu_boot_rank(void);
/* "one process", "forked" or "MPI". */
const char *dcu_boot_mode_name(void);

/* The node process p runs on (0 .. node count - 1, in the order of the
 * nodes' first processes): processes of one node reach each other's
 * memory; the others, the network path. With own_nodes every process is a
 * node of its own. */
int dcu_boot_node(int p);
int dcu_boot_node_count(void);
/* Where process p runs as the machine sees it, own_nodes or not: its index
 * among the processes of its host (process i of a host drives its GPU i),
 * and how many processes that host runs. */
int dcu_boot_host_index(int p);
int dcu_boot_host_size(int p);

/* A barrier of every process through the launcher: what host barriers add
 * when the processes span nodes (a no-op on one node). */
dcuda_status_t dcu_boot_barrier(void);

/* Every process contributes `size` (<= DCU_BOOT_GATHER_MAX) bytes; all
 * receive all, in process order. Collective; fails with DCUDA_ERR_PEER,
 * naming it, when a process ended instead of taking part. */
dcuda_status_t dcu_boot_allgather(const void *mine, void *all, size_t size);

/* Every process says how a step of its start went: the first failure of
 * any process (and *who, the failed process), or DCUDA_OK (*who -1).
 * Collective: a process whose step failed takes part before it returns,
 * so that no process waits in the next collective step for one that left. */
dcuda_status_t dcu_boot_agree(dcuda_status_t mine, int *who);

/* Forked group, process 0: how process p ended (a wait status), waiting at
 * most `patience_ms` for it to be reaped; 0 when not known. */
int dcu_boot_child_status(int p, int patience_ms, int *status);

/* A peer process died: do not end the group collectively at exit. */
void dcu_boot_abandon(void);

/* The exit status the program should end with (dcuda_host_exit_status). */
int dcu_boot_exit_status(int status);

#endif /* DCU_BOOTSTRAP_BOOT_H */
