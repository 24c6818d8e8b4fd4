/*
 * The network managers this build has.
 */
#include "net.h"

#include <stdio.h>
#include <string.h>

#if defined(DCUDA_HAVE_MPI)
extern const dcu_net_ops_t dcu_net_mpi_ops;
#endif
#if defined(DCUDA_HAVE_UCX)
extern const dcu_net_ops_t dcu_net_ucx_ops;
#endif

const dcu_net_ops_t *dcu_net_find(const char *name, char *why, size_t why_size)
{
#if defined(DCUDA_HAVE_MPI)
    if (strcmp(name, "mpi") == 0)
        return &dcu_net_mpi_ops;
#endif
#if defined(DCUDA_HAVE_UCX)
    if (strcmp(name, "ucx") == 0)
        return &dcu_net_ucx_ops;
#endif
    const char *missing = strcmp(name, "mpi") == 0   ? " (CMake found no MPI)"
                          : strcmp(name, "ucx") == 0 ? " (CMake found no UCX: pkg-config ucx)"
                                                     : "";
    snprintf(why, why_size, "this build of dcuda has no %s network manager%s", name, missing);
    return NULL;
}
