/*
 * The message memory the network managers share with the proxy
 * (dcu_net_mem_t): compiled into the library and into each plugin.
 */
#include <stdlib.h>

#include "net.h"

void *dcu_net_buffer(const dcu_net_mem_t *m, size_t size)
{
    return m->buffer_alloc ? m->buffer_alloc(m->arg, size) : malloc(size);
}

void dcu_net_buffer_free(const dcu_net_mem_t *m, void *buf)
{
    if (!buf)
        return;
    if (m->buffer_free)
        m->buffer_free(m->arg, buf);
    else
        free(buf);
}

void dcu_net_release(const dcu_net_mem_t *m, void *msg)
{
    if (m->release)
        m->release(m->arg, msg);
    else
        free(msg);
}
