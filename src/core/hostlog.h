/*
 * The host library's own messages (errors, warnings, verbose notes), all on
 * stderr with a "dcuda:" prefix. Rank log lines go through the log ring and
 * the monitor thread instead (monitor.c).
 */
#ifndef DCUDA_CORE_HOSTLOG_H
#define DCUDA_CORE_HOSTLOG_H

#if defined(__GNUC__)
#define DCUDA_HOSTLOG_FMT(f, a) __attribute__((format(printf, f, a)))
#else
#define DCUDA_HOSTLOG_FMT(f, a)
#endif

void dcuda_hostlog_error(const char *fmt, ...) DCUDA_HOSTLOG_FMT(1, 2);
void dcuda_hostlog_warn(const char *fmt, ...) DCUDA_HOSTLOG_FMT(1, 2);
/* Printed only when the VERBOSE setting is on. */
void dcuda_hostlog_info(const char *fmt, ...) DCUDA_HOSTLOG_FMT(1, 2);
void dcuda_hostlog_set_verbose(int verbose);

#endif /* DCUDA_CORE_HOSTLOG_H */
