/*
 * The network managers, as the library takes them: the contract they
 * implement (plugin/net_ops.h, versioned) and the choice of one by its
 * setting's name (net.c; MPI's and UCX's are plugins).
 */
#ifndef DCU_NET_NET_H
#define DCU_NET_NET_H

#include <stddef.h>

#include "plugin/net_ops.h"

/* The manager NET=auto stands for: MPI's for processes mpirun started,
 * UCX's otherwise, and UCX's under mpirun too when several proxy lanes are
 * asked for and it is built (MPI's is driven by one thread). */
const char *dcu_net_auto(int mpirun, int lanes);

/* The manager called `name` ("mpi", "ucx"), NULL if this build has none;
 * `why` says what is missing. */
const dcu_net_ops_t *dcu_net_find(const char *name, char *why, size_t why_size);

#endif /* DCU_NET_NET_H */
