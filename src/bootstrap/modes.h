/*
 * The ways to start a process group, behind bootstrap/boot.c: each mode
 * is a start function of its own (their inputs differ) and a table of
 * operations, the bootstrap contract (plugin/boot_ops.h).
 */
#ifndef DCU_BOOTSTRAP_MODES_H
#define DCU_BOOTSTRAP_MODES_H

#include <stddef.h>
#include <stdint.h>

#include "dcuda/dcuda_status.h"
#include "plugin/boot_ops.h"

/* Fork mode: this process becomes process 0 and forks count - 1 others;
 * *index is the caller's process index on return. */
dcuda_status_t dcu_boot_fork_start(int count, int *index);
extern const dcu_boot_ops_t dcu_boot_fork_ops;

/* Rendezvous mode: the plan (plugin/boot_ops.h) from launch_env.c or a
 * plugin. */
dcuda_status_t dcu_boot_tcp_start(const dcu_boot_tcp_plan_t *plan);
extern const dcu_boot_ops_t dcu_boot_tcp_ops;

/* MPI mode, in the MPI plugin (net/mpi/mpi_plugin.c; boot_mpi.c): joins
 * the job's MPI (initialising it if needed); `processes` (> 0) must match
 * its size. */
dcuda_status_t dcu_boot_mpi_start(long processes, int *count, int *index);
/* The same on an application's communicator (MPI initialised by it). */
dcuda_status_t dcu_boot_mpi_start_comm(long processes, const void *comm, int *count, int *index);
/* Is `comm` the one the group was started on? */
int dcu_boot_mpi_same_comm(const void *comm);
const void *dcu_boot_mpi_comm_used(void);
extern const dcu_boot_ops_t dcu_boot_mpi_ops;

#endif /* DCU_BOOTSTRAP_MODES_H */
