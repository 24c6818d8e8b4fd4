/*
 * Host-side messages of the library: one line each, written whole so lines
 * from several threads never interleave.
 */
#include "hostlog.h"

#include <stdarg.h>
#include <stdio.h>

static int hostlog_verbose;

static void hostlog_line(const char *level, const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "dcuda: %s", level);
    if (n < 0 || (size_t)n >= sizeof line)
        return;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

void dcuda_hostlog_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hostlog_line("error: ", fmt, ap);
    va_end(ap);
}

void dcuda_hostlog_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hostlog_line("warning: ", fmt, ap);
    va_end(ap);
}

void dcuda_hostlog_info(const char *fmt, ...)
{
    if (!hostlog_verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    hostlog_line("", fmt, ap);
    va_end(ap);
}

void dcuda_hostlog_set_verbose(int verbose) { hostlog_verbose = verbose; }
