/*
 * The proxy's core (see proxy_impl.h), beneath every other file of it:
 * its failure and the news it tells another thread, the answers in the
 * ranks' reply slots, and where its pinned buffers are. It calls no other
 * file of the proxy.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include "proxy_impl.h"
#include "util/clock.h"
#include "util/nvtx.h"

/* News for another thread (dcu_proxy_config_t.news). */
void dcu_proxy_tell(dcu_proxy_t *p, int news)
{
    if (p->c.news)
        atomic_fetch_or_explicit(p->c.news, news, memory_order_release);
}

/* The proxy cannot go on. Once the run was cancelled (the watchdog, a dead
 * peer), its ranks left their waits early and what arrives may no longer
 * fit: that is kept, not reported, since the cancel's cause was. */
void dcu_proxy_fail(dcu_proxy_t *p, const char *fmt, ...)
{
    if (p->failure[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->failure, sizeof p->failure, fmt, ap);
    va_end(ap);
    dcu_nvtx_mark("proxy failed: %s", p->failure);
    dcu_proxy_tell(p, DCU_PROXY_FAILED);
    if (!atomic_load_explicit(p->c.cancel, memory_order_acquire))
        dcu_msg_error("%s", p->failure); /* the line names the process */
}

const char *dcu_proxy_failure(const dcu_proxy_t *p) { return p->failure[0] ? p->failure : NULL; }

const char *dcu_proxy_aborted(const dcu_proxy_t *p) { return p->aborted[0] ? p->aborted : NULL; }

const char *dcu_proxy_left(const dcu_proxy_t *p) { return p->left[0] ? p->left : NULL; }

/* ---- answers -------------------------------------------------------------------- */

/* How long after a cancel the ranks that wait for a window part or a
 * fence wait on for their answer. */
#define PROXY_ASK_GRACE_NS (1 * DCU_NS_PER_S)

/* Once the proxy failed or a peer was lost, no answer may come: the ranks
 * that wait for a part or a fence are answered DCUDA_ERR_PEER. Once the
 * run was cancelled otherwise (an error or a stall), the owners still
 * answer (and acknowledge) while they serve the run, but may leave it
 * first: after PROXY_ASK_GRACE_NS the ranks that still wait are answered
 * DCUDA_ERR_ABORTED (a wait for a reply is not one the cancel ends). */
dcuda_status_t dcu_proxy_asks_end(dcu_proxy_t *p)
{
    uint32_t cancel = atomic_load_explicit(p->c.cancel, memory_order_acquire);
    if (!p->failure[0] && cancel == DCUDA_CANCEL_NONE)
        return DCUDA_OK;
    if (!p->failure[0] && cancel != DCUDA_CANCEL_PEER) {
        uint64_t now = dcu_clock_ns();
        if (!p->cancel_seen_ns)
            p->cancel_seen_ns = now;
        if (now - p->cancel_seen_ns < PROXY_ASK_GRACE_NS)
            return DCUDA_OK;
    }
    return p->failure[0] || cancel == DCUDA_CANCEL_PEER ? DCUDA_ERR_PEER : DCUDA_ERR_ABORTED;
}

/* Answers device rank r's command of reply tag `tag`, with a value. */
void dcu_proxy_answer_value(dcu_proxy_t *p, int r, uint32_t tag, dcuda_status_t status,
                            uint64_t value)
{
    dcuda_cmd_reply_t *reply = &p->c.replies[r];
    reply->status = status;
    reply->value = value;
    atomic_store_explicit(&reply->seq, tag, memory_order_release);
}

/* Answers one command in its sender's reply slot (the value: when). */
void dcu_proxy_answer(dcu_proxy_t *p, const dcuda_cmd_t *c, dcuda_status_t status)
{
    dcu_proxy_answer_value(p, c->rank, c->tag, status, dcu_clock_ns());
}

/* ---- pinned buffers ------------------------------------------------------------- */

/* Pinned buffer i of PROXY_BUFFERS: the staging ring's, then the gets'. */
staging_t *dcu_proxy_buffer_at(dcu_proxy_t *p, int i)
{
    return i < PROXY_STAGING ? &p->staging[i] : &p->gets[i - PROXY_STAGING];
}

/* The staging or get buffer that holds msg, or NULL (a message of its own). */
staging_t *dcu_proxy_staging_of(dcu_proxy_t *p, const void *msg)
{
    for (int i = 0; i < PROXY_BUFFERS; i++)
        if (dcu_proxy_buffer_at(p, i)->msg == msg)
            return dcu_proxy_buffer_at(p, i);
    return NULL;
}
