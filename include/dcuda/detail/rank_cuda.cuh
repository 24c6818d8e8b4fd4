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
#define DCUDA_KERNEL(name, ctx)                                                                \
    extern "C" __global__ void dcuda_gpu_kernel_##name(dcuda_context_h ctx);                   \
    extern "C" const void *const dcuda_gpu_kernel_ptr_##name;                                  \
    const void *const dcuda_gpu_kernel_ptr_##name = (const void *)dcuda_gpu_kernel_##name;     \
    extern "C" __global__ void dcuda_gpu_kernel_##name(dcuda_context_h ctx)

#define DCUDA_DEV static __device__ __forceinline__

DCUDA_DEV int dcuda_thread_index(void) { return (int)threadIdx.x; }
DCUDA_DEV int dcuda_thread_count(void) { return (int)blockDim.x; }
DCUDA_DEV void dcuda_rank_sync(void) { __syncthreads(); }

#include "rank_cuda_report.cuh"

/* ---- blocking (thread 0 only) ------------------------------------------ */

/* Waits until *counter reaches target (mod 2^32). After a while the rank
 * shows itself blocked to the watchdog and checks whether it was cancelled
 * (host memory reads cost about a microsecond, so only now and then). */
DCUDA_DEV dcuda_status_t dcuda_dev_block_until(dcuda_state_t *st, const uint32_t *counter,
                                               uint32_t target, uint32_t phase, uint32_t tag,
                                               uint32_t count, uint32_t comm)
{
    const dcuda_context_t *ctx = st->ctx;
    unsigned polls = 0;
    int published = 0;
    while (!dcuda_detail_reached(dcuda_dev_ld_acquire(counter), target)) {
        if (++polls < DCUDA_DEV_SPIN_POLLS)
            continue;
        __nanosleep(polls < DCUDA_DEV_SPIN_POLLS * 4 ? 64 : 256);
        if (!published && polls == DCUDA_DEV_BLOCKED_POLLS) {
            dcuda_dev_publish_blocked(st, phase, tag, count, st->consumed[tag & 0xff], comm,
                                      target);
            published = 1;
        }
        if (published && (polls & 1023u) == 0 && dcuda_dev_ld_acquire_sys(ctx->cancel)) {
            dcuda_dev_publish_phase(st, DCUDA_PHASE_RUNNING);
            return phase == DCUDA_PHASE_WAITING
                       ? dcuda_dev_report(st, DCUDA_ERR_TIMEOUT, "dcuda_wait_notifications",
                                          "waiting for %u notification(s) of tag %u", count, tag)
                       : dcuda_dev_report(st, DCUDA_ERR_TIMEOUT, "dcuda_comm_barrier",
                                          "in a barrier on %s", dcuda_dev_comm_name((int)comm));
        }
    }
    if (published)
        dcuda_dev_publish_phase(st, DCUDA_PHASE_RUNNING);
    return DCUDA_OK;
}

/* Thread 0's part of a barrier: arrive (releasing the block's writes, which
 * __syncthreads ordered before this), then wait for everyone. */
DCUDA_DEV dcuda_status_t dcuda_dev_barrier_thread0(dcuda_state_t *st, int comm)
{
    const dcuda_context_t *ctx = st->ctx;
    uint32_t target = ++st->barrier_epoch[comm] * (uint32_t)dcuda_detail_comm_size(ctx, comm);
    uint32_t *arrived = &ctx->barriers[comm].arrived;
    __threadfence();
    atomicAdd(arrived, 1u);
    dcuda_status_t s =
        dcuda_dev_block_until(st, arrived, target, DCUDA_PHASE_BARRIER, 0, 0, (uint32_t)comm);
    __threadfence();
    return s;
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
    dcuda_dev_current_ctx = ctx;
    st->magic = DCUDA_STATE_MAGIC;
    st->device_rank = (int32_t)blockIdx.x;
    st->world_rank = ctx->world_first + (int32_t)blockIdx.x;
    st->timer_next = 0;
    for (int c = 0; c < DCUDA_COMM_COUNT; c++) {
        st->barrier_epoch[c] = 0;
        st->live_windows[c] = 0;
    }
    st->ctx = ctx;
    dcuda_dev_publish_phase(st, DCUDA_PHASE_RUNNING);
    return dcuda_dev_barrier_thread0(st, DCUDA_DETAIL_COMM_WORLD);
}

DCUDA_DEV dcuda_status_t dcuda_rank_init(dcuda_context_h ctx, dcuda_state_t *st)
{
    /* Counters and generations are per-slot arrays: all threads fill them. */
    for (int i = (int)threadIdx.x; i < DCUDA_TAG_COUNT; i += (int)blockDim.x)
        st->consumed[i] = ctx ? ctx->notif_start : 0;
    for (int i = (int)threadIdx.x; i < DCUDA_COMM_COUNT * DCUDA_MAX_WINDOWS; i += (int)blockDim.x)
        st->win_gen[i / DCUDA_MAX_WINDOWS][i % DCUDA_MAX_WINDOWS] = 0;
    DCUDA_DEV_ON_THREAD0(st, dcuda_dev_init_thread0(ctx, st));
    return (dcuda_status_t)st->result;
}

DCUDA_DEV dcuda_status_t dcuda_rank_finish(dcuda_state_t *st)
{
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_rank_finish");
    DCUDA_DEV_ON_THREAD0(st, dcuda_dev_barrier_thread0(st, DCUDA_DETAIL_COMM_WORLD));
    dcuda_status_t s = (dcuda_status_t)st->result;
    __syncthreads();
    if (threadIdx.x == 0) {
        dcuda_dev_publish_phase(st, DCUDA_PHASE_FINISHED);
        st->magic = 0;
    }
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
    dcuda_status_t s = dcuda_dev_check_comm(st, comm, "dcuda_comm_size");
    if (s == DCUDA_OK && !size)
        s = dcuda_dev_report(st, DCUDA_ERR_INVALID_ARG, "dcuda_comm_size", "size is NULL");
    if (s == DCUDA_OK)
        *size = dcuda_detail_comm_size(st->ctx, comm);
    return s;
}

DCUDA_DEV dcuda_status_t dcuda_comm_rank(dcuda_state_t *st, dcuda_comm_t comm, int *rank)
{
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_comm_rank");
    dcuda_status_t s = dcuda_dev_check_comm(st, comm, "dcuda_comm_rank");
    if (s == DCUDA_OK && !rank)
        s = dcuda_dev_report(st, DCUDA_ERR_INVALID_ARG, "dcuda_comm_rank", "rank is NULL");
    if (s == DCUDA_OK)
        *rank = dcuda_detail_comm_rank(st, comm);
    return s;
}

DCUDA_DEV dcuda_status_t dcuda_comm_barrier(dcuda_state_t *st, dcuda_comm_t comm)
{
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_comm_barrier");
    dcuda_status_t s = dcuda_dev_check_comm(st, comm, "dcuda_comm_barrier");
    if (s != DCUDA_OK)
        return s;
    DCUDA_DEV_ON_THREAD0(st, dcuda_dev_barrier_thread0(st, comm));
    return (dcuda_status_t)st->result;
}

#include "rank_cuda_rma.cuh"

#endif /* DCUDA_DETAIL_RANK_CUDA_CUH */
