/*
 * GPU ranks: one thread block per rank, header-only and inlined (no -rdc,
 * no device library). Included by dcuda_rank.h under nvcc: the GPU's
 * primitives and wording of reports, then the engine and the rank calls
 * written once for both backends, then what only the GPU has (the kernel
 * wrapper and dcuda_log as a template).
 */
#ifndef DCUDA_IMPL_CUDA_RANK_CUH
#define DCUDA_IMPL_CUDA_RANK_CUH

#include "../../dcuda_rank.h"
#include "../api.h"

/* Every block makes the context known before any rank call (so even calls
 * before dcuda_rank_init are reported). */
DCU_FN void dcu_kernel_enter(dcuda_context_h ctx)
{
    if (threadIdx.x == 0)
        dcu_current_ctx = ctx;
    __syncthreads();
}

template <typename... A>
DCU_FN dcuda_status_t dcuda_log(dcuda_state_t *st, const char *fmt, A... args)
{
    static_assert(sizeof...(A) <= DCUDA_LOG_MAX_ARGS, "too many arguments for dcuda_log");
    dcuda_status_t s = dcu_log_check(st, fmt);
    if (s == DCUDA_OK)
        dcu_log_write(st->ctx, st->world_rank, DCUDA_LOG_TEXT_KIND, "", fmt, "", args...);
    return s;
}

#endif /* DCUDA_IMPL_CUDA_RANK_CUH */
