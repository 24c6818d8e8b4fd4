/*
 * The rank calls declared in dcuda_rank.h, defined once over the engine.
 * GPU ranks get them inlined into the rank code (DCUDA_RANK_API is static
 * __device__ __forceinline__); CPU ranks get them from libdcuda, whose
 * src/backend/cpu/cpu_rank.c is the one C translation unit that includes
 * this file. dcuda_log's wording is the backend's (C varargs or a CUDA
 * template), so it is defined beside the backend's primitives.
 */
/* The declarations first; under nvcc, dcuda_rank.h brings this file in
 * itself, after them. */
#include "../dcuda_rank.h"

#ifndef DCUDA_IMPL_API_H
#define DCUDA_IMPL_API_H

#include "atomic.h"
#include "coll.h"
#include "comm.h"
#include "engine.h"
#include "get.h"

DCUDA_RANK_API dcuda_status_t dcuda_rank_init(dcuda_context_h ctx, dcuda_state_t *st)
{
    return dcu_rank_init(ctx, st);
}

DCUDA_RANK_API dcuda_status_t dcuda_rank_finish(dcuda_state_t *st) { return dcu_rank_finish(st); }

DCUDA_RANK_API dcuda_status_t dcuda_get_data(dcuda_state_t *st, void **data)
{
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, "dcuda_get_data");
    if (!data)
        return DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, "dcuda_get_data", "data is NULL");
    *data = st->ctx->user_data;
    return DCUDA_OK;
}

DCUDA_RANK_API dcuda_status_t dcuda_rank_shared(dcuda_state_t *st, void **ptr, size_t *bytes)
{
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, "dcuda_rank_shared");
    if (!ptr || !bytes)
        return DCU_REPORT(st, DCUDA_ERR_INVALID_ARG, "dcuda_rank_shared", "ptr or bytes is NULL");
    *bytes = (size_t)st->ctx->shared_bytes;
    *ptr = *bytes ? dcu_rank_scratch(st->ctx) : NULL;
    return DCUDA_OK;
}

DCUDA_RANK_API dcuda_status_t dcuda_comm_size(dcuda_state_t *st, dcuda_comm_t comm, int *size)
{
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, "dcuda_comm_size");
    return dcu_comm_query(st, comm, size, 1, "dcuda_comm_size");
}

DCUDA_RANK_API dcuda_status_t dcuda_comm_rank(dcuda_state_t *st, dcuda_comm_t comm, int *rank)
{
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, "dcuda_comm_rank");
    return dcu_comm_query(st, comm, rank, 0, "dcuda_comm_rank");
}

DCUDA_RANK_API dcuda_status_t dcuda_comm_world_rank(dcuda_state_t *st, dcuda_comm_t comm, int rank,
                                                    int *world_rank)
{
    return dcu_comm_world_rank_query(st, comm, rank, world_rank);
}

DCUDA_RANK_API dcuda_status_t dcuda_comm_barrier(dcuda_state_t *st, dcuda_comm_t comm)
{
    static const char call[] = "dcuda_comm_barrier";
    dcu_sync();
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, call);
    dcuda_status_t s = dcu_checked_comm(st, comm, call);
    if (s != DCUDA_OK)
        return s;
    dcu_call_begin_comm(st, DCUDA_CALL_BARRIER, comm, DCUDA_CALL_NO_SLOT, 0u);
    return dcu_comm_barrier_any(st, comm, call);
}

DCUDA_RANK_API dcuda_status_t dcuda_comm_split(dcuda_state_t *st, dcuda_comm_t parent, int colour,
                                               int key, dcuda_win_t win, size_t offset,
                                               dcuda_comm_t *comm)
{
    dcu_call_begin_comm(st, DCUDA_CALL_SPLIT, parent, dcu_win_slot(win), (uint64_t)offset);
    return dcu_comm_split(st, parent, colour, key, win, offset, comm);
}

DCUDA_RANK_API dcuda_status_t dcuda_comm_free(dcuda_state_t *st, dcuda_comm_t comm)
{
    return dcu_comm_free(st, comm);
}

DCUDA_RANK_API dcuda_status_t dcuda_win_create(dcuda_state_t *st, dcuda_comm_t comm, void *base,
                                               size_t size, dcuda_win_t *win)
{
    dcu_call_begin_comm(st, DCUDA_CALL_WIN_CREATE, comm, DCUDA_CALL_NO_SLOT, 0u);
    return dcu_win_create_on(st, comm, base, size, win);
}

DCUDA_RANK_API dcuda_status_t dcuda_win_free(dcuda_state_t *st, dcuda_win_t win)
{
    dcu_call_begin(st, DCUDA_CALL_WIN_FREE, win, 0, 0, 0, 0u, 0u);
    return dcu_win_free_on(st, win);
}

DCUDA_RANK_API dcuda_status_t dcuda_win_flush(dcuda_state_t *st, dcuda_win_t win)
{
    return dcu_win_flush(st, win);
}

/* A tag rank code may not name (the library's follow the user's 256): the
 * engine counts both, so the public calls refuse it first. */
DCU_FN_COLD dcuda_status_t dcu_user_tag_refused(dcuda_state_t *st, int tag, const char *call)
{
    dcu_sync();
    if (!dcu_state_ok(st))
        return dcu_report_uninit(st, call);
    return DCU_REPORT(st, DCUDA_ERR_TAG, call, "tag %d not in 0..%d", tag, DCUDA_TAG_COUNT - 1);
}

DCUDA_RANK_API dcuda_status_t dcuda_put(dcuda_state_t *st, dcuda_win_t win, int rank, size_t offset,
                                        size_t size, const void *src)
{
    return dcu_put(st, win, rank, offset, size, src, 0, 0, "dcuda_put");
}

DCUDA_RANK_API dcuda_status_t dcuda_put_notify(dcuda_state_t *st, dcuda_win_t win, int rank,
                                               size_t offset, size_t size, const void *src, int tag)
{
    if (!dcu_user_tag(tag))
        return dcu_user_tag_refused(st, tag, "dcuda_put_notify");
    return dcu_put(st, win, rank, offset, size, src, 1, tag, "dcuda_put_notify");
}

DCUDA_RANK_API dcuda_status_t dcuda_notify(dcuda_state_t *st, int rank, dcuda_comm_t comm, int tag)
{
    if (!dcu_user_tag(tag))
        return dcu_user_tag_refused(st, tag, "dcuda_notify");
    return dcu_notify(st, rank, comm, tag);
}

DCUDA_RANK_API dcuda_status_t dcuda_get(dcuda_state_t *st, dcuda_win_t win, int rank, size_t offset,
                                        size_t size, void *dst)
{
    return dcu_get(st, win, rank, offset, size, dst, 0, 0, "dcuda_get");
}

DCUDA_RANK_API dcuda_status_t dcuda_get_notify(dcuda_state_t *st, dcuda_win_t win, int rank,
                                               size_t offset, size_t size, void *dst, int tag)
{
    if (!dcu_user_tag(tag))
        return dcu_user_tag_refused(st, tag, "dcuda_get_notify");
    return dcu_get(st, win, rank, offset, size, dst, 1, tag, "dcuda_get_notify");
}

DCUDA_RANK_API dcuda_status_t dcuda_atomic(dcuda_state_t *st, dcuda_atomic_op_t op, dcuda_win_t win,
                                           int rank, size_t offset, size_t width, uint64_t operand,
                                           uint64_t compare, uint64_t *fetched)
{
    return dcu_atomic(st, (int)op, win, rank, offset, width, operand, compare, fetched, 0, 0,
                      "dcuda_atomic");
}

DCUDA_RANK_API dcuda_status_t dcuda_atomic_notify(dcuda_state_t *st, dcuda_atomic_op_t op,
                                                  dcuda_win_t win, int rank, size_t offset,
                                                  size_t width, uint64_t operand, uint64_t compare,
                                                  uint64_t *fetched, int tag)
{
    if (!dcu_user_tag(tag)) {
        dcu_sync();
        if (fetched)
            *fetched = 0u;
        return dcu_user_tag_refused(st, tag, "dcuda_atomic_notify");
    }
    return dcu_atomic(st, (int)op, win, rank, offset, width, operand, compare, fetched, 1, tag,
                      "dcuda_atomic_notify");
}

DCUDA_RANK_API int dcuda_test_notifications(dcuda_state_t *st, int tag, int count)
{
    if (!dcu_user_tag(tag))
        return dcu_user_tag_refused(st, tag, "dcuda_test_notifications");
    return dcu_test_notifications(st, tag, count);
}

DCUDA_RANK_API dcuda_status_t dcuda_wait_notifications(dcuda_state_t *st, int tag, int count)
{
    if (!dcu_user_tag(tag))
        return dcu_user_tag_refused(st, tag, "dcuda_wait_notifications");
    return dcu_wait_notifications(st, tag, count);
}

DCUDA_RANK_API int dcuda_test_notification_set(dcuda_state_t *st, int first_tag, uint32_t mask,
                                               int need, uint32_t *taken)
{
    return dcu_test_notification_set(st, first_tag, mask, need, taken);
}

DCUDA_RANK_API dcuda_status_t dcuda_wait_notification_set(dcuda_state_t *st, int first_tag,
                                                          uint32_t mask, int need, uint32_t *taken)
{
    return dcu_wait_notification_set(st, first_tag, mask, need, taken);
}

DCUDA_RANK_API dcuda_status_t dcuda_take_notifications(dcuda_state_t *st, int tag, uint32_t *taken)
{
    return dcu_take_notifications(st, tag, taken);
}

DCUDA_RANK_API dcuda_status_t dcuda_broadcast(dcuda_state_t *st, dcuda_win_t win, size_t offset,
                                              size_t size, int root)
{
    dcu_call_begin(st, DCUDA_CALL_BROADCAST, win, 0, 0, root, size, offset);
    return dcu_broadcast(st, win, offset, size, root);
}

DCUDA_RANK_API dcuda_status_t dcuda_allreduce(dcuda_state_t *st, dcuda_win_t win, size_t offset,
                                              size_t count, dcuda_datatype_t type, dcuda_op_t op)
{
    dcu_call_begin(st, DCUDA_CALL_ALLREDUCE, win, (int)type, (int)op, 0, count, offset);
    return dcu_allreduce(st, win, offset, count, (int)type, (int)op);
}

DCUDA_RANK_API dcuda_status_t dcuda_allgather(dcuda_state_t *st, dcuda_win_t win, size_t offset,
                                              size_t size)
{
    dcu_call_begin(st, DCUDA_CALL_ALLGATHER, win, 0, 0, 0, size, offset);
    return dcu_allgather(st, win, offset, size);
}

DCUDA_RANK_API dcuda_status_t dcuda_reduce(dcuda_state_t *st, dcuda_win_t win, size_t offset,
                                           size_t count, dcuda_datatype_t type, dcuda_op_t op,
                                           int root)
{
    dcu_call_begin(st, DCUDA_CALL_REDUCE, win, (int)type, (int)op, root, count, offset);
    return dcu_reduce(st, win, offset, count, (int)type, (int)op, root);
}

DCUDA_RANK_API dcuda_status_t dcuda_reduce_scatter(dcuda_state_t *st, dcuda_win_t win,
                                                   size_t offset, size_t count,
                                                   dcuda_datatype_t type, dcuda_op_t op)
{
    dcu_call_begin(st, DCUDA_CALL_REDUCE_SCATTER, win, (int)type, (int)op, 0, count, offset);
    return dcu_reduce_scatter(st, win, offset, count, (int)type, (int)op);
}

DCUDA_RANK_API dcuda_status_t dcuda_alltoall(dcuda_state_t *st, dcuda_win_t win, size_t offset,
                                             size_t size)
{
    dcu_call_begin(st, DCUDA_CALL_ALLTOALL, win, 0, 0, 0, size, offset);
    return dcu_alltoall(st, win, offset, size);
}

DCUDA_RANK_API dcuda_status_t dcuda_start_cpu_timer(dcuda_state_t *st)
{
    return dcu_timer(st, 0, "dcuda_start_cpu_timer");
}

DCUDA_RANK_API dcuda_status_t dcuda_stop_cpu_timer(dcuda_state_t *st)
{
    return dcu_timer(st, 1, "dcuda_stop_cpu_timer");
}

DCUDA_RANK_API dcuda_status_t dcuda_rank_ping_host(dcuda_state_t *st) { return dcu_ping_host(st); }

DCUDA_RANK_API dcuda_status_t dcuda_notify_host(dcuda_state_t *st, int tag)
{
    return dcu_notify_host(st, tag);
}

#endif /* DCUDA_IMPL_API_H */
