/*
 * CPU backend, rank side: the rank calls for ranks that are threads. This
 * is the one C translation unit that compiles the rank engine
 * (dcuda/impl/engine.h) over the CPU's primitives, so CPU ranks run the
 * algorithm GPU ranks run: a put is a copy then a release add to the
 * target's counter, a wait polls the rank's own counter with acquire loads,
 * barriers are counters that only grow. What is the CPU's own is how a
 * report or log line is worded: vsnprintf into the entry's text.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cpu_rank.h"
#include "dcuda/impl/api.h"
#include "util/msg.h"

uint32_t dcu_cpu_sleep_max_ns = DCU_CPU_SLEEP_MAX_NS;
_Thread_local const dcuda_context_t *dcu_cpu_thread_ctx;
_Thread_local int dcu_cpu_thread_rank = -1;

/* ---- wording of log lines and reports --------------------------------------- */

static void fill_entry(dcuda_log_entry_t *e, int rank, int kind, const char *text)
{
    e->rank = rank;
    e->kind = (uint16_t)kind;
    e->nargs = 0;
    e->arg_types = 0;
    size_t n = strnlen(text, DCUDA_LOG_TEXT - 1);
    memcpy(e->text, text, n);
    e->text[n] = '\0';
}

void dcu_cpu_log_text(const dcuda_context_t *ctx, int rank, int kind, const char *text)
{
    uint32_t t;
    dcuda_log_entry_t *e =
        (dcuda_log_entry_t *)dcu_ring_take(&ctx->log, sizeof(dcuda_log_entry_t), &t);
    fill_entry(e, rank, kind, text);
    dcu_ring_publish(e, t);
}

dcuda_status_t dcu_report_at(const dcuda_context_t *ctx, int rank, dcuda_status_t status,
                             const char *call, const char *fmt, ...)
{
    char text[DCUDA_LOG_TEXT];
    int n = snprintf(text, sizeof text, "%s: ", call);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof text)
        snprintf(text + n, sizeof text - (size_t)n, " (%s)", dcuda_status_string(status));
    if (!ctx) {
        dcu_msg_error("%s [not on a rank thread]", text);
        return status;
    }
    if (dcu_error_claim(ctx, rank, status)) {
        fill_entry(&ctx->error->first, rank, DCUDA_LOG_ERROR_KIND, text);
        dcu_error_filled(ctx);
        dcu_error_end_run(ctx, 0);
    }
    dcu_cpu_log_text(ctx, rank, DCUDA_LOG_ERROR_KIND, text);
    return status;
}

void dcu_warn_at(const dcuda_context_t *ctx, int rank, const char *call, const char *fmt, ...)
{
    char text[DCUDA_LOG_TEXT];
    int n = snprintf(text, sizeof text, "%s: ", call);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
    va_end(ap);
    if (ctx)
        dcu_cpu_log_text(ctx, rank, DCUDA_LOG_WARN_KIND, text);
    else
        dcu_msg_warn("%s [not on a rank thread]", text);
}

/* ---- what only CPU ranks have ------------------------------------------------------ */

dcuda_status_t dcuda_log(dcuda_state_t *st, const char *fmt, ...)
{
    dcuda_status_t s = dcu_log_check(st, fmt);
    if (s != DCUDA_OK)
        return s;
    char text[DCUDA_LOG_TEXT];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    dcu_cpu_log_text(st->ctx, st->world_rank, DCUDA_LOG_TEXT_KIND, text);
    return DCUDA_OK;
}

void dcu_cpu_rank_run(dcuda_context_t *ctx, int rank, dcu_cpu_kernel_fn kernel)
{
    dcu_cpu_thread_ctx = ctx;
    dcu_cpu_thread_rank = rank;
    kernel((dcuda_context_h)ctx);
    dcu_kernel_exit(ctx);
}

void dcu_cpu_rank_vanished(dcuda_context_t *ctx, int rank)
{
    int world = ctx->world_first + rank;
    (void)dcu_report_at(ctx, world, DCUDA_ERR_RANK_LEFT, "kernel",
                        "the thread of rank %d ended inside the kernel (pthread_exit or "
                        "cancellation) instead of returning",
                        world);
    dcu_error_end_run(ctx, 1);
    dcu_st_release(&ctx->rank_status[rank].phase, DCUDA_PHASE_FINISHED, 1);
}
