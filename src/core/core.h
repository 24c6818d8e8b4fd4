/*
 * The host runtime's private view: the host object and the pieces of the
 * runtime (context tables, peers' memory, monitor) that host.c strings
 * together. Core sits on top: it drives a backend (backend/), the process
 * group (bootstrap/, node/) and the proxy (proxy/), and none of them sees
 * this header.
 */
#ifndef DCU_CORE_CORE_H
#define DCU_CORE_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "backend/backend.h"
#include "dcuda/dcuda_host.h"
#include "dcuda/shared/layout.h"
#include "net/net.h"
#include "proxy/proxies.h"
#include "settings.h"
#include "util/notes.h"
#include "util/ring.h"

/* Entries of the rank -> host command ring: at least this many, and at
 * least as many as ranks (see dcuda/shared/ring.h); with a process on the
 * network path, where puts carry their payload through it, NET_ENTRIES
 * (1 MiB: the 4 KiB puts of 132 ranks fit at once; docs/remote-path.md)
 * and NET_ENTRIES_A_RANK a rank up to NET_ENTRIES_MAX, rounded up to a
 * power of two (ranks that took a ticket and wait for its entry to be
 * free slow every rank: docs/scale.md, "The command ring's room"). */
#define DCU_CMD_ENTRIES 256
#define DCU_CMD_NET_ENTRIES 16384
#define DCU_CMD_NET_ENTRIES_A_RANK 128
#define DCU_CMD_NET_ENTRIES_MAX (1u << 18) /* 16 MiB: 2,048 ranks at 128 */
/* Threads of a host blocked in dcuda_host_wait_notifications whose wait
 * the deadlock detector reads (with more, it never finds a deadlock). */
#define DCU_HOST_WAIT_SLOTS 8

typedef struct dcu_monitor dcu_monitor_t;
typedef struct dcu_detector dcu_detector_t;

/* A rank-visible allocation of this process, as its peers learn of it. */
typedef struct dcu_mem_rec {
    void *ptr;
    dcu_export_t ex;
    int user;       /* made by dcuda_host_alloc (else one of the runtime's tables) */
    int registered; /* the application's memory (dcuda_host_register): never freed here */
} dcu_mem_rec_t;

/* A peer's allocation mapped into this process (opened once, kept while
 * the peer still exports it). */
typedef struct dcu_import {
    int proc;
    uint64_t serial;
    uint64_t base; /* in the peer */
    uint64_t size;
    void *mapped; /* the object the export names, mapped here */
    void *local;  /* where `base` is in it */
} dcu_import_t;

struct dcuda_host {
    dcuda_settings_t settings;
    const dcu_backend_ops_t *ops;
    dcu_backend_t *backend;
    dcuda_kernel_t kernel;
    dcuda_rank_info_t info;
    char device_name[128];
    size_t shared_bytes; /* each rank's scratch memory (dcuda_init_params_t) */

    dcuda_context_t image;    /* the context as ranks see it (their pointers) */
    dcuda_context_t *dev_ctx; /* where ranks find it */
    /* Host views of the host-visible parts of the context. */
    dcuda_rank_status_t *status_h;
    dcuda_tag_counts_t *consumed_seen_h; /* what blocked ranks had consumed */
    DCUDA_ATOMIC(uint32_t) * cancel_h;
    dcuda_log_entry_t *log_h;
    dcuda_cmd_t *cmd_h;
    dcuda_cmd_reply_t *replies_h;
    void *user_dev;                     /* rank-visible copy of the user struct */
    DCUDA_ATOMIC(uint32_t) * node_push; /* my WORLD barrier slots (dcuda_peer_t.node_push) */
    size_t user_capacity;

    /* Rank-visible allocations (exported to peers) and peers' ones mapped
     * here (peers.c). */
    dcu_mem_rec_t *mems;
    int mem_count, mem_cap;
    uint64_t mem_serial;
    dcu_import_t *imports;
    int import_count, import_cap;
    void *node_rank; /* the node segment as ranks reach it */
    char lost[256];  /* why a peer process was lost during the run */
    /* lost is written (release): the host's requests read it from any
     * thread once this says so (acquire). */
    _Atomic int lost_known;
    char abort_why[256]; /* what ended the run early (ON_ERROR=abort etc.), and by whom */

    /* The processes: each one's first WORLD rank ([count]: WORLD size) and
     * the path to it ([count], from dcu_peers_agree); the network manager
     * when some path is the network. */
    int32_t *proc_first;
    uint8_t *path;
    int net_peers;
    const dcu_net_ops_t *net_ops;
    dcu_net_t *net;
    DCUDA_ATOMIC(uint32_t) * cmd_tail_h;
    /* Proxy lanes: how many serve, and the host views of each lane's
     * command ring and consumed count ([0]: cmd_h, cmd_tail_h). */
    int proxy_lanes;
    dcuda_cmd_t *lane_cmd_h[DCUDA_MAX_PROXY_LANES];
    DCUDA_ATOMIC(uint32_t) * lane_tail_h[DCUDA_MAX_PROXY_LANES];
    DCUDA_ATOMIC(uint32_t) * net_barrier_h;
    dcuda_inbox_entry_t *inbox_h; /* the ranks' inboxes (NET only) */
    DCUDA_ATOMIC(uint32_t) * inbox_tail_h;

    dcu_monitor_t *monitor;
    dcu_detector_t *detector;
    dcu_proxies_t *proxy; /* the process's proxy lanes */
    int deadlocked;       /* the detector ended the run in flight */
    /* exit() while the ranks run (run.c): the process is exiting (its run
     * ends as lost, whatever CUDA's exit does to the kernel meanwhile); the
     * host thread tells the processes on the network path, then says it
     * did. */
    _Atomic int exiting, leaving, left_told;
    /* dcuda_host_abort: claimed by one caller, asked (from any thread),
     * and why. */
    _Atomic int abort_claimed, abort_asked;
    char abort_text[DCUDA_ABORT_TEXT];
    /* The run in flight (run.c). */
    struct {
        void *user; /* where the user data goes back */
        size_t user_size;
        uint64_t t0, t1; /* launch, and the end of the host's service */
        int started;     /* by dcuda_host_run_start, not waited for yet */
        int active;      /* dcuda_host_run is running */
        int joining;     /* dcuda_host_run_wait joins `thread` */
        int threaded;    /* served by `thread` */
        pthread_t thread;
        _Atomic int done; /* the service ended: run_wait will not block */
        dcuda_status_t status;
    } run;
    uint64_t rma_last; /* the backend's ticket of the host's newest RMA copy (host_rma.c) */
    /* The host's requests (host_rma.c): slots that never move (the proxy
     * holds a request of the network path by address), the first free one
     * (-1: none), and this runtime's number in the handles it gives. */
    struct dcu_req_slot **reqs;
    int req_count, req_cap, req_free;
    uint32_t req_host_id;
    /* The run's ranks returned: the proxies take no more of the host's
     * requests (run.c sets it, host_rma.c reads it after handing one over). */
    _Atomic int rma_closed;
    /* The host's notifications (host_notes.c): the ring this process
     * takes them from (its part of the node segment, or own_notes), the
     * run they belong to, what this process's host thread wrote into the
     * host's half of each rank's counts ([device_size][DCUDA_TAG_COUNT]),
     * the notes still on a copy stream of this host's, and whether the
     * application's thread may still notify (from dcuda_host_run_start to
     * dcuda_host_run_wait). */
    dcu_note_ring_t *notes, *own_notes;
    _Atomic uint32_t notes_run;
    uint32_t *host_rows;
    _Atomic int notes_pending, host_free;
    /* The ranks' notifications to the host (host_wait.c): the counts they
     * sent (mapped, [device_size]), what the host consumed of each tag
     * this run; the threads blocked in dcuda_host_wait_notifications
     * (how many, and what the first DCU_HOST_WAIT_SLOTS wait for: the
     * deadlock detector's and its report's); whether a run is in flight
     * (from the start of dcuda_host_run or dcuda_host_run_start until the
     * run is concluded) and whether its ranks returned (run.c). */
    dcuda_to_host_t *to_host_h;
    _Atomic uint32_t to_host_taken[DCUDA_TAG_COUNT];
    _Atomic int host_waiters;
    struct {
        _Atomic int tag; /* -1: free */
        _Atomic int count;
    } host_waits[DCU_HOST_WAIT_SLOTS];
    _Atomic int run_live, ranks_returned;
    double timings[DCUDA_MAX_TIMERS];
    int timing_count;
    char last_error[512];
    struct dcuda_task_pool *task_pools; /* live task pools (task_pool.c) */
};

/* host_live.c: the live runtime (NULL: none), set by dcuda_host_init and
 * retired by dcuda_host_finish (its struct freed at the next init). */
dcuda_host_h dcu_host_live(void);
void dcu_host_set_live(dcuda_host_h h);
void dcu_host_retire(dcuda_host_h h);
void dcu_host_forget_retired(void);
/* host_live.c: DCUDA_OK for the live runtime, else a message naming `call`
 * and DCUDA_ERR_NOT_INITIALIZED. dcu_host_idle also refuses, with
 * DCUDA_ERR_IN_PROGRESS, while a run is in flight (of dcuda_host_run_start,
 * or of dcuda_host_run on another thread). Both are called under the API
 * lock, which every host call holds while it reads or changes the host. */
dcuda_status_t dcu_host_check(dcuda_host_h h, const char *call);
dcuda_status_t dcu_host_idle(dcuda_host_h h, const char *call);
void dcu_host_lock(void);
void dcu_host_unlock(void);

/* context.c: the shared tables of one device. */
dcuda_status_t dcu_context_create(dcuda_host_h h);
dcuda_status_t dcu_context_reset(dcuda_host_h h, const void *user, size_t user_size);
void dcu_context_destroy(dcuda_host_h h);
/* Timer spans of the finished run into h->timings. */
dcuda_status_t dcu_context_collect_timers(dcuda_host_h h);

/* peers.c: rank-visible allocations and the tables of peer processes. */
dcuda_status_t dcu_mem_alloc(dcuda_host_h h, size_t size, void **ptr);
/* dcuda_host_alloc: refused, with the reason, once the process exports as
 * many allocations as its peers can map. */
dcuda_status_t dcu_mem_alloc_user(dcuda_host_h h, size_t size, void **ptr);
void dcu_mem_free(dcuda_host_h h, void *ptr);
/* dcuda_host_free: DCUDA_ERR_INVALID_ARG, and a message, for a pointer that
 * is not a live allocation of dcuda_host_alloc. */
dcuda_status_t dcu_mem_free_user(dcuda_host_h h, void *ptr);
/* dcuda_host_register / dcuda_host_deregister. */
dcuda_status_t dcu_mem_register(dcuda_host_h h, void *ptr, size_t size);
dcuda_status_t dcu_mem_deregister(dcuda_host_h h, void *ptr);
/* Host init: tells the peers this device's rank count and learns theirs
 * (fills the WORLD fields of h->info, proc_first and the path to each
 * process). Collective over processes. */
dcuda_status_t dcu_peers_agree(dcuda_host_h h);
/* Before a run: publishes this process's allocations, maps the peers' new
 * ones and fills the peer and segment tables the ranks read. Collective. */
dcuda_status_t dcu_peers_exchange(dcuda_host_h h);
/* DCUDA_COMM_NODE's members, into rank memory (after dcu_peers_agree). */
dcuda_status_t dcu_peers_node_members(dcuda_host_h h);
/* Releases the peers' mappings and the process tables. */
void dcu_peers_release(dcuda_host_h h);
/* The address in this process of [addr, addr + size) in process p's
 * memory (a node peer's allocation mapped here), or 0 when no mapped
 * allocation of p holds it all. */
uint64_t dcu_peers_local(dcuda_host_h h, int p, uint64_t addr, uint64_t size);
/* Entries of the segment table: the allocations the node's other
 * processes may export (processes of other nodes export nothing here;
 * after dcu_node_open). */
size_t dcu_peer_segments(void);

/* host_rma.c: completes every RMA request started (the end of a run). */
void dcu_rma_settle(dcuda_host_h h);
/* The request slots (host_rma.c): set up at init, released at the end. */
void dcu_rma_init(dcuda_host_h h);
void dcu_rma_fini(dcuda_host_h h);

/* What arrived of a tag, from ranks and from the host (a host copy). */
static inline uint32_t dcu_arrivals(const dcuda_notif_count_t *c)
{
    return atomic_load_explicit(&c->ranks, memory_order_relaxed) +
           atomic_load_explicit(&c->host, memory_order_relaxed);
}

/* The host's notifications (host_notes.c). */
dcuda_status_t dcu_host_notes_init(dcuda_host_h h);
void dcu_host_notes_fini(dcuda_host_h h);
void dcu_host_notes_open(dcuda_host_h h);
void dcu_host_notes_close(dcuda_host_h h);
int dcu_host_notes_poll(dcuda_host_h h);
int dcu_host_notes_busy(dcuda_host_h h);

/* The ranks' notifications to the host (host_wait.c): a run begins to
 * take them (under the API lock), or ends (under it: what is left is
 * dropped); whether the host may still notify a rank (from
 * dcuda_host_run_start until dcuda_host_run_wait, but not while a thread
 * of it waits in dcuda_host_wait_notifications); whether a waiting
 * thread has what it waits for (the detector must not end that wait);
 * the line that says what a waiting host waits for (0: none waits). */
void dcu_host_wait_run_begin(dcuda_host_h h);
void dcu_host_wait_run_end(dcuda_host_h h);
int dcu_host_may_notify(dcuda_host_h h);
int dcu_host_wait_satisfied(dcuda_host_h h);
int dcu_host_wait_text(dcuda_host_h h, char *text, size_t size);
/* A note to WORLD rank world_rank of process proc (mine or a node peer's)
 * once the RMA copies started before are done; *ticket names it. */
dcuda_status_t dcu_host_note_after(dcuda_host_h h, int proc, int world_rank, int tag,
                                   uint64_t *ticket);

/* What a blocked rank waits for, as one look at its status saw it. */
typedef struct dcu_rank_view {
    uint32_t phase, tag, count, comm, target;
    uint32_t waits;          /* the counter: DCUDA_WAITS_ON(kind, index) */
    uint32_t call, call_seq; /* the call it is in: kind | communicator << 8, its number */
} dcu_rank_view_t;
void dcu_rank_view(const dcuda_rank_status_t *s, dcu_rank_view_t *v);

/* monitor.c: prints rank log lines, runs the watchdog and watches the peer
 * processes while ranks run. */
dcuda_status_t dcu_monitor_create(dcuda_host_h h);
void dcu_monitor_start(dcuda_host_h h);
/* One round of work; returns nonzero if it printed anything. */
int dcu_monitor_poll(dcuda_host_h h);
/* Once the ranks returned, before the proxies' last drain: an abort or a
 * rank's error the last round missed goes to the other processes. */
void dcu_monitor_news(dcuda_host_h h);
void dcu_monitor_drain(dcuda_host_h h);
/* Ends the run early for every process, once: blocked waits end with
 * DCUDA_ERR_ABORTED; the peers learn `why` (naming the culprit: "process 1,
 * whose ranks could not start"); `note` is this process's line. */
void dcu_monitor_end_run(dcuda_host_h h, const char *why, const char *note);
/* The deadlock detector found the run deadlocked: the report of this
 * process's blocked ranks, then their waits end with DCUDA_ERR_DEADLOCK. */
void dcu_monitor_deadlock(dcuda_host_h h);
void dcu_monitor_destroy(dcuda_host_h h);

/* deadlock.c: the deadlock detector (rounds among the processes). */
dcuda_status_t dcu_deadlock_create(dcuda_host_h h);
void dcu_deadlock_destroy(dcuda_host_h h);
/* Before a run. */
void dcu_deadlock_start(dcuda_host_h h);
/* Every monitor round: answers, asks (process 0); 1 once the run is
 * found deadlocked (the monitor then ends it: dcu_monitor_deadlock). */
int dcu_deadlock_poll(dcuda_host_h h);
/* This process's ranks and their counters as its last quiet snapshot saw
 * them: the deadlocked state, which the report shows (the ranks of a node
 * may have heard of the deadlock and moved on before this process reports). */
const dcu_rank_view_t *dcu_deadlock_views(dcuda_host_h h, const dcuda_notif_counters_t **arrived);
/* A peer process that has not answered for `ns` (stopped, or its host
 * thread held up): 1, naming it in why. */
int dcu_deadlock_stalled(dcuda_host_h h, uint64_t ns, char *why, size_t why_size);

#endif /* DCU_CORE_CORE_H */
