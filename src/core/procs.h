/*
 * The processes of one dcuda program on one node: one host runtime (one
 * device) per process. Started once per program, at the first
 * dcuda_host_init: under mpirun MPI supplies the processes; otherwise this
 * process forks the others (DCUDA_PROCESSES, or one per visible GPU). All of
 * them then share the node segment: a block of shared memory holding each
 * process's pid and state, its host-level barrier counter, what it exports
 * to its peers, and the WORLD barrier slots its ranks use.
 */
#ifndef DCUDA_CORE_PROCS_H
#define DCUDA_CORE_PROCS_H

#include <stddef.h>
#include <stdint.h>

#include "dcuda/dcuda_layout.h"
#include "dcuda/dcuda_status.h"
#include "settings.h"

/* How peers map an allocation of its owner. */
enum dcuda_export_kind {
    DCUDA_EXPORT_NONE = 0,    /* private memory: peers cannot map it */
    DCUDA_EXPORT_MEMFD = 1,   /* shared memory: a memfd of the owner */
    DCUDA_EXPORT_CUDA_IPC = 2 /* GPU memory: a CUDA IPC handle */
};

typedef struct dcuda_export {
    uint64_t serial; /* unique within its process, never reused */
    uint64_t base;   /* address in the owner */
    uint64_t size;
    int32_t kind;
    int32_t fd;                /* MEMFD: descriptor number in the owner */
    unsigned char handle[64];  /* CUDA_IPC: the cudaIpcMemHandle_t bytes */
} dcuda_export_t;

enum dcuda_proc_state {
    DCUDA_PROC_ABSENT = 0,  /* not started yet */
    DCUDA_PROC_UP = 1,      /* running */
    DCUDA_PROC_DEPARTED = 2 /* ended through exit() */
};

/* One process's part of the node segment; only that process writes it. */
typedef struct dcuda_node_proc {
    DCUDA_ATOMIC(int32_t) pid;
    DCUDA_ATOMIC(uint32_t) state;        /* dcuda_proc_state */
    DCUDA_ATOMIC(uint32_t) host_arrived; /* host-level barriers reached */
    int32_t rank_count;                  /* ranks of its device (this host runtime) */
    int32_t reserved;
    char backend[8];
    char kernel[64];
    uint64_t notifs_base;    /* its notification counters (its addresses) */
    uint64_t win_world_base; /* its WORLD window table */
    uint32_t export_count;
    int32_t world_first; /* WORLD rank of its first rank */
    dcuda_export_t exports[DCUDA_MAX_SEGMENTS];
} dcuda_node_proc_t;

typedef struct dcuda_node {
    uint32_t magic;
    uint32_t count;
    dcuda_node_slot_t slots[DCUDA_MAX_PROCESSES]; /* WORLD barrier arrivals (rank-visible) */
    dcuda_node_proc_t procs[DCUDA_MAX_PROCESSES];
} dcuda_node_t;

/* Has the process group been started in this program? */
int dcuda_procs_started(void);
/* Starts it: joins MPI when launched by mpirun, otherwise forks so that
 * `count` processes run (count 1: nothing to do). Once per program. */
dcuda_status_t dcuda_procs_start(const dcuda_settings_t *s, int count);
int dcuda_procs_count(void);
int dcuda_procs_index(void);
/* "one process", "forked" or "MPI". */
const char *dcuda_procs_mode(void);
dcuda_node_t *dcuda_procs_node(void);
/* Every process of the program reaches this call (a host-level barrier),
 * or the error when a peer died or left. `where` names the caller. */
dcuda_status_t dcuda_procs_barrier(const char *where);
/* The message of the last failed barrier. */
const char *dcuda_procs_why(void);
/* Nonzero (and a message) when a peer process died: ended without exit(),
 * or was killed. Cheap enough to call every few milliseconds. */
int dcuda_procs_lost(char *why, size_t why_size);

#endif /* DCUDA_CORE_PROCS_H */
