/*
 * GPU ranks: windows, notified puts, notifications, waits, timers and log
 * lines. Included by rank_cuda.cuh after the helpers it uses.
 */
#ifndef DCUDA_DETAIL_RANK_CUDA_RMA_CUH
#define DCUDA_DETAIL_RANK_CUDA_RMA_CUH

/* ---- windows ------------------------------------------------------------ */

DCUDA_DEV dcuda_status_t dcuda_dev_check_win(const dcuda_state_t *st, dcuda_win_t win,
                                             const char *call)
{
    if (dcuda_detail_check_win(st, win) == DCUDA_OK)
        return DCUDA_OK;
    return dcuda_dev_report(st, DCUDA_ERR_WIN, call,
                            "window 0x%08x is not a live window of this rank (never created, "
                            "or freed)",
                            (unsigned)win);
}

DCUDA_DEV dcuda_win_entry_t *dcuda_dev_my_entry(const dcuda_state_t *st, int comm, int slot)
{
    return (dcuda_win_entry_t *)dcuda_detail_win_entry(st->ctx, comm, slot,
                                                       dcuda_detail_comm_rank(st, comm));
}

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
                                DCUDA_MAX_WINDOWS, dcuda_dev_comm_name(comm));
    dcuda_status_t arg = DCUDA_OK;
    uint64_t b = (uint64_t)(uintptr_t)base;
    if (size && !base)
        arg = dcuda_dev_report(st, DCUDA_ERR_INVALID_ARG, call, "base is NULL but size is %llu",
                               (unsigned long long)size);
    else if (b + size < b)
        arg = dcuda_dev_report(st, DCUDA_ERR_OVERFLOW, call, "base %p + size %llu wraps around",
                               base, (unsigned long long)size);
    dcuda_win_entry_t *mine = dcuda_dev_my_entry(st, comm, slot);
    mine->base = arg == DCUDA_OK ? b : 0;
    mine->size = arg == DCUDA_OK ? size : 0;
    dcuda_status_t s = dcuda_dev_barrier_thread0(st, comm);
    if (s != DCUDA_OK)
        return s;
    uint8_t gen = ++st->win_gen[comm][slot];
    st->live_windows[comm] |= (uint64_t)1 << slot;
    st->result_win = dcuda_detail_win_encode(comm, slot, gen);
    return arg;
}

DCUDA_DEV dcuda_status_t dcuda_win_create(dcuda_state_t *st, dcuda_comm_t comm, void *base,
                                          size_t size, dcuda_win_t *win)
{
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_win_create");
    dcuda_status_t s = dcuda_dev_check_comm(st, comm, "dcuda_win_create");
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
    dcuda_win_entry_t *mine = dcuda_dev_my_entry(st, comm, slot);
    mine->base = 0;
    mine->size = 0;
    st->live_windows[comm] &= ~((uint64_t)1 << slot);
    return s;
}

DCUDA_DEV dcuda_status_t dcuda_win_free(dcuda_state_t *st, dcuda_win_t win)
{
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, "dcuda_win_free");
    dcuda_status_t s = dcuda_dev_check_win(st, win, "dcuda_win_free");
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
    return dcuda_dev_check_win(st, win, "dcuda_win_flush");
}

/* ---- notified RMA ------------------------------------------------------- */

DCUDA_DEV dcuda_status_t dcuda_dev_check_tag(const dcuda_state_t *st, int tag, const char *call)
{
    if (dcuda_detail_tag_valid(tag))
        return DCUDA_OK;
    return dcuda_dev_report(st, DCUDA_ERR_TAG, call, "tag %d not in 0..%d", tag,
                            DCUDA_TAG_COUNT - 1);
}

DCUDA_DEV dcuda_status_t dcuda_dev_resolve_target(const dcuda_state_t *st, int comm, int rank,
                                                  int *devrank, const char *call)
{
    int size = dcuda_detail_comm_size(st->ctx, comm);
    if (rank < 0 || rank >= size)
        return dcuda_dev_report(st, DCUDA_ERR_RANK, call, "target rank %d not in 0..%d of %s",
                                rank, size - 1, dcuda_dev_comm_name(comm));
    *devrank = dcuda_detail_device_rank_of(st->ctx, comm, rank);
    if (*devrank < 0)
        return dcuda_dev_report(st, DCUDA_ERR_UNSUPPORTED, call,
                                "target rank %d of %s is on another device, which this build "
                                "cannot reach",
                                rank, dcuda_dev_comm_name(comm));
    return DCUDA_OK;
}

/* Every thread checks (same inputs, same answer); thread 0 reports. */
static __device__ __noinline__ dcuda_status_t
dcuda_dev_check_put(const dcuda_state_t *st, dcuda_win_t win, int rank, size_t offset,
                    size_t size, const void *src, char **dst, int *devrank, const char *call)
{
    dcuda_status_t s = dcuda_dev_check_win(st, win, call);
    if (s != DCUDA_OK)
        return s;
    int comm = dcuda_detail_win_comm(win), slot = dcuda_detail_win_slot(win);
    if ((s = dcuda_dev_resolve_target(st, comm, rank, devrank, call)) != DCUDA_OK)
        return s;
    const dcuda_win_entry_t *e = dcuda_detail_win_entry(st->ctx, comm, slot, rank);
    if ((s = dcuda_detail_check_range(e->size, offset, size)) != DCUDA_OK)
        return dcuda_dev_report(st, s, call,
                                "offset %llu + size %llu outside the %llu-byte part of rank %d "
                                "in window %d on %s",
                                (unsigned long long)offset, (unsigned long long)size,
                                (unsigned long long)e->size, rank, slot,
                                dcuda_dev_comm_name(comm));
    if ((s = dcuda_detail_check_source(st, comm, slot, src, size)) != DCUDA_OK)
        return dcuda_dev_report(st, s, call, "source %p..+%llu is %s", src,
                                (unsigned long long)size,
                                s == DCUDA_ERR_WIN_COMM
                                    ? "only in windows of the other communicator"
                                    : "not inside any window of this rank");
    uint64_t d = e->base + offset;
    if ((s = dcuda_detail_check_overlap(d, (uint64_t)(uintptr_t)src, size)) != DCUDA_OK)
        return dcuda_dev_report(st, s, call, "source %p and target %p overlap in %llu bytes",
                                src, (void *)(uintptr_t)d, (unsigned long long)size);
    *dst = (char *)(uintptr_t)d;
    return DCUDA_OK;
}

/* Thread 0, after the block's writes were ordered by __syncthreads. */
DCUDA_DEV void dcuda_dev_notify_thread0(const dcuda_state_t *st, int devrank, int tag)
{
    __threadfence();
    atomicAdd(&st->ctx->notifs[devrank].arrived[tag], 1u);
}

DCUDA_DEV dcuda_status_t dcuda_dev_put(dcuda_state_t *st, dcuda_win_t win, int rank,
                                       size_t offset, size_t size, const void *src, int notify,
                                       int tag, const char *call)
{
    __syncthreads(); /* the rank's writes to src are done */
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, call);
    char *dst;
    int devrank;
    dcuda_status_t s = notify ? dcuda_dev_check_tag(st, tag, call) : DCUDA_OK;
    if (s == DCUDA_OK)
        s = dcuda_dev_check_put(st, win, rank, offset, size, src, &dst, &devrank, call);
    if (s != DCUDA_OK)
        return s;
    if (size && dst != (const char *)src)
        dcuda_dev_copy(dst, (const char *)src, size);
    __syncthreads(); /* the copy is done: source reusable, data ready */
    if (notify && threadIdx.x == 0)
        dcuda_dev_notify_thread0(st, devrank, tag);
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
    int devrank;
    dcuda_status_t s = dcuda_dev_check_comm(st, comm, call);
    if (s == DCUDA_OK)
        s = dcuda_dev_check_tag(st, tag, call);
    if (s == DCUDA_OK)
        s = dcuda_dev_resolve_target(st, comm, rank, &devrank, call);
    if (s == DCUDA_OK && threadIdx.x == 0)
        dcuda_dev_notify_thread0(st, devrank, tag);
    return s;
}

DCUDA_DEV dcuda_status_t dcuda_dev_check_wait(const dcuda_state_t *st, int tag, int count,
                                              const char *call)
{
    dcuda_status_t s = dcuda_dev_check_tag(st, tag, call);
    if (s == DCUDA_OK && count <= 0)
        s = dcuda_dev_report(st, DCUDA_ERR_COUNT, call, "count %d for tag %d", count, tag);
    return s;
}

DCUDA_DEV int dcuda_test_notifications(dcuda_state_t *st, int tag, int count)
{
    static const char call[] = "dcuda_test_notifications";
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, call);
    dcuda_status_t s = dcuda_dev_check_wait(st, tag, count, call);
    if (s != DCUDA_OK)
        return s;
    if (threadIdx.x == 0) {
        uint32_t arrived = dcuda_dev_ld_acquire(&st->ctx->notifs[st->device_rank].arrived[tag]);
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
    static const char call[] = "dcuda_wait_notifications";
    __syncthreads();
    if (!dcuda_dev_state_ok(st))
        return dcuda_dev_report_uninit(st, call);
    dcuda_status_t s = dcuda_dev_check_wait(st, tag, count, call);
    if (s != DCUDA_OK)
        return s;
    if (threadIdx.x == 0) {
        uint32_t target = st->consumed[tag] + (uint32_t)count;
        s = dcuda_dev_block_until(st, &st->ctx->notifs[st->device_rank].arrived[tag], target,
                                  DCUDA_PHASE_WAITING, (uint32_t)tag, (uint32_t)count, 0);
        if (s == DCUDA_OK)
            st->consumed[tag] = target;
        st->result = s;
    }
    __syncthreads();
    return (dcuda_status_t)st->result;
}

/* ---- timers and logging ------------------------------------------------- */

static __device__ __noinline__ dcuda_status_t dcuda_dev_timer_thread0(dcuda_state_t *st,
                                                                      int stop, const char *call)
{
    uint32_t step = st->timer_next;
    if ((step & 1u) != (uint32_t)stop)
        return stop ? dcuda_dev_report(st, DCUDA_ERR_TIMER, call,
                                       "no timer is running (%u started)", step / 2)
                    : dcuda_dev_report(st, DCUDA_ERR_TIMER, call, "timer %u is still running",
                                       step / 2);
    if (step / 2 >= DCUDA_MAX_TIMERS)
        return dcuda_dev_report(st, DCUDA_ERR_TIMER, call, "more than %d timers in one run",
                                DCUDA_MAX_TIMERS);
    dcuda_timer_slot_t *t = &st->ctx->timers[step / 2];
    unsigned long long now = dcuda_dev_globaltimer();
    if (!stop) {
        atomicMin((unsigned long long *)&t->start_ns, now);
        atomicAdd(&t->starts, 1u);
    } else {
        atomicMax((unsigned long long *)&t->stop_ns, now);
        atomicAdd(&t->stops, 1u);
    }
    st->timer_next = step + 1;
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
