/*
 * Host-side messages of the library: one line each, written whole so lines
 * from several threads never interleave, and naming the process that wrote
 * it once the program runs as several. Levels (LOG_LEVEL): error, warn
 * (the default), info (VERBOSE=1 too), debug. A log file (LOG_FILE, "%p"
 * standing for the process's index) takes every line; errors also go to
 * stderr, so that a failure is never silent.
 */
#include "msg.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int msg_level = DCU_MSG_WARN;
static char msg_who[32]; /* "process 3: ", or "" while there is one process */
static int msg_index;
static dcu_msg_sink_fn msg_sink;
static void *msg_sink_arg;
static char msg_file_pattern[256];
static FILE *msg_file;

/* The log file of this process: the pattern with "%p" as its index. */
static void open_file(void)
{
    char path[320];
    size_t used = 0;
    if (msg_file) {
        fclose(msg_file);
        msg_file = NULL;
    }
    if (!msg_file_pattern[0])
        return;
    for (const char *c = msg_file_pattern; *c && used + 12 < sizeof path; c++) {
        if (c[0] == '%' && c[1] == 'p') {
            used += (size_t)snprintf(path + used, sizeof path - used, "%d", msg_index);
            c++;
        } else {
            path[used++] = *c;
        }
    }
    path[used] = '\0';
    msg_file = fopen(path, "a");
    if (!msg_file)
        fprintf(stderr, "dcuda: warning: %slog file %s cannot be opened; messages go to stderr\n",
                msg_who, path);
}

/* A whole line to where lines go: the sink, else the log file (and stderr
 * for an error), else stderr. */
static void put_line(const char *line, int level)
{
    if (msg_sink) {
        msg_sink(msg_sink_arg, line);
        return;
    }
    if (msg_file) {
        fprintf(msg_file, "%s\n", line);
        fflush(msg_file);
        if (level > DCU_MSG_ERROR)
            return;
    }
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

static void msg_line(int level, const char *tag, const char *fmt, va_list ap)
{
    char line[1024];
    if (level > msg_level)
        return;
    int n = snprintf(line, sizeof line, "dcuda: %s%s", tag, msg_who);
    if (n < 0 || (size_t)n >= sizeof line)
        return;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    put_line(line, level);
}

void dcu_msg_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    msg_line(DCU_MSG_ERROR, "error: ", fmt, ap);
    va_end(ap);
}

void dcu_msg_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    msg_line(DCU_MSG_WARN, "warning: ", fmt, ap);
    va_end(ap);
}

void dcu_msg_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    msg_line(DCU_MSG_INFO, "", fmt, ap);
    va_end(ap);
}

void dcu_msg_debug(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    msg_line(DCU_MSG_DEBUG, "debug: ", fmt, ap);
    va_end(ap);
}

void dcu_msg_report(int level, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    line[strcspn(line, "\n")] = '\0';
    put_line(line, level);
}

void dcu_msg_set_verbose(int verbose)
{
    if (verbose && msg_level < DCU_MSG_INFO)
        msg_level = DCU_MSG_INFO;
}

void dcu_msg_set_level(int level) { msg_level = level; }

int dcu_msg_level_of(const char *name)
{
    static const char *const names[] = { "error", "warn", "info", "debug" };
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

void dcu_msg_set_file(const char *pattern)
{
    snprintf(msg_file_pattern, sizeof msg_file_pattern, "%s", pattern ? pattern : "");
    open_file();
}

void dcu_msg_set_process(int index, int count)
{
    if (count > 1)
        snprintf(msg_who, sizeof msg_who, "process %d: ", index);
    else
        msg_who[0] = '\0';
    if (index != msg_index && strstr(msg_file_pattern, "%p")) { /* its own file now */
        msg_index = index;
        open_file();
    }
    msg_index = index;
}

const char *dcu_msg_who(void) { return msg_who; }

void dcu_msg_set_sink(dcu_msg_sink_fn sink, void *arg)
{
    msg_sink = sink;
    msg_sink_arg = arg;
}
