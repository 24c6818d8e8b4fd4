/*
 * GPU ranks: windows, notified puts, notifications, waits, timers and log
 * lines. Included by rank_cuda.cuh after the helpers and checks it uses.
 *
 * Collective calls start with __syncthreads (the rank's earlier writes are
 * done, and last call's broadcast has been read), let every thread run the
 * checks (same inputs, same answer; thread 0 reports), and leave the single-
 * thread parts to thread 0.
 */
#ifndef DCUDA_DETAIL_RANK_CUDA_RMA_CUH
#define DCUDA_DETAIL_RANK_CUDA_RMA_CUH

/* ---- windows ------------------------------------------------------------ */

/* Thread 0: as on CPU ranks, bad arguments still join the collective with an
 * empty part so the other ranks do not hang. */
static __device__ __noinline__ dcuda_status_t dcuda_dev_win_create_thread0(dcuda_state_t *st,
                                                                           int comm, void *base,
                                                                           size_t size)
{
    static const char call[] = "dcuda_win_create";
    st->result_win = DCUDA_WIN_NONE;
    int slot = dcuda_detail_free_slot(st, comm);
    if (slot < 0)
        return dcuda_dev_report(st, DCUDA_ERR_WIN_LIMIT, call, "%d windows already live on %s",
                                DCUDA_MAX_WINDOWS, dcuda_detail_comm_name(comm));
    dcuda_status_t arg = dcuda_detail_checked_win_args(st, base, size, call);
    dcuda_detail_win_publish(st, comm, slot, arg == DCUDA_OK ? (uint64_t)(uintptr_t)base : 0,
                             arg == DCUDA_OK ? size : 0);
    dcuda_status_t s = dcuda_dev_barrier_thread0(st, comm);
    if (s != DCUDA_OK)
        return s;
    st->result_win = dcuda_detail_win_adopt(st, comm, slot);
    return arg;
}

DCUDA_DEV dcuda_status_t dcuda_win_create(dcuda_state_t *st, dcuda_comm_t comm, void *base,
                                          size_t size, dcuda_win_t *win)
{
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_win_create");
    dcuda_status_t s = dcuda_detail_checked_comm(st, comm, "dcuda_win_create");
    if (s == DCUDA_OK && !win)
        s = dcuda_dev_report(st, DCUDA_ERR_INVALID_ARG, "dcuda_win_create", "win is NULL");
    if (s != DCUDA_OK)
        return s;
    DCUDA_DEV_ON_THREAD0(st, dcuda_dev_win_create_thread0(st, comm, base, size));
    *win = st->result_win;
    return (dcuda_status_t)st->result;
}

static __device__ __noinline__ dcuda_status_t dcuda_dev_win_free_thread0(dcuda_state_t *st,
                                                                         dcuda_win_t win)
{
    int comm = dcuda_detail_win_comm(win), slot = dcuda_detail_win_slot(win);
    dcuda_status_t s = dcuda_dev_barrier_thread0(st, comm);
    dcuda_detail_win_forget(st, comm, slot);
    return s;
}

DCUDA_DEV dcuda_status_t dcuda_win_free(dcuda_state_t *st, dcuda_win_t win)
{
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_win_free");
    dcuda_status_t s = dcuda_detail_checked_win(st, win, "dcuda_win_free");
    if (s != DCUDA_OK)
        return s;
    DCUDA_DEV_ON_THREAD0(st, dcuda_dev_win_free_thread0(st, win));
    return (dcuda_status_t)st->result;
}

DCUDA_DEV dcuda_status_t dcuda_win_flush(dcuda_state_t *st, dcuda_win_t win)
{
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_win_flush");
    /* A same-GPU put has finished reading its source when it returns. */
    return dcuda_detail_checked_win(st, win, "dcuda_win_flush");
}

/* ---- notified RMA ------------------------------------------------------- */

/* Thread 0, after __syncthreads ordered the block's accesses: one release
 * add (fence.acq_rel and the add). The release covers the rank's earlier
 * writes and reads, so the target may read the data or reuse a buffer it
 * was told is free; a relaxed add would allow neither (its fence is most of
 * the cost of a notification, measured in docs/results). */
DCUDA_DEV void dcuda_dev_notify_thread0(dcuda_notif_counters_t *to, int remote, int tag)
{
    if (remote)
        dcuda_dev_red_release_sys(&to->arrived[tag], 1u);
    else
        dcuda_dev_red_release(&to->arrived[tag], 1u);
}

/* The full checks of a put whose route is not remembered (out of line). */
static __device__ __noinline__ dcuda_status_t dcuda_dev_put_slow(const dcuda_state_t *st,
                                                                 dcuda_win_t win, int rank,
                                                                 size_t offset, size_t size,
                                                                 const void *src,
                                                                 dcuda_detail_put_t *p,
                                                                 const char *call)
{
    return dcuda_detail_checked_put(st, win, rank, offset, size, src, p, call);
}

DCUDA_DEV dcuda_status_t dcuda_dev_put(dcuda_state_t *st, dcuda_win_t win, int rank,
                                       size_t offset, size_t size, const void *src, int notify,
                                       int tag, const char *call)
{
    __syncthreads(); /* the rank's writes to src are done */
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, call);
    dcuda_detail_put_t p;
    dcuda_status_t s = notify ? dcuda_detail_checked_tag(st, tag, call) : DCUDA_OK;
    if (s != DCUDA_OK)
        return s;
    const dcuda_put_route_t *r = dcuda_detail_put_fast(st, win, rank, offset, size, src, &p.dst);
    int fresh = r == NULL;
    if (r) {
        p.to.notifs = r->notifs;
        p.to.remote = (int)r->remote;
    } else if ((s = dcuda_dev_put_slow(st, win, rank, offset, size, src, &p, call)) != DCUDA_OK) {
        return s;
    }
    if (size && p.dst != (const char *)src)
        dcuda_dev_copy(p.dst, (const char *)src, size);
    __syncthreads(); /* the copy is done: source reusable, data ready */
    if (threadIdx.x == 0) {
        if (notify)
            dcuda_dev_notify_thread0(p.to.notifs, p.to.remote, tag);
        if (fresh)
            dcuda_detail_route_remember(st, win, rank, &p);
    }
    return DCUDA_OK;
}

DCUDA_DEV dcuda_status_t dcuda_put(dcuda_state_t *st, dcuda_win_t win, int rank, size_t offset,
                                   size_t size, const void *src)
{
    return dcuda_dev_put(st, win, rank, offset, size, src, 0, 0, "dcuda_put");
}

DCUDA_DEV dcuda_status_t dcuda_put_notify(dcuda_state_t *st, dcuda_win_t win, int rank,
                                          size_t offset, size_t size, const void *src, int tag)
{
    return dcuda_dev_put(st, win, rank, offset, size, src, 1, tag, "dcuda_put_notify");
}

DCUDA_DEV dcuda_status_t dcuda_notify(dcuda_state_t *st, int rank, dcuda_comm_t comm, int tag)
{
    static const char call[] = "dcuda_notify";
    __syncthreads(); /* the rank's earlier writes are done */
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, call);
    dcuda_detail_target_t t;
    dcuda_status_t s = dcuda_detail_checked_notify(st, comm, rank, tag, &t, call);
    if (s == DCUDA_OK && threadIdx.x == 0)
        dcuda_dev_notify_thread0(t.notifs, t.remote, tag);
    return s;
}

/* Entry of test and wait: block sync, state and argument checks. */
DCUDA_DEV dcuda_status_t dcuda_dev_wait_entry(dcuda_state_t *st, int tag, int count,
                                              const char *call)
{
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, call);
    return dcuda_detail_checked_wait(st, tag, count, call);
}

DCUDA_DEV int dcuda_test_notifications(dcuda_state_t *st, int tag, int count)
{
    dcuda_status_t s = dcuda_dev_wait_entry(st, tag, count, "dcuda_test_notifications");
    if (s != DCUDA_OK)
        return s;
    if (threadIdx.x == 0) {
        uint32_t arrived = dcuda_dev_ld_acquire_at(&st->notifs[st->device_rank].arrived[tag],
                                                   st->process_count > 1);
        int ready = dcuda_detail_notifs_ready(arrived, st->consumed[tag], (uint32_t)count);
        if (ready)
            st->consumed[tag] += (uint32_t)count;
        st->result = ready;
    }
    __syncthreads();
    return st->result;
}

DCUDA_DEV dcuda_status_t dcuda_wait_notifications(dcuda_state_t *st, int tag, int count)
{
    dcuda_status_t s = dcuda_dev_wait_entry(st, tag, count, "dcuda_wait_notifications");
    if (s != DCUDA_OK)
        return s;
    if (threadIdx.x < 32) {
        unsigned mask = dcuda_dev_warp0_mask();
        uint32_t target = st->consumed[tag] + (uint32_t)count;
        s = dcuda_dev_block_until(st, &st->notifs[st->device_rank].arrived[tag], target,
                                  DCUDA_PHASE_WAITING, (uint32_t)tag, (uint32_t)count, 0, mask);
        __syncwarp(mask); /* every lane has read consumed[tag] before lane 0 updates it */
        if (threadIdx.x == 0) {
            if (s == DCUDA_OK)
                st->consumed[tag] = target;
            st->result = s;
        }
    }
    __syncthreads();
    return (dcuda_status_t)st->result;
}

/* ---- host commands ------------------------------------------------------ */

/* Thread 0: post a command, wait for its reply (both in pinned host memory:
 * posted writes out, PCIe reads while waiting). The entry is known to be free
 * (see dcuda_cmd_ring_t), so no host memory is read before writing it. */
static __device__ __noinline__ dcuda_status_t dcuda_dev_command_thread0(dcuda_state_t *st,
                                                                        uint32_t op)
{
    const dcuda_context_t *ctx = st->ctx;
    uint32_t tag = ++st->cmd_tag;
    uint32_t t = atomicAdd(ctx->cmd.head, 1u);
    dcuda_cmd_t *c = &ctx->cmd.entries[t & (ctx->cmd.capacity - 1u)];
    c->rank = st->device_rank;
    c->op = op;
    c->tag = tag;
    dcuda_dev_st_release_sys(&c->seq, t + 1u);
    dcuda_cmd_reply_t *r = &ctx->replies[st->device_rank];
    while (dcuda_dev_ld_acquire_sys(&r->seq) != tag) {
    }
    return (dcuda_status_t)(*(volatile int32_t *)&r->status);
}

/* A round trip to the host runtime through its command queue (diagnostic:
 * measures the path that remote operations take). */
DCUDA_DEV dcuda_status_t dcuda_rank_ping_host(dcuda_state_t *st)
{
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_rank_ping_host");
    DCUDA_DEV_ON_THREAD0(st, dcuda_dev_command_thread0(st, DCUDA_CMD_PING));
    return (dcuda_status_t)st->result;
}

/* ---- timers and logging ------------------------------------------------- */

/* Timer spans use the GPU's global nanosecond timer. */
static __device__ __noinline__ dcuda_status_t dcuda_dev_timer_thread0(dcuda_state_t *st,
                                                                      int stop, const char *call)
{
    dcuda_status_t s = dcuda_detail_checked_timer(st, stop, call);
    if (s != DCUDA_OK)
        return s;
    dcuda_timer_slot_t *t = &st->ctx->timers[st->timer_next / 2];
    unsigned long long now = dcuda_dev_globaltimer();
    if (!stop) {
        atomicMin((unsigned long long *)&t->start_ns, now);
        atomicAdd(&t->starts, 1u);
    } else {
        atomicMax((unsigned long long *)&t->stop_ns, now);
        atomicAdd(&t->stops, 1u);
    }
    st->timer_next++;
    return DCUDA_OK;
}

DCUDA_DEV dcuda_status_t dcuda_start_cpu_timer(dcuda_state_t *st)
{
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_start_cpu_timer");
    DCUDA_DEV_ON_THREAD0(st, dcuda_dev_timer_thread0(st, 0, "dcuda_start_cpu_timer"));
    return (dcuda_status_t)st->result;
}

DCUDA_DEV dcuda_status_t dcuda_stop_cpu_timer(dcuda_state_t *st)
{
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_stop_cpu_timer");
    DCUDA_DEV_ON_THREAD0(st, dcuda_dev_timer_thread0(st, 1, "dcuda_stop_cpu_timer"));
    return (dcuda_status_t)st->result;
}

/* printf-style line from one thread of the rank; the host formats it. Up to
 * DCUDA_LOG_MAX_ARGS arguments: integers, floating point, strings, pointers. */
template <typename... A>
DCUDA_DEV dcuda_status_t dcuda_log(dcuda_state_t *st, const char *fmt, A... args)
{
    static_assert(sizeof...(A) <= DCUDA_LOG_MAX_ARGS, "too many arguments for dcuda_log");
    if (!dcuda_dev_state_ok(st))
        return DCUDA_ERR_NOT_INITIALIZED;
    if (!fmt)
        return DCUDA_ERR_INVALID_ARG;
    dcuda_dev_log_write(st->ctx, st->world_rank, DCUDA_LOG_TEXT_KIND, "", fmt, "", args...);
    return DCUDA_OK;
}

#endif /* DCUDA_DETAIL_RANK_CUDA_RMA_CUH */
