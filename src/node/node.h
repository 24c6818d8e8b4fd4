/*
 * The processes of one program on one node, as the host runtimes see each
 * other: the node segment (a block of shared memory holding each process's
 * pid and state, what it exports to its peers, and the WORLD barrier
 * slots its ranks use), and the detection of peers that died. (Host-level
 * barriers are the bootstrap's steps.)
 *
 * The segment exists when the program runs as several processes, one per
 * node: the node's first process creates it and the node's others map it,
 * learning where through the bootstrap's allgather, however the processes
 * were started. Its procs[] and slots[] are indexed by the process's place
 * among the node's processes (in process order); dcu_node_proc takes a
 * process's index in the program.
 */
#ifndef DCU_NODE_NODE_H
#define DCU_NODE_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "dcuda/dcuda_status.h"
#include "dcuda/shared/layout.h"
#include "util/notes.h"
#include "util/quiet.h"

enum dcu_proc_state {
    DCU_PROC_ABSENT = 0,   /* not started yet */
    DCU_PROC_UP = 1,       /* running */
    DCU_PROC_DEPARTED = 2, /* ended through exit() between runs */
    DCU_PROC_LEFT_RUN = 3  /* ended through exit() while its ranks ran: lost to the run */
};

/* Bytes of the reason a process gives when it ends a run early. */
#define DCU_NODE_WHY_BYTES 256

/* One process's part of the node segment; only that process writes it. */
typedef struct dcu_node_proc {
    DCUDA_ATOMIC(int32_t) pid;
    DCUDA_ATOMIC(uint32_t) state; /* dcu_proc_state */
    uint32_t reserved;
    int32_t rank_count;                 /* ranks of its device (its host runtime) */
    DCUDA_ATOMIC(uint32_t) runs;        /* runs begun (dcu_node_run_begin) */
    DCUDA_ATOMIC(uint32_t) in_run;      /* 1 while its ranks run */
    DCUDA_ATOMIC(uint32_t) aborted_run; /* the run (its `runs`) it ended early; 0: none */
    char abort_why[DCU_NODE_WHY_BYTES]; /* why, written before aborted_run */
    /* The deadlock detector's rounds when every process is on this node:
     * process 0 asks (dl_ask), each answers (its dl_quiet, then dl_answer),
     * process 0 tells what it found (dl_found); each is (run << 32 | round),
     * run being the process's `runs`. */
    DCUDA_ATOMIC(uint64_t) dl_ask;
    DCUDA_ATOMIC(uint64_t) dl_answer;
    dcu_quiet_t dl_quiet;
    DCUDA_ATOMIC(uint64_t) alive_ns; /* when its host thread last served its ranks */
    char backend[8];
    char kernel[64];
    uint64_t notifs_base;    /* its notification counters (its addresses) */
    uint64_t win_world_base; /* its WORLD window table */
    uint64_t push_base;      /* its WORLD barrier slots (dcuda_peer_t.node_push) */
    uint64_t lib_base;       /* the library's parts of its ranks (dcuda_peer_t.lib) */
    uint32_t export_count;
    int32_t world_first; /* WORLD rank of its first rank */
    dcu_export_t exports[DCUDA_MAX_SEGMENTS];
    /* The host's notifications to its ranks (core/host_notes.c): the
     * node's hosts add, it takes. */
    dcu_note_ring_t notes;
} dcu_node_proc_t;

typedef struct dcu_node {
    uint32_t magic;
    uint32_t count;
    /* The run (a process's `runs`) the deadlock detector found deadlocked,
     * written by the first of the node's processes to learn it, before its
     * ranks' waits end: a rank of the node whose wait a rank of another
     * process completes after that ended reads it (rank-visible). */
    DCUDA_ATOMIC(uint32_t) deadlocked;
    uint32_t reserved[13];
    dcuda_node_slot_t slots[DCUDA_MAX_NODE_PROCESSES]; /* WORLD barrier arrivals (rank-visible) */
    dcu_node_proc_t procs[DCUDA_MAX_NODE_PROCESSES];
} dcu_node_t;

/* Shares the node segment among the bootstrap's processes (collective;
 * once per program; nothing to do for one process). */
dcuda_status_t dcu_node_open(void);
/* The segment, or NULL when the program runs as one process. */
dcu_node_t *dcu_node(void);
/* Process p's entry (p a process of my node, in the program's numbering). */
dcu_node_proc_t *dcu_node_proc(int p);
/* My place among the node's processes (my slot and entry), and how many
 * processes the node has. */
int dcu_node_index(void);
int dcu_node_count(void);
/* Nonzero (and a message) when a peer process of the node died: ended
 * without exit(), was killed, or left with exit() while its ranks ran.
 * Cheap enough to call every few milliseconds. */
int dcu_node_lost(char *why, size_t why_size);

/* Tells the peers that this process exits, and whether it leaves a run
 * (once; an exit handler registered at dcu_node_open calls it too). */
void dcu_node_mark_exit(void);

/* This process's ranks start a run (before the run's host barrier), and
 * are done with it. A process that exits between the two is lost to its
 * peers' run, however it exits. */
void dcu_node_run_begin(void);
void dcu_node_run_end(void);
/* This process ends the current run early (a rank's error with
 * ON_ERROR=abort, ranks that could not start): its node peers' monitors
 * learn it through dcu_node_peer_aborted. Once per run. */
void dcu_node_abort_run(const char *why);
/* Nonzero, and the reason (naming the process), when a peer of the node
 * ended the run this process is in. */
int dcu_node_peer_aborted(char *why, size_t why_size);

/* The deadlock detector's rounds through the segment, when every process
 * of the program is on this node (core/deadlock.c); rounds belong to this
 * process's current run. Process 0 asks for round n; every process sees
 * the round asked for (0: none new) and answers it; process 0 collects
 * (1 and the fold of every answer once all are in) and tells the others
 * what it found (the node's `deadlocked`). */
void dcu_node_dl_ask(uint32_t round);
uint32_t dcu_node_dl_asked(void);
void dcu_node_dl_answer(uint32_t round, const dcu_quiet_t *q);
int dcu_node_dl_collect(uint32_t round, dcu_quiet_t *sum);
/* The current run is deadlocked (written for the whole node), and whether
 * it is; the run's mark the ranks compare `deadlocked` with. */
void dcu_node_dl_declare(void);
int dcu_node_dl_declared(void);
uint32_t dcu_node_run_mark(void);
/* This process's host thread serves its ranks now (a heartbeat); a node
 * peer whose heartbeat is older than `ns` is named in `why` (stalled or
 * stopped), 0 if none. */
void dcu_node_alive(void);
int dcu_node_stalled(uint64_t ns, char *why, size_t why_size);

#endif /* DCU_NODE_NODE_H */
