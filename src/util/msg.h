/*
 * The host library's own messages (errors, warnings, verbose notes), all on
 * stderr with a "dcuda:" prefix, one whole line each. Rank log lines go
 * through the log ring and the monitor instead (core/monitor.c).
 */
#ifndef DCU_UTIL_MSG_H
#define DCU_UTIL_MSG_H

#if defined(__GNUC__)
#define DCU_MSG_FMT(f, a) __attribute__((format(printf, f, a)))
#else
#define DCU_MSG_FMT(f, a)
#endif

void dcu_msg_error(const char *fmt, ...) DCU_MSG_FMT(1, 2);
void dcu_msg_warn(const char *fmt, ...) DCU_MSG_FMT(1, 2);
/* Printed only when the VERBOSE setting is on. */
void dcu_msg_info(const char *fmt, ...) DCU_MSG_FMT(1, 2);
void dcu_msg_set_verbose(int verbose);
/* Once the program runs as several processes, every line says which one
 * wrote it: "dcuda: error: process 1: ...". */
void dcu_msg_set_process(int index, int count);
/* "process <index>: " (or "" for a process alone), for lines written
 * elsewhere (the watchdog's). */
const char *dcu_msg_who(void);
/* Where the lines go instead of stderr (NULL: stderr again), each whole
 * and without its newline: for tests that feed the library bad input on
 * purpose and read what it says. Set while one thread uses the library. */
typedef void (*dcu_msg_sink_fn)(void *arg, const char *line);
void dcu_msg_set_sink(dcu_msg_sink_fn sink, void *arg);

#endif /* DCU_UTIL_MSG_H */
