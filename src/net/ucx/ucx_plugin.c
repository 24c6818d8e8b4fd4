/*
 * The UCX plugin (libdcuda_ucx.so, plugin/plugin.h): the UCX network
 * manager (net_ucx.c), and the version of the UCX it runs on.
 */
#include <stdio.h>
#include <ucp/api/ucp.h>

#include "net/net.h"
#include "plugin/plugin_side.h"

extern const dcu_net_ops_t dcu_net_ucx_ops;

static void describe(char *text, size_t size)
{
    unsigned major = 0, minor = 0, release = 0;
    ucp_get_version(&major, &minor, &release);
    snprintf(text, size, "UCX %u.%u.%u", major, minor, release);
}

static const dcu_plugin_t plugin = {
    .version = DCU_PLUGIN_VERSION,
    .name = "ucx",
    .describe = describe,
    .net = &dcu_net_ucx_ops,
};

DCU_PLUGIN_EXPORT const dcu_plugin_t *dcuda_plugin_init(const dcu_plugin_host_t *lent)
{
    return dcu_plugin_side_accept(lent) ? &plugin : NULL;
}
