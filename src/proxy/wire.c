/*
 * Building and checking proxy messages (see wire.h).
 */
#include "wire.h"

#include <stdio.h>
#include <string.h>

#include "dcuda/dcuda_status.h"
#include "dcuda/dcuda_types.h"
#include "util/quiet.h"

void dcu_wire_header(dcu_wire_header_t *h, uint8_t type, uint32_t length, int src_proc,
                     uint32_t run)
{
    memset(h, 0, sizeof *h);
    h->magic = DCU_WIRE_MAGIC;
    h->version = DCU_WIRE_VERSION;
    h->type = type;
    h->length = length;
    h->src_proc = src_proc;
    h->run = run;
}

static int rank_ok(int32_t r, const dcu_wire_limits_t *lim)
{
    return r >= 0 && r < lim->world_size;
}

/* A GET's body (its length checked): where the answer goes. */
static const char *check_get(const dcu_wire_header_t *h, const void *body)
{
    dcu_wire_get_t g;
    memcpy(&g, body, sizeof g);
    if (g.slot >= DCUDA_WIN_TABLE_SLOTS || g.reserved != 0)
        return "a get's answer goes to no window";
    return g.offset + h->count < g.offset ? "a get's answer overflows" : NULL;
}

/* An ATOMIC's body (its length checked): an op, its notification's tag,
 * operands that fit the word. */
static const char *check_atomic(const dcu_wire_header_t *h, const void *body)
{
    dcu_wire_atomic_t a;
    memcpy(&a, body, sizeof a);
    if (a.op > DCUDA_ATOMIC_COMPARE_SWAP)
        return "an atomic of an unknown op";
    if (a.note > DCUDA_TAG_COUNT)
        return "an atomic's notification of a tag out of range";
    if (h->count == 4u && (a.operand > 0xffffffffu || a.compare > 0xffffffffu))
        return "an atomic's operands do not fit its word";
    return NULL;
}

/* A host request's or answer's body (its length checked). */
static const char *check_host(const dcu_wire_header_t *h, const void *body,
                              const dcu_wire_limits_t *lim)
{
    dcu_wire_host_t w;
    memcpy(&w, body, sizeof w);
    if (!rank_ok(h->src_rank, lim) || !rank_ok(h->dst_rank, lim))
        return "rank out of range";
    if (h->offset + h->count < h->offset || w.first + w.total < w.first)
        return "offset + size overflows";
    switch (h->type) {
    case DCU_WIRE_HOST_PUT:
    case DCU_WIRE_HOST_GET:
        if (h->slot == DCU_WIRE_HOST_NO_WINDOW &&
            (h->type != DCU_WIRE_HOST_PUT || w.total != 0 || h->tag == 0))
            return "a request of no window that is not a notification alone";
        if (h->slot >= DCUDA_WIN_TABLE_SLOTS && h->slot != DCU_WIRE_HOST_NO_WINDOW)
            return "window slot out of range";
        if (h->tag > DCUDA_TAG_COUNT)
            return "a host's notification of a tag out of range";
        if (h->tag != 0 && h->offset + h->count != w.first + w.total)
            return "a host's notification before its request's last chunk";
        return h->offset < w.first || h->offset + h->count > w.first + w.total
                   ? "a chunk outside its request"
                   : NULL;
    case DCU_WIRE_HOST_DATA:
        return h->tag != 0 || w.first != 0 || h->offset + h->count > w.total
                   ? "an answer's chunk outside its request"
                   : NULL;
    default: /* DCU_WIRE_HOST_DONE */
        return h->tag > DCU_WIRE_HOST_STATUS_MAX ? "an unknown status" : NULL;
    }
}

/* The bytes a host message carries after its request. */
static uint64_t host_bytes(const dcu_wire_header_t *h)
{
    return h->type == DCU_WIRE_HOST_PUT || h->type == DCU_WIRE_HOST_DATA ? h->count : 0u;
}

/* The type-specific fields of a message whose framing is valid (body:
 * its h->length bytes after the header). */
static const char *check_body(const dcu_wire_header_t *h, const void *body,
                              const dcu_wire_limits_t *lim)
{
    switch (h->type) {
    case DCU_WIRE_PUT:
        if (!rank_ok(h->src_rank, lim) || !rank_ok(h->dst_rank, lim))
            return "rank out of range";
        if (h->tag > DCUDA_TAG_SLOTS)
            return "tag out of range";
        if (h->slot >= DCUDA_WIN_TABLE_SLOTS)
            return "window slot out of range";
        if (h->count != h->length)
            return "payload size does not match the length";
        if (h->offset + h->count < h->offset)
            return "offset + size overflows";
        return NULL;
    case DCU_WIRE_NOTIFY:
        if (!rank_ok(h->src_rank, lim) || !rank_ok(h->dst_rank, lim))
            return "rank out of range";
        if (h->tag == 0 || h->tag > DCUDA_TAG_SLOTS)
            return "tag out of range";
        return h->length == 0 ? NULL : "a notification carries no body";
    case DCU_WIRE_ABORT:
    case DCU_WIRE_LEFT:
        return h->length <= DCU_WIRE_ABORT_MAX ? NULL : "reason too long";
    case DCU_WIRE_PROBE:
        return h->epoch == 0 ? "round 0" : h->length == 0 ? NULL : "a probe carries no body";
    case DCU_WIRE_REPLY:
        return h->epoch == 0                      ? "round 0"
               : h->length == sizeof(dcu_quiet_t) ? NULL
                                                  : "a reply's body is not an answer";
    case DCU_WIRE_FOUND:
        return h->length == 0 ? NULL : "a verdict carries no body";
    case DCU_WIRE_ROUND:
        return h->epoch == 0               ? "barrier epoch 0"
               : h->tag >= DCU_WIRE_ROUNDS ? "barrier round out of range"
               : h->length == 0            ? NULL
                                           : "a barrier round carries no body";
    case DCU_WIRE_ACK:
        return h->length == 0 ? NULL : "an acknowledgement carries no body";
    case DCU_WIRE_PART_ASK:
    case DCU_WIRE_PART:
        if (!rank_ok(h->src_rank, lim) || !rank_ok(h->dst_rank, lim))
            return "rank out of range";
        if (h->slot >= DCUDA_WIN_TABLE_SLOTS)
            return "window slot out of range";
        return h->length == 0 ? NULL : "a window part message carries no body";
    case DCU_WIRE_GET:
        if (!rank_ok(h->src_rank, lim) || !rank_ok(h->dst_rank, lim))
            return "rank out of range";
        if (h->tag == 0 || h->tag > DCUDA_TAG_SLOTS)
            return "tag out of range";
        if (h->slot >= DCUDA_WIN_TABLE_SLOTS)
            return "window slot out of range";
        if (h->offset + h->count < h->offset)
            return "offset + size overflows";
        if (h->length != sizeof(dcu_wire_get_t))
            return "a get's body is not where it goes";
        return check_get(h, body);
    case DCU_WIRE_BEAT:
        return h->tag > 1       ? "a beat's tag is not 0 or 1"
               : h->length == 0 ? NULL
                                : "a beat carries no body";
    case DCU_WIRE_ATOMIC:
    case DCU_WIRE_ATOMIC_DONE:
        if (!rank_ok(h->src_rank, lim) || !rank_ok(h->dst_rank, lim))
            return "rank out of range";
        if (h->type == DCU_WIRE_ATOMIC_DONE)
            return h->epoch > 1     ? "an atomic's answer of an unknown status"
                   : h->length == 0 ? NULL
                                    : "an atomic's answer carries no body";
        if (h->slot >= DCUDA_WIN_TABLE_SLOTS)
            return "window slot out of range";
        if (h->count != 4u && h->count != 8u)
            return "an atomic's word is not of 4 or 8 bytes";
        if (h->offset + h->count < h->offset)
            return "offset + size overflows";
        if (h->length != sizeof(dcu_wire_atomic_t))
            return "an atomic's body is not its operation";
        return check_atomic(h, body);
    case DCU_WIRE_HOST_PUT:
    case DCU_WIRE_HOST_GET:
    case DCU_WIRE_HOST_DATA:
    case DCU_WIRE_HOST_DONE:
        if (h->length < sizeof(dcu_wire_host_t) ||
            h->length - sizeof(dcu_wire_host_t) != host_bytes(h))
            return "a host message's length does not match its bytes";
        return check_host(h, body, lim);
    default:
        return "unknown message type";
    }
}

int dcu_wire_check(const void *msg, size_t size, int from, const dcu_wire_limits_t *lim,
                   dcu_wire_header_t *out, char *why, size_t why_size)
{
    dcu_wire_header_t h;
    const char *bad = NULL;
    if (size < sizeof h) {
        bad = "shorter than a header";
    } else {
        memcpy(&h, msg, sizeof h);
        if (h.magic != DCU_WIRE_MAGIC)
            bad = "bad magic";
        else if (h.version != DCU_WIRE_VERSION)
            bad = "unknown version";
        else if (size > lim->max_size || h.length != size - sizeof h)
            bad = "length does not match the message";
        else if (h.src_proc != from || from < 0 || from >= lim->processes)
            bad = "sender does not match";
        else if (h.run == 0)
            bad = "run 0";
        else if (h.flags & ~(DCU_WIRE_ENDED | DCU_WIRE_UNCREDITED | DCU_WIRE_ALL_TAKEN))
            bad = "unknown flags";
        else
            bad = check_body(&h, (const char *)msg + sizeof h, lim);
    }
    if (bad) {
        snprintf(why, why_size, "%s", bad);
        return DCUDA_ERR_PEER;
    }
    *out = h;
    return DCUDA_OK;
}

int dcu_wire_next(const void *frame, size_t size, size_t *at, size_t *offset, size_t *msg_size)
{
    size_t start = *at;
    if (start == size)
        return 0;
    if (start > size || size - start < sizeof(dcu_wire_header_t))
        return -1;
    uint32_t length;
    memcpy(&length, (const char *)frame + start + offsetof(dcu_wire_header_t, length),
           sizeof length);
    if (length > size - start - sizeof(dcu_wire_header_t))
        return -1;
    size_t end = start + sizeof(dcu_wire_header_t) + length;
    *offset = start;
    *msg_size = end - start;
    *at = end == size ? size : dcu_wire_aligned(end);
    return 1;
}
