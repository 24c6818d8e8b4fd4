/*
 * dcuda rank API: what rank code calls (thesis chapter 3, Listings 3.4/3.5).
 *
 * A rank is a GPU thread block (CUDA backend) or a CPU thread (CPU backend).
 * Rank code is written once and compiled twice: as C11 for CPU ranks and as
 * CUDA for GPU ranks (dcuda_add_rank_code() in CMake does both). This header
 * declares every call once for both; the definitions are the rank engine
 * (impl/), inlined into GPU rank code, and in libdcuda for CPU ranks.
 *
 *   DCUDA_KERNEL(name, ctx) { DCUDA_SHARED dcuda_state_t st;
 *                             dcuda_rank_init(ctx, &st); ... }
 *
 * Unless noted, every call is collective over the threads of the calling
 * rank (all threads call it with the same arguments) and returns the same
 * status to all of them. Misuse returns a negative dcuda_status_t, leaves
 * memory untouched (but for the answer of the calls that say so, cleared)
 * and is reported on the host with rank, call and values while the kernel
 * runs.
 *
 * Ordering: puts and notifications from one rank to one target arrive in
 * issue order; when a notification is seen, the data of the put that
 * carried it and of every earlier put of that rank to that target is
 * visible. Every notification is a release of what the rank wrote and read
 * before it.
 *
 * Self-contained: compiles as C11, as C++ and with nvcc (as CUDA: -x cu).
 */
#ifndef DCUDA_RANK_H
#define DCUDA_RANK_H

/* nvcc hands a .c file to the host compiler (with __NVCC__ but without
 * __CUDACC__): rank code compiled that way would silently get its CPU form
 * alone. GPU rank code is compiled with `nvcc -x cu` (dcuda_add_rank_code
 * does so). A file nvcc compiles as host code on purpose (a CPU form, or
 * host code that includes this header for its constants) defines
 * DCUDA_CPU_RANK_CODE first. */
#if defined(__NVCC__) && !defined(__CUDACC__) && !defined(DCUDA_CPU_RANK_CODE)
#error "dcuda: nvcc is compiling this file as host code (a .c file without -x cu), so its \
rank code would get only its CPU form: compile rank code for GPU ranks with nvcc -x cu, or \
define DCUDA_CPU_RANK_CODE to build the CPU form with nvcc on purpose"
#endif

#include <stddef.h>

#include "dcuda_status.h"
#include "dcuda_types.h"
#include "shared/layout.h"

/* ---- handles ------------------------------------------------------------------- */

/* Handle passed to every kernel: the device's shared context. */
#ifndef DCUDA_CONTEXT_H_DEFINED
#define DCUDA_CONTEXT_H_DEFINED
typedef struct dcuda_context *dcuda_context_h;
#endif

/* Communicators (dcuda_comm_t, DCUDA_COMM_WORLD, DCUDA_COMM_DEVICE,
 * DCUDA_COMM_NODE, DCUDA_COMM_NULL, DCUDA_UNDEFINED): dcuda_types.h. */

/* Window handle (DCUDA_WIN_NONE when creation failed). At most
 * DCUDA_MAX_WINDOWS windows live at once on WORLD and on DEVICE, and
 * DCUDA_COMM_WINDOWS on NODE and on each split. */
typedef uint32_t dcuda_win_t;

/* ---- qualifiers for rank code, one set per compilation ------------------------ */
/*
 * DCUDA_KERNEL(name, ctx) { ... }   defines kernel `name`; the host starts
 *                                   it with DCUDA_KERNEL_REF(name)
 * DCUDA_SHARED                      the per-rank state's storage (GPU shared
 *                                   memory; a CPU rank's stack)
 * DCUDA_RANK_FN                     helper functions of rank code
 */
#if defined(__CUDACC__)
#define DCUDA_SHARED __shared__
#define DCUDA_RANK_FN static __device__
#define DCUDA_RANK_API static __device__ __forceinline__
/* The __global__ function wraps the rank code: it makes the context known
 * before any rank call and tells the watchdog when the rank has returned. */
#define DCUDA_KERNEL(name, ctx)                                                                    \
    static __device__ void dcuda_gpu_body_##name(dcuda_context_h ctx);                             \
    extern "C" __global__ void dcuda_gpu_kernel_##name(dcuda_context_h dcuda_ctx_)                 \
    {                                                                                              \
        dcu_kernel_enter(dcuda_ctx_);                                                              \
        dcuda_gpu_body_##name(dcuda_ctx_);                                                         \
        dcu_kernel_exit(dcuda_ctx_);                                                               \
    }                                                                                              \
    extern "C" const void *const dcuda_gpu_kernel_ptr_##name;                                      \
    const void *const dcuda_gpu_kernel_ptr_##name = (const void *)dcuda_gpu_kernel_##name;         \
    static __device__ void dcuda_gpu_body_##name(dcuda_context_h ctx)
#else
#define DCUDA_SHARED
#define DCUDA_RANK_FN static inline
#if defined(__GNUC__)
#define DCUDA_RANK_API __attribute__((visibility("default")))
#else
#define DCUDA_RANK_API
#endif
#if defined(__cplusplus)
#define DCUDA_KERNEL(name, ctx) extern "C" void dcuda_cpu_kernel_##name(dcuda_context_h ctx)
#else
#define DCUDA_KERNEL(name, ctx) void dcuda_cpu_kernel_##name(dcuda_context_h ctx)
#endif
#endif

#if !defined(__CUDACC__) && defined(__cplusplus)
extern "C" {
#endif

/* ---- the threads of a rank (not collective) ------------------------------------ */

#if defined(__CUDACC__)
/* Index of the calling thread in its rank, and the rank's thread count. */
DCUDA_RANK_API int dcuda_thread_index(void) { return (int)threadIdx.x; }
DCUDA_RANK_API int dcuda_thread_count(void) { return (int)blockDim.x; }
/* Barrier of the rank's threads. */
DCUDA_RANK_API void dcuda_rank_sync(void) { __syncthreads(); }
#else
/* A CPU rank has exactly one thread. */
static inline int dcuda_thread_index(void) { return 0; }
static inline int dcuda_thread_count(void) { return 1; }
static inline void dcuda_rank_sync(void) {}
#endif

/* ---- start and end ------------------------------------------------------------- */

/* Initialises this rank's state; first call of every kernel. Collective over
 * WORLD: returns once every rank has initialised. */
DCUDA_RANK_API dcuda_status_t dcuda_rank_init(dcuda_context_h ctx, dcuda_state_t *st);
/* Last call of every kernel. Collective over WORLD (a barrier). */
DCUDA_RANK_API dcuda_status_t dcuda_rank_finish(dcuda_state_t *st);
/* The user struct given to dcuda_host_run (copied in before, out after). */
DCUDA_RANK_API dcuda_status_t dcuda_get_data(dcuda_state_t *st, void **data);
/* This rank's scratch memory, of the size dcuda_init_params_t.shared_bytes
 * asked for (*ptr NULL and *bytes 0 when it asked for none): dynamic
 * shared memory on a GPU (fast, per block), a buffer of the rank's own on a
 * CPU rank. 16-byte aligned; its contents are undefined when the kernel
 * starts. It is no window: puts can neither read nor write it. */
DCUDA_RANK_API dcuda_status_t dcuda_rank_shared(dcuda_state_t *st, void **ptr, size_t *bytes);

/* ---- communicators -------------------------------------------------------------- */

/* *size: how many ranks comm has; *rank: the calling rank's number in
 * comm (0 to size - 1). A communicator that is not live at this rank is
 * DCUDA_ERR_COMM, a NULL size or rank DCUDA_ERR_INVALID_ARG. */
DCUDA_RANK_API dcuda_status_t dcuda_comm_size(dcuda_state_t *st, dcuda_comm_t comm, int *size);
DCUDA_RANK_API dcuda_status_t dcuda_comm_rank(dcuda_state_t *st, dcuda_comm_t comm, int *rank);
/* The WORLD rank of rank `rank` of comm (as MPI_Group_translate_ranks). */
DCUDA_RANK_API dcuda_status_t dcuda_comm_world_rank(dcuda_state_t *st, dcuda_comm_t comm, int rank,
                                                    int *world_rank);
/* Returns once every rank of comm has called it. What a rank put or
 * notified to another before it called the barrier is at its target when
 * that target returns from the barrier. */
DCUDA_RANK_API dcuda_status_t dcuda_comm_barrier(dcuda_state_t *st, dcuda_comm_t comm);
/* Collective over parent, as MPI_Comm_split: the ranks that give one
 * colour (>= 0) form a communicator, ranked by key, ties by their rank in
 * parent; a rank that gives DCUDA_UNDEFINED gets DCUDA_COMM_NULL. The
 * exchange goes through window win (of parent: an allgather; or of WORLD,
 * or of DEVICE when every rank of parent is on my device: a ring of
 * parent's ranks): dcuda_comm_split_room(parent size)
 * bytes at offset of every member's part, 4-byte aligned, which the call
 * overwrites. At most 5 splits live at once at a rank
 * (DCUDA_ERR_COMM_LIMIT at every rank of parent when no id is free at all
 * of them); each keeps a member list of 4 bytes a rank of parent. */
DCUDA_RANK_API dcuda_status_t dcuda_comm_split(dcuda_state_t *st, dcuda_comm_t parent, int colour,
                                               int key, dcuda_win_t win, size_t offset,
                                               dcuda_comm_t *comm);
/* Frees a communicator from dcuda_comm_split at this rank (no
 * communication: every rank frees its own once done with it); its id may
 * come back from a later split. Refused (DCUDA_ERR_COMM) while it has
 * windows: free them first. */
DCUDA_RANK_API dcuda_status_t dcuda_comm_free(dcuda_state_t *st, dcuda_comm_t comm);

/* ---- windows -------------------------------------------------------------------- */

/* Collective over comm (any live communicator): exposes [base, base +
 * size) as my part (size 0 allowed; parts may differ in size, and parts
 * of ranks of one device may overlap). Puts, gets and collectives on the
 * window name ranks of comm. Parts that ranks of other processes reach must lie in memory
 * from dcuda_host_alloc or registered with dcuda_host_register. Bad
 * arguments still join the collective with an empty part and return an
 * error with the handle (free it). */
DCUDA_RANK_API dcuda_status_t dcuda_win_create(dcuda_state_t *st, dcuda_comm_t comm, void *base,
                                               size_t size, dcuda_win_t *win);
/* Collective over the window's communicator. */
DCUDA_RANK_API dcuda_status_t dcuda_win_free(dcuda_state_t *st, dcuda_win_t win);
/* Returns once this rank's earlier puts on win no longer read their source. */
DCUDA_RANK_API dcuda_status_t dcuda_win_flush(dcuda_state_t *st, dcuda_win_t win);

/* ---- notified remote memory access --------------------------------------------------- */

/* Copies size bytes from src to offset in rank's part of win. src must lie
 * inside one of my window parts of the same communicator; src equal to the
 * target copies nothing; a partial overlap is an error. No notification. */
DCUDA_RANK_API dcuda_status_t dcuda_put(dcuda_state_t *st, dcuda_win_t win, int rank, size_t offset,
                                        size_t size, const void *src);
/* As dcuda_put, then one notification with tag (0..255): when the target sees
 * it, the data of this put and of every earlier put to that target is
 * visible. */
DCUDA_RANK_API dcuda_status_t dcuda_put_notify(dcuda_state_t *st, dcuda_win_t win, int rank,
                                               size_t offset, size_t size, const void *src,
                                               int tag);
/* A notification with tag (0..255) to rank of comm; no window needed. A
 * release: the target may read what this rank stored before, or reuse a
 * buffer it was told is free. */
DCUDA_RANK_API dcuda_status_t dcuda_notify(dcuda_state_t *st, int rank, dcuda_comm_t comm, int tag);

/* ---- remote atomics -------------------------------------------------------------------- */
/* An atomic on the `width`-byte (4 or 8) unsigned word at offset of rank's
 * part of win, aligned to its width: op adds operand to it (modulo 2^32 or
 * 2^64), stores operand (DCUDA_ATOMIC_SWAP), or stores operand where the
 * word equals compare (DCUDA_ATOMIC_COMPARE_SWAP); *fetched (when not
 * NULL, in every thread; it may be memory the threads share) gets the
 * word's value before. Atomic with every other dcuda_atomic on the word,
 * from any rank. Ordered after this rank's earlier puts and notifications
 * to rank, as a notification is, and before its later accesses. A 4-byte
 * word takes operands and compares below 2^32. On the network path rank
 * applies it while it waits, tests or is in a barrier, and this call
 * returns once it did (as a get does). Misuse returns the status of the
 * same misuse of a put (DCUDA_ERR_WIN, _RANK, _BOUNDS, _OVERFLOW; a bad
 * op, width, operand or alignment, also an alignment the target's part
 * gives the word on another node: DCUDA_ERR_INVALID_ARG) and changes
 * nothing; *fetched is then 0. */
DCUDA_RANK_API dcuda_status_t dcuda_atomic(dcuda_state_t *st, dcuda_atomic_op_t op, dcuda_win_t win,
                                           int rank, size_t offset, size_t width, uint64_t operand,
                                           uint64_t compare, uint64_t *fetched);
/* As dcuda_atomic, then one notification with tag (0..255) to rank: when
 * rank sees it, the atomic's word and what this rank put to rank before
 * are visible. */
DCUDA_RANK_API dcuda_status_t dcuda_atomic_notify(dcuda_state_t *st, dcuda_atomic_op_t op,
                                                  dcuda_win_t win, int rank, size_t offset,
                                                  size_t width, uint64_t operand, uint64_t compare,
                                                  uint64_t *fetched, int tag);

/* ---- get ---------------------------------------------------------------------------- */
/* Reads: the other direction of a put, an operation of its own (the put
 * path does not pay for it). */

/* Copies size bytes at offset of rank's part of win into dst, which must
 * lie inside one of my window parts of the same communicator (dst equal
 * to the target's bytes copies nothing; a partial overlap is an error).
 * Returns once the data is in dst. A get is ordered after my earlier puts
 * and notifications to rank: it sees what they wrote. On the network path
 * it is served once rank's process has applied what reached it before
 * the get, which needs rank to wait, test or barrier now and then (as any
 * rank that receives puts does). */
DCUDA_RANK_API dcuda_status_t dcuda_get(dcuda_state_t *st, dcuda_win_t win, int rank, size_t offset,
                                        size_t size, void *dst);
/* As dcuda_get, but returns at once: when the data is in dst, one
 * notification with tag (0..255) arrives at this rank (wait for it with
 * dcuda_wait_notifications). Until then dst must not be read or written,
 * nor its window freed, nor the rank finish. Puts issued after it to the
 * same rank do not reach what it reads, and a WORLD barrier after it
 * orders its read (the target's later writes are not seen). */
DCUDA_RANK_API dcuda_status_t dcuda_get_notify(dcuda_state_t *st, dcuda_win_t win, int rank,
                                               size_t offset, size_t size, void *dst, int tag);

/* ---- notifications ---------------------------------------------------------------- */
/* Counters are 32 bits and wrap safely while fewer than 2^31 notifications of
 * one tag are pending. */

/* 1 and consumes count notifications of tag if that many have arrived, 0
 * (consuming nothing) if not, negative status on misuse. */
DCUDA_RANK_API int dcuda_test_notifications(dcuda_state_t *st, int tag, int count);
/* Blocks until count notifications of tag have arrived, then consumes them.
 * A wait the watchdog cancels fails with DCUDA_ERR_TIMEOUT; one a dead peer
 * process ends, with DCUDA_ERR_PEER. */
DCUDA_RANK_API dcuda_status_t dcuda_wait_notifications(dcuda_state_t *st, int tag, int count);

/* Sets of tags: the tags first_tag + i for each bit i of mask (up to 32
 * tags, all in 0..255). `need` is how many tags of the set must each have
 * a notification: 1 for any, k for some, DCUDA_SET_ALL for all of them.
 * Once that many have, the call consumes one notification of EVERY tag of
 * the set that has one (at least `need` tags) and sets bit i of *taken
 * (when taken is not NULL) for each tag first_tag + i it consumed from;
 * the others stay for later calls. A consumed notification orders as in
 * dcuda_wait_notifications: what its notifier stored before it is seen.
 * taken may point to memory the rank's threads share or to each thread's
 * own: every thread gets the same answer. A first_tag or a mask naming a
 * tag outside 0..255 is DCUDA_ERR_TAG; a mask of 0 or a need outside
 * 1..(tags of the set) other than DCUDA_SET_ALL, DCUDA_ERR_INVALID_ARG;
 * on every error *taken is 0 (the one write a refused call makes).
 * dcuda_test_notification_set: 1 if it consumed (need was met), 0 and
 * *taken 0 if not, negative status on misuse. */
DCUDA_RANK_API int dcuda_test_notification_set(dcuda_state_t *st, int first_tag, uint32_t mask,
                                               int need, uint32_t *taken);
/* As dcuda_test_notification_set, but blocks until `need` tags of the set
 * have a notification. A blocked set wait shows in the watchdog's and
 * the deadlock detector's reports with its tags; it fails as
 * dcuda_wait_notifications does (DCUDA_ERR_TIMEOUT, _PEER, _ABORTED,
 * _DEADLOCK), consuming nothing. */
DCUDA_RANK_API dcuda_status_t dcuda_wait_notification_set(dcuda_state_t *st, int first_tag,
                                                          uint32_t mask, int need, uint32_t *taken);
/* Reads and resets a tag's count: consumes every notification of tag
 * (0..255) that has arrived, and says how many in *taken (when not NULL);
 * one arriving after the read stays for the next call (none is lost).
 * Never blocks. A tag outside 0..255 is DCUDA_ERR_TAG (*taken 0). */
DCUDA_RANK_API dcuda_status_t dcuda_take_notifications(dcuda_state_t *st, int tag, uint32_t *taken);

/* ---- timers, host, logging ------------------------------------------------------ */

/* Timer pairs (at most DCUDA_MAX_TIMERS per run); collective over the ranks of
 * the device. The host reads the span from the earliest start to the latest
 * stop with dcuda_host_get_timings. */
DCUDA_RANK_API dcuda_status_t dcuda_start_cpu_timer(dcuda_state_t *st);
DCUDA_RANK_API dcuda_status_t dcuda_stop_cpu_timer(dcuda_state_t *st);

/* A round trip to the host runtime through its command queue (diagnostic:
 * measures the path that remote operations take). */
DCUDA_RANK_API dcuda_status_t dcuda_rank_ping_host(dcuda_state_t *st);

/* One notification with tag (0..255) to this process's host, which takes
 * it with dcuda_host_wait_notifications or dcuda_host_test_notifications
 * (dcuda_host.h) while the run is in flight; counted per tag, from 0 each
 * run (what the host has not taken by the run's end is dropped). A
 * release, as dcuda_notify: once the host took it, the host sees what this
 * rank stored before the call, and what the rank saw arrive before it
 * (the data of puts whose notifications it consumed). This rank's own
 * earlier puts are visible at their target once the target is notified,
 * as always: to tell the host that a put landed, notify the host from the
 * target. A tag outside 0..255 is DCUDA_ERR_TAG. No command to the host's
 * proxy: a store to mapped host memory. */
DCUDA_RANK_API dcuda_status_t dcuda_notify_host(dcuda_state_t *st, int tag);

/* printf-style line, printed by the host while ranks still run, prefixed
 * with the rank. Called by one thread of the rank (not collective). On GPU
 * ranks, up to DCUDA_LOG_MAX_ARGS arguments: integers, floating point,
 * strings, pointers; the host formats them. */
#if defined(__CUDACC__)
template <typename... A>
DCUDA_RANK_API dcuda_status_t dcuda_log(dcuda_state_t *st, const char *fmt, A... args);
#elif defined(__GNUC__)
DCUDA_RANK_API dcuda_status_t dcuda_log(dcuda_state_t *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#else
DCUDA_RANK_API dcuda_status_t dcuda_log(dcuda_state_t *st, const char *fmt, ...);
#endif

/* ---- collectives ------------------------------------------------------------------- */
/*
 * Called by every rank of the window's communicator, in the same order on
 * each communicator, with the same arguments (but data): the call, its
 * number on the communicator, the window, offset, size or count,
 * datatype, op and root are compared before any data moves between two
 * ranks, and a difference ends the run with DCUDA_ERR_MISMATCH (a report
 * names both calls) or, where the ranks wait for each other in different
 * calls before comparing, with DCUDA_ERR_DEADLOCK. They work in place
 * on the rank's own part of the window, at the same offset in every part,
 * and return once this rank's result is there and its part is its own
 * again. No rank writes into another's part for a collective before that
 * rank has called it, so consecutive collectives may reuse memory. They
 * use notification tags of their own: the user's 256 tags are untouched.
 */

/* The element types and operations of the reductions: dcuda_types.h. */

/* Root's size bytes at offset of its part replace those of every rank's
 * part (root in the window's communicator). */
DCUDA_RANK_API dcuda_status_t dcuda_broadcast(dcuda_state_t *st, dcuda_win_t win, size_t offset,
                                              size_t size, int root);
/* The count elements of type at offset of every rank's part are replaced
 * by their element-wise op over the ranks. Every part needs
 * dcuda_allreduce_room(comm size, count, type) bytes from offset: the data,
 * then scratch the call overwrites. A sum of floating-point values may
 * differ from a serial one in its last bits (the order is the algorithm's:
 * a tree's, a ring's, or, ranks of one device reading each other's parts,
 * one that every rank shares; on a node of several processes, each
 * device's sum, then the devices' in process order, the same at every
 * rank). */
DCUDA_RANK_API dcuda_status_t dcuda_allreduce(dcuda_state_t *st, dcuda_win_t win, size_t offset,
                                              size_t count, dcuda_datatype_t type, dcuda_op_t op);
/* Every rank's size bytes at offset + rank * size of its part (rank in the
 * window's communicator) reach that place in every part: each part then
 * holds all ranks' blocks, in rank order, from offset (comm size * size
 * bytes). */
DCUDA_RANK_API dcuda_status_t dcuda_allgather(dcuda_state_t *st, dcuda_win_t win, size_t offset,
                                              size_t size);
/* The count elements of type at offset of every rank's part, combined
 * element-wise by op over the ranks, replace root's (root in the window's
 * communicator). Every part needs dcuda_allreduce_room(comm size, count,
 * type) bytes from offset; on the other ranks the call leaves partial
 * results there (the data and the scratch are the call's). */
DCUDA_RANK_API dcuda_status_t dcuda_reduce(dcuda_state_t *st, dcuda_win_t win, size_t offset,
                                           size_t count, dcuda_datatype_t type, dcuda_op_t op,
                                           int root);
/* Every rank's comm size * count elements of type at offset are combined
 * element-wise by op over the ranks; rank r's first count elements at
 * offset are then block r of the result (elements r * count .. r * count
 * + count - 1). Every part needs dcuda_reduce_scatter_room(comm size,
 * count, type) bytes from offset (the data, then scratch); past its block
 * a rank's data is the call's. */
DCUDA_RANK_API dcuda_status_t dcuda_reduce_scatter(dcuda_state_t *st, dcuda_win_t win,
                                                   size_t offset, size_t count,
                                                   dcuda_datatype_t type, dcuda_op_t op);
/* Every rank's part holds comm size blocks of size bytes at offset, block
 * j for rank j; the call fills the comm size blocks after them: block i of
 * those (at offset + (comm size + i) * size) gets what rank i had for me.
 * The blocks sent are left as they were. Every part needs
 * dcuda_alltoall_room(comm size, size) bytes from offset. */
DCUDA_RANK_API dcuda_status_t dcuda_alltoall(dcuda_state_t *st, dcuda_win_t win, size_t offset,
                                             size_t size);

#if !defined(__CUDACC__) && defined(__cplusplus)
}
#endif

/* The rooms the collectives need (dcuda_allreduce_room and the others,
 * which host code calls too): dcuda_types.h. */

#if defined(__CUDACC__)
#include "impl/cuda/rank.cuh"
#endif

/* Thesis names, so its listings port with little change. */
#define dcuda_gpu_init dcuda_rank_init
#define dcuda_gpu_finish dcuda_rank_finish

#endif /* DCUDA_RANK_H */
