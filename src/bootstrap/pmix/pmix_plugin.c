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
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap/modes.h"
#include "plugin/plugin_side.h"

#define PMIX_KEY "dcuda.boot_addr"

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

/* Process 0's listening socket, before its address is published: on
 * DCUDA_BOOT_PORT when set, else on a port the system picks (a port
 * chosen ahead, from the job's name, was taken by another program now
 * and then). */
static int listen_early(dcu_boot_tcp_plan_t *plan, char *why, size_t why_size)
{
    const char *env = getenv("DCUDA_BOOT_PORT");
    long want = env && *env ? strtol(env, NULL, 10) : 0;
    if (want < 0 || want > 65535) {
        snprintf(why, why_size, "DCUDA_BOOT_PORT=%s is not a port", env);
        return -1;
    }
    struct sockaddr_in at = { .sin_family = AF_INET, .sin_port = htons((uint16_t)want) };
    at.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof at;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, (struct sockaddr *)&at, sizeof at) != 0 || listen(fd, 128) != 0 ||
        getsockname(fd, (struct sockaddr *)&at, &len) != 0) {
        snprintf(why, why_size, "cannot listen on port %ld%s: %s", want,
                 want ? " (DCUDA_BOOT_PORT)" : "", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    plan->listening = 1;
    plan->listen_fd = fd;
    snprintf(plan->port, sizeof plan->port, "%u", (unsigned)ntohs(at.sin_port));
    return 0;
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

/* What process 0 published: host:port into the plan, 1; its failure
 * ("!why") into why, -1. */
static int read_published(const char *text, dcu_boot_tcp_plan_t *plan, char *why, size_t why_size)
{
    const char *colon = strrchr(text, ':');
    if (text[0] == '!' || !colon) {
        snprintf(why, why_size, "process 0 could not publish where it listens: %s",
                 text[0] == '!' ? text + 1 : text);
        return -1;
    }
    snprintf(plan->host, sizeof plan->host, "%.*s", (int)(colon - text), text);
    snprintf(plan->port, sizeof plan->port, "%s", colon + 1);
    return 1;
}

/* Process 0 tells where it listens (or, failed set, why it cannot:
 * the others then say so, not only that PMIx failed); everyone fences;
 * the others read it. */
static int exchange_addr(const pmix_proc_t *me, dcu_boot_tcp_plan_t *plan, const char *failed,
                         char *why, size_t why_size)
{
    pmix_status_t rc = PMIX_SUCCESS;
    if (me->rank == 0) {
        char addr[600];
        pmix_value_t v;
        own_address(plan->host, sizeof plan->host);
        if (failed)
            snprintf(addr, sizeof addr, "!%s", failed);
        else
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
    int told = 1;
    if (rc == PMIX_SUCCESS && me->rank != 0) {
        pmix_proc_t zero;
        pmix_value_t *got = NULL;
        PMIX_LOAD_PROCID(&zero, me->nspace, 0);
        rc = PMIx_Get(&zero, PMIX_KEY, NULL, 0, &got);
        if (rc == PMIX_SUCCESS && got && got->type == PMIX_STRING)
            told = read_published(got->data.string, plan, why, why_size);
        else if (rc == PMIX_SUCCESS)
            rc = PMIX_ERR_BAD_PARAM;
        if (got)
            PMIX_VALUE_RELEASE(got);
    }
    if (rc != PMIX_SUCCESS && !failed) /* failed is why already */
        snprintf(why, why_size, "PMIx could not carry process 0's address: %s",
                 PMIx_Error_string(rc));
    return rc != PMIX_SUCCESS || failed ? -1 : told;
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
    snprintf(plan->source, sizeof plan->source, "published through PMIx by process 0");
    int failed = me.rank == 0 && listen_early(plan, why, why_size) != 0;
    int told = exchange_addr(&me, plan, failed ? why : NULL, why, why_size);
    if (told < 0 && plan->listening) {
        close(plan->listen_fd);
        plan->listening = 0;
    }
    return told;
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
