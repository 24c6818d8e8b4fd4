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

/*
 * Host steps. Every collective exchange of the host runtimes (allgather,
 * agreement, barrier) is one step, and every process says with its bytes
 * which dcuda_host_* call it is in and how many steps it took before. A
 * process that is in another call (it skipped one, made one more, or
 * reached the program's end) makes the step fail in every process at
 * once, naming it, instead of leaving the others waiting: all of them
 * receive the same records, so all of them decide alike. After such a
 * failure, or once a peer process was lost, the host runtimes take no
 * more steps together: every later step fails at once (DCUDA_ERR_PEER).
 */
typedef enum dcu_boot_call {
    DCU_CALL_NONE = 0,
    DCU_CALL_INIT = 1,   /* dcuda_host_init */
    DCU_CALL_RUN = 2,    /* dcuda_host_run, dcuda_host_run_start and _wait */
    DCU_CALL_FINISH = 3, /* dcuda_host_finish */
    DCU_CALL_EXIT = 4    /* the program's end: dcuda_host_exit_status, or exit */
} dcu_boot_call_t;

/* The call this process's next steps belong to (set by every host call
 * that may take steps). */
void dcu_boot_enter(dcu_boot_call_t call);
/* "dcuda_host_run" etc. */
const char *dcu_boot_call_name(dcu_boot_call_t call);
/* Why the last step failed (for dcuda_host_last_error). */
const char *dcu_boot_why(void);
/* "process 1 (pid 4242 on node7)": for messages that name a process. */
const char *dcu_boot_describe(int p, char *buf, size_t size);

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
 * DCUDA_ERR_UNSUPPORTED and says what to do instead. After a failure the
 * program goes on as one process. */
dcuda_status_t dcu_boot_start(long processes, dcu_boot_count_fn count_gpus,
                              dcu_boot_hazard_fn fork_hazard);
/* The same on the processes of an application's MPI communicator (the
 * address of an MPI_Comm; MPI initialised), whatever started them. A later
 * call with another communicator than the group's is refused. */
dcuda_status_t dcu_boot_start_comm(long processes, const void *mpi_comm);
/* Was this process started by an MPI launcher (mpirun)? */
int dcu_boot_under_launcher(void);
/* After the start (once; a step): which processes share a node, and who
 * each process is (pid, host). own_nodes: every process counts as a node
 * of its own (the network path forced between processes of one host).
 * kind: of this process's ranks (0 CPU, 1 GPU); processes of different
 * kinds never share a node, so they reach each other through the network
 * path (a CPU thread cannot store into a GPU's memory, nor a GPU process
 * map the memfds of CPU ranks), and each kind counts its own processes of
 * a host (a GPU process's device is its index among them). Later calls
 * keep what the first found; one with another kind is DCUDA_ERR_BACKEND. */
dcuda_status_t dcu_boot_find_nodes(int own_nodes, int kind);
/* MPI mode: the address of the communicator the processes use (a
 * duplicate of MPI_COMM_WORLD or of the application's), for the MPI
 * network manager; NULL otherwise. */
const void *dcu_boot_mpi_comm(void);
int dcu_boot_started(void);
int dcu_boot_size(void);
int dcu_boot_rank(void);
/* "one process", "forked", "MPI" or "rendezvous" (for messages). */
const char *dcu_boot_mode_name(void);
/* The processes are an MPI job's (the MPI network manager may run). */
int dcu_boot_is_mpi(void);

/* The node process p runs on (0 .. node count - 1, in the order of the
 * nodes' first processes): processes of one node reach each other's
 * memory; the others, the network path. A host's processes form nodes of
 * DCUDA_MAX_NODE_PROCESSES in process order; with own_nodes every process
 * is a node of its own. */
int dcu_boot_node(int p);
int dcu_boot_node_count(void);
/* Where process p runs as the machine sees it, own_nodes or not: its index
 * among the processes of its host (process i of a host drives its GPU i),
 * and how many processes that host runs. */
int dcu_boot_host_index(int p);
int dcu_boot_host_size(int p);

/* A step that exchanges nothing: every process reaches it. */
dcuda_status_t dcu_boot_barrier(void);

/* Every process contributes `size` (<= DCU_BOOT_GATHER_MAX) bytes; all
 * receive all, in process order. A step (above): fails with
 * DCUDA_ERR_PEER, naming it, when a process is in another call, or ended
 * instead of taking part. */
dcuda_status_t dcu_boot_allgather(const void *mine, void *all, size_t size);

/* Every process says how a step of its start went: the first failure of
 * any process (and *who, the failed process), or DCUDA_OK (*who -1).
 * Collective: a process whose step failed takes part before it returns,
 * so that no process waits in the next collective step for one that left. */
dcuda_status_t dcu_boot_agree(dcuda_status_t mine, int *who);

/* What this process must keep doing while a step waits for the others
 * (the proxies serving a WORLD barrier that a late process still needs at
 * a run's end): fn(arg) is called between the step's looks until it is
 * set again (NULL: nothing). dcu_boot_waiting is the modes' call. */
void dcu_boot_while_waiting(void (*fn)(void *), void *arg);
void dcu_boot_waiting(void);

/* Forked group, process 0: how process p ended (a wait status), waiting at
 * most `patience_ms` for it to be reaped; 0 when not known. */
int dcu_boot_child_status(int p, int patience_ms, int *status);

/* A peer process died or left: the group takes no more steps together
 * (later steps fail at once, with `why`), and does not end collectively at
 * exit. */
void dcu_boot_abandon(const char *why);

/* The program's end in this process (dcuda_host_exit_status, or its exit
 * handler): a last step, so that a process still waiting in a host call
 * for this one learns that it will not come, then the exit status the
 * program should end with (process 0 of a forked group waits for the
 * others first). `status` 0 and a last step that failed give 1. */
int dcu_boot_exit_status(int status);

#endif /* DCU_BOOTSTRAP_BOOT_H */
