/*
 * The proxy's side of window parts (see proxy_impl.h and parts.h): my
 * ranks' parts as they published them (read at a WORLD window's barrier,
 * or at a member's WINDOW command for a window of NODE or a split), the
 * checks of a message against them, and the asks and answers for the
 * parts of other processes' ranks (PART commands; wire PART_ASK, PART):
 * the parts service.
 */
#include <stdatomic.h>
#include <string.h>

#include "service.h"

/* Has a part of window slot `slot` (< DCUDA_WIN_TABLE_SLOTS) been read? */
static int part_known(const dcu_proxy_t *p, uint32_t slot)
{
    return (int)((p->parts_known[slot / 64u] >> (slot % 64u)) & 1u);
}

/* My rank h->dst_rank's part of window h->slot, which the bytes
 * [h->offset, + h->count) that message h (`what`: a put's target, a get's
 * source) names must lie in; its device rank in *rank. NULL once the
 * proxy failed, saying why. */
const dcuda_win_entry_t *dcu_proxy_part_of(dcu_proxy_t *p, const dcu_wire_header_t *h,
                                           const char *what, int *rank)
{
    int r = h->dst_rank - p->world_first;
    if (r < 0 || r >= p->c.ranks) {
        dcu_proxy_fail(p, "a %s from rank %d for rank %d, which is not mine", what, h->src_rank,
                       h->dst_rank);
        return NULL;
    }
    if (!part_known(p, h->slot)) {
        dcu_proxy_fail(p, "a %s from rank %d in window %u, which has no part here", what,
                       h->src_rank, h->slot);
        return NULL;
    }
    const dcuda_win_entry_t *part = &p->parts[(size_t)h->slot * (size_t)p->c.ranks + (size_t)r];
    if (h->offset > part->size || h->count > part->size - h->offset) {
        dcu_proxy_fail(p,
                       "a %s from rank %d of %llu bytes at %llu, outside the %llu-byte part of "
                       "rank %d in window %u",
                       what, h->src_rank, (unsigned long long)h->count,
                       (unsigned long long)h->offset, (unsigned long long)part->size, h->dst_rank,
                       h->slot);
        return NULL;
    }
    *rank = r;
    return part;
}

/* The parts of my ranks first .. first + count - 1 of window `slot`, as
 * they published them. */
int dcu_proxy_read_parts(dcu_proxy_t *p, uint32_t slot, int first, int count)
{
    dcuda_win_entry_t *mine = p->parts + (size_t)slot * (size_t)p->c.ranks + (size_t)first;
    size_t stride = (size_t)(p->c.own_stride ? p->c.own_stride : p->c.ranks);
    const dcuda_win_entry_t *there = p->c.own_table + (size_t)slot * stride + (size_t)first;
    if (p->c.ops->copy_out(p->c.backend, mine, there, (size_t)count * sizeof *mine) != DCUDA_OK) {
        dcu_proxy_fail(p, "cannot read the parts of window %u", slot);
        return 0;
    }
    p->parts_known[slot / 64u] |= (uint64_t)1 << (slot % 64u);
    return 1;
}

/* The library's parts of my ranks (window slot DCUDA_LIB_SLOT), known
 * from the start of every run: they never change. */
void dcu_proxy_know_lib(dcu_proxy_t *p)
{
    dcuda_win_entry_t *row = p->parts + (size_t)DCUDA_LIB_SLOT * (size_t)p->c.ranks;
    const uint64_t lib = (uint64_t)(uintptr_t)p->c.lib; /* NULL where no rank has memory */
    for (int r = 0; r < p->c.ranks; r++)
        row[r] = (dcuda_win_entry_t){ lib + (uint64_t)r * p->c.lib_stride, p->c.lib_stride };
    p->parts_known[DCUDA_LIB_SLOT / 64u] |= (uint64_t)1 << (DCUDA_LIB_SLOT % 64u);
}

/* A checked WINDOW: my rank's part of a new window of NODE or a split,
 * read before it joins its communicator's barrier (no member asks for it
 * or puts into it before); what this lane knew of other ranks' parts in
 * the slot may be of its earlier windows. */
static int take_window(dcu_proxy_t *p, const dcuda_cmd_t *cmd)
{
    uint32_t slot = (uint32_t)cmd->args[0];
    if (!p->net || !dcu_proxy_read_parts(p, slot, cmd->rank, 1))
        return DCUDA_ERR_PEER;
    dcu_parts_new_window(&p->remote, slot);
    return DCUDA_OK;
}

/* ---- parts of other processes' ranks (parts.h) ------------------------------------ */

/* A checked PART command: answered at once when the part is known, else
 * once its owner (process q) told it. */
static int ask_part(dcu_proxy_t *p, const dcuda_cmd_t *cmd, int q)
{
    uint32_t slot = (uint32_t)cmd->args[1];
    int32_t rank = (int32_t)cmd->args[0];
    uint64_t size;
    if (dcu_parts_find(&p->remote, slot, rank, &size)) {
        dcu_proxy_answer_value(p, cmd->rank, cmd->tag, DCUDA_OK, size);
        return PROXY_LATER;
    }
    dcu_wire_header_t *h = dcu_proxy_message_to(p, q, DCU_WIRE_PART_ASK, 0);
    if (!h)
        return DCUDA_ERR_PEER;
    h->src_rank = p->world_first + cmd->rank;
    h->dst_rank = rank;
    h->slot = slot;
    h->tag = cmd->tag;
    dcu_proxy_send_to(p, q, h);
    dcu_parts_ask(&p->remote, cmd->rank, slot, rank, cmd->tag);
    return PROXY_LATER;
}

/* Does process q hold WORLD rank `rank`? */
int dcu_proxy_holds(const dcu_proxy_t *p, int q, int32_t rank)
{
    return rank >= p->c.proc_first[q] && rank < p->c.proc_first[q + 1];
}

/* Process `from` asks for my rank's part of a window it passed the
 * creation barrier of (so did I: its parts were read). */
static void tell_part(dcu_proxy_t *p, int from, const dcu_wire_header_t *h)
{
    int r = h->dst_rank - p->world_first;
    if (r < 0 || r >= p->c.ranks || !part_known(p, h->slot) ||
        !dcu_proxy_holds(p, from, h->src_rank)) {
        dcu_proxy_fail(p,
                       "process %d asked for the part of rank %d in window %u for rank %d, which "
                       "this process cannot tell",
                       from, h->dst_rank, h->slot, h->src_rank);
        return;
    }
    dcu_wire_header_t *m = dcu_proxy_message_to(p, from, DCU_WIRE_PART, 0);
    if (!m)
        return;
    m->src_rank = h->dst_rank;
    m->dst_rank = h->src_rank;
    m->slot = h->slot;
    m->tag = h->tag;
    m->count = p->parts[(size_t)h->slot * (size_t)p->c.ranks + (size_t)r].size;
    dcu_proxy_send_to(p, from, m);
}

/* The owner's answer to my ask: kept, and its rank answered. After a
 * cancel its rank may have been answered already (parts_serve): an
 * answer nobody waits for is then dropped. */
static void apply_part(dcu_proxy_t *p, int from, const dcu_wire_header_t *h)
{
    int r = h->dst_rank - p->world_first;
    const char *bad = !dcu_proxy_holds(p, from, h->src_rank)
                          ? "a part of a rank it does not hold"
                          : dcu_parts_answered(&p->remote, r, h->slot, h->src_rank, h->tag);
    if (bad && atomic_load_explicit(p->c.cancel, memory_order_acquire) != DCUDA_CANCEL_NONE)
        return;
    if (bad) {
        dcu_proxy_fail(p, "process %d: %s (rank %d, window %u, for rank %d)", from, bad,
                       h->src_rank, h->slot, h->dst_rank);
        return;
    }
    if (dcu_parts_store(&p->remote, h->slot, h->src_rank, h->count) != DCUDA_OK) {
        dcu_proxy_fail(p, "out of memory for the window parts of other processes");
        return;
    }
    dcu_proxy_answer_value(p, r, h->tag, DCUDA_OK, h->count);
}

/* ---- the service ------------------------------------------------------------------------ */

static void parts_message(dcu_proxy_t *p, int from, const dcu_wire_header_t *h, const char *body)
{
    (void)body;
    if (h->type == DCU_WIRE_PART_ASK)
        tell_part(p, from, h);
    else
        apply_part(p, from, h);
}

static int parts_command(dcu_proxy_t *p, const dcuda_cmd_t *cmd, uint32_t t, int target)
{
    (void)t;
    return cmd->op == DCUDA_CMD_PART ? ask_part(p, cmd, target) : take_window(p, cmd);
}

/* The ranks that wait for a part when no answer may come any more
 * (dcu_proxy_asks_end). */
static int parts_serve(dcu_proxy_t *p)
{
    int r;
    uint32_t tag;
    if (!p->net || !p->remote.asking)
        return 0;
    dcuda_status_t why = dcu_proxy_asks_end(p);
    if (why == DCUDA_OK)
        return 0;
    while (dcu_parts_next_waiting(&p->remote, &r, &tag))
        dcu_proxy_answer_value(p, r, tag, why, 0u);
    return 1;
}

/* The parts of the last run are gone (a window of a communicator is read
 * one member at a time: the others' entries of its slot stay empty, and a
 * message for them is refused); the library's are known again. */
static void parts_reset(dcu_proxy_t *p)
{
    if (!p->net)
        return;
    memset(p->parts_known, 0, sizeof p->parts_known);
    memset(p->parts, 0, (size_t)DCUDA_WIN_TABLE_SLOTS * (size_t)p->c.ranks * sizeof *p->parts);
    dcu_proxy_know_lib(p);
    dcu_parts_reset(&p->remote);
}

const dcu_proxy_service_t dcu_proxy_svc_parts = {
    .name = "parts",
    .messages = DCU_SVC_BIT(DCU_WIRE_PART_ASK) | DCU_SVC_BIT(DCU_WIRE_PART),
    .commands = DCU_SVC_BIT(DCUDA_CMD_PART) | DCU_SVC_BIT(DCUDA_CMD_WINDOW),
    .on_message = parts_message,
    .on_command = parts_command,
    .serve = parts_serve,
    .reset = parts_reset,
};
