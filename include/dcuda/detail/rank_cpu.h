/*
 * Rank API for CPU ranks: one thread per rank, implemented by the CPU
 * backend of libdcuda (src/cpu). Included by dcuda_rank.h when the rank code
 * is compiled as C or C++ rather than CUDA. The signatures are those of the
 * CUDA version (detail/rank_cuda.cuh); only the qualifiers differ.
 */
#ifndef DCUDA_DETAIL_RANK_CPU_H
#define DCUDA_DETAIL_RANK_CPU_H

#ifndef DCUDA_RANK_H
#error "include dcuda/dcuda_rank.h instead"
#endif

#if defined(__cplusplus)
#define DCUDA_EXTERN_C extern "C"
extern "C" {
#else
#define DCUDA_EXTERN_C
#endif

#if defined(__GNUC__)
#define DCUDA_PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define DCUDA_PRINTF_LIKE(f, a)
#endif

/* Rank code: per-rank state needs no qualifier on CPU ranks (each rank's
 * thread has its own stack), and a rank has exactly one thread. */
#define DCUDA_SHARED
/* Helper functions of rank code: DCUDA_RANK_FN int f(...) { ... } */
#define DCUDA_RANK_FN static inline
#define DCUDA_KERNEL(name, ctx) DCUDA_EXTERN_C void dcuda_cpu_kernel_##name(dcuda_context_h ctx)

static inline int dcuda_thread_index(void) { return 0; }
static inline int dcuda_thread_count(void) { return 1; }
static inline void dcuda_rank_sync(void) {}

/* Initialise this rank's state; first call of every kernel. Collective over
 * WORLD: returns once every rank has initialised. */
dcuda_status_t dcuda_rank_init(dcuda_context_h ctx, dcuda_state_t *st);
/* Last call of every kernel. Collective over WORLD (a barrier). */
dcuda_status_t dcuda_rank_finish(dcuda_state_t *st);
/* The user struct given to dcuda_host_run (copied in before, out after). */
dcuda_status_t dcuda_get_data(dcuda_state_t *st, void **data);

dcuda_status_t dcuda_comm_size(dcuda_state_t *st, dcuda_comm_t comm, int *size);
dcuda_status_t dcuda_comm_rank(dcuda_state_t *st, dcuda_comm_t comm, int *rank);
dcuda_status_t dcuda_comm_barrier(dcuda_state_t *st, dcuda_comm_t comm);

/* Collective over comm: expose [base, base + size) (size 0 allowed). */
dcuda_status_t dcuda_win_create(dcuda_state_t *st, dcuda_comm_t comm, void *base, size_t size,
                                dcuda_win_t *win);
/* Collective over the window's communicator. */
dcuda_status_t dcuda_win_free(dcuda_state_t *st, dcuda_win_t win);
/* Returns once this rank's earlier puts on win no longer read their source. */
dcuda_status_t dcuda_win_flush(dcuda_state_t *st, dcuda_win_t win);

/* Copy size bytes from src (inside one of my windows of the same
 * communicator) to offset in rank's part of win. No notification. */
dcuda_status_t dcuda_put(dcuda_state_t *st, dcuda_win_t win, int rank, size_t offset,
                         size_t size, const void *src);
/* As dcuda_put, then one notification with tag: when the target sees it, the
 * data of this put and of every earlier put to that target is visible. */
dcuda_status_t dcuda_put_notify(dcuda_state_t *st, dcuda_win_t win, int rank, size_t offset,
                                size_t size, const void *src, int tag);
/* A notification with tag (0..255) to rank of comm; no window needed. */
dcuda_status_t dcuda_notify(dcuda_state_t *st, int rank, dcuda_comm_t comm, int tag);

/* 1 and consumes count notifications of tag if that many have arrived,
 * 0 (consuming nothing) if not, negative status on misuse. */
int dcuda_test_notifications(dcuda_state_t *st, int tag, int count);
/* Blocks until count notifications of tag have arrived, then consumes them. */
dcuda_status_t dcuda_wait_notifications(dcuda_state_t *st, int tag, int count);

/* Timer pairs; collective over the ranks of the device. The host reads the
 * span from the earliest start to the latest stop with dcuda_host_get_timings. */
dcuda_status_t dcuda_start_cpu_timer(dcuda_state_t *st);
dcuda_status_t dcuda_stop_cpu_timer(dcuda_state_t *st);

/* A round trip to the host runtime through its command queue (diagnostic:
 * measures the path that remote operations take). */
dcuda_status_t dcuda_rank_ping_host(dcuda_state_t *st);

/* printf-style line, printed by the host while ranks still run, prefixed
 * with the rank. Called by one thread of the rank. */
dcuda_status_t dcuda_log(dcuda_state_t *st, const char *fmt, ...) DCUDA_PRINTF_LIKE(2, 3);

#if defined(__cplusplus)
}
#endif

#endif /* DCUDA_DETAIL_RANK_CPU_H */
