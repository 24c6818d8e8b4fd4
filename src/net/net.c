/*
 * The network managers this build has, and the message memory they share.
 */
#include "net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *dcu_net_buffer(const dcu_net_mem_t *m, size_t size)
{
    return m->buffer_alloc ? m->buffer_alloc(m->arg, size) : malloc(size);
}

void dcu_net_buffer_free(const dcu_net_mem_t *m, void *buf)
{
    if (!buf)
        return;
    if (m->buffer_free)
        m->buffer_free(m->arg, buf);
    else
        free(buf);
}

void dcu_net_release(const dcu_net_mem_t *m, void *msg)
{
    if (m->release)
        m->release(m->arg, msg);
    else
        free(msg);
}

#if defined(DCUDA_HAVE_MPI)
extern const dcu_net_ops_t dcu_net_mpi_ops;
#endif
#if defined(DCUDA_HAVE_UCX)
extern const dcu_net_ops_t dcu_net_ucx_ops;
#endif

const char *dcu_net_auto(int mpirun, int lanes)
{
#if defined(DCUDA_HAVE_UCX)
    if (lanes > 1)
        return "ucx";
#else
    (void)lanes;
#endif
    return mpirun ? "mpi" : "ucx";
}

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
