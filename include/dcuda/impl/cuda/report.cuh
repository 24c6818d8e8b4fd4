/*
 * How GPU ranks word their log lines and misuse reports: device code has
 * no vsnprintf, so an entry carries the format text and up to
 * DCUDA_LOG_MAX_ARGS typed arguments, and the host formats it. The ring
 * and the first-error record are driven by impl/ring.h, as on CPU ranks;
 * only the filling of an entry is the GPU's own.
 */
#ifndef DCUDA_IMPL_CUDA_REPORT_CUH
#define DCUDA_IMPL_CUDA_REPORT_CUH

#include "../ring.h"
#include "prims.cuh"

static __device__ __noinline__ const char *dcu_status_string(dcuda_status_t status)
{
    switch (status) {
#define DCU_STATUS_CASE_(name, value, msg)                                                         \
    case DCUDA_##name:                                                                             \
        return msg;
        DCUDA_STATUS_MAP(DCU_STATUS_CASE_)
#undef DCU_STATUS_CASE_
    }
    return "unknown status";
}

/* ---- filling an entry ------------------------------------------------------- */

typedef struct dcu_log_builder {
    dcuda_log_entry_t *e;
    uint32_t len;   /* bytes of text[] used */
    uint32_t types; /* 4 bits per argument */
    int n;          /* arguments packed */
} dcu_log_builder_t;

DCU_FN void dcu_log_text(dcu_log_builder_t &b, const char *s)
{
    while (s && *s && b.len < DCUDA_LOG_TEXT - 1)
        b.e->text[b.len++] = *s++;
}

DCU_FN void dcu_log_raw(dcu_log_builder_t &b, unsigned type, uint64_t bits)
{
    if (b.n >= DCUDA_LOG_MAX_ARGS)
        return;
    b.e->args[b.n] = bits;
    b.types |= type << (4 * b.n);
    b.n++;
}

DCU_FN void dcu_log_arg(dcu_log_builder_t &b, long long v)
{
    dcu_log_raw(b, DCUDA_LOG_ARG_INT, (uint64_t)v);
}
DCU_FN void dcu_log_arg(dcu_log_builder_t &b, long v)
{
    dcu_log_raw(b, DCUDA_LOG_ARG_INT, (uint64_t)v);
}
DCU_FN void dcu_log_arg(dcu_log_builder_t &b, int v)
{
    dcu_log_raw(b, DCUDA_LOG_ARG_INT, (uint64_t)(long long)v);
}
DCU_FN void dcu_log_arg(dcu_log_builder_t &b, unsigned long long v)
{
    dcu_log_raw(b, DCUDA_LOG_ARG_UINT, (uint64_t)v);
}
DCU_FN void dcu_log_arg(dcu_log_builder_t &b, unsigned long v)
{
    dcu_log_raw(b, DCUDA_LOG_ARG_UINT, (uint64_t)v);
}
DCU_FN void dcu_log_arg(dcu_log_builder_t &b, unsigned v)
{
    dcu_log_raw(b, DCUDA_LOG_ARG_UINT, (uint64_t)v);
}
DCU_FN void dcu_log_arg(dcu_log_builder_t &b, double v)
{
    dcu_log_raw(b, DCUDA_LOG_ARG_DOUBLE, (uint64_t)__double_as_longlong(v));
}
DCU_FN void dcu_log_arg(dcu_log_builder_t &b, float v) { dcu_log_arg(b, (double)v); }
DCU_FN void dcu_log_arg(dcu_log_builder_t &b, const char *s)
{
    /* Strings travel inline, after the format's terminating NUL. */
    uint32_t at = b.len;
    dcu_log_text(b, s ? s : "(null)");
    if (b.len < DCUDA_LOG_TEXT)
        b.e->text[b.len++] = '\0';
    dcu_log_raw(b, DCUDA_LOG_ARG_STR, at);
}
DCU_FN void dcu_log_arg(dcu_log_builder_t &b, char *s) { dcu_log_arg(b, (const char *)s); }
template <typename T> DCU_FN void dcu_log_arg(dcu_log_builder_t &b, T *p)
{
    dcu_log_raw(b, DCUDA_LOG_ARG_PTR, (uint64_t)(uintptr_t)p);
}

/* Fills entry e: format pre + fmt + post, then the arguments. */
template <typename... A>
DCU_FN void dcu_log_fill(dcuda_log_entry_t *e, int rank, unsigned kind, const char *pre,
                         const char *fmt, const char *post, A... args)
{
    dcu_log_builder_t b = { e, 0, 0, 0 };
    dcu_log_text(b, pre);
    dcu_log_text(b, fmt);
    dcu_log_text(b, post);
    e->text[b.len++] = '\0';
    int expand[] = { 0, (dcu_log_arg(b, args), 0)... };
    (void)expand;
    e->rank = rank;
    e->kind = (uint16_t)(kind | DCUDA_LOG_FORMAT_KIND);
    e->nargs = (uint16_t)b.n;
    e->arg_types = b.types;
}

/* Writes one entry into the log ring, waiting for room (nothing is
 * dropped). */
template <typename... A>
static __device__ __noinline__ void dcu_log_write(const dcuda_context_t *ctx, int rank,
                                                  unsigned kind, const char *pre, const char *fmt,
                                                  const char *post, A... args)
{
    uint32_t t;
    dcuda_log_entry_t *e =
        (dcuda_log_entry_t *)dcu_ring_take(&ctx->log, sizeof(dcuda_log_entry_t), &t);
    dcu_log_fill(e, rank, kind, pre, fmt, post, args...);
    dcu_ring_publish(e, t);
}

/* ---- misuse reports (thread 0 reports; every thread gets the status) ------- */

/* "call: <fmt> (status message)", as the first error of the run if it is,
 * and in the log. */
template <typename... A>
static __device__ __noinline__ dcuda_status_t dcu_report_at(const dcuda_context_t *ctx, int rank,
                                                            dcuda_status_t status, const char *call,
                                                            const char *fmt, A... args)
{
    if (threadIdx.x == 0 && ctx) {
        const char *why = dcu_status_string(status);
        if (dcu_error_claim(ctx, rank, status)) {
            dcu_log_fill(&ctx->error->first, rank, DCUDA_LOG_ERROR_KIND, "%s: ", fmt, " (%s)", call,
                         args..., why);
            dcu_error_filled(ctx);
            dcu_error_end_run(ctx, 0);
        }
        dcu_log_write(ctx, rank, DCUDA_LOG_ERROR_KIND, "%s: ", fmt, " (%s)", call, args..., why);
    }
    return status;
}

/* "call: <fmt>" as a warning line in the log (not an error of the run);
 * thread 0 writes it. */
template <typename... A>
static __device__ __noinline__ void dcu_warn_at(const dcuda_context_t *ctx, int rank,
                                                const char *call, const char *fmt, A... args)
{
    if (threadIdx.x == 0 && ctx)
        dcu_log_write(ctx, rank, DCUDA_LOG_WARN_KIND, "%s: ", fmt, "", call, args...);
}

#define DCU_REPORT(st, status, call, ...)                                                          \
    dcu_report_at((st)->ctx, (st)->world_rank, status, call, __VA_ARGS__)
#define DCU_WARN(st, call, ...) dcu_warn_at((st)->ctx, (st)->world_rank, call, __VA_ARGS__)

#endif /* DCUDA_IMPL_CUDA_REPORT_CUH */
