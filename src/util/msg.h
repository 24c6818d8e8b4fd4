/*
 * The host library's own messages (errors, warnings, notes, debug lines),
 * with a "dcuda:" prefix, one whole line each: on stderr, or in the log
 * file (LOG_FILE), at the LOG_LEVEL asked for. Rank log lines go through
 * the log ring and the monitor instead (core/monitor.c).
 */
#ifndef DCU_UTIL_MSG_H
#define DCU_UTIL_MSG_H

#if defined(__GNUC__)
#define DCU_MSG_FMT(f, a) __attribute__((format(printf, f, a)))
#else
#define DCU_MSG_FMT(f, a)
#endif

enum { DCU_MSG_ERROR = 0, DCU_MSG_WARN = 1, DCU_MSG_INFO = 2, DCU_MSG_DEBUG = 3 };

void dcu_msg_error(const char *fmt, ...) DCU_MSG_FMT(1, 2);
void dcu_msg_warn(const char *fmt, ...) DCU_MSG_FMT(1, 2);
/* Printed from LOG_LEVEL info on (VERBOSE=1 too). */
void dcu_msg_info(const char *fmt, ...) DCU_MSG_FMT(1, 2);
/* Printed at LOG_LEVEL debug. */
void dcu_msg_debug(const char *fmt, ...) DCU_MSG_FMT(1, 2);
/* A line of a report written whole by its caller ("dcuda: deadlock: ...",
 * the watchdog's), at `level`, to where the lines go. */
void dcu_msg_report(int level, const char *fmt, ...) DCU_MSG_FMT(2, 3);
void dcu_msg_set_verbose(int verbose);
/* The level (DCU_MSG_*); dcu_msg_level_of("warn") etc. (-1: no level). */
void dcu_msg_set_level(int level);
int dcu_msg_level_of(const char *name);
/* Every line to this file too ("%p": the process index; "" stderr only). */
void dcu_msg_set_file(const char *pattern);
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
