/*
 * The network managers, as the library takes them: the contract they
 * implement (plugin/net_ops.h, versioned) and the choice of one by its
 * setting (net.c; MPI's and UCX's are plugins).
 */
#ifndef DCU_NET_NET_H
#define DCU_NET_NET_H

#include <stddef.h>

#include "plugin/net_ops.h"

/* What the NET setting chooses (parsed by core/settings.c). */
typedef enum dcu_net_choice {
    DCU_NET_AUTO = 0,
    DCU_NET_MPI,
    DCU_NET_UCX,
    DCU_NET_NONE,
} dcu_net_choice_t;

/* A choice's name as the setting spells it ("auto", "mpi", "ucx",
 * "none"). */
const char *dcu_net_choice_name(dcu_net_choice_t choice);

/* The manager NET=auto stands for: MPI's for processes mpirun started,
 * UCX's otherwise, and UCX's under mpirun too when several proxy lanes are
 * asked for and it is built (MPI's is driven by one thread). */
dcu_net_choice_t dcu_net_auto(int mpirun, int lanes);

/* The manager of `choice` (DCU_NET_MPI, DCU_NET_UCX), NULL if this build
 * has none; `why` says what is missing. */
const dcu_net_ops_t *dcu_net_find(dcu_net_choice_t choice, char *why, size_t why_size);

#endif /* DCU_NET_NET_H */
