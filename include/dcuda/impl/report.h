/*
 * How the backend words misuse reports (DCU_REPORT, dcu_report_at): device
 * code ships a format and typed arguments, CPU code formats with vsnprintf.
 */
#ifndef DCUDA_IMPL_REPORT_H
#define DCUDA_IMPL_REPORT_H

#if defined(__CUDACC__)
#include "cuda/report.cuh"
#else
#include "cpu/report.h"
#endif

#endif /* DCUDA_IMPL_REPORT_H */
