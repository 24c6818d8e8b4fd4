/*
 * dcuda host API (thesis Listing 3.3, in C).
 *
 * One host runtime per device (a GPU, or a group of CPU ranks): it starts the
 * ranks of a kernel, copies a user struct in and back out, drains their log
 * lines to the terminal while they run, watches for ranks that wait forever
 * and collects timer results.
 *
 *   DCUDA_KERNEL_DECLARE(reduce);           // rank code in its own file
 *   dcuda_host_h h;
 *   dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(reduce), 128, &h);
 *   dcuda_host_run(h, &user, sizeof user, &ms);
 *   dcuda_host_finish(h);
 *
 * Settings come from DCUDA_<NAME> environment variables and from
 * --dcuda-<name>=<value> arguments (which win); see dcuda_settings_print.
 *
 * Threads: the host calls may be made from any thread of the process, one
 * at a time: a call made while another is in progress waits for it. While a
 * run is in flight (dcuda_host_run on another thread, or a run of
 * dcuda_host_run_start), only dcuda_host_run_test, dcuda_host_run_wait, the
 * copies, the host's RMA calls, the waits for the ranks' notifications,
 * dcuda_host_get_rank_info, dcuda_host_last_error and dcuda_host_abort
 * may be called; the others return DCUDA_ERR_IN_PROGRESS.
 * One host runtime per process: a dcuda_host_init while one is live (from
 * any thread) is DCUDA_ERR_INVALID_ARG. dcuda_host_last_error's text stays
 * valid until the next call on that runtime.
 *
 * Processes: every process makes the same dcuda_host_* calls in the same
 * order (SPMD, as under MPI). A process that skips one, makes one more, or
 * ends while the others wait in one is named in every process, and their
 * calls fail with DCUDA_ERR_PEER, instead of waiting forever.
 */
#ifndef DCUDA_HOST_H
#define DCUDA_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dcuda_status.h"
#include "dcuda_version.h"

#if defined(__cplusplus)
extern "C" {
#endif

/* ---- handles and kernels ------------------------------------------------------- */

/* A host runtime: dcuda_host_init makes one, dcuda_host_finish ends it. */
typedef struct dcuda_host *dcuda_host_h;
/* Handle passed to every kernel: the device's shared context (dcuda_rank.h). */
#ifndef DCUDA_CONTEXT_H_DEFINED
#define DCUDA_CONTEXT_H_DEFINED
typedef struct dcuda_context *dcuda_context_h;
#endif

/* A kernel in both compiled forms; either may be missing (NULL). */
typedef void (*dcuda_cpu_kernel_fn)(dcuda_context_h ctx);
typedef struct dcuda_kernel {
    const char *name;
    dcuda_cpu_kernel_fn cpu; /* rank code compiled as C: one call per CPU rank */
    const void *gpu;         /* rank code compiled as CUDA: the __global__ function */
} dcuda_kernel_t;

/* A weak reference where the compiler has them (GCC, Clang): a form of a
 * kernel that was not linked in is NULL rather than an undefined symbol. */
#if defined(__GNUC__)
#define DCUDA_WEAK __attribute__((weak))
#else
#define DCUDA_WEAK
#endif

/* Declares the two forms of a kernel defined with DCUDA_KERNEL(name, ctx).
 * Weak references: a form that was not built is NULL. */
#if defined(__cplusplus)
#define DCUDA_KERNEL_DECLARE(name)                                                                 \
    extern "C" void dcuda_cpu_kernel_##name(dcuda_context_h) DCUDA_WEAK;                           \
    extern "C" const void *const dcuda_gpu_kernel_ptr_##name DCUDA_WEAK
#else
#define DCUDA_KERNEL_DECLARE(name)                                                                 \
    extern void dcuda_cpu_kernel_##name(dcuda_context_h) DCUDA_WEAK;                               \
    extern const void *const dcuda_gpu_kernel_ptr_##name DCUDA_WEAK
#endif
#define DCUDA_KERNEL_REF(name)                                                                     \
    dcuda_kernel_ref(#name, dcuda_cpu_kernel_##name, &dcuda_gpu_kernel_ptr_##name)

/* What DCUDA_KERNEL_REF(name) makes: the kernel `name` with its CPU form
 * and its GPU form (gpu: the address of the pointer DCUDA_KERNEL defines;
 * NULL, or pointing at NULL, when that form is missing). */
static inline dcuda_kernel_t dcuda_kernel_ref(const char *name, dcuda_cpu_kernel_fn cpu,
                                              const void *const *gpu)
{
    dcuda_kernel_t k;
    k.name = name;
    k.cpu = cpu;
    k.gpu = gpu ? *gpu : NULL;
    return k;
}

/* ---- start --------------------------------------------------------------------- */

/* Where the ranks of this host runtime are (thesis dcuda_rank_info). */
typedef struct dcuda_rank_info {
    int rank_count;       /* ranks in WORLD */
    int rank_responsible; /* ranks this host runtime owns (its DEVICE size) */
    int rank_start;       /* WORLD rank of the first of them */
    int device_count;     /* devices in use on this node */
    int device_index;     /* my device on the node */
    int node_count;
    int node_index;
    int process_count;
    int process_index;
    int threads_per_rank; /* threads per rank (1 on CPU ranks) */
    const char *backend;  /* "cpu" or "cuda" */
    const char *device_name;
} dcuda_rank_info_t;

/* Start the runtime for kernel with threads_per_rank threads per rank (GPU;
 * CPU ranks have one). Picks the backend (DCUDA_BACKEND=auto|cpu|cuda).
 * The first call forks the other processes when no launcher started them
 * and more than one is wanted (one a GPU, or DCUDA_PROCESSES): it must then
 * come from main's thread, before any CUDA call; otherwise it is refused
 * with DCUDA_ERR_UNSUPPORTED and the reason (a child forked from another
 * thread would hold that thread alone). */
DCUDA_API dcuda_status_t dcuda_host_init(int argc, char **argv, dcuda_kernel_t kernel,
                                         int threads_per_rank, dcuda_host_h *host);

/* What dcuda_host_init_params can be told. Start from
 * DCUDA_INIT_PARAMS_DEFAULT and set the fields you need: later versions add
 * fields at the end, and `size` tells them apart. */
typedef struct dcuda_init_params {
    size_t size;          /* sizeof(dcuda_init_params_t) of the caller's build */
    int threads_per_rank; /* threads per GPU rank (CPU ranks have one) */
    int reserved;
    size_t shared_bytes;  /* scratch memory of each rank (dcuda_rank_shared): dynamic
                          * shared memory on a GPU, which lowers how many ranks fit;
                          * a buffer of its own on a CPU rank */
    const void *mpi_comm; /* NULL, or the address of an MPI_Comm of the application's
                           * (MPI initialised): the program's processes are its
                           * members, numbered as in it (dcuda uses a duplicate) */
} dcuda_init_params_t;
#define DCUDA_INIT_PARAMS_DEFAULT                                                                  \
    {                                                                                              \
        sizeof(dcuda_init_params_t), 128, 0, 0, 0                                                  \
    }

/* dcuda_host_init with the options of params. A size past what a GPU block
 * can have is DCUDA_ERR_SETTING, naming the limit. An MPI communicator is
 * taken by the first dcuda_host_init of the program (which starts the
 * process group); a later one with another is DCUDA_ERR_INVALID_ARG, and a
 * build without MPI refuses one with DCUDA_ERR_UNSUPPORTED. */
DCUDA_API dcuda_status_t dcuda_host_init_params(int argc, char **argv, dcuda_kernel_t kernel,
                                                const dcuda_init_params_t *params,
                                                dcuda_host_h *host);
/* Where this runtime's ranks are (dcuda_rank_info_t); may be called while
 * a run is in flight. */
DCUDA_API dcuda_status_t dcuda_host_get_rank_info(dcuda_host_h host, dcuda_rank_info_t *info);

/* ---- runs ---------------------------------------------------------------------- */

/* Run the kernel on all ranks and wait for it. user_data (user_size bytes,
 * may be NULL/0) is copied to rank-visible memory before and back after.
 * Returns DCUDA_OK, or the first error a rank reported (after the run);
 * DCUDA_ERR_DEADLOCK when every rank of every process was blocked with
 * nothing in flight (the DEADLOCK setting, on by default; the report on
 * stderr says what each rank waited for), DCUDA_ERR_ABORTED when another
 * process's error or dcuda_host_abort ended it, DCUDA_ERR_PEER when a
 * process was lost. A run fails in every process or in none. The host
 * counts as notifying no rank meanwhile (the calling thread waits here):
 * an application whose other thread notifies ranks during the run (the
 * host's RMA calls) should start it with dcuda_host_run_start instead, or
 * a run whose ranks all wait for that thread may be found deadlocked. */
DCUDA_API dcuda_status_t dcuda_host_run(dcuda_host_h host, void *user_data, size_t user_size,
                                        double *elapsed_ms);

/* A run that does not block the host (thesis: the host waits in
 * dcuda_host_run; an application with work of its own need not).
 *
 * dcuda_host_run_start prepares the run with the other processes (as
 * dcuda_host_run does: every process of the program takes part, so it
 * returns once all have reached it), launches the ranks and returns while
 * they run; a thread of the runtime serves them meanwhile (their commands,
 * log lines, the watchdog). user_data must stay valid until
 * dcuda_host_run_wait, which waits for the ranks and returns what
 * dcuda_host_run would have, with the user data copied back.
 *
 * stream: NULL, or a cudaStream_t of the application (CUDA backend): the
 * ranks start after the work enqueued on it before the call, and work
 * enqueued on it after the call starts once the ranks have returned. The
 * kernel itself runs on a stream of the runtime. A stream being captured
 * into a CUDA graph is refused (DCUDA_ERR_UNSUPPORTED): the ranks wait for
 * the other processes and must run now, not when a graph is launched.
 * On a stream created without cudaStreamNonBlocking, work on the legacy
 * default stream (cudaMemcpy, a kernel launched without a stream) waits for
 * the ranks too. CPU ranks have no stream: it is ignored.
 *
 * While the run is in flight, dcuda_host_run_test, dcuda_host_run_wait,
 * dcuda_host_copy_in/out (unordered with the ranks, as a copy to memory a
 * running kernel reads; on CPU ranks each aligned 8-byte word moves whole,
 * so a rank polling one with an atomic load sees the old or the new
 * value), the host's RMA calls (dcuda_host_put, dcuda_host_get, their
 * notifying forms, dcuda_host_notify and their requests, below), the
 * waits for the ranks' notifications (dcuda_host_wait_notifications,
 * below), dcuda_host_get_rank_info and
 * dcuda_host_last_error may be called; the other calls return
 * DCUDA_ERR_IN_PROGRESS. With the MPI network manager, MPI must allow
 * MPI_THREAD_SERIALIZED (dcuda asks for it when it initialises MPI; an
 * application that initialised MPI itself with less is refused,
 * DCUDA_ERR_UNSUPPORTED), and the application must not call MPI until
 * dcuda_host_run_wait returned unless it has MPI_THREAD_MULTIPLE.
 *
 * Such a run has the deadlock detector, the watchdog and the peer checks
 * of dcuda_host_run, with the same reports. Until dcuda_host_run_wait is
 * called, the host counts as able to notify a rank, except while a thread
 * of it is blocked in dcuda_host_wait_notifications: a run whose ranks
 * all wait, some for a tag (0..255) that a host could notify, is not
 * ended while the host is free, but a run whose ranks wait only in
 * barriers and collectives, or all wait while the host waits for their
 * notifications, ends with DCUDA_ERR_DEADLOCK (the ranks' waits, the
 * host's wait and the run all return it; the report names what each rank
 * and the host wait for). A host thread blocked in a request's wait
 * keeps the run from deadlock while its request is in flight. A program that notifies ranks
 * from one thread while another waits for their notifications should
 * wait with dcuda_host_test_notifications in a loop instead. */
DCUDA_API dcuda_status_t dcuda_host_run_start(dcuda_host_h host, void *user_data, size_t user_size,
                                              void *stream);
/* *done = 1 once the ranks returned and the runtime's thread ended (so
 * dcuda_host_run_wait returns at once), else 0. Never blocks. */
DCUDA_API dcuda_status_t dcuda_host_run_test(dcuda_host_h host, int *done);
/* Waits for the run of dcuda_host_run_start; elapsed_ms: from the launch
 * (which may wait for the application's stream) to the ranks' end. */
DCUDA_API dcuda_status_t dcuda_host_run_wait(dcuda_host_h host, double *elapsed_ms);

/* The ranks' notifications to their host (dcuda_notify_host in rank
 * code): counted per tag (0..255), from 0 each run, from this process's
 * own ranks. While a run is in flight (from the call that starts it,
 * dcuda_host_run_start or dcuda_host_run on another thread, until it is
 * concluded), dcuda_host_wait_notifications blocks until count of tag
 * have arrived since the host last took any, then takes them; what the
 * notifying ranks stored before them (dcuda_notify_host says what) is
 * then visible to the host's copies and RMA calls.
 * dcuda_host_test_notifications takes them if they are there (*done = 1)
 * or takes nothing (*done = 0) and never blocks. Several threads may wait
 * at once; each takes what it waits for whole.
 * A wait that can no longer be satisfied ends with the reason printed,
 * taking nothing: DCUDA_ERR_DEADLOCK when this process's ranks returned
 * without sending enough or the deadlock detector found the run stuck
 * (the host waiting counts as not notifying: dcuda_host_run_start),
 * DCUDA_ERR_TIMEOUT when the watchdog cancelled the run's waits,
 * DCUDA_ERR_PEER when a process was lost, DCUDA_ERR_ABORTED when the run
 * was ended early; the test call returns the same once nothing more can
 * come. Misuse, refused at once: DCUDA_ERR_TAG for a tag outside 0..255,
 * DCUDA_ERR_INVALID_ARG for count < 1, a NULL done, or no run in flight;
 * DCUDA_ERR_NOT_INITIALIZED without a live runtime. */
DCUDA_API dcuda_status_t dcuda_host_wait_notifications(dcuda_host_h host, int tag, int count);
DCUDA_API dcuda_status_t dcuda_host_test_notifications(dcuda_host_h host, int tag, int count,
                                                       int *done);

/* Ends the run in flight in every process, from any thread (an
 * application's watchdog, a thread that handles signals): the ranks'
 * blocked waits and barriers return DCUDA_ERR_ABORTED, and the run
 * returns DCUDA_ERR_ABORTED in every process, its last error naming this
 * process and `reason` (may be NULL; its first DCUDA_ABORT_TEXT - 1 bytes
 * are kept). A rank that computes without waiting goes on until it next
 * waits, or returns. DCUDA_ERR_INVALID_ARG when no run of this runtime is
 * in flight (then nothing happens, and no later run is affected). Not
 * async-signal-safe: call it from a thread, not a signal handler. */
#define DCUDA_ABORT_TEXT 160
DCUDA_API dcuda_status_t dcuda_host_abort(dcuda_host_h host, const char *reason);

/* Timer spans of the last run, in milliseconds, in start order. */
DCUDA_API dcuda_status_t dcuda_host_get_timings(dcuda_host_h host, const double **timings_ms,
                                                int *count);

/* ---- memory -------------------------------------------------------------------- */

/* Memory that rank code of this backend can use (device memory on a GPU),
 * and copies between it and host memory. dcuda_host_alloc refuses sizes
 * above PTRDIFF_MAX (DCUDA_ERR_INVALID_ARG) and, while other processes of
 * the node map this one's memory, more than DCUDA_MAX_SEGMENTS allocations
 * (DCUDA_ERR_NO_MEMORY); dcuda_host_free of NULL does nothing, of anything
 * else that is not a live allocation of dcuda_host_alloc is
 * DCUDA_ERR_INVALID_ARG. Every refusal prints the reason. The copies
 * return once done; on a GPU they run on a stream of their own and wait
 * neither for the ranks nor for work the application enqueued on its
 * streams (synchronise those first). */
DCUDA_API dcuda_status_t dcuda_host_alloc(dcuda_host_h host, size_t size, void **ptr);
DCUDA_API dcuda_status_t dcuda_host_free(dcuda_host_h host, void *ptr);
DCUDA_API dcuda_status_t dcuda_host_copy_in(dcuda_host_h host, void *dst, const void *src,
                                            size_t size);
DCUDA_API dcuda_status_t dcuda_host_copy_out(dcuda_host_h host, void *dst, const void *src,
                                             size_t size);

/* Memory the application allocated itself, made reachable for windows as
 * dcuda_host_alloc's is: by the ranks of the other processes of the node
 * and over the network path. Ranks of this process reach any memory of
 * their device without it. On a GPU: device memory of cudaMalloc on this
 * process's GPU (a range inside one allocation; several ranges of one
 * allocation may each be registered, in one process or several), exported
 * to the other processes with a CUDA IPC handle. On
 * CPU ranks: any host memory, but the other processes of the node cannot
 * map it (DCUDA_ERR_UNSUPPORTED when there are any: use dcuda_host_alloc).
 * The memory stays the application's: it must outlive the registration,
 * and dcuda_host_deregister (or dcuda_host_finish) never frees it.
 * Refused, with the reason: NULL or 0 bytes, a range that overlaps another
 * registration or an allocation of dcuda, memory of another kind or
 * device (DCUDA_ERR_INVALID_ARG); more than DCUDA_MAX_SEGMENTS exported
 * allocations and registrations together (DCUDA_ERR_NO_MEMORY). Peers see
 * a registration from the next run on. */
DCUDA_API dcuda_status_t dcuda_host_register(dcuda_host_h host, void *ptr, size_t size);
/* ptr: as given to dcuda_host_register; anything else is DCUDA_ERR_INVALID_ARG. */
DCUDA_API dcuda_status_t dcuda_host_deregister(dcuda_host_h host, void *ptr);

/* ---- RMA from the host ------------------------------------------------------ */
/*
 * While ranks run, the host moves bytes between its memory and any window
 * part it reaches, without the ranks taking part (DART's dart_put and
 * dart_get). A global pointer names a byte of a part: the window's handle
 * as the ranks hold it (they hand it to the host through memory, as any
 * value), the WORLD rank of the part's owner (whatever the window's
 * communicator; rank code translates a communicator's rank with
 * dcuda_comm_world_rank) and the offset in that part. A window of DEVICE
 * is reached for ranks of this process only.
 *
 * Every part of the job is reached: those of this process's ranks
 * (NET_LOOPBACK too: the host reaches its own device's memory directly)
 * and of the node's other processes over shared or GPU peer memory, by a
 * copy of the host's; those of processes on the network path through the
 * proxies: the owner's process checks the request and copies the bytes
 * in or out of its rank's memory (the ranks take no part; chunks of 32 KiB
 * and more through the remote path's pinned staging, in the order the
 * requests were made). The host tells
 * a rank what it did with a notification (dcuda_host_put_notify,
 * dcuda_host_get_notify, dcuda_host_notify; below), or through memory the
 * rank polls (a word written with dcuda_host_copy_in), or the ranks learn
 * it after the run.
 *
 * The calls are valid while a run is in flight (started by
 * dcuda_host_run_start, or dcuda_host_run on another thread, until its
 * ranks returned); otherwise DCUDA_ERR_WIN, as no window lives. They check
 * before any byte moves and refuse with the reason printed (on the network
 * path the owner's process checks the part, the WIN and BOUNDS refusals
 * below: the call returns DCUDA_OK and the request's wait the refusal; a
 * blocking call returns it):
 *   DCUDA_ERR_NOT_INITIALIZED  no live host runtime;
 *   DCUDA_ERR_INVALID_ARG  NULL host memory for a size > 0; a NULL req,
 *                          reqs (count > 0) or done for the wait and test
 *                          calls; a request of another runtime;
 *   DCUDA_ERR_WIN          a handle that is no window's (DCUDA_WIN_NONE,
 *                          bits no handle has), or an owner with no part
 *                          in that slot (the window was freed);
 *   DCUDA_ERR_RANK         a rank outside WORLD, or not of this process for
 *                          a window of DEVICE;
 *   DCUDA_ERR_UNREACHABLE  a node peer's part outside memory of
 *                          dcuda_host_alloc (its ranks could not share it);
 *   DCUDA_ERR_OVERFLOW     offset + size wraps;
 *   DCUDA_ERR_BOUNDS       [offset, offset + size) past the owner's part;
 *   DCUDA_ERR_NO_MEMORY    no memory for the request.
 * A request's outcome may also be DCUDA_ERR_BACKEND (a copy failed),
 * DCUDA_ERR_PEER (on the network path: the run ended, or its processes
 * lost one, before the owner answered) or DCUDA_ERR_ABORTED (the run was
 * ended early).
 * A handle of a window whose slot a newer window took reaches the newer
 * window: the host cannot tell their generations apart (ranks can).
 *
 * Each call returns once the request is started, with its handle in *req
 * (NULL: the call waits for the request itself). The host's memory must
 * stay as it is (put) or untouched (get) until the request completes.
 * Requests to one owner are carried out in the order they were made, so a
 * get after a put to the same bytes reads what the put wrote, even while
 * the put is in flight. They are unordered with the ranks, as
 * dcuda_host_copy_in is: a rank must not touch the bytes while a request
 * moves them, and sees them once the host told it after the request
 * completed (through a word the rank polls, as dcuda_host_run_start
 * describes). A completed put's bytes are in the part, a completed get's
 * in host memory. On a GPU the bytes move on a copy stream of their own
 * (from pinned host memory they overlap the host's work; pageable memory
 * goes through the driver's staging, mostly before the call returns).
 * dcuda_host_run_wait and dcuda_host_run complete every request before
 * they return (one the owner's process on the network path has not
 * answered by the end of the run ends with DCUDA_ERR_PEER); their handles
 * stay valid until waited for or tested done. */

/* A global pointer: byte `offset` of the part that WORLD rank `rank` has
 * in the window whose handle is `win`. */
typedef struct dcuda_gptr {
    uint32_t win;    /* the window's handle (dcuda_win_t) */
    int32_t rank;    /* WORLD rank of the part's owner */
    uint64_t offset; /* bytes into its part */
} dcuda_gptr_t;

/* The dcuda_gptr_t of byte `offset` of WORLD rank `rank`'s part of `win`. */
static inline dcuda_gptr_t dcuda_gptr(uint32_t win, int rank, uint64_t offset)
{
    dcuda_gptr_t g;
    g.win = win;
    g.rank = (int32_t)rank;
    g.offset = offset;
    return g;
}

/* A request in flight (NULL: none, or completed). */
typedef struct dcuda_host_req *dcuda_host_req_t;

/* size bytes of host memory at src into the part dst points into. */
DCUDA_API dcuda_status_t dcuda_host_put(dcuda_host_h host, dcuda_gptr_t dst, const void *src,
                                        size_t size, dcuda_host_req_t *req);
/* size bytes of the part src points into, to host memory at dst. */
DCUDA_API dcuda_status_t dcuda_host_get(dcuda_host_h host, void *dst, dcuda_gptr_t src, size_t size,
                                        dcuda_host_req_t *req);
/*
 * The host's notifications: a put or get that then notifies the part's
 * owner with `tag` (a user tag, 0..255), and a notification alone to WORLD
 * rank `rank`. The rank counts it as one notification of `tag`, as if a
 * rank had sent it: dcuda_wait_notifications and
 * dcuda_test_notifications on any communicator take it, and once a wait
 * has it, the rank sees the bytes of the request that carried it and of
 * every earlier request of this host to the same owner. A notification
 * matches by tag alone, as every notification does.
 *
 * The request completes once the notification is on its way (the bytes
 * moved, the owner's process has it); the owner's host thread then writes
 * it where the rank's waits read it, within microseconds while its ranks
 * run (docs/communicators.md, "Notifications from the host"). A request
 * that is never waited for is still carried out, notification included.
 * Refusals: those of dcuda_host_put and dcuda_host_get, and
 *   DCUDA_ERR_TAG   a tag outside 0..255;
 *   DCUDA_ERR_RANK  (dcuda_host_notify) a rank outside WORLD.
 *
 * The deadlock detector knows a host may still notify: from
 * dcuda_host_run_start until dcuda_host_run_wait (but not while a thread
 * of the host waits in dcuda_host_wait_notifications), and while a
 * request is on its way, it reports no deadlock of ranks that wait for a
 * user tag. A thread that notifies while another thread is in
 * dcuda_host_run is not known to it: such a program starts its runs with
 * dcuda_host_run_start, or turns the detector off (DEADLOCK=0).
 */
DCUDA_API dcuda_status_t dcuda_host_put_notify(dcuda_host_h host, dcuda_gptr_t dst, const void *src,
                                               size_t size, int tag, dcuda_host_req_t *req);
DCUDA_API dcuda_status_t dcuda_host_get_notify(dcuda_host_h host, void *dst, dcuda_gptr_t src,
                                               size_t size, int tag, dcuda_host_req_t *req);
DCUDA_API dcuda_status_t dcuda_host_notify(dcuda_host_h host, int rank, int tag,
                                           dcuda_host_req_t *req);

/* Waits for *req (NULL: nothing to wait for) and sets it NULL; returns
 * the request's outcome (DCUDA_ERR_BACKEND when a copy failed). */
DCUDA_API dcuda_status_t dcuda_host_req_wait(dcuda_host_h host, dcuda_host_req_t *req);
/* *done = 1 when *req completed (then it is set NULL and its outcome
 * returned, as dcuda_host_req_wait would), else 0. Never blocks. */
DCUDA_API dcuda_status_t dcuda_host_req_test(dcuda_host_h host, dcuda_host_req_t *req, int *done);
/* Each of reqs[0 .. count), as dcuda_host_req_wait; the first failure's
 * outcome (every request is waited for, and set NULL, even after one). */
DCUDA_API dcuda_status_t dcuda_host_req_waitall(dcuda_host_h host, dcuda_host_req_t *reqs,
                                                size_t count);
/* *done = 1 when every one of reqs[0 .. count) completed (all are then set
 * NULL, and the first failure is returned), else 0 and none is touched. */
DCUDA_API dcuda_status_t dcuda_host_req_testall(dcuda_host_h host, dcuda_host_req_t *reqs,
                                                size_t count, int *done);

/* ---- errors, end, backends, settings ------------------------------------------- */

/* Message of the first rank error of the last run ("" if none). */
DCUDA_API const char *dcuda_host_last_error(dcuda_host_h host);

/* Releases everything of the runtime (registrations end; the memory stays
 * the application's). The handle is dead afterwards: every
 * call with it (a second dcuda_host_finish included) returns
 * DCUDA_ERR_NOT_INITIALIZED, and dcuda_host_last_error "". */
DCUDA_API dcuda_status_t dcuda_host_finish(dcuda_host_h host);

/* 1 if backend ("cpu" or "cuda") is built and has a device here; else 0 and
 * the reason in why. */
DCUDA_API int dcuda_host_backend_available(const char *backend, char *why, size_t why_size);

/* Every setting with its value, default and meaning. */
DCUDA_API void dcuda_settings_print(FILE *out);

/* Setting number `index` (0, 1, ...): its name without the DCUDA_ prefix
 * ("RANKS"), type ("int", "uint", "0 or 1", "double" or "string"), default
 * and meaning, static strings stored where the pointers are not NULL.
 * Returns 1, or 0 past the last setting (nothing stored). */
DCUDA_API int dcuda_setting_describe(int index, const char **name, const char **type,
                                     const char **default_value, const char **meaning);

/* The exit status main should return: `return dcuda_host_exit_status(status);`.
 * In the first process of a group that dcuda_host_init forked, it waits for
 * the other processes to end and returns `status` if that is nonzero, else
 * the first failure among them (its exit status, or 128 + the signal that
 * killed it), naming each failed process on stderr. Elsewhere (one process,
 * another process of the group, mpirun, where the launcher reports) it
 * returns `status`. The library never ends the process itself: without
 * this call, the first process still waits for the others at exit and
 * names the failed ones, but its exit status does not show them. */
DCUDA_API int dcuda_host_exit_status(int status);

#if defined(__cplusplus)
}
#endif

/* Tasks on the devices of this process (the host's TaskAPI). */
#include "dcuda_task.h"

#endif /* DCUDA_HOST_H */
