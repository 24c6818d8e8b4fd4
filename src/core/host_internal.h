/*
 * The host runtime's private view: the host object, the backend operations
 * table each backend fills in, and the pieces of the runtime (context image,
 * monitor) that host.c strings together.
 */
#ifndef DCUDA_CORE_HOST_INTERNAL_H
#define DCUDA_CORE_HOST_INTERNAL_H

#include <stdint.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/dcuda_layout.h"
#include "procs.h"
#include "settings.h"

/* Entries of the rank -> host command ring. */
#define DCUDA_CMD_ENTRIES 256

typedef struct dcuda_backend_ops dcuda_backend_ops_t;
typedef struct dcuda_monitor dcuda_monitor_t;

/* A rank-visible allocation of this process, as its peers learn of it. */
typedef struct dcuda_mem_rec {
    void *ptr;
    dcuda_export_t ex;
} dcuda_mem_rec_t;

/* A peer's allocation mapped into this process (opened once, kept while
 * the peer still exports it). */
typedef struct dcuda_import {
    int proc;
    uint64_t serial;
    uint64_t base; /* in the peer */
    uint64_t size;
    void *local;
} dcuda_import_t;

struct dcuda_host {
    dcuda_settings_t settings;
    const dcuda_backend_ops_t *ops;
    void *backend; /* the backend's own data */
    dcuda_kernel_t kernel;
    dcuda_rank_info_t info;
    char device_name[128];

    dcuda_context_t image;    /* the context as ranks see it (their pointers) */
    dcuda_context_t *dev_ctx; /* where ranks find it */
    /* Host views of the host-visible parts of the context. */
    dcuda_rank_status_t *status_h;
    DCUDA_ATOMIC(uint32_t) *cancel_h;
    dcuda_log_entry_t *log_h;
    dcuda_cmd_t *cmd_h;
    dcuda_cmd_reply_t *replies_h;
    void *user_dev; /* rank-visible copy of the user struct */
    size_t user_capacity;

    /* Rank-visible allocations (exported to peers) and peers' ones mapped
     * here (peers.c). */
    dcuda_mem_rec_t *mems;
    int mem_count, mem_cap;
    uint64_t mem_serial;
    dcuda_import_t *imports;
    int import_count, import_cap;
    void *node_rank; /* the node segment as ranks reach it */
    char lost[256]; /* why a peer process was lost during the run */

    dcuda_monitor_t *monitor;
    double timings[DCUDA_MAX_TIMERS];
    int timing_count;
    char last_error[512];
};

/* What a backend provides. Memory "rank-visible" is what rank code can use
 * (GPU memory for the CUDA backend); "mapped" memory is host memory that
 * ranks can also reach (pinned and mapped on a GPU). */
struct dcuda_backend_ops {
    const char *name;
    /* Can this backend run ranks here? Fills a reason when not. */
    int (*available)(char *why, size_t why_size);
    /* Choose the device, the rank count and threads per rank (host->info). */
    dcuda_status_t (*open)(dcuda_host_h h, int threads_per_rank);
    void (*close)(dcuda_host_h h);
    /* Rank-visible memory, zeroed; *ex tells peers how to map it (kind NONE
     * when there are no peers). */
    dcuda_status_t (*alloc)(dcuda_host_h h, size_t size, void **ptr, dcuda_export_t *ex);
    void (*free)(dcuda_host_h h, void *ptr, const dcuda_export_t *ex);
    /* Maps a peer's exported allocation (process `proc`) into this process. */
    dcuda_status_t (*import)(dcuda_host_h h, int proc, const dcuda_export_t *ex, void **local);
    void (*unimport)(dcuda_host_h h, void *local, uint64_t size);
    /* Makes the node segment reachable by ranks. */
    dcuda_status_t (*map_node)(dcuda_host_h h, void *node, size_t size, void **rank_ptr);
    void (*unmap_node)(dcuda_host_h h, void *node);
    dcuda_status_t (*alloc_mapped)(dcuda_host_h h, size_t size, void **host_ptr, void **rank_ptr);
    void (*free_mapped)(dcuda_host_h h, void *host_ptr);
    dcuda_status_t (*copy_in)(dcuda_host_h h, void *dst, const void *src, size_t size);
    dcuda_status_t (*copy_out)(dcuda_host_h h, void *dst, const void *src, size_t size);
    /* copy_out while ranks run (never waits for them). */
    dcuda_status_t (*peek)(dcuda_host_h h, void *dst, const void *src, size_t size);
    /* Start every rank of the kernel and return at once. */
    dcuda_status_t (*launch)(dcuda_host_h h);
    /* Have all ranks returned? Never blocks. */
    int (*finished)(dcuda_host_h h);
    /* Wait for the ranks and release what launch took. */
    dcuda_status_t (*join)(dcuda_host_h h);
};

extern const dcuda_backend_ops_t dcuda_cpu_backend_ops;
#if defined(DCUDA_HAVE_CUDA)
extern const dcuda_backend_ops_t dcuda_cuda_backend_ops;
/* GPUs visible (0 and why when none), without initialising CUDA in this
 * process before its process group has started. */
int dcuda_cuda_count_devices(char *why, size_t why_size);
#endif

/* context.c: the shared tables of one device. */
dcuda_status_t dcuda_context_create(dcuda_host_h h);
dcuda_status_t dcuda_context_reset(dcuda_host_h h, const void *user, size_t user_size);
void dcuda_context_destroy(dcuda_host_h h);
/* Timer spans of the finished run into h->timings. */
dcuda_status_t dcuda_context_collect_timers(dcuda_host_h h);

/* peers.c: rank-visible allocations and the tables of peer processes. */
dcuda_status_t dcuda_mem_alloc(dcuda_host_h h, size_t size, void **ptr);
void dcuda_mem_free(dcuda_host_h h, void *ptr);
/* Host init: tells the peers this device's rank count and learns theirs
 * (fills the WORLD fields of h->info). Collective over processes. */
dcuda_status_t dcuda_peers_agree(dcuda_host_h h);
/* Before a run: publishes this process's allocations, maps the peers' new
 * ones and fills the peer and segment tables the ranks read. Collective. */
dcuda_status_t dcuda_peers_exchange(dcuda_host_h h);
void dcuda_peers_release(dcuda_host_h h);

/* monitor.c: prints rank log lines and runs the watchdog while ranks run. */
dcuda_status_t dcuda_monitor_create(dcuda_host_h h);
void dcuda_monitor_start(dcuda_host_h h);
/* One round of work; returns nonzero if it printed anything. */
int dcuda_monitor_poll(dcuda_host_h h);
void dcuda_monitor_drain(dcuda_host_h h);
void dcuda_monitor_destroy(dcuda_host_h h);

/* logfmt.c: formats a FORMAT-kind log entry (device printf) into out. */
void dcuda_log_format_entry(const dcuda_log_entry_t *e, char *out, size_t out_size);
/* monitor.c: the text of any log entry. */
void dcuda_log_entry_text(const dcuda_log_entry_t *e, char *text, size_t size);

/* Monotonic nanoseconds on the host. */
uint64_t dcuda_now_ns(void);

#endif /* DCUDA_CORE_HOST_INTERNAL_H */
