/*
 * What the environment says about how this process was started: a
 * rendezvous plan of the user's (DCUDA_BOOT_ADDR, DCUDA_PROCESS_INDEX and
 * the PROCESSES setting, as torchrun's MASTER_ADDR, RANK and WORLD_SIZE),
 * a Slurm step's (srun: SLURM_PROCID, SLURM_STEP_NUM_TASKS, the step's
 * first node, where task 0 runs), or an MPI launcher's variables. A
 * process that sees a launcher must join its group or fail; it never
 * runs alone.
 */
#include "launch_env.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The rendezvous port of a Slurm step when neither DCUDA_BOOT_PORT nor a
 * port Slurm reserved for the step says: from the job and step ids, so
 * that steps running at once on a node differ, below Linux's ephemeral
 * range (32768 up), where the system gives outgoing connections their
 * ports; another program may still hold one, so SLURM_PORT_TRIES
 * consecutive ports are candidates (20000 to 32006 in all). */
#define SLURM_PORT_BASE 20000
#define SLURM_PORT_SPAN 12000
#define SLURM_PORT_TRIES 8

/* An integer variable: 1 and *value when it is set and whole, 0 when not
 * set, -1 when it is not a number. */
static int env_long(const char *name, long *value)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0)
        return -1;
    *value = v;
    return 1;
}

int dcu_launch_timeout(void)
{
    long s = 0;
    return env_long("DCUDA_BOOT_TIMEOUT", &s) > 0 && s > 0 && s < 86400 ? (int)s : 0;
}

/* host:port into the plan (the last colon splits; "[v6]:port" is not
 * supported: IPv4 and names). */
static int split_addr(const char *addr, dcu_boot_tcp_plan_t *plan)
{
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || !colon[1] || (size_t)(colon - addr) >= sizeof plan->host ||
        strlen(colon + 1) >= sizeof plan->port)
        return 0;
    memcpy(plan->host, addr, (size_t)(colon - addr));
    plan->host[colon - addr] = '\0';
    snprintf(plan->port, sizeof plan->port, "%s", colon + 1);
    for (const char *c = plan->port; *c; c++)
        if (!isdigit((unsigned char)*c))
            return 0;
    return 1;
}

int dcu_launch_rendezvous(long processes, dcu_boot_tcp_plan_t *plan, char *why, size_t why_size)
{
    const char *addr = getenv("DCUDA_BOOT_ADDR");
    if (!addr || !*addr)
        return 0;
    long index = -1;
    memset(plan, 0, sizeof *plan);
    snprintf(plan->source, sizeof plan->source, "DCUDA_BOOT_ADDR");
    if (!split_addr(addr, plan)) {
        snprintf(why, why_size, "DCUDA_BOOT_ADDR='%s' is not host:port (where process 0 listens)",
                 addr);
        return -1;
    }
    int has_index = env_long("DCUDA_PROCESS_INDEX", &index);
    if (has_index <= 0) {
        snprintf(why, why_size,
                 "DCUDA_BOOT_ADDR is set, so DCUDA_PROCESS_INDEX must give this "
                 "process's index (0 .. DCUDA_PROCESSES - 1)%s",
                 has_index < 0 ? ", and it is not a number" : "");
        return -1;
    }
    if (processes <= 0) {
        snprintf(why, why_size,
                 "DCUDA_BOOT_ADDR is set, so the PROCESSES setting "
                 "(DCUDA_PROCESSES) must give the number of processes");
        return -1;
    }
    if (index >= processes) {
        snprintf(why, why_size, "DCUDA_PROCESS_INDEX=%ld is not below DCUDA_PROCESSES=%ld", index,
                 processes);
        return -1;
    }
    plan->index = (int)index;
    plan->count = (int)processes;
    plan->timeout_s = dcu_launch_timeout();
    return 1;
}

/* The first host of a Slurm node list: "gpu[07-09,12],cpu3" gives
 * "gpu07", "a1,a2" gives "a1". 0 if it cannot be read. */
int dcu_launch_first_node(const char *list, char *host, size_t size)
{
    size_t i = 0, out = 0;
    while (list[i] && list[i] != ',' && list[i] != '[') {
        if (out + 1 >= size)
            return 0;
        host[out++] = list[i++];
    }
    if (list[i] == '[') {
        i++;
        while (isdigit((unsigned char)list[i])) {
            if (out + 1 >= size)
                return 0;
            host[out++] = list[i++];
        }
        if (list[i] != '-' && list[i] != ',' && list[i] != ']')
            return 0;
    }
    host[out] = '\0';
    return out > 0;
}

/* The first port Slurm reserved for the step (srun --resv-ports, with
 * MpiParams=ports in slurm.conf: SLURM_STEP_RESV_PORTS="12000-12003" or
 * "12000,12005"), which no other step of the node holds; 0 when none. */
static long reserved_port(void)
{
    const char *s = getenv("SLURM_STEP_RESV_PORTS");
    char *end;
    long port = s ? strtol(s, &end, 10) : 0;
    return s && end != s && (*end == '\0' || *end == '-' || *end == ',') && port > 0 && port < 65536
               ? port
               : 0;
}

int dcu_launch_slurm(long processes, dcu_boot_tcp_plan_t *plan, char *why, size_t why_size)
{
    long tasks = 0, procid = 0, job = 0, step = 0, port = 0;
    if (env_long("SLURM_STEP_NUM_TASKS", &tasks) <= 0 || tasks <= 1)
        return 0; /* not a step of srun (a batch script), or one task */
    memset(plan, 0, sizeof *plan);
    const char *nodes = getenv("SLURM_STEP_NODELIST");
    if (env_long("SLURM_PROCID", &procid) <= 0 || procid >= tasks || !nodes ||
        !dcu_launch_first_node(nodes, plan->host, sizeof plan->host)) {
        snprintf(why, why_size,
                 "started by Slurm's srun (a step of %ld tasks), but SLURM_PROCID "
                 "or SLURM_STEP_NODELIST cannot be read; set DCUDA_BOOT_ADDR, "
                 "DCUDA_PROCESS_INDEX and DCUDA_PROCESSES instead",
                 tasks);
        return -1;
    }
    if (processes > 0 && processes != tasks) {
        snprintf(why, why_size,
                 "the Slurm step has %ld tasks, but the PROCESSES setting asks for "
                 "%ld",
                 tasks, processes);
        return -1;
    }
    const char *source = "the Slurm step's first node, task 0";
    env_long("SLURM_JOB_ID", &job);
    env_long("SLURM_STEP_ID", &step);
    plan->group_key = ((uint64_t)job << 24) + (uint64_t)step + 1u;
    if (env_long("DCUDA_BOOT_PORT", &port) <= 0 || port <= 0 || port > 65535) {
        port = reserved_port();
        if (port > 0) {
            source = "the Slurm step's first node, task 0, on the step's reserved port";
        } else {
            port = SLURM_PORT_BASE + (job * 97 + step) % SLURM_PORT_SPAN;
            plan->port_tries = SLURM_PORT_TRIES;
        }
    }
    snprintf(plan->port, sizeof plan->port, "%ld", port);
    snprintf(plan->source, sizeof plan->source, "%s", source);
    plan->index = (int)procid;
    plan->count = (int)tasks;
    plan->timeout_s = dcu_launch_timeout();
    return 1;
}

const char *dcu_launch_mpi_seen(char *buf, size_t size)
{
    static const char *const vars[][2] = {
        { "OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun" },
        { "PMIX_RANK", "a PMIx launcher (prterun, srun --mpi=pmix)" },
        { "PMI_SIZE", "a PMI launcher (MPICH's mpiexec, srun --mpi=pmi2)" },
        { "MPI_LOCALNRANKS", "an MPI launcher (MPICH's Hydra)" },
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i][0])) {
            snprintf(buf, size, "%s (%s=%s)", vars[i][1], vars[i][0], getenv(vars[i][0]));
            return buf;
        }
    return NULL;
}
