/*
 * Host-side messages of the library: one line each, written whole so lines
 * from several threads never interleave, and naming the process that wrote
 * it once the program runs as several.
 */
#include "msg.h"

#include <stdarg.h>
#include <stdio.h>

static int msg_verbose;
static char msg_who[32]; /* "process 3: ", or "" while there is one process */
static dcu_msg_sink_fn msg_sink;
static void *msg_sink_arg;

static void msg_line(const char *level, const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "dcuda: %s%s", level, msg_who);
    if (n < 0 || (size_t)n >= sizeof line)
        return;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    if (msg_sink) {
        msg_sink(msg_sink_arg, line);
        return;
    }
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

void dcu_msg_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    msg_line("error: ", fmt, ap);
    va_end(ap);
}

void dcu_msg_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    msg_line("warning: ", fmt, ap);
    va_end(ap);
}

void dcu_msg_info(const char *fmt, ...)
{
    if (!msg_verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    msg_line("", fmt, ap);
    va_end(ap);
}

void dcu_msg_set_verbose(int verbose) { msg_verbose = verbose; }

void dcu_msg_set_process(int index, int count)
{
    if (count > 1)
        snprintf(msg_who, sizeof msg_who, "process %d: ", index);
    else
        msg_who[0] = '\0';
}

const char *dcu_msg_who(void) { return msg_who; }

void dcu_msg_set_sink(dcu_msg_sink_fn sink, void *arg)
{
    msg_sink = sink;
    msg_sink_arg = arg;
}
