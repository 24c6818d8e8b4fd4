/*
 * The ways to start a process group, behind bootstrap/boot.c (which alone
 * includes this header). Each mode moves the fixed-size records of host
 * steps among its processes; `where` names the host call that waits, for
 * the warnings of a long wait, and `why` says what went wrong when one
 * fails (DCUDA_ERR_PEER: a process ended instead of taking part).
 */
#ifndef DCU_BOOTSTRAP_MODES_H
#define DCU_BOOTSTRAP_MODES_H

#include <stddef.h>

#include "dcuda/dcuda_status.h"

/* Bytes of one process's record in a host step (boot.c). */
#define DCU_BOOT_RECORD_BYTES 72
/* A process that waits this long in a host step says so, and again as
 * long as it waits. */
#define DCU_BOOT_WARN_NS (10ull * 1000000000ull)

/* Fork mode: this process becomes process 0 and forks count - 1 others;
 * *index is the caller's process index on return. */
dcuda_status_t dcu_boot_fork_start(int count, int *index);
dcuda_status_t dcu_boot_fork_allgather(const void *mine, void *all, size_t size,
                                       const char *where, char *why, size_t why_size);
int dcu_boot_fork_child_status(int p, int patience_ms, int *status);
int dcu_boot_fork_exit_status(int status);

#if defined(DCUDA_HAVE_MPI)
/* MPI mode: joins the job's MPI (initialising it if needed); `processes`
 * (> 0) must match its size. */
dcuda_status_t dcu_boot_mpi_start(long processes, int *count, int *index);
/* The same on an application's communicator (MPI initialised by it). */
dcuda_status_t dcu_boot_mpi_start_comm(long processes, const void *comm, int *count, int *index);
/* Is `comm` the one the group was started on? */
int dcu_boot_mpi_same_comm(const void *comm);
const void *dcu_boot_mpi_comm_used(void);
/* A nonblocking allgather, tested (and slept between tests) until done. */
dcuda_status_t dcu_boot_mpi_allgather(const void *mine, void *all, size_t size,
                                      const char *where, char *why, size_t why_size);
/* The node key of this process: the lowest rank sharing its memory. */
int dcu_boot_mpi_node_key(void);
/* MPI can still be called (initialised, not finalised). */
int dcu_boot_mpi_usable(void);
void dcu_boot_mpi_abandon(void);
#endif

#endif /* DCU_BOOTSTRAP_MODES_H */
