/*
 * The module's side of the plugin contract (plugin.h), compiled into each
 * plugin: what the library lent it, and the library's calls that plugin
 * code makes (its messages, the bootstrap's wait hook), passed on to it.
 */
#include <stdarg.h>
#include <stdio.h>

#include "plugin.h"
#include "plugin_side.h"
#include "util/msg.h"

static const dcu_plugin_host_t *host;

int dcu_plugin_side_accept(const dcu_plugin_host_t *lent)
{
    if (!lent || lent->version != DCU_PLUGIN_VERSION || !lent->message || !lent->waiting)
        return 0;
    host = lent;
    return 1;
}

static void pass_on(int level, const char *fmt, va_list ap)
{
    char text[1024];
    vsnprintf(text, sizeof text, fmt, ap);
    if (host)
        host->message(level, text);
    else
        fprintf(stderr, "dcuda: %s\n", text);
}

void dcu_msg_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pass_on(DCU_PLUGIN_ERROR, fmt, ap);
    va_end(ap);
}

void dcu_msg_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pass_on(DCU_PLUGIN_WARN, fmt, ap);
    va_end(ap);
}

void dcu_msg_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pass_on(DCU_PLUGIN_INFO, fmt, ap);
    va_end(ap);
}

void dcu_boot_waiting(void)
{
    if (host)
        host->waiting();
}
