/*
 * The proxy (see proxy.h): consumes the command ring in ticket order and
 * recycles each entry before it answers, so a sender that sees its reply
 * knows every entry up to its own ticket is free (see
 * dcuda/shared/ring.h). The reply's seq is released last.
 */
#include "proxy.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/ring.h"

struct dcu_proxy {
    dcu_ring_reader_t queue;
    dcuda_cmd_reply_t *replies;
    int ranks;
};

dcuda_status_t dcu_proxy_create(dcuda_cmd_t *entries, uint32_t capacity, dcuda_cmd_reply_t *replies,
                                int ranks, dcu_proxy_t **out)
{
    dcu_proxy_t *p = calloc(1, sizeof *p);
    if (!p)
        return DCUDA_ERR_NO_MEMORY;
    dcu_ring_reader_init(&p->queue, entries, capacity, sizeof(dcuda_cmd_t));
    p->replies = replies;
    p->ranks = ranks;
    *out = p;
    return DCUDA_OK;
}

void dcu_proxy_destroy(dcu_proxy_t *p) { free(p); }

void dcu_proxy_reset(dcu_proxy_t *p)
{
    dcu_ring_reset(&p->queue);
    memset(p->replies, 0, (size_t)p->ranks * sizeof *p->replies);
}

/* Answers one command in its sender's reply slot. */
static void answer(dcu_proxy_t *p, const dcuda_cmd_t *c)
{
    dcuda_cmd_reply_t *r = &p->replies[c->rank];
    switch (c->op) {
    case DCUDA_CMD_PING:
        r->status = DCUDA_OK;
        r->value = dcu_clock_ns();
        break;
    default:
        r->status = DCUDA_ERR_INVALID_ARG;
        r->value = 0;
        break;
    }
    atomic_store_explicit(&r->seq, c->tag, memory_order_release);
}

int dcu_proxy_poll(dcu_proxy_t *p)
{
    int served = 0;
    dcuda_cmd_t *e;
    while ((e = dcu_ring_next(&p->queue)) != NULL) {
        dcuda_cmd_t cmd = *e;
        dcu_ring_done(&p->queue, e);
        if (cmd.rank >= 0 && cmd.rank < p->ranks)
            answer(p, &cmd);
        served = 1;
    }
    return served;
}
