/*
 * Checking a command entry before the proxy acts on it (see command.h).
 * The refusals read as the proxy reports them: they name the sender by its
 * WORLD rank, and the fields that are out of range.
 */
#include "command.h"

#include <stdio.h>

#include "util/array.h"

/* The process that holds WORLD rank r, or -1. */
static int process_of(const dcu_cmd_limits_t *lim, int64_t r)
{
    return dcu_array_range_of(lim->proc_first, lim->process_count, r);
}

/* The target of a PUT, PUT_READ, NOTIFY, PART, GET or ATOMIC: a rank of a process on the
 * network path, and a tag in range (or none). The process, or -1. */
static int net_target(const dcuda_cmd_t *cmd, const dcu_cmd_limits_t *lim, char *why,
                      size_t why_size)
{
    int q = process_of(lim, (int64_t)cmd->args[0]);
    if (q < 0 || lim->path[q] != DCUDA_PATH_NET || cmd->args[5] > DCUDA_TAG_SLOTS) {
        snprintf(why, why_size,
                 "rank %d sent a command for rank %lld (tag %llu) that no process on the "
                 "network path holds",
                 lim->world_first + cmd->rank, (long long)cmd->args[0],
                 (unsigned long long)cmd->args[5]);
        return -1;
    }
    return q;
}

/* A PUT or PUT_READ: its bytes lie at offsets a window part could have
 * (offset + size does not wrap, which the receiving proxy would refuse,
 * failing the wrong process). */
static int put_span_ok(const dcuda_cmd_t *cmd, const dcu_cmd_limits_t *lim, char *why,
                       size_t why_size)
{
    if (cmd->args[2] > UINT64_MAX - cmd->args[3]) {
        snprintf(why, why_size, "rank %d sent a put of %llu bytes at offset %llu, past any window",
                 lim->world_first + cmd->rank, (unsigned long long)cmd->args[3],
                 (unsigned long long)cmd->args[2]);
        return 0;
    }
    return 1;
}

/* A PUT: its payload fits the entries it spans, into a window slot. */
static int put_ok(const dcuda_cmd_t *cmd, const dcu_cmd_limits_t *lim, uint32_t k, char *why,
                  size_t why_size)
{
    if (cmd->args[3] > (uint64_t)(k - 1u) * sizeof(dcuda_cmd_t) ||
        cmd->args[1] >= DCUDA_WIN_TABLE_SLOTS) {
        snprintf(why, why_size, "rank %d sent a put of %llu bytes in %u entries to window %llu",
                 lim->world_first + cmd->rank, (unsigned long long)cmd->args[3], k,
                 (unsigned long long)cmd->args[1]);
        return 0;
    }
    return 1;
}

/* A PUT_READ: some bytes, into a window slot, and a tag for its answer. */
static int put_read_ok(const dcuda_cmd_t *cmd, const dcu_cmd_limits_t *lim, char *why,
                       size_t why_size)
{
    if (!cmd->tag || cmd->args[3] == 0 || cmd->args[1] >= DCUDA_WIN_TABLE_SLOTS) {
        snprintf(why, why_size, "rank %d sent a put to read of %llu bytes to window %llu%s",
                 lim->world_first + cmd->rank, (unsigned long long)cmd->args[3],
                 (unsigned long long)cmd->args[1], cmd->tag ? "" : " that waits for no answer");
        return 0;
    }
    return 1;
}

/* A PART: a window slot, and a tag for its answer. */
static int part_ok(const dcuda_cmd_t *cmd, const dcu_cmd_limits_t *lim, char *why, size_t why_size)
{
    if (!cmd->tag || cmd->args[1] >= DCUDA_WIN_TABLE_SLOTS) {
        snprintf(why, why_size, "rank %d asked for the part of rank %lld in window %llu%s",
                 lim->world_first + cmd->rank, (long long)cmd->args[0],
                 (unsigned long long)cmd->args[1], cmd->tag ? "" : " and waits for no answer");
        return 0;
    }
    return 1;
}

/* A GET: window slots in range for the target's part and mine, spans that
 * do not wrap, and a tag for the notification its data brings. */
static int get_ok(const dcuda_cmd_t *cmd, const dcu_cmd_limits_t *lim, char *why, size_t why_size)
{
    uint64_t slot = cmd->args[1] & 0xffffffffu, dst_slot = cmd->args[1] >> 32;
    if (slot >= DCUDA_WIN_TABLE_SLOTS || dst_slot >= DCUDA_WIN_TABLE_SLOTS || cmd->args[5] == 0 ||
        cmd->args[4] > UINT64_MAX - cmd->args[3]) {
        snprintf(why, why_size,
                 "rank %d sent a get of %llu bytes from window %llu into window %llu at offset "
                 "%llu (tag %llu)",
                 lim->world_first + cmd->rank, (unsigned long long)cmd->args[3],
                 (unsigned long long)slot, (unsigned long long)dst_slot,
                 (unsigned long long)cmd->args[4], (unsigned long long)cmd->args[5]);
        return 0;
    }
    return put_span_ok(cmd, lim, why, why_size);
}

/* An ATOMIC: a window slot, an op on a word of 4 or 8 bytes that does
 * not wrap, operands that fit it, a user's tag or none, and a tag for its
 * answer. */
static int atomic_ok(const dcuda_cmd_t *cmd, const dcu_cmd_limits_t *lim, char *why,
                     size_t why_size)
{
    const uint64_t slot = cmd->args[1] & 0xffffffffu, op = (cmd->args[1] >> 32) & 0xffu;
    const uint64_t width = cmd->args[1] >> 40;
    const int fits = width == 8u || (cmd->args[3] <= 0xffffffffu && cmd->args[4] <= 0xffffffffu);
    if (!cmd->tag || slot >= DCUDA_WIN_TABLE_SLOTS || op > 2u || (width != 4u && width != 8u) ||
        !fits || cmd->args[2] > UINT64_MAX - width || cmd->args[5] > DCUDA_TAG_COUNT) {
        snprintf(why, why_size,
                 "rank %d sent an atomic (op %llu) on a %llu-byte word at offset %llu of window "
                 "%llu (tag %llu)%s",
                 lim->world_first + cmd->rank, (unsigned long long)op, (unsigned long long)width,
                 (unsigned long long)cmd->args[2], (unsigned long long)slot,
                 (unsigned long long)cmd->args[5], cmd->tag ? "" : " that waits for no answer");
        return 0;
    }
    return 1;
}

/* A FENCE: a tag for its answer (it needs no network path: with none,
 * nothing is unacknowledged). */
static dcu_cmd_verdict_t fence_ok(const dcuda_cmd_t *cmd, const dcu_cmd_limits_t *lim, char *why,
                                  size_t why_size)
{
    if (cmd->tag)
        return DCU_CMD_EXECUTE;
    snprintf(why, why_size, "rank %d sent a fence that waits for no answer",
             lim->world_first + cmd->rank);
    return DCU_CMD_REFUSED;
}

/* A BARRIER: an epoch of this run, and no window or one in range. */
static int barrier_ok(const dcuda_cmd_t *cmd, char *why, size_t why_size)
{
    uint32_t epoch = (uint32_t)cmd->args[0], slot = (uint32_t)cmd->args[1];
    if (epoch == 0 || (slot != DCUDA_CMD_NO_SLOT && slot >= DCUDA_MAX_WINDOWS)) {
        snprintf(why, why_size, "a WORLD barrier command with epoch %u and window %u", epoch, slot);
        return 0;
    }
    return 1;
}

/* A WINDOW: a slot of NODE's or a split's, and a tag for its answer. */
static int window_ok(const dcuda_cmd_t *cmd, const dcu_cmd_limits_t *lim, char *why,
                     size_t why_size)
{
    if (!cmd->tag || cmd->args[0] < DCUDA_MAX_WINDOWS || cmd->args[0] >= DCUDA_WIN_TABLE_SLOTS) {
        snprintf(why, why_size, "rank %d sent its part of window %llu%s",
                 lim->world_first + cmd->rank, (unsigned long long)cmd->args[0],
                 cmd->tag ? ", which is no slot of a communicator's" : " and waits for no answer");
        return 0;
    }
    return 1;
}

/* The checks of a known op that goes to the network path. */
static dcu_cmd_verdict_t check_net_op(const dcuda_cmd_t *cmd, const dcu_cmd_limits_t *lim,
                                      dcu_cmd_info_t *info, char *why, size_t why_size)
{
    int ok = 1;
    if (!lim->net) {
        snprintf(why, why_size, "rank %d sent command %u, but no process is on the network path",
                 lim->world_first + cmd->rank, cmd->op);
        return DCU_CMD_REFUSED;
    }
    if (cmd->op == DCUDA_CMD_BARRIER)
        return barrier_ok(cmd, why, why_size) ? DCU_CMD_EXECUTE : DCU_CMD_REFUSED;
    if (cmd->op == DCUDA_CMD_WINDOW)
        return window_ok(cmd, lim, why, why_size) ? DCU_CMD_EXECUTE : DCU_CMD_REFUSED;
    info->target = net_target(cmd, lim, why, why_size);
    if (info->target < 0)
        return DCU_CMD_REFUSED;
    if (cmd->op == DCUDA_CMD_PUT)
        ok = put_ok(cmd, lim, info->entries, why, why_size) && put_span_ok(cmd, lim, why, why_size);
    else if (cmd->op == DCUDA_CMD_PUT_READ)
        ok = put_read_ok(cmd, lim, why, why_size) && put_span_ok(cmd, lim, why, why_size);
    else if (cmd->op == DCUDA_CMD_PART)
        ok = part_ok(cmd, lim, why, why_size);
    else if (cmd->op == DCUDA_CMD_GET)
        ok = get_ok(cmd, lim, why, why_size);
    else if (cmd->op == DCUDA_CMD_ATOMIC)
        ok = atomic_ok(cmd, lim, why, why_size);
    else if (cmd->args[5] == 0) { /* NOTIFY */
        snprintf(why, why_size, "rank %d sent a notification without a tag",
                 lim->world_first + cmd->rank);
        ok = 0;
    }
    return ok ? DCU_CMD_EXECUTE : DCU_CMD_REFUSED;
}

dcu_cmd_verdict_t dcu_cmd_check(const dcuda_cmd_t *cmd, const dcu_cmd_limits_t *lim,
                                dcu_cmd_info_t *info, char *why, size_t why_size)
{
    uint32_t k = cmd->op == DCUDA_CMD_PUT ? (uint32_t)cmd->args[4] : 1u;
    info->entries = k;
    info->target = -1;
    if (cmd->rank < 0 || cmd->rank >= lim->ranks || k < 1u || k > lim->capacity / 4u) {
        snprintf(why, why_size, "a command of %u entries from device rank %d", k, cmd->rank);
        return DCU_CMD_UNREADABLE;
    }
    switch (cmd->op) {
    case DCUDA_CMD_PING:
        return DCU_CMD_EXECUTE;
    case DCUDA_CMD_PUT:
    case DCUDA_CMD_PUT_READ:
    case DCUDA_CMD_NOTIFY:
    case DCUDA_CMD_BARRIER:
    case DCUDA_CMD_PART:
    case DCUDA_CMD_GET:
    case DCUDA_CMD_WINDOW:
    case DCUDA_CMD_ATOMIC:
        return check_net_op(cmd, lim, info, why, why_size);
    case DCUDA_CMD_FENCE:
        return fence_ok(cmd, lim, why, why_size);
    default:
        snprintf(why, why_size, "rank %d sent unknown command %u", lim->world_first + cmd->rank,
                 cmd->op);
        return DCU_CMD_UNKNOWN;
    }
}
