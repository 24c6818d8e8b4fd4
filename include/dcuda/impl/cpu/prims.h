/*
 * The rank engine's primitives for CPU ranks: a rank is one thread, its
 * "block" has one thread (syncs are no-ops, it is its own leader and its
 * only polling lane), memory operations are C11 atomics and copies are
 * memcpy. The engine (impl/engine.h) is written once over these names and
 * over the GPU's (impl/cuda/prims.cuh), so CPU ranks run the algorithm GPU
 * ranks run. Compiled only into the library (src/backend/cpu/cpu_rank.c),
 * as C11.
 */
#ifndef DCUDA_IMPL_CPU_PRIMS_H
#define DCUDA_IMPL_CPU_PRIMS_H

#if defined(__CUDACC__) || defined(__cplusplus)
#error "impl/cpu/prims.h is compiled as C11, inside libdcuda only"
#endif

#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "../common.h"

/* The calling thread's rank: set by the backend before the kernel runs. */
extern _Thread_local const dcuda_context_t *dcu_cpu_thread_ctx;
extern _Thread_local int dcu_cpu_thread_rank;

/* ---- the threads of a rank: one ------------------------------------------ */

DCU_FN int dcu_thread(void) { return 0; }
DCU_FN int dcu_threads(void) { return 1; }
DCU_FN int dcu_leader(void) { return 1; }
DCU_FN void dcu_sync(void) {}
DCU_FN int dcu_sync_any(int pred) { return pred != 0; }
DCU_FN int dcu_rank_index(void) { return dcu_cpu_thread_rank; }
/* The context the kernel was started with (NULL off rank threads). */
DCU_FN const dcuda_context_t *dcu_kernel_ctx(void) { return dcu_cpu_thread_ctx; }
/* The rank's scratch memory: its part of the buffer the CPU backend made. */
DCU_FN void *dcu_rank_scratch(const dcuda_context_t *ctx)
{
    return ctx->shared_base + (size_t)dcu_cpu_thread_rank * (size_t)ctx->shared_stride;
}

/* Lanes that poll together while the rank waits (a GPU's warp 0). */
typedef unsigned dcu_lanes_t;
DCU_FN int dcu_in_poll_lanes(void) { return 1; }
DCU_FN dcu_lanes_t dcu_poll_lanes(void) { return 1u; }
DCU_FN dcu_lanes_t dcu_one_lane(void) { return 1u; }
DCU_FN uint32_t dcu_lanes_bcast(dcu_lanes_t lanes, uint32_t v)
{
    (void)lanes;
    return v;
}
DCU_FN void dcu_lanes_sync(dcu_lanes_t lanes) { (void)lanes; }
DCU_FN int dcu_lanes_all(dcu_lanes_t lanes, int pred)
{
    (void)lanes;
    return pred;
}
DCU_FN int dcu_lanes_count(dcu_lanes_t lanes)
{
    (void)lanes;
    return 1;
}

/* ---- memory ------------------------------------------------------------- */
/* `sys` (another process may take part) changes nothing on the CPU. */

DCU_FN uint32_t dcu_ld_acquire(const dcu_u32a_t *p, int sys)
{
    (void)sys;
    return atomic_load_explicit(p, memory_order_acquire);
}

/* What arrived of a tag, from ranks and from the host. */
DCU_FN uint32_t dcu_ld_acquire_count(const dcuda_notif_count_t *c, int sys)
{
    (void)sys;
    return atomic_load_explicit(&c->ranks, memory_order_acquire) +
           atomic_load_explicit(&c->host, memory_order_acquire);
}

/* A command's reply, if its seq is `tag` (1; else 0): its status and (when
 * asked) value, stored before the seq with release. */
DCU_FN int dcu_reply_take(const dcuda_cmd_reply_t *r, uint32_t tag, int32_t *status,
                          uint64_t *value)
{
    if (atomic_load_explicit(&r->seq, memory_order_acquire) != tag)
        return 0;
    *status = r->status;
    if (value)
        *value = r->value;
    return 1;
}

/* Adds v, releasing the rank's earlier reads and writes. */
DCU_FN void dcu_red_release(dcu_u32a_t *p, uint32_t v, int sys)
{
    (void)sys;
    atomic_fetch_add_explicit(p, v, memory_order_release);
}

DCU_FN void dcu_st_release(dcu_u32a_t *p, uint32_t v, int sys)
{
    (void)sys;
    atomic_store_explicit(p, v, memory_order_release);
}

DCU_FN void dcu_st_relaxed(dcu_u32a_t *p, uint32_t v, int sys)
{
    (void)sys;
    atomic_store_explicit(p, v, memory_order_relaxed);
}

/* A release by several stores (the GPU's form: one system fence, then
 * relaxed stores): here each store is a release of its own. */
DCU_FN void dcu_release_begin(void) {}
DCU_FN void dcu_st_released(dcu_u32a_t *p, uint32_t v)
{
    atomic_store_explicit(p, v, memory_order_release);
}
DCU_FN void dcu_release_begin_at(int sys) { (void)sys; }
DCU_FN void dcu_red_released(dcu_u32a_t *p, uint32_t v, int sys)
{
    (void)sys;
    atomic_fetch_add_explicit(p, v, memory_order_release);
}

/* Reads an inbox entry's eight words; 1 if every word carries `flag`,
 * with their data halves in w (a rank's one thread: `lanes` is itself). */
DCU_FN int dcu_inbox_read(const dcuda_inbox_entry_t *e, uint32_t flag, dcu_lanes_t lanes,
                          uint32_t w[8])
{
    (void)lanes;
    int ok = 1;
    for (int i = 0; i < DCUDA_INBOX_WORDS; i++) {
        uint64_t x = atomic_load_explicit(&e->word[i], memory_order_acquire);
        ok &= (uint32_t)(x >> 32) == flag;
        w[i] = (uint32_t)x;
    }
    return ok;
}

/* After dcu_inbox_read found a message whose flags ask for it: acquire
 * (dcu_inbox_read's loads acquired already). */
DCU_FN uint64_t dcu_inbox_acquire(const dcuda_inbox_entry_t *e)
{
    return atomic_load_explicit(&e->word[0], memory_order_acquire);
}

/* Publishes v once every load this thread made before has completed (a
 * consumer's count handing entries back): a release (a plain store on
 * x86), so that ThreadSanitizer checks the hand-back. */
DCU_FN void dcu_st_after_loads(dcu_u32a_t *p, uint32_t v)
{
    atomic_store_explicit(p, v, memory_order_release);
}

/* A word of a call record (impl/agree.h), stored or read as a whole
 * (relaxed: a notification or a barrier orders it). */
DCU_FN void dcu_st_u64(dcu_u64a_t *p, uint64_t v)
{
    atomic_store_explicit(p, v, memory_order_relaxed);
}
DCU_FN uint64_t dcu_ld_u64(const dcu_u64a_t *p)
{
    return atomic_load_explicit(p, memory_order_relaxed);
}

/* n consecutive tickets from a ring's head; the first (no ordering: the
 * entries' seq and the consumer's count order). */
DCU_FN uint32_t dcu_tickets(dcu_u32a_t *head, uint32_t n)
{
    return atomic_fetch_add_explicit(head, n, memory_order_relaxed);
}

/* Barrier arrival: releases the rank's accesses, acquires the earlier
 * arrivals; returns the count before. */
DCU_FN uint32_t dcu_arrive(dcu_u32a_t *p)
{
    return atomic_fetch_add_explicit(p, 1u, memory_order_acq_rel);
}

/* Orders what the rank acquired before what it does next. */
DCU_FN void dcu_fence(void) { atomic_thread_fence(memory_order_acq_rel); }

DCU_FN void dcu_add_u32(dcu_u32a_t *p, uint32_t v)
{
    atomic_fetch_add_explicit(p, v, memory_order_relaxed);
}

/* 1 if *p was 0 and is now v. */
DCU_FN int dcu_claim_i32(dcu_i32a_t *p, int32_t v)
{
    int32_t none = 0;
    return atomic_compare_exchange_strong(p, &none, v);
}

DCU_FN void dcu_set_i32(dcu_i32a_t *p, int32_t v)
{
    atomic_store_explicit(p, v, memory_order_relaxed);
}

DCU_FN void dcu_min_u64(dcu_u64a_t *p, uint64_t v)
{
    uint64_t seen = atomic_load_explicit(p, memory_order_relaxed);
    while (v < seen && !atomic_compare_exchange_weak(p, &seen, v)) {
    }
}

DCU_FN void dcu_max_u64(dcu_u64a_t *p, uint64_t v)
{
    uint64_t seen = atomic_load_explicit(p, memory_order_relaxed);
    while (v > seen && !atomic_compare_exchange_weak(p, &seen, v)) {
    }
}

/* A remote atomic on the `width`-byte word at addr (aligned; in memory
 * this process maps, other processes' too): op (dcuda_atomic_op_t) with
 * operand and compare; the word's value before. Sequentially consistent,
 * so ordered after the rank's earlier stores and before its later
 * accesses (sys: every scope is the system's on a CPU). */
DCU_FN uint64_t dcu_atomic_rmw(void *addr, int op, uint64_t width, uint64_t operand,
                               uint64_t compare, int sys)
{
    (void)sys;
    if (width == 4) {
        uint32_t *p = (uint32_t *)addr, want = (uint32_t)compare;
        if (op == 0)
            return __atomic_fetch_add(p, (uint32_t)operand, __ATOMIC_SEQ_CST);
        if (op == 1)
            return __atomic_exchange_n(p, (uint32_t)operand, __ATOMIC_SEQ_CST);
        __atomic_compare_exchange_n(p, &want, (uint32_t)operand, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
        return want;
    }
    uint64_t *p = (uint64_t *)addr, want = compare;
    if (op == 0)
        return __atomic_fetch_add(p, operand, __ATOMIC_SEQ_CST);
    if (op == 1)
        return __atomic_exchange_n(p, operand, __ATOMIC_SEQ_CST);
    __atomic_compare_exchange_n(p, &want, operand, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return want;
}

DCU_FN uint64_t dcu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The rank's copy of a put (its one thread copies). */
DCU_FN void dcu_copy(char *dst, const char *src, size_t n) { memcpy(dst, src, n); }

/* A get's copy: a CPU's caches are coherent, so the same copy. */
DCU_FN void dcu_copy_fresh(char *dst, const char *src, size_t n) { memcpy(dst, src, n); }

/* The same by thread i of a group of nt: its share of the bytes (a CPU
 * rank is one thread: all of them). */
DCU_FN void dcu_copy_fresh_by(char *dst, const char *src, size_t n, size_t i, size_t nt)
{
    size_t share = (n + nt - 1u) / nt, from = i * share;
    if (from < n)
        memcpy(dst + from, src + from, n - from < share ? n - from : share);
}

/* A plain copy by thread i of a group of nt, as dcu_copy_fresh_by. */
DCU_FN void dcu_copy_by(char *dst, const char *src, size_t n, size_t i, size_t nt)
{
    dcu_copy_fresh_by(dst, src, n, i, nt);
}

/* One thread: a small put's payload of whole aligned words. */
DCU_FN void dcu_copy_tiny(char *dst, const char *src, uint32_t n) { memcpy(dst, src, n); }

/* The copy of the polling lanes (the rank's one thread). */
DCU_FN void dcu_lanes_copy(dcu_lanes_t lanes, char *dst, const char *src, size_t n)
{
    (void)lanes;
    memcpy(dst, src, n);
}

/* ---- waiting -------------------------------------------------------------- */

/* Steps of waiting: spin briefly, then yield, then sleep 8 us doubling up
 * to dcu_cpu_sleep_max_ns (a millisecond, or more when there are thousands
 * of ranks per core), so that many ranks on few cores do not starve the
 * rank they wait for. After DCU_WAIT_BLOCKED_POLLS steps a rank shows
 * itself blocked to the watchdog, and from then on checks every step
 * whether it was cancelled. */
#define DCU_WAIT_BLOCKED_POLLS 256u
#define DCU_WAIT_CANCEL_EVERY 1u
/* A rank in a barrier looks into its inbox every this many steps. */
#define DCU_WAIT_INBOX_EVERY 1u
#define DCU_CPU_PAUSE_STEPS 64u
#define DCU_CPU_YIELD_STEPS 32u
#define DCU_CPU_SLEEP_MIN_NS 8000u
#define DCU_CPU_SLEEP_MAX_NS 1024000u
#define DCU_WAITER_INIT                                                                            \
    {                                                                                              \
        0u, 0u                                                                                     \
    }

/* The longest sleep, set by the CPU backend from the ranks per core. */
extern uint32_t dcu_cpu_sleep_max_ns;

/* One step; returns 0: every step may look at the watchdog's business. */
DCU_FN int dcu_pause(dcu_waiter_t *w)
{
    uint32_t s = w->polls++;
    if (s < DCU_CPU_PAUSE_STEPS) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else if (s < DCU_CPU_PAUSE_STEPS + DCU_CPU_YIELD_STEPS) {
        sched_yield();
    } else {
        uint32_t max = dcu_cpu_sleep_max_ns;
        w->sleep_ns = w->sleep_ns == 0u ? DCU_CPU_SLEEP_MIN_NS : w->sleep_ns;
        struct timespec ts = { (time_t)(w->sleep_ns / 1000000000u),
                               (long)(w->sleep_ns % 1000000000u) };
        nanosleep(&ts, NULL);
        w->sleep_ns = w->sleep_ns < max / 2u ? 2u * w->sleep_ns : max;
    }
    return 0;
}

/* One poll of a wait's first phase, which only spins; 0 once it is over
 * (dcu_pause goes on from there: yields, then sleeps). */
DCU_FN int dcu_spinning(dcu_waiter_t *w)
{
    if (w->polls >= DCU_CPU_PAUSE_STEPS)
        return 0;
    (void)dcu_pause(w);
    return 1;
}

/* Waiting on memory the host runtime hands back (ring entries). */
DCU_FN void dcu_pause_host(dcu_waiter_t *w) { (void)dcu_pause(w); }

/* Waiting for command-queue room (`behind` tickets to go: a GPU rank
 * sleeps longer the further behind it is; a thread just pauses). */
DCU_FN void dcu_pause_queue(dcu_waiter_t *w, uint32_t behind)
{
    (void)behind;
    (void)dcu_pause(w);
}

#endif /* DCUDA_IMPL_CPU_PRIMS_H */
