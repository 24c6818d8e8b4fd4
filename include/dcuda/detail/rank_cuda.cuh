/*
 * Rank API for GPU ranks: one thread block per rank, header-only and inlined
 * (no -rdc, no device library). Included by dcuda_rank.h under nvcc.
 *
 * Same-GPU notified put: every thread of the rank copies (16-byte accesses
 * when aligned, several loads in flight), the block synchronises, and one
 * thread fences and adds to the target's counter. Waits are acquire polls of
 * the rank's own counter by one thread. The checks are those of
 * rank_common.h, shared with the CPU backend, so both accept and reject the
 * same calls. Errors go to the host through the log ring as a format string
 * plus typed arguments (device code has no vsnprintf).
 */
#ifndef DCUDA_DETAIL_RANK_CUDA_CUH
#define DCUDA_DETAIL_RANK_CUDA_CUH

#ifndef DCUDA_RANK_H
#error "include dcuda/dcuda_rank.h instead"
#endif

#include "rank_common.h"
#include "rank_cuda_ops.cuh"

#define DCUDA_SHARED __shared__
/* Helper functions of rank code: DCUDA_RANK_FN int f(...) { ... } */
#define DCUDA_RANK_FN static __device__
/* The __global__ function wraps the rank code: it makes the context known
 * before any rank call (so even calls before dcuda_rank_init are reported)
 * and tells the watchdog when the rank has returned. */
#define DCUDA_KERNEL(name, ctx)                                                                \
    static __device__ void dcuda_gpu_body_##name(dcuda_context_h ctx);                         \
    extern "C" __global__ void dcuda_gpu_kernel_##name(dcuda_context_h dcuda_ctx_)             \
    {                                                                                          \
        dcuda_dev_kernel_enter(dcuda_ctx_);                                                    \
        dcuda_gpu_body_##name(dcuda_ctx_);                                                     \
        dcuda_dev_kernel_exit(dcuda_ctx_);                                                     \
    }                                                                                          \
    extern "C" const void *const dcuda_gpu_kernel_ptr_##name;                                  \
    const void *const dcuda_gpu_kernel_ptr_##name = (const void *)dcuda_gpu_kernel_##name;     \
    static __device__ void dcuda_gpu_body_##name(dcuda_context_h ctx)

#define DCUDA_DEV static __device__ __forceinline__

DCUDA_DEV int dcuda_thread_index(void) { return (int)threadIdx.x; }
DCUDA_DEV int dcuda_thread_count(void) { return (int)blockDim.x; }
DCUDA_DEV void dcuda_rank_sync(void) { __syncthreads(); }

#include "rank_cuda_report.cuh"

DCUDA_DEV void dcuda_dev_kernel_enter(dcuda_context_h ctx)
{
    if (threadIdx.x == 0)
        dcuda_dev_current_ctx = ctx;
    __syncthreads();
}

DCUDA_DEV void dcuda_dev_kernel_exit(dcuda_context_h ctx)
{
    __syncthreads();
    if (threadIdx.x == 0 && ctx && ctx->magic == DCUDA_CONTEXT_MAGIC)
        dcuda_dev_st_release_sys(&ctx->rank_status[blockIdx.x].phase, DCUDA_PHASE_FINISHED);
}

#define DCUDA_CHECK_FN static __device__ __forceinline__
#define DCUDA_DETAIL_REPORT(st, status, call, ...) dcuda_dev_report(st, status, call, __VA_ARGS__)
#include "rank_checks.h"

/* ---- blocking ------------------------------------------------------------ */

/* Lanes that poll together: all of warp 0 (so lane 0's poll loop does not
 * diverge from lanes parked at a barrier, which costs ~0.1 us a wake-up), or
 * lane 0 alone inside single-thread sections. */
DCUDA_DEV unsigned dcuda_dev_warp0_mask(void)
{
    return blockDim.x >= 32 ? 0xffffffffu : (1u << blockDim.x) - 1u;
}

/* Waits until *counter reaches target (mod 2^32); called by the lanes of
 * `mask` (lane 0 among them), which see lane 0's loads. After a while the
 * rank shows itself blocked to the watchdog and checks now and then (host
 * memory reads cost about a microsecond) whether it was cancelled. */
DCUDA_DEV dcuda_status_t dcuda_dev_block_until(dcuda_state_t *st, const uint32_t *counter,
                                               uint32_t target, uint32_t phase, uint32_t tag,
                                               uint32_t count, uint32_t comm, unsigned mask)
{
    const int lane0 = threadIdx.x == 0, sys = st->process_count > 1;
    unsigned polls = 0, sleep_ns = DCUDA_DEV_SLEEP_MIN_NS;
    int published = 0;
    for (;;) {
        uint32_t v = lane0 ? dcuda_dev_ld_acquire_at(counter, sys) : 0;
        if (dcuda_detail_reached(__shfl_sync(mask, v, 0), target))
            break;
        if (++polls < DCUDA_DEV_SPIN_POLLS)
            continue;
        /* Long waits back off, so hundreds of idle ranks polling one barrier
         * counter do not crowd the memory the busy ranks use. */
        __nanosleep(sleep_ns);
        sleep_ns = sleep_ns < DCUDA_DEV_SLEEP_MAX_NS ? 2 * sleep_ns : sleep_ns;
        if (!published && polls == DCUDA_DEV_BLOCKED_POLLS) {
            if (lane0)
                dcuda_dev_publish_blocked(st, phase, tag, count, st->consumed[tag & 0xff], comm,
                                          target);
            published = 1;
        }
        uint32_t cancel = 0;
        if (published && lane0 && (polls & 1023u) == 0)
            cancel = dcuda_dev_ld_acquire_sys(st->ctx->cancel);
        cancel = __shfl_sync(mask, cancel, 0);
        if (cancel) {
            dcuda_status_t why = cancel == DCUDA_CANCEL_PEER ? DCUDA_ERR_PEER : DCUDA_ERR_TIMEOUT;
            if (lane0)
                dcuda_dev_publish_phase(st, DCUDA_PHASE_RUNNING);
            return phase == DCUDA_PHASE_WAITING
                       ? dcuda_dev_report(st, why, "dcuda_wait_notifications",
                                          "waiting for %u notification(s) of tag %u", count, tag)
                       : dcuda_dev_report(st, why, "dcuda_comm_barrier", "in a barrier on %s",
                                          dcuda_detail_comm_name((int)comm));
        }
    }
    if (published && lane0)
        dcuda_dev_publish_phase(st, DCUDA_PHASE_RUNNING);
    return DCUDA_OK;
}

/* The device's last rank to reach WORLD barrier `epoch` when WORLD spans
 * processes (lanes of mask): tells the node (shared host memory), waits for
 * every process, releases its device. */
static __device__ __noinline__ dcuda_status_t dcuda_dev_node_barrier(dcuda_state_t *st,
                                                                    uint32_t epoch,
                                                                    unsigned mask)
{
    const dcuda_context_t *ctx = st->ctx;
    uint32_t target = ctx->node_base + epoch;
    if (threadIdx.x == 0) {
        __threadfence(); /* acquire the device's arrivals before releasing them on */
        dcuda_dev_st_release_sys(&ctx->node_slots[st->process_index].arrived, target);
    }
    for (int p = 0; p < st->process_count; p++) {
        dcuda_status_t s = dcuda_dev_block_until(st, &ctx->node_slots[p].arrived, target,
                                                 DCUDA_PHASE_BARRIER, 0, 0, DCUDA_COMM_WORLD,
                                                 mask);
        if (s != DCUDA_OK)
            return s;
    }
    if (threadIdx.x == 0)
        dcuda_dev_st_release_sys(&ctx->barriers[DCUDA_COMM_WORLD].released, epoch);
    return DCUDA_OK;
}

/* A barrier's wait, by the lanes of mask after __syncthreads ordered the
 * block's writes: lane 0 arrives (releasing them), all wait for everyone.
 * WORLD over several processes adds a step among the devices' last
 * arrivals, and the device's ranks wait for its release. */
DCUDA_DEV dcuda_status_t dcuda_dev_barrier_lanes(dcuda_state_t *st, int comm, unsigned mask)
{
    uint32_t epoch = st->barrier_epoch[comm] + 1u;
    uint32_t target = epoch * (uint32_t)st->device_size;
    uint32_t *arrived = &st->ctx->barriers[comm].arrived;
    uint32_t last = 0;
    __syncwarp(mask);
    if (threadIdx.x == 0) {
        st->barrier_epoch[comm] = epoch;
        __threadfence();
        last = atomicAdd(arrived, 1u) + 1u == target;
    }
    dcuda_status_t s;
    if (comm != DCUDA_DETAIL_COMM_WORLD || st->process_count == 1) {
        s = dcuda_dev_block_until(st, arrived, target, DCUDA_PHASE_BARRIER, 0, 0, (uint32_t)comm,
                                  mask);
    } else {
        s = __shfl_sync(mask, last, 0) ? dcuda_dev_node_barrier(st, epoch, mask) : DCUDA_OK;
        if (s == DCUDA_OK)
            s = dcuda_dev_block_until(st, &st->ctx->barriers[comm].released, epoch,
                                      DCUDA_PHASE_BARRIER, 0, 0, (uint32_t)comm, mask);
    }
    __threadfence();
    return s;
}

/* Single-thread sections (window create/free) wait with lane 0 alone. */
DCUDA_DEV dcuda_status_t dcuda_dev_barrier_thread0(dcuda_state_t *st, int comm)
{
    return dcuda_dev_barrier_lanes(st, comm, 1u);
}

/* Runs the barrier on warp 0; every thread gets its status. */
DCUDA_DEV dcuda_status_t dcuda_dev_barrier_block(dcuda_state_t *st, int comm)
{
    __syncthreads();
    if (threadIdx.x < 32) {
        dcuda_status_t s = dcuda_dev_barrier_lanes(st, comm, dcuda_dev_warp0_mask());
        if (threadIdx.x == 0)
            st->result = s;
    }
    __syncthreads();
    return (dcuda_status_t)st->result;
}

/* Runs f on thread 0 between two block syncs; all threads get its status. */
#define DCUDA_DEV_ON_THREAD0(st, expr)                                                         \
    do {                                                                                       \
        __syncthreads();                                                                       \
        if (threadIdx.x == 0)                                                                  \
            (st)->result = (int32_t)(expr);                                                    \
        __syncthreads();                                                                       \
    } while (0)

/* ---- init, communicators ------------------------------------------------ */

DCUDA_DEV dcuda_status_t dcuda_dev_init_thread0(dcuda_context_h ctx, dcuda_state_t *st)
{
    if (!ctx || ctx->magic != DCUDA_CONTEXT_MAGIC || ctx->version != DCUDA_LAYOUT_VERSION)
        return dcuda_dev_report_noctx(DCUDA_ERR_INVALID_ARG);
    dcuda_detail_state_bind(st, ctx, (int)blockIdx.x);
    st->magic = DCUDA_STATE_MAGIC;
    dcuda_dev_publish_phase(st, DCUDA_PHASE_RUNNING);
    return DCUDA_OK;
}

DCUDA_DEV dcuda_status_t dcuda_rank_init(dcuda_context_h ctx, dcuda_state_t *st)
{
    /* Counters and generations are per-slot arrays: all threads fill them. */
    for (int i = (int)threadIdx.x; i < DCUDA_TAG_COUNT; i += (int)blockDim.x)
        st->consumed[i] = ctx ? ctx->notif_start : 0;
    for (int i = (int)threadIdx.x; i < DCUDA_COMM_COUNT * DCUDA_MAX_WINDOWS; i += (int)blockDim.x)
        st->win_gen[i / DCUDA_MAX_WINDOWS][i % DCUDA_MAX_WINDOWS] = 0;
    DCUDA_DEV_ON_THREAD0(st, dcuda_dev_init_thread0(ctx, st));
    if (st->result != DCUDA_OK)
        return (dcuda_status_t)st->result;
    return dcuda_dev_barrier_block(st, DCUDA_DETAIL_COMM_WORLD);
}

DCUDA_DEV dcuda_status_t dcuda_rank_finish(dcuda_state_t *st)
{
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_rank_finish");
    dcuda_status_t s = dcuda_dev_barrier_block(st, DCUDA_DETAIL_COMM_WORLD);
    __syncthreads();
    if (threadIdx.x == 0)
        st->magic = 0;
    __syncthreads();
    return s;
}

DCUDA_DEV dcuda_status_t dcuda_get_data(dcuda_state_t *st, void **data)
{
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_get_data");
    if (!data)
        return dcuda_dev_report(st, DCUDA_ERR_INVALID_ARG, "dcuda_get_data", "data is NULL");
    *data = st->ctx->user_data;
    return DCUDA_OK;
}

DCUDA_DEV dcuda_status_t dcuda_comm_size(dcuda_state_t *st, dcuda_comm_t comm, int *size)
{
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_comm_size");
    return dcuda_detail_comm_query(st, comm, size, 1, "dcuda_comm_size");
}

DCUDA_DEV dcuda_status_t dcuda_comm_rank(dcuda_state_t *st, dcuda_comm_t comm, int *rank)
{
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_comm_rank");
    return dcuda_detail_comm_query(st, comm, rank, 0, "dcuda_comm_rank");
}

DCUDA_DEV dcuda_status_t dcuda_comm_barrier(dcuda_state_t *st, dcuda_comm_t comm)
{
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_comm_barrier");
    dcuda_status_t s = dcuda_detail_checked_comm(st, comm, "dcuda_comm_barrier");
    if (s != DCUDA_OK)
        return s;
    return dcuda_dev_barrier_block(st, comm);
}

#include "rank_cuda_rma.cuh"

#endif /* DCUDA_DETAIL_RANK_CUDA_CUH */
