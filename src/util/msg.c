/*
 * Host-side messages of the library: one line each, written whole so lines
 * from several threads never interleave.
 */
#include "msg.h"

#include <stdarg.h>
#include <stdio.h>

static int msg_verbose;

static void msg_line(const char *level, const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "dcuda: %s", level);
    if (n < 0 || (size_t)n >= sizeof line)
        return;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
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
