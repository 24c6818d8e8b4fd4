/*
 * Windows: creation and freeing (collective over a communicator), their
 * tables and the checks of a window's parts.
 * Part of the rank engine (engine.h says how it is written).
 */
#ifndef DCUDA_IMPL_WIN_H
#define DCUDA_IMPL_WIN_H

#include "init.h"

/* ---- windows ------------------------------------------------------------------ */

/* Leader, once WORLD window st->result_win was created (`created`: its
 * status) on a node of several processes without a network path: my
 * device's ranks fill the node-wide table of the window's parts as this
 * process reaches them, a share each, and mark the slot when a part lies
 * where loads cannot reach it (every process judges a part alike:
 * dcu_remote_part tests mine against what the peers map); a barrier of
 * my device then makes the table whole before any of its ranks reads
 * it. Called from dcu_win_create, where a constant communicator other
 * than WORLD leaves it out of the kernel (inside the leader's call it
 * cost the same device's small puts 3%). */
DCU_FN_COLD dcuda_status_t dcu_node_parts_fill(dcuda_state_t *st, dcuda_status_t created,
                                               const char *call)
{
    const dcuda_context_t *ctx = st->ctx;
    const uint32_t win = st->result_win;
    const int slot = dcu_win_slot(win);
    dcuda_win_entry_t *row = ctx->node_parts + (size_t)slot * (size_t)st->world_size;
    for (int j = st->device_rank; j < st->world_size; j += st->device_size) {
        dcuda_win_entry_t part;
        if (dcu_remote_part(st, slot, j, &part) != DCUDA_OK) {
            dcu_st_relaxed(&ctx->node_unreachable[slot], win, 0);
            part.base = 0;
            part.size = 0;
        }
        row[j] = part;
    }
    dcuda_status_t s =
        dcu_barrier_lanes(st, DCU_COMM_DEVICE, DCUDA_CMD_NO_SLOT, call, dcu_one_lane());
    if (s != DCUDA_OK)
        st->result_win = DCUDA_WIN_NONE;
    return s != DCUDA_OK ? s : created;
}

/* Leader, the first step of a window's creation on any communicator:
 * the lowest free slot of comm, or -1 (reported in *arg), and my part
 * published there, empty when the arguments are refused (*arg says why:
 * they still join the collective, so that the other ranks do not hang).
 * st->result_win starts as DCUDA_WIN_NONE. */
DCU_FN_COLD int dcu_win_claim(dcuda_state_t *st, int comm, void *base, size_t size,
                              dcuda_status_t *arg)
{
    static const char call[] = "dcuda_win_create";
    st->result_win = DCUDA_WIN_NONE;
    int slot = dcu_free_slot(st, comm);
    if (slot < 0) {
        *arg = DCU_REPORT(st, DCUDA_ERR_WIN_LIMIT, call, "%d windows already live on %s",
                          dcu_win_room(comm), dcu_comm_name(comm));
        return -1;
    }
    *arg = dcu_checked_win_args(st, base, size, call);
    dcu_win_publish(st, comm, slot, *arg == DCUDA_OK ? (uint64_t)(uintptr_t)base : 0,
                    *arg == DCUDA_OK ? size : 0);
    return slot;
}

/* Leader, on WORLD or DEVICE: the handle is returned for dcuda_win_free
 * with refused arguments too. */
DCU_FN_COLD dcuda_status_t dcu_win_create_leader(dcuda_state_t *st, int comm, void *base,
                                                 size_t size)
{
    static const char call[] = "dcuda_win_create";
    dcuda_status_t arg;
    int slot = dcu_win_claim(st, comm, base, size, &arg);
    if (slot < 0)
        return arg;
    dcuda_status_t s = dcu_barrier_lanes(st, comm, (uint32_t)slot, call, dcu_one_lane());
    if (s != DCUDA_OK)
        return s;
    st->result_win = dcu_win_adopt(st, comm, slot);
    return arg;
}

/* Window creation on WORLD or DEVICE, after dcu_win_create_start
 * (impl/comm.h: on any communicator). */
DCU_FN dcuda_status_t dcu_win_create(dcuda_state_t *st, int comm, void *base, size_t size,
                                     uint32_t *win)
{
    static const char call[] = "dcuda_win_create";
    DCU_ON_LEADER(st, dcu_win_create_leader(st, comm, base, size));
    if (comm == DCU_COMM_WORLD && st->result_win != DCUDA_WIN_NONE && st->ctx->node_parts)
        DCU_ON_LEADER(st, dcu_node_parts_fill(st, (dcuda_status_t)st->result, call));
    *win = st->result_win;
    return (dcuda_status_t)st->result;
}

DCU_FN_COLD dcuda_status_t dcu_win_free_leader(dcuda_state_t *st, uint32_t win)
{
    int comm = dcu_win_comm(win), slot = dcu_win_slot(win);
    dcuda_status_t s =
        dcu_barrier_lanes(st, comm, DCUDA_CMD_NO_SLOT, "dcuda_win_free", dcu_one_lane());
    /* A barrier that did not complete (the run ends) leaves the part
     * published: a rank that has not yet seen the end may still read it.
     * The next run starts with empty tables. */
    dcu_win_forget(st, comm, slot, s == DCUDA_OK);
    return s;
}

/* Window free on WORLD or DEVICE, after dcu_win_call_start (impl/comm.h:
 * on any communicator). */
DCU_FN dcuda_status_t dcu_win_free(dcuda_state_t *st, uint32_t win)
{
    DCU_ON_LEADER(st, dcu_win_free_leader(st, win));
    return (dcuda_status_t)st->result;
}

/* Every path built so far has finished reading a put's source when the put
 * returns (its stores are done), so a flush only checks the window. */
DCU_FN dcuda_status_t dcu_win_flush(dcuda_state_t *st, uint32_t win)
{
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, "dcuda_win_flush");
    return dcu_checked_win(st, win, "dcuda_win_flush");
}

#endif /* DCUDA_IMPL_WIN_H */
