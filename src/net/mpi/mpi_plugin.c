/*
 * The MPI plugin (libdcuda_mpi.so, plugin/plugin.h): the MPI network
 * manager (net_mpi.c) and MPI's bootstrap (bootstrap/boot_mpi.c), and the
 * MPI library it runs on (MPI_Get_library_version may be called before
 * MPI_Init).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "bootstrap/modes.h"
#include "net/net.h"
#include "plugin/plugin_side.h"

extern const dcu_net_ops_t dcu_net_mpi_ops;

static void describe(char *text, size_t size)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS)
        snprintf(version, sizeof version, "an MPI");
    version[strcspn(version, "\n,")] = '\0';
    snprintf(text, size, "%s", version);
}

static const dcu_plugin_t plugin = {
    .version = DCU_PLUGIN_VERSION,
    .name = "mpi",
    .describe = describe,
    .net = &dcu_net_mpi_ops,
    .boot = &dcu_boot_mpi_ops,
    .boot_start = dcu_boot_mpi_start,
    .boot_start_comm = dcu_boot_mpi_start_comm,
    .boot_same_comm = dcu_boot_mpi_same_comm,
    .boot_comm_used = dcu_boot_mpi_comm_used,
};

DCU_PLUGIN_EXPORT const dcu_plugin_t *dcuda_plugin_init(const dcu_plugin_host_t *lent)
{
    return dcu_plugin_side_accept(lent) ? &plugin : NULL;
}
