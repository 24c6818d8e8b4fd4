/*
 * The network managers: MPI's and UCX's, each in a plugin loaded at run
 * time (plugin/loader.c), chosen by the NET setting's parsed choice.
 */
#include "net.h"

#include <stdio.h>

#include "plugin/loader.h"

/* The names of the choices, which are also the plugins' names. */
static const char *const choice_names[] = {
    [DCU_NET_AUTO] = "auto",
    [DCU_NET_MPI] = "mpi",
    [DCU_NET_UCX] = "ucx",
    [DCU_NET_NONE] = "none",
};

const char *dcu_net_choice_name(dcu_net_choice_t choice)
{
    return (unsigned)choice < sizeof choice_names / sizeof choice_names[0] ? choice_names[choice]
                                                                           : "?";
}

dcu_net_choice_t dcu_net_auto(int mpirun, int lanes)
{
    if (lanes > 1 && dcu_plugin_built("ucx"))
        return DCU_NET_UCX;
    return mpirun ? DCU_NET_MPI : DCU_NET_UCX;
}

const dcu_net_ops_t *dcu_net_find(dcu_net_choice_t choice, char *why, size_t why_size)
{
    char reason[1100];
    const char *name = dcu_net_choice_name(choice);
    const dcu_plugin_t *p = NULL;
    if (choice == DCU_NET_MPI || choice == DCU_NET_UCX)
        p = dcu_plugin_get(name, reason, sizeof reason);
    else
        snprintf(reason, sizeof reason, "NET=%s names no network manager", name);
    if (p && p->net)
        return p->net;
    snprintf(why, why_size, "no %s network manager: %s", name, reason);
    return NULL;
}
