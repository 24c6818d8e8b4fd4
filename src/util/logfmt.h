/*
 * The text of a log entry: as written (CPU ranks) or formatted on the host
 * from the format and typed arguments a GPU rank shipped, refusing
 * conversions that are not plain printable ones of the recorded types.
 * Always terminated inside `size` bytes.
 */
#ifndef DCU_UTIL_LOGFMT_H
#define DCU_UTIL_LOGFMT_H

#include <stddef.h>

#include "dcuda/shared/ring.h"

void dcu_log_entry_text(const dcuda_log_entry_t *e, char *text, size_t size);

#endif /* DCU_UTIL_LOGFMT_H */
