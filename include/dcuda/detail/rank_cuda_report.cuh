/*
 * GPU ranks talking to the host: log lines and misuse reports through the
 * log ring (format text plus typed arguments; the host formats them), the
 * first-error record, and the watchdog's view of a blocked rank.
 */
#ifndef DCUDA_DETAIL_RANK_CUDA_REPORT_CUH
#define DCUDA_DETAIL_RANK_CUDA_REPORT_CUH

/* The context of the running kernel, for reporting calls made before
 * dcuda_rank_init (one copy per translation unit, set by every block as it
 * enters the kernel). */
static __device__ const dcuda_context_t *dcuda_dev_current_ctx;

static __device__ __noinline__ const char *dcuda_dev_status_string(dcuda_status_t status)
{
    switch (status) {
#define DCUDA_DEV_STATUS_CASE_(name, value, msg)                                               \
    case DCUDA_##name: return msg;
        DCUDA_STATUS_MAP(DCUDA_DEV_STATUS_CASE_)
#undef DCUDA_DEV_STATUS_CASE_
    }
    return "unknown status";
}

/* ---- log entries -------------------------------------------------------- */

typedef struct dcuda_dev_log_builder {
    dcuda_log_entry_t *e;
    uint32_t len;   /* bytes of text[] used */
    uint32_t types; /* 4 bits per argument */
    int n;          /* arguments packed */
} dcuda_dev_log_builder_t;

static __device__ __forceinline__ void dcuda_dev_log_text(dcuda_dev_log_builder_t &b,
                                                          const char *s)
{
    while (s && *s && b.len < DCUDA_LOG_TEXT - 1)
        b.e->text[b.len++] = *s++;
}

static __device__ __forceinline__ void dcuda_dev_log_raw(dcuda_dev_log_builder_t &b,
                                                         unsigned type, uint64_t bits)
{
    if (b.n >= DCUDA_LOG_MAX_ARGS)
        return;
    b.e->args[b.n] = bits;
    b.types |= type << (4 * b.n);
    b.n++;
}

static __device__ __forceinline__ void dcuda_dev_log_arg(dcuda_dev_log_builder_t &b, long long v)
{
    dcuda_dev_log_raw(b, DCUDA_LOG_ARG_INT, (uint64_t)v);
}
static __device__ __forceinline__ void dcuda_dev_log_arg(dcuda_dev_log_builder_t &b, long v)
{
    dcuda_dev_log_raw(b, DCUDA_LOG_ARG_INT, (uint64_t)v);
}
static __device__ __forceinline__ void dcuda_dev_log_arg(dcuda_dev_log_builder_t &b, int v)
{
    dcuda_dev_log_raw(b, DCUDA_LOG_ARG_INT, (uint64_t)(long long)v);
}
static __device__ __forceinline__ void dcuda_dev_log_arg(dcuda_dev_log_builder_t &b,
                                                         unsigned long long v)
{
    dcuda_dev_log_raw(b, DCUDA_LOG_ARG_UINT, (uint64_t)v);
}
static __device__ __forceinline__ void dcuda_dev_log_arg(dcuda_dev_log_builder_t &b,
                                                         unsigned long v)
{
    dcuda_dev_log_raw(b, DCUDA_LOG_ARG_UINT, (uint64_t)v);
}
static __device__ __forceinline__ void dcuda_dev_log_arg(dcuda_dev_log_builder_t &b, unsigned v)
{
    dcuda_dev_log_raw(b, DCUDA_LOG_ARG_UINT, (uint64_t)v);
}
static __device__ __forceinline__ void dcuda_dev_log_arg(dcuda_dev_log_builder_t &b, double v)
{
    dcuda_dev_log_raw(b, DCUDA_LOG_ARG_DOUBLE, (uint64_t)__double_as_longlong(v));
}
static __device__ __forceinline__ void dcuda_dev_log_arg(dcuda_dev_log_builder_t &b, float v)
{
    dcuda_dev_log_arg(b, (double)v);
}
static __device__ __forceinline__ void dcuda_dev_log_arg(dcuda_dev_log_builder_t &b,
                                                         const char *s)
{
    /* Strings travel inline, after the format's terminating NUL. */
    uint32_t at = b.len;
    dcuda_dev_log_text(b, s ? s : "(null)");
    if (b.len < DCUDA_LOG_TEXT)
        b.e->text[b.len++] = '\0';
    dcuda_dev_log_raw(b, DCUDA_LOG_ARG_STR, at);
}
static __device__ __forceinline__ void dcuda_dev_log_arg(dcuda_dev_log_builder_t &b, char *s)
{
    dcuda_dev_log_arg(b, (const char *)s);
}
template <typename T>
static __device__ __forceinline__ void dcuda_dev_log_arg(dcuda_dev_log_builder_t &b, T *p)
{
    dcuda_dev_log_raw(b, DCUDA_LOG_ARG_PTR, (uint64_t)(uintptr_t)p);
}

/* Fills entry e: format pre + fmt + post, then the arguments. */
template <typename... A>
static __device__ __forceinline__ void dcuda_dev_log_fill(dcuda_log_entry_t *e, int rank,
                                                          unsigned kind, const char *pre,
                                                          const char *fmt, const char *post,
                                                          A... args)
{
    dcuda_dev_log_builder_t b = {e, 0, 0, 0};
    dcuda_dev_log_text(b, pre);
    dcuda_dev_log_text(b, fmt);
    dcuda_dev_log_text(b, post);
    e->text[b.len++] = '\0';
    int expand[] = {0, (dcuda_dev_log_arg(b, args), 0)...};
    (void)expand;
    e->rank = rank;
    e->kind = (uint16_t)(kind | DCUDA_LOG_FORMAT_KIND);
    e->nargs = (uint16_t)b.n;
    e->arg_types = b.types;
}

/* Writes one entry into the log ring, waiting for room (nothing is
 * dropped). */
template <typename... A>
static __device__ __noinline__ void dcuda_dev_log_write(const dcuda_context_t *ctx, int rank,
                                                        unsigned kind, const char *pre,
                                                        const char *fmt, const char *post,
                                                        A... args)
{
    uint32_t t = atomicAdd(ctx->log.head, 1u);
    dcuda_log_entry_t *e = &ctx->log.entries[t & (ctx->log.capacity - 1u)];
    while (dcuda_dev_ld_acquire_sys(&e->seq) != t)
        __nanosleep(1000);
    dcuda_dev_log_fill(e, rank, kind, pre, fmt, post, args...);
    dcuda_dev_st_release_sys(&e->seq, t + 1u);
}

/* ---- misuse reports (thread 0 reports; every thread gets the status) ---- */

/* Thread 0 of the reporting rank: the first rank to record an error also
 * leaves its report in the record; every report goes to the log. */
template <typename... A>
static __device__ __noinline__ dcuda_status_t
dcuda_dev_report_ctx(const dcuda_context_t *ctx, int rank, dcuda_status_t status,
                     const char *call, const char *fmt, A... args)
{
    if (threadIdx.x == 0 && ctx) {
        dcuda_error_record_t *rec = ctx->error;
        const char *why = dcuda_dev_status_string(status);
        if (atomicCAS(&rec->status, 0, (int)status) == 0) {
            rec->rank = rank;
            dcuda_dev_log_fill(&rec->first, rank, DCUDA_LOG_ERROR_KIND, "%s: ", fmt, " (%s)",
                               call, args..., why);
        }
        atomicAdd(&rec->count, 1u);
        dcuda_dev_log_write(ctx, rank, DCUDA_LOG_ERROR_KIND, "%s: ", fmt, " (%s)", call, args...,
                            why);
    }
    return status;
}

template <typename... A>
static __device__ __forceinline__ dcuda_status_t dcuda_dev_report(const dcuda_state_t *st,
                                                                  dcuda_status_t status,
                                                                  const char *call,
                                                                  const char *fmt, A... args)
{
    return dcuda_dev_report_ctx(st->ctx, st->world_rank, status, call, fmt, args...);
}

static __device__ __forceinline__ int dcuda_dev_state_ok(const dcuda_state_t *st)
{
    return st && st->magic == DCUDA_STATE_MAGIC && st->ctx;
}

static __device__ __forceinline__ dcuda_status_t dcuda_dev_report_uninit(const dcuda_state_t *st,
                                                                         const char *call)
{
    const dcuda_context_t *ctx = dcuda_dev_current_ctx;
    int rank = ctx ? ctx->world_first + (int)blockIdx.x : (int)blockIdx.x;
    return dcuda_dev_report_ctx(ctx, rank, DCUDA_ERR_NOT_INITIALIZED, call,
                                "state %p used before dcuda_rank_init", (const void *)st);
}

static __device__ __forceinline__ dcuda_status_t dcuda_dev_report_noctx(dcuda_status_t status)
{
    const dcuda_context_t *ctx = dcuda_dev_current_ctx;
    int rank = ctx ? ctx->world_first + (int)blockIdx.x : (int)blockIdx.x;
    return dcuda_dev_report_ctx(ctx, rank, status, "dcuda_rank_init",
                                "the context is not the handle passed to this kernel");
}

/* ---- watchdog view (mapped host memory; only when blocking) ------------- */

static __device__ __forceinline__ void dcuda_dev_publish_phase(const dcuda_state_t *st,
                                                               uint32_t phase)
{
    dcuda_dev_st_release_sys(&st->ctx->rank_status[st->device_rank].phase, phase);
}

static __device__ __noinline__ void dcuda_dev_publish_blocked(const dcuda_state_t *st,
                                                              uint32_t phase, uint32_t tag,
                                                              uint32_t count, uint32_t consumed,
                                                              uint32_t comm, uint32_t target)
{
    dcuda_rank_status_t *s = &st->ctx->rank_status[st->device_rank];
    dcuda_dev_st_relaxed_sys(&s->tag, tag);
    dcuda_dev_st_relaxed_sys(&s->count, count);
    dcuda_dev_st_relaxed_sys(&s->consumed, consumed);
    dcuda_dev_st_relaxed_sys(&s->comm, comm);
    dcuda_dev_st_relaxed_sys(&s->target, target);
    dcuda_dev_st_relaxed_sys(&s->phase, phase);
    dcuda_dev_st_release_sys(&s->episode, dcuda_dev_ld_acquire_sys(&s->episode) + 1u);
}

#endif /* DCUDA_DETAIL_RANK_CUDA_REPORT_CUH */
