/*
 * How this process was started, as its environment says (launch_env.c):
 * the plans of rendezvous mode, and the MPI launchers. Bootstrap only.
 */
#ifndef DCU_BOOTSTRAP_LAUNCH_ENV_H
#define DCU_BOOTSTRAP_LAUNCH_ENV_H

#include <stddef.h>

#include "modes.h"

/* DCUDA_BOOT_ADDR (with DCUDA_PROCESS_INDEX and the PROCESSES setting):
 * 1 and the plan, 0 when not set, -1 and why when it cannot be used. */
int dcu_launch_rendezvous(long processes, dcu_boot_tcp_plan_t *plan, char *why, size_t why_size);
/* A step of srun with more than one task: the same. */
int dcu_launch_slurm(long processes, dcu_boot_tcp_plan_t *plan, char *why, size_t why_size);
/* DCUDA_BOOT_TIMEOUT: seconds the processes may take to meet (0: the
 * default). */
int dcu_launch_timeout(void);
/* The first host of a Slurm node list ("gpu[07-09],x" gives "gpu07"). */
int dcu_launch_first_node(const char *list, char *host, size_t size);
/* "Open MPI's mpirun (OMPI_COMM_WORLD_SIZE=4)" when an MPI launcher's
 * variables are set, else NULL. */
const char *dcu_launch_mpi_seen(char *buf, size_t size);

#endif /* DCU_BOOTSTRAP_LAUNCH_ENV_H */
