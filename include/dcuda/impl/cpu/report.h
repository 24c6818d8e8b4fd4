/*
 * How CPU ranks word misuse reports and log lines: formatted with
 * vsnprintf into the entry's text, then queued through the log ring like
 * the GPU's (impl/ring.h). Defined in libdcuda (src/backend/cpu/cpu_rank.c).
 */
#ifndef DCUDA_IMPL_CPU_REPORT_H
#define DCUDA_IMPL_CPU_REPORT_H

#include "prims.h"

/* "call: <fmt> (status message)", as the run's first error if it is, and
 * in the log; returns status. With no context (not on a rank thread), on
 * stderr. */
dcuda_status_t dcu_report_at(const dcuda_context_t *ctx, int rank, dcuda_status_t status,
                             const char *call, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* "call: <fmt>" as a warning line in the log (not an error of the run). */
void dcu_warn_at(const dcuda_context_t *ctx, int rank, const char *call, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* A finished line into the log ring, waiting for room. */
void dcu_cpu_log_text(const dcuda_context_t *ctx, int rank, int kind, const char *text);

#define DCU_REPORT(st, status, call, ...)                                                          \
    dcu_report_at((st)->ctx, (st)->world_rank, status, call, __VA_ARGS__)
#define DCU_WARN(st, call, ...) dcu_warn_at((st)->ctx, (st)->world_rank, call, __VA_ARGS__)

#endif /* DCUDA_IMPL_CPU_REPORT_H */
