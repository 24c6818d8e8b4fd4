/*
 * The plugin contract: MPI and UCX are not linked into libdcuda; their
 * network managers (and MPI's bootstrap) are modules loaded at run time
 * (plugin/loader.c), libdcuda_mpi.so and libdcuda_ucx.so, each linked
 * against its own library. A module exports one function,
 * dcuda_plugin_init, which takes what the library lends it (its messages,
 * the bootstrap's wait hook) and returns its table of operations (PMIx's,
 * libdcuda_pmix.so, gives a rendezvous plan instead). Both
 * sides check the contract's version; a table's parts carry their own
 * (the network contract's, the bootstrap's).
 */
#ifndef DCU_PLUGIN_PLUGIN_H
#define DCU_PLUGIN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "boot_ops.h"
#include "dcuda/dcuda_status.h"
#include "net_ops.h"

#define DCU_PLUGIN_VERSION 2u
#define DCU_PLUGIN_ENTRY "dcuda_plugin_init"

/* What the library lends a module. */
typedef struct dcu_plugin_host {
    uint32_t version; /* DCU_PLUGIN_VERSION */
    /* A message line of the library's (level: DCU_PLUGIN_ERROR, ...). */
    void (*message)(int level, const char *text);
    /* What must go on while a bootstrap step waits (bootstrap/boot.h). */
    void (*waiting)(void);
} dcu_plugin_host_t;
enum { DCU_PLUGIN_ERROR = 0, DCU_PLUGIN_WARN = 1, DCU_PLUGIN_INFO = 2 };

/* What a module gives. */
typedef struct dcu_plugin {
    uint32_t version; /* DCU_PLUGIN_VERSION */
    const char *name; /* "mpi", "ucx" */
    /* The library it was built with and runs on ("UCX 1.13.1"). */
    void (*describe)(char *text, size_t size);
    const dcu_net_ops_t *net; /* its network manager (version DCU_NET_VERSION), or NULL */
    /* MPI's bootstrap (modes.h), or NULL: start on MPI_COMM_WORLD or on
     * an application's communicator, and what the group then uses. */
    const dcu_boot_ops_t *boot;
    dcuda_status_t (*boot_start)(long processes, int *count, int *index);
    dcuda_status_t (*boot_start_comm)(long processes, const void *comm, int *count, int *index);
    int (*boot_same_comm)(const void *comm);
    const void *(*boot_comm_used)(void);
    /* A launcher's plan for rendezvous mode (PMIx: this process's index,
     * the job's size, where process 0 listens, published through the
     * launcher): 1 and the plan, 0 when this launcher did not start the
     * process, -1 and why when it cannot be used. NULL: none. */
    int (*boot_plan)(long processes, dcu_boot_tcp_plan_t *plan, char *why, size_t why_size);
} dcu_plugin_t;

typedef const dcu_plugin_t *(*dcu_plugin_init_fn)(const dcu_plugin_host_t *host);

#endif /* DCU_PLUGIN_PLUGIN_H */
