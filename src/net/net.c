/*
 * The network managers: MPI's and UCX's, each in a plugin loaded at run
 * time (plugin/loader.c).
 */
#include "net.h"

#include <stdio.h>
#include <string.h>

#include "plugin/loader.h"

const char *dcu_net_auto(int mpirun, int lanes)
{
    if (lanes > 1 && dcu_plugin_built("ucx"))
        return "ucx";
    return mpirun ? "mpi" : "ucx";
}

const dcu_net_ops_t *dcu_net_find(const char *name, char *why, size_t why_size)
{
    char reason[1100];
    const dcu_plugin_t *p = NULL;
    if (strcmp(name, "mpi") == 0 || strcmp(name, "ucx") == 0)
        p = dcu_plugin_get(name, reason, sizeof reason);
    else
        snprintf(reason, sizeof reason, "no network manager is called '%s'", name);
    if (p && p->net)
        return p->net;
    snprintf(why, why_size, "no %s network manager: %s", name, reason);
    return NULL;
}
