/*
 * The proxy's control service: a process of another node that ended this
 * run early (ABORT) or left it (LEFT). Its text is kept, told to the
 * host runtime, spread along the detector's tree (send.c), and the run is
 * cancelled, once a run and kind.
 */
#include <stdatomic.h>
#include <stdio.h>

#include "service.h"

/* A peer's message text, printable characters only (it comes from outside),
 * into dst; `fallback` when the message had none. */
static void copy_peer_text(char *dst, size_t size, const dcu_wire_header_t *h, const char *body,
                           const char *fallback, int from)
{
    size_t n = h->length < size - 1 ? h->length : size - 1;
    for (size_t i = 0; i < n; i++)
        dst[i] = body[i] >= 0x20 && body[i] < 0x7f ? body[i] : '?';
    dst[n] = '\0';
    if (n == 0)
        snprintf(dst, size, fallback, from);
}

/* A process ended this run early (ABORT: its waits end here too), or left
 * it (LEFT: exit() while its ranks ran, or named silent: it is lost to
 * the run); my neighbours in the tree hear it. */
static void control_message(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body)
{
    const int abort = h->type == DCU_WIRE_ABORT;
    char *text = abort ? p->aborted : p->left;
    if (text[0])
        return;
    copy_peer_text(text, abort ? sizeof p->aborted : sizeof p->left, h, body,
                   abort ? "process %d" : "process %d left while its ranks ran", from);
    dcu_proxy_tell(p, abort ? DCU_PROXY_ABORTED : DCU_PROXY_LEFT);
    dcu_proxy_spread(p, h->type, text, from);
    uint32_t none = DCUDA_CANCEL_NONE;
    atomic_compare_exchange_strong_explicit(p->c.cancel, &none,
                                            abort ? DCUDA_CANCEL_ERROR : DCUDA_CANCEL_PEER,
                                            memory_order_acq_rel, memory_order_acquire);
}

static void control_reset(dcu_proxy_t *p)
{
    p->aborted[0] = p->left[0] = '\0';
    p->spread = 0;
}

const dcu_proxy_service_t dcu_proxy_svc_control = {
    .name = "control",
    .messages = DCU_SVC_BIT(DCU_WIRE_ABORT) | DCU_SVC_BIT(DCU_WIRE_LEFT),
    .on_message = control_message,
    .reset = control_reset,
};
