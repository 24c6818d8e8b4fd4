/*
 * The backend contract: what the host runtime asks of a device that runs
 * ranks (CPU threads, or the blocks of one persistent GPU kernel). A
 * backend keeps its own state behind dcu_backend_t; it never sees the host
 * runtime's object.
 *
 * Memory words: "rank-visible" memory is what rank code can use (GPU memory
 * for the CUDA backend); "mapped" memory is host memory that ranks can also
 * reach (pinned and mapped on a GPU). An allocation made while several
 * processes run is exported: its record tells a peer how to map it.
 */
#ifndef DCU_BACKEND_BACKEND_H
#define DCU_BACKEND_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "dcuda/dcuda_host.h"
#include "dcuda/shared/layout.h"

typedef enum dcu_backend_kind {
    DCU_BACKEND_CPU = 0, /* ranks are host threads: the kernel's C form */
    DCU_BACKEND_CUDA = 1 /* ranks are thread blocks: the kernel's GPU form */
} dcu_backend_kind_t;

/* How peers map an allocation of its owner. */
enum dcu_export_kind {
    DCU_EXPORT_NONE = 0,    /* private memory: peers cannot map it */
    DCU_EXPORT_MEMFD = 1,   /* shared memory: a memfd of the owner */
    DCU_EXPORT_CUDA_IPC = 2 /* GPU memory: a CUDA IPC handle */
};

typedef struct dcu_export {
    uint64_t serial; /* unique within its process, never reused (set by the host runtime) */
    uint64_t base;   /* address in the owner */
    uint64_t size;
    int32_t kind; /* dcu_export_kind */
    int32_t fd;   /* MEMFD: descriptor number in the owner */
    int32_t pid;  /* MEMFD: the owner */
    int32_t reserved;
    uint64_t offset;          /* where `base` lies in the object the record maps (memory the
                      * application registered inside a larger allocation) */
    unsigned char handle[64]; /* CUDA_IPC: the cudaIpcMemHandle_t bytes */
} dcu_export_t;

/* What the host runtime asks a backend to run. */
typedef struct dcu_backend_request {
    dcuda_kernel_t kernel;
    int threads_per_rank;
    size_t shared_bytes; /* scratch memory of each rank (dcuda_rank_shared) */
    long ranks;          /* the RANKS setting: 0 for the backend's default */
    int process_count;   /* processes of the program (> 1: allocations are exported) */
    int device;          /* the device of this host it drives (GPU: its index) */
    int host_processes;  /* processes on this host, a device each */
    int peer_count;      /* devices of this host it must reach directly ... */
    int peers[DCUDA_MAX_NODE_PROCESSES]; /* ... (the processes of its node) */
} dcu_backend_request_t;

/* What the backend will run, filled by open. */
typedef struct dcu_backend_shape {
    int ranks;
    int threads_per_rank;
    char device_name[128];
} dcu_backend_shape_t;

typedef struct dcu_backend dcu_backend_t;

/* Reads of rank memory (read_start) a backend keeps in flight at most. */
#define DCU_BACKEND_READS 8
/* Writes of rank memory (write_start) a backend keeps in flight at most. */
#define DCU_BACKEND_WRITES 8
/* The host's RMA copies (rma_start) a backend keeps in flight at most. */
#define DCU_BACKEND_RMAS 32

/* A task's work on the GPU (src/task): copy in_size bytes from in_from to
 * in when they differ (host memory to GPU memory: a task stolen from a
 * CPU device), the task's GPU form over in and out, then copy out_size
 * bytes from out to out_to when it is not NULL (back to the home's host
 * memory). */
typedef struct dcu_task_gpu_job {
    dcuda_task_gpu_fn fn;
    void *arg;
    const void *in_from;
    void *in;
    size_t in_size;
    void *out;
    void *out_to;
    size_t out_size;
} dcu_task_gpu_job_t;

/* The GPU's side of tasks, for one worker thread (bound with bind_thread
 * first): two streams it takes turns on (lanes 0 and 1), and memory of the
 * GPU for tasks it took from other devices. */
typedef struct dcu_task_gpu_ops {
    dcuda_status_t (*open)(void **gpu);
    void (*close)(void *gpu);
    dcuda_status_t (*alloc)(void *gpu, size_t size, void **ptr);
    void (*free)(void *gpu, void *ptr);
    /* Enqueues a job's copies and form on the lane's stream; returns at once. */
    dcuda_status_t (*issue)(void *gpu, int lane, const dcu_task_gpu_job_t *job);
    /* Waits for everything issued on the lane: the first error since. */
    dcuda_status_t (*finish)(void *gpu, int lane);
} dcu_task_gpu_ops_t;

typedef struct dcu_backend_ops {
    dcu_backend_kind_t kind;
    const char *name;
    /* How ranks of this backend reach those of other processes of the node. */
    uint32_t peer_path; /* dcuda_path */
    /* Devices this backend can run ranks on here; 0 and why when none.
     * in_child: ask in a short-lived child process, so that this one stays
     * untouched (a process that will fork must not have initialised CUDA). */
    int (*devices)(int in_child, char *why, size_t why_size);
    dcuda_status_t (*open)(const dcu_backend_request_t *req, dcu_backend_t **b,
                           dcu_backend_shape_t *shape);
    void (*close)(dcu_backend_t *b);
    /* Rank-visible memory, zeroed; *ex is filled when peers can map it
     * (kind DCU_EXPORT_NONE when the program runs as one process). */
    dcuda_status_t (*alloc)(dcu_backend_t *b, size_t size, void **ptr, dcu_export_t *ex);
    void (*free)(dcu_backend_t *b, void *ptr, const dcu_export_t *ex);
    /* Memory the application allocated, made reachable like an allocation
     * of alloc: checked (rank-visible memory of this device), *ex filled
     * when peers can map it. Refused, with the reason, when they cannot. */
    dcuda_status_t (*register_mem)(dcu_backend_t *b, void *ptr, size_t size, dcu_export_t *ex);
    /* Maps the object of a peer's export (of process `proc`) into this one:
     * *mapped is its start (the export's base is at mapped + ex->offset). */
    dcuda_status_t (*import)(dcu_backend_t *b, int proc, const dcu_export_t *ex, void **mapped);
    void (*unimport)(dcu_backend_t *b, void *mapped, uint64_t size);
    /* Makes host memory (the node segment) reachable by ranks. */
    dcuda_status_t (*map_host)(dcu_backend_t *b, void *host, size_t size, void **rank_ptr);
    void (*unmap_host)(dcu_backend_t *b, void *host);
    dcuda_status_t (*alloc_mapped)(dcu_backend_t *b, size_t size, void **host_ptr, void **rank_ptr);
    void (*free_mapped)(dcu_backend_t *b, void *host_ptr);
    dcuda_status_t (*copy_in)(dcu_backend_t *b, void *dst, const void *src, size_t size);
    dcuda_status_t (*copy_out)(dcu_backend_t *b, void *dst, const void *src, size_t size);
    /* Stores a 32-bit word of rank memory whole (a release; the ranks may
     * be reading it) while ranks run, and returns once it is there. */
    dcuda_status_t (*store32)(dcu_backend_t *b, uint32_t *dst, uint32_t value);
    /* copy_out while ranks run (never waits for them). */
    dcuda_status_t (*peek)(dcu_backend_t *b, void *dst, const void *src, size_t size);
    /* Starts copying `size` bytes of rank memory at src to dst (memory from
     * alloc_mapped) while ranks run; *ticket names it. Reads finish in the
     * order started; at most DCU_BACKEND_READS are in flight. */
    dcuda_status_t (*read_start)(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                 uint64_t *ticket);
    /* 1 once read `ticket` (and every earlier one) finished, 0 while it runs,
     * < 0 when it failed (reported). Never blocks. */
    int (*read_done)(dcu_backend_t *b, uint64_t ticket);
    /* Starts copying `size` bytes at src (memory from alloc_mapped, left
     * alone until done) to rank memory at dst while ranks run; *ticket
     * names it. Writes finish in the order started, on an engine of their
     * own (reads do not wait behind them, nor they behind reads); each
     * caller keeps at most DCU_BACKEND_WRITES in flight. Callers that
     * count apart (the proxies of several lanes) may exceed it together:
     * a write may then be made sooner (CPU ranks) or told done later (a
     * GPU's event is reused), never told done before it was made. */
    dcuda_status_t (*write_start)(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                  uint64_t *ticket);
    /* 1 once write `ticket` (and every earlier one) finished, 0 while it
     * runs, < 0 when it failed (reported). Never blocks. */
    int (*write_done)(dcu_backend_t *b, uint64_t ticket);
    /* The host's RMA (dcuda_host_put, dcuda_host_get), from the
     * application's thread while ranks run: starts copying `size` bytes
     * between host memory and rank memory (of this process, or a peer's
     * mapped here) either way; *ticket names it. Copies finish in the
     * order started; with DCU_BACKEND_RMAS in flight, a start first waits
     * for the oldest. */
    dcuda_status_t (*rma_start)(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                uint64_t *ticket);
    /* 1 once copy `ticket` (and every earlier one) finished, 0 while it
     * runs (after waiting for it when `wait`), < 0 when it failed
     * (reported). */
    int (*rma_done)(dcu_backend_t *b, uint64_t ticket, int wait);
    /* Calls fn(arg) once every RMA copy started before has finished (on a
     * thread of the backend's: fn makes no call of the backend's, nor of
     * CUDA's); *ticket names the call as rma_start's do, and is done once
     * fn returned. On failure fn was not handed over. */
    dcuda_status_t (*rma_call)(dcu_backend_t *b, void (*fn)(void *), void *arg, uint64_t *ticket);
    /* Makes the calling thread ready to drive the device (the host thread
     * of a run started by dcuda_host_run_start); NULL when nothing is needed. */
    dcuda_status_t (*bind_thread)(dcu_backend_t *b);
    /* Starts every rank of the kernel on `ctx` (as ranks reach it; on CPU
     * ranks also the host's view) and returns at once. stream: NULL, or an
     * application's cudaStream_t: the ranks start after its earlier work and
     * its later work waits for them (CPU ranks have no stream: ignored).
     * When it fails, ranks that did start may still run (their waits are
     * cancelled): the host serves them until finished, then joins. */
    dcuda_status_t (*launch)(dcu_backend_t *b, dcuda_context_t *ctx, void *stream);
    /* Have all ranks returned (all that started)? Never blocks. */
    int (*finished)(dcu_backend_t *b);
    /* Waits for the ranks and releases what launch took (also after a
     * launch that failed). */
    dcuda_status_t (*join)(dcu_backend_t *b);
    /* The GPU's side of tasks (NULL: the backend has no GPU). */
    const dcu_task_gpu_ops_t *task_gpu;
} dcu_backend_ops_t;

extern const dcu_backend_ops_t dcu_cpu_backend_ops;
#if defined(DCUDA_HAVE_CUDA)
extern const dcu_backend_ops_t dcu_cuda_backend_ops;
extern const dcu_task_gpu_ops_t dcu_cuda_task_gpu_ops; /* cuda_task.c */
#endif

#endif /* DCU_BACKEND_BACKEND_H */
