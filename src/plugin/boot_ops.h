/*
 * The bootstrap contract (a plugin's part: plugin.h): a way to start a
 * process group is a table of operations that moves the fixed-size
 * records of host steps among its processes; `where` names the host call
 * that waits, for the warnings of a long wait, and `why` says what went
 * wrong when one fails (DCUDA_ERR_PEER: a process ended instead of taking
 * part). And a launcher's plan for rendezvous mode.
 */
#ifndef DCU_PLUGIN_BOOT_OPS_H
#define DCU_PLUGIN_BOOT_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "dcuda/dcuda_status.h"

/* Bytes of one process's record in a host step (boot.c). */
#define DCU_BOOT_RECORD_BYTES 72
/* A process that waits this long in a host step says so, and again as
 * long as it waits. */
#define DCU_BOOT_WARN_NS (10ull * 1000000000ull)

/* The contract's version: boot.c takes only a mode of its own version. */
#define DCU_BOOT_OPS_VERSION 2u /* 2: capability flags */

/* What a mode gives (dcu_boot_ops_t.caps). */
enum {
    DCU_BOOT_CAP_MPI = 1u << 0, /* the processes are an MPI job's (its managers may run) */
};

typedef struct dcu_boot_ops {
    uint32_t version; /* DCU_BOOT_OPS_VERSION */
    const char *name; /* "forked", "MPI", "rendezvous" */
    uint32_t caps;    /* DCU_BOOT_CAP_* */
    /* Every process's `size` bytes (<= DCU_BOOT_RECORD_BYTES), in process
     * order, to every process. */
    dcuda_status_t (*allgather)(const void *mine, void *all, size_t size, const char *where,
                                char *why, size_t why_size);
    /* The lowest index of the processes that share this one's memory, as
     * the launcher knows it; NULL: boot.c finds it from what each process
     * tells of its host (its boot, IPC namespace and /dev/shm). */
    int (*node_key)(void);
    /* Host steps can still be taken (at the program's end); NULL: yes. */
    int (*usable)(void);
    /* A peer was lost: the group ends without a collective step. */
    void (*abandon)(void);
    /* The program's end in this process: its exit status (process 0 of a
     * forked group waits for the others and adds their failures). */
    int (*exit_status)(int status);
    /* How process p ended (a wait status), when this process can know
     * (waiting at most patience_ms); else 0. NULL: never. */
    int (*child_status)(int p, int patience_ms, int *status);
} dcu_boot_ops_t;

/* Rendezvous mode (launcher-free, or a Slurm step without PMI): every
 * process is told its index, the group's size and where process 0
 * listens; process 0 accepts the others' connections over TCP and relays
 * every step. `source` names where the plan came from, for messages. */
typedef struct dcu_boot_tcp_plan {
    int index, count;
    int timeout_s; /* the start's bound (0: the default, 60 s) */
    char host[256];
    char port[16];
    char source[128];
    /* 1: the plan's maker already listens on listen_fd for process 0 (a
     * port the system chose, which it then published; no other program
     * can take the port between the choice and the listen); 0: process 0
     * listens on port itself. */
    int listening;
    int listen_fd;
    /* Ports port .. port + port_tries - 1 are the candidates (0 or 1: port
     * alone): process 0 listens on the first it can take, the others try
     * each in turn. A port derived from ids may be held by another program,
     * so its plan names several; a port the user or Slurm gave, one. */
    int port_tries;
    /* The group's key (a Slurm step's job and step ids; 0: none): process 0
     * ignores a hello of another key, so that steps whose candidates
     * overlap never take each other's processes. */
    uint64_t group_key;
} dcu_boot_tcp_plan_t;

/* What a step that waits must keep doing (the library's: bootstrap/boot.c;
 * in a plugin, passed on to it, plugin_side.c). */
void dcu_boot_waiting(void);

#endif /* DCU_PLUGIN_BOOT_OPS_H */
