/*
 * The PMIx plugin (libdcuda_pmix.so, plugin/plugin.h): for processes a
 * PMIx server started (Open MPI's mpirun and prterun, Slurm's srun
 * --mpi=pmix) and no MPI to join them, PMIx gives this process's rank and
 * the job's size, and carries one fact: where process 0 listens (it puts
 * address:port, every process fences, the others get it; the address is
 * an IPv4 address of its host's interface DCUDA_NET_IF names, else of its
 * first interface that is up and not the loopback, so that no name needs
 * resolving). The group then
 * meets by rendezvous (bootstrap/boot_tcp.c). PMIx is finalised at exit.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/modes.h"
#include "plugin/plugin_side.h"

#define PMIX_KEY "dcuda.boot_addr"
/* The port process 0 listens on when DCUDA_BOOT_PORT does not say: from
 * the job's namespace, so that jobs at once on a host differ. */
#define PMIX_PORT_BASE 20000u
#define PMIX_PORT_SPAN 30000u

static int initialised;

static void pmix_at_exit(void)
{
    if (initialised)
        PMIx_Finalize(NULL, 0);
    initialised = 0;
}

static void describe(char *text, size_t size)
{
    snprintf(text, size, "PMIx %s", PMIx_Get_version());
}

static unsigned port_of(const char *nspace)
{
    const char *env = getenv("DCUDA_BOOT_PORT");
    long port = env ? strtol(env, NULL, 10) : 0;
    if (port > 0 && port < 65536)
        return (unsigned)port;
    unsigned h = 2166136261u;
    for (const char *c = nspace; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    return PMIX_PORT_BASE + h % PMIX_PORT_SPAN;
}

/* An IPv4 address of this host that the others can reach (see above);
 * its host name when it has none. */
static void own_address(char *out, size_t size)
{
    const char *want = getenv("DCUDA_NET_IF");
    struct ifaddrs *all = NULL, *pick = NULL;
    if (getifaddrs(&all) == 0) {
        for (struct ifaddrs *i = all; i && !pick; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
                continue;
            if (want && *want ? strstr(want, i->ifa_name) != NULL : !(i->ifa_flags & IFF_LOOPBACK))
                pick = i;
        }
    }
    if (!pick || !inet_ntop(AF_INET, &((struct sockaddr_in *)pick->ifa_addr)->sin_addr, out,
                            (socklen_t)size)) {
        if (gethostname(out, size - 1) != 0)
            snprintf(out, size, "localhost");
    }
    if (all)
        freeifaddrs(all);
}

/* Process 0 tells where it listens; everyone fences; the others read it. */
static int exchange_addr(const pmix_proc_t *me, dcu_boot_tcp_plan_t *plan, char *why,
                         size_t why_size)
{
    pmix_status_t rc = PMIX_SUCCESS;
    if (me->rank == 0) {
        char addr[300];
        pmix_value_t v;
        own_address(plan->host, sizeof plan->host);
        snprintf(addr, sizeof addr, "%s:%s", plan->host, plan->port);
        PMIX_VALUE_LOAD(&v, addr, PMIX_STRING);
        rc = PMIx_Put(PMIX_GLOBAL, PMIX_KEY, &v);
        PMIX_VALUE_DESTRUCT(&v);
        if (rc == PMIX_SUCCESS)
            rc = PMIx_Commit();
    }
    bool collect = true;
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc == PMIX_SUCCESS && me->rank != 0) {
        pmix_proc_t zero;
        pmix_value_t *got = NULL;
        PMIX_LOAD_PROCID(&zero, me->nspace, 0);
        rc = PMIx_Get(&zero, PMIX_KEY, NULL, 0, &got);
        if (rc == PMIX_SUCCESS && got && got->type == PMIX_STRING) {
            char *colon = strrchr(got->data.string, ':');
            if (colon) {
                snprintf(plan->host, sizeof plan->host, "%.*s", (int)(colon - got->data.string),
                         got->data.string);
                snprintf(plan->port, sizeof plan->port, "%s", colon + 1);
            }
        }
        if (got)
            PMIX_VALUE_RELEASE(got);
    }
    if (rc != PMIX_SUCCESS)
        snprintf(why, why_size, "PMIx could not carry process 0's address: %s",
                 PMIx_Error_string(rc));
    return rc == PMIX_SUCCESS ? 1 : -1;
}

static int pmix_plan(long processes, dcu_boot_tcp_plan_t *plan, char *why, size_t why_size)
{
    if (!getenv("PMIX_RANK") && !getenv("PMIX_NAMESPACE"))
        return 0;
    pmix_proc_t me, wild;
    pmix_value_t *size = NULL;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        snprintf(why, why_size, "PMIx_Init: %s (no PMIx server reached)", PMIx_Error_string(rc));
        return -1;
    }
    if (!initialised)
        atexit(pmix_at_exit);
    initialised = 1;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &size);
    if (rc != PMIX_SUCCESS || !size) {
        snprintf(why, why_size, "PMIx_Get(job size): %s", PMIx_Error_string(rc));
        return -1;
    }
    memset(plan, 0, sizeof *plan);
    plan->index = (int)me.rank;
    plan->count = (int)size->data.uint32;
    PMIX_VALUE_RELEASE(size);
    if (processes > 0 && processes != plan->count) {
        snprintf(why, why_size,
                 "the PMIx job has %d processes, but the PROCESSES setting asks "
                 "for %ld",
                 plan->count, processes);
        return -1;
    }
    snprintf(plan->port, sizeof plan->port, "%u", port_of(me.nspace));
    snprintf(plan->source, sizeof plan->source, "published through PMIx by process 0");
    return exchange_addr(&me, plan, why, why_size);
}

static const dcu_plugin_t plugin = {
    .version = DCU_PLUGIN_VERSION,
    .name = "pmix",
    .describe = describe,
    .boot_plan = pmix_plan,
};

DCU_PLUGIN_EXPORT const dcu_plugin_t *dcuda_plugin_init(const dcu_plugin_host_t *lent)
{
    return dcu_plugin_side_accept(lent) ? &plugin : NULL;
}
