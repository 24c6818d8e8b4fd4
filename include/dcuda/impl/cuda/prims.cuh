/*
 * The rank engine's primitives for GPU ranks: a rank is a thread block.
 * Thread 0 leads single-thread sections, warp 0 polls while the rank waits
 * (each lane loads, or lane 0 loads and a shuffle shares the value),
 * memory operations are PTX acquire loads and release adds at GPU scope
 * (ranks of one GPU) or system scope (ranks of other processes, mapped host
 * memory), and puts copy with every thread of the block. The engine
 * (impl/engine.h) is written once over these names and over the CPU's
 * (impl/cpu/prims.h).
 */
#ifndef DCUDA_IMPL_CUDA_PRIMS_CUH
#define DCUDA_IMPL_CUDA_PRIMS_CUH

#include <stdint.h>

#include "../common.h"

/* ---- the threads of a rank: a block ------------------------------------- */

DCU_FN int dcu_thread(void) { return (int)threadIdx.x; }
DCU_FN int dcu_threads(void) { return (int)blockDim.x; }
DCU_FN int dcu_leader(void) { return threadIdx.x == 0; }
DCU_FN void dcu_sync(void) { __syncthreads(); }
/* dcu_sync, and 1 in every thread if pred was non-zero in any. */
DCU_FN int dcu_sync_any(int pred) { return __syncthreads_or(pred); }
DCU_FN int dcu_rank_index(void) { return (int)blockIdx.x; }

/* The context of the running kernel, for reporting calls made before
 * dcuda_rank_init (one copy per translation unit, set by every block as it
 * enters the kernel: dcu_kernel_enter). */
static __device__ const dcuda_context_t *dcu_current_ctx;
DCU_FN const dcuda_context_t *dcu_kernel_ctx(void) { return dcu_current_ctx; }
/* The rank's scratch memory: the block's dynamic shared memory, the size
 * the backend launched the kernel with. */
extern __shared__ __align__(16) char dcu_dynamic_shared[];
DCU_FN void *dcu_rank_scratch(const dcuda_context_t *ctx)
{
    (void)ctx;
    return dcu_dynamic_shared;
}

/* Lanes that poll together while the rank waits: all of warp 0 (so lane
 * 0's poll loop does not diverge from lanes parked at a barrier, which costs
 * ~0.1 us a wake-up), or lane 0 alone inside single-thread sections. */
typedef unsigned dcu_lanes_t;
DCU_FN int dcu_in_poll_lanes(void) { return threadIdx.x < 32; }
DCU_FN dcu_lanes_t dcu_poll_lanes(void)
{
    return blockDim.x >= 32 ? 0xffffffffu : (1u << blockDim.x) - 1u;
}
DCU_FN dcu_lanes_t dcu_one_lane(void) { return 1u; }
/* Lane 0's v, in every lane of `lanes`. */
DCU_FN uint32_t dcu_lanes_bcast(dcu_lanes_t lanes, uint32_t v) { return __shfl_sync(lanes, v, 0); }
DCU_FN void dcu_lanes_sync(dcu_lanes_t lanes) { __syncwarp(lanes); }
/* 1 if pred holds in every lane of `lanes`; how many lanes there are. */
DCU_FN int dcu_lanes_all(dcu_lanes_t lanes, int pred) { return __all_sync(lanes, pred); }
DCU_FN int dcu_lanes_count(dcu_lanes_t lanes) { return __popc(lanes); }

/* ---- memory --------------------------------------------------------------- */

DCU_FN uint32_t dcu_ld_acquire_gpu(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

DCU_FN uint32_t dcu_ld_acquire_sys(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* What arrived of a tag, from ranks and from the host: both halves of the
 * count in one 8-byte acquire load. (At GPU scope for one process: the
 * host's half and the bytes it covers are written by copies whose end the
 * host thread waited for before it wrote the half, so they are in the
 * GPU's memory once it is seen.) */
DCU_FN uint32_t dcu_ld_acquire_count(const dcuda_notif_count_t *c, int sys)
{
    unsigned long long v;
    if (sys)
        asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(c) : "memory");
    else
        asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(c) : "memory");
    return (uint32_t)v + (uint32_t)(v >> 32);
}

/* Acquire load at the scope the memory needs: system scope once agents of
 * other processes (GPUs) or the host write it. */
DCU_FN uint32_t dcu_ld_acquire(const uint32_t *p, int sys)
{
    return sys ? dcu_ld_acquire_sys(p) : dcu_ld_acquire_gpu(p);
}

/* A command's reply, if its seq is `tag` (1; else 0): the seq and the
 * status in one 8-byte acquire load (the proxy stores the status before
 * the seq, with release), the value (when asked) with a relaxed load of
 * host memory after it. The slot is rewritten for every command, and a
 * plain load of host memory can be served an earlier lap's line from a
 * cache (an inbox's payload was: impl/cuda/prims.cuh, dcu_copy_load). */
DCU_FN int dcu_reply_take(const dcuda_cmd_reply_t *r, uint32_t tag, int32_t *status,
                          uint64_t *value)
{
    unsigned long long w, v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(w) : "l"(&r->seq) : "memory");
    if ((uint32_t)w != tag)
        return 0;
    *status = (int32_t)(uint32_t)(w >> 32);
    if (value) {
        asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(&r->value) : "memory");
        *value = v;
    }
    return 1;
}

/* Adds v to *p, releasing the calling thread's earlier reads and writes
 * (and, through a preceding __syncthreads, those of its block). System
 * scope for a rank of another process, whose data this block may have
 * written over NVLink. */
DCU_FN void dcu_red_release(uint32_t *p, uint32_t v, int sys)
{
    if (sys)
        asm volatile("red.release.sys.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
    else
        asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

DCU_FN void dcu_st_release(uint32_t *p, uint32_t v, int sys)
{
    if (sys)
        asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
    else
        asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

DCU_FN void dcu_st_relaxed(uint32_t *p, uint32_t v, int sys)
{
    if (sys)
        asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
    else
        asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* Reads an inbox entry's eight words; 1 in every lane of `lanes` if every
 * word carries `flag`, with their data halves in w (in every lane). With
 * four lanes or more, lanes 0..3 read a quarter each, one 64-byte request
 * to host memory, and the halves pass by shuffles (each lane reading the
 * whole entry is four requests, and the wait loop's turns are their
 * latency); else each lane reads the entry. Each 8-byte word is single-
 * copy atomic; relaxed: the flags validate the data they travel with. */
DCU_FN int dcu_inbox_read(const dcuda_inbox_entry_t *e, uint32_t flag, dcu_lanes_t lanes,
                          uint32_t w[8])
{
    unsigned long long x[8];
    if (lanes & 8u) { /* lanes 0..3 at least: lanes are 0 .. n-1 */
        const unsigned q = threadIdx.x & 31u;
        unsigned long long a = 0, b = 0;
        if (q < 4u)
            asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];"
                         : "=l"(a), "=l"(b)
                         : "l"(&e->word[2u * q])
                         : "memory");
#pragma unroll
        for (int i = 0; i < 8; i += 2) {
            x[i] = __shfl_sync(lanes, a, i / 2);
            x[i + 1] = __shfl_sync(lanes, b, i / 2);
        }
    } else {
        for (int i = 0; i < 8; i += 2)
            asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];"
                         : "=l"(x[i]), "=l"(x[i + 1])
                         : "l"(&e->word[i])
                         : "memory");
    }
    int ok = 1;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        ok &= (uint32_t)(x[i] >> 32) == flag;
        w[i] = (uint32_t)x[i];
    }
    return ok;
}

/* After dcu_inbox_read found a message whose flags ask for it: acquire
 * the proxy's release of the entry's first word (a load that synchronises
 * with it: one more read of host memory, cheaper than a system fence). */
DCU_FN uint64_t dcu_inbox_acquire(const dcuda_inbox_entry_t *e)
{
    unsigned long long v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(&e->word[0]) : "memory");
    return v;
}

/* Publishes v once every load this thread made before has completed (a
 * consumer's count handing entries back): a relaxed store, since a load
 * has completed once its value is used, and every value read from the
 * entries went into a store before this one. */
DCU_FN void dcu_st_after_loads(uint32_t *p, uint32_t v) { dcu_st_relaxed(p, v, 1); }

/* n consecutive tickets from a ring's head; the first (no ordering: the
 * entries' seq and the consumer's count order). */
DCU_FN uint32_t dcu_tickets(uint32_t *head, uint32_t n) { return atomicAdd(head, n); }

/* Barrier arrival: releases the block's accesses (ordered by the caller's
 * __syncthreads), adds one; returns the count before. */
DCU_FN uint32_t dcu_arrive(uint32_t *p)
{
    __threadfence();
    return atomicAdd(p, 1u);
}

/* Orders what the thread acquired (relaxed atomics included) before what
 * it does next. */
DCU_FN void dcu_fence(void) { __threadfence(); }

/* A release of the thread's earlier accesses by several stores (to other
 * processes' GPUs, to host memory): one system fence first
 * (dcu_release_begin), then each store (dcu_st_released) relaxed. */
DCU_FN void dcu_release_begin(void) { __threadfence_system(); }
DCU_FN void dcu_st_released(uint32_t *p, uint32_t v) { dcu_st_relaxed(p, v, 1); }
/* The same for adds, at the system's scope or the GPU's: one fence
 * (dcu_release_begin_at: acquire-release, all a release needs; the
 * sequentially consistent __threadfence_system cost a pushed collective
 * between two H200 0.2 us more than a release add), then each add
 * relaxed. */
DCU_FN void dcu_release_begin_at(int sys)
{
    if (sys)
        asm volatile("fence.acq_rel.sys;" ::: "memory");
    else
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
}
DCU_FN void dcu_red_released(uint32_t *p, uint32_t v, int sys)
{
    if (sys)
        asm volatile("red.relaxed.sys.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
    else
        asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

DCU_FN void dcu_add_u32(uint32_t *p, uint32_t v) { atomicAdd(p, v); }

/* 1 if *p was 0 and is now v. */
DCU_FN int dcu_claim_i32(int32_t *p, int32_t v) { return atomicCAS((int *)p, 0, (int)v) == 0; }

DCU_FN void dcu_set_i32(int32_t *p, int32_t v) { *(volatile int32_t *)p = v; }

/* A word of a call record (impl/agree.h), stored or read as a whole;
 * read from the L2 that holds it (another SM or GPU, or the proxy, may
 * have written it since this SM last read the line). */
DCU_FN void dcu_st_u64(uint64_t *p, uint64_t v) { __stcg((unsigned long long *)p, v); }
DCU_FN uint64_t dcu_ld_u64(const uint64_t *p) { return __ldcg((const unsigned long long *)p); }

DCU_FN void dcu_min_u64(uint64_t *p, uint64_t v)
{
    atomicMin((unsigned long long *)p, (unsigned long long)v);
}

DCU_FN void dcu_max_u64(uint64_t *p, uint64_t v)
{
    atomicMax((unsigned long long *)p, (unsigned long long)v);
}

/* One acquire-release atomic (atom.acq_rel) on a word of `bits` bits at
 * scope `scope`: op 0 adds, 1 swaps, 2 compares and swaps. */
#define DCU_ATOM_ACQ_REL(scope, bits, old, p, op, v, c)                                            \
    do {                                                                                           \
        if ((op) == 0)                                                                             \
            asm volatile("atom.acq_rel." scope ".global.add.u" #bits " %0, [%1], %2;"              \
                         : "=" DCU_ATOM_REG##bits(old)                                             \
                         : "l"(p), DCU_ATOM_REG##bits(v)                                           \
                         : "memory");                                                              \
        else if ((op) == 1)                                                                        \
            asm volatile("atom.acq_rel." scope ".global.exch.b" #bits " %0, [%1], %2;"             \
                         : "=" DCU_ATOM_REG##bits(old)                                             \
                         : "l"(p), DCU_ATOM_REG##bits(v)                                           \
                         : "memory");                                                              \
        else                                                                                       \
            asm volatile("atom.acq_rel." scope ".global.cas.b" #bits " %0, [%1], %2, %3;"          \
                         : "=" DCU_ATOM_REG##bits(old)                                             \
                         : "l"(p), DCU_ATOM_REG##bits(c), DCU_ATOM_REG##bits(v)                    \
                         : "memory");                                                              \
    } while (0)
#define DCU_ATOM_REG32(x) "r"(x)
#define DCU_ATOM_REG64(x) "l"(x)

/* A remote atomic on the `width`-byte word at addr (aligned): op
 * (dcuda_atomic_op_t) with operand and compare; the word's value before.
 * Ordered after the thread's earlier accesses (and, after a sync, its
 * block's) and before its later ones, at the target's scope (sys: another
 * GPU or the host; else this GPU), by the atomic itself (acquire-release),
 * where a relaxed atomic between two sequentially consistent fences was
 * stronger than the model asks (a fetch-add between two H200: 9.3 us with
 * the fences, 9.0 without; the rest was the call's checks, atomic.h). */
DCU_FN uint64_t dcu_atomic_rmw(void *addr, int op, uint64_t width, uint64_t operand,
                               uint64_t compare, int sys)
{
    if (width == 4) {
        unsigned int old, v = (unsigned int)operand, c = (unsigned int)compare;
        if (sys)
            DCU_ATOM_ACQ_REL("sys", 32, old, addr, op, v, c);
        else
            DCU_ATOM_ACQ_REL("gpu", 32, old, addr, op, v, c);
        return old;
    }
    unsigned long long old, v = operand, c = compare;
    if (sys)
        DCU_ATOM_ACQ_REL("sys", 64, old, addr, op, v, c);
    else
        DCU_ATOM_ACQ_REL("gpu", 64, old, addr, op, v, c);
    return old;
}

/* The GPU's global nanosecond timer. */
DCU_FN uint64_t dcu_now_ns(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* ---- the block's copy -------------------------------------------------------- */

/* Loads in flight per thread: one block needs ~16 KB in flight to approach
 * its share of HBM bandwidth. */
#define DCU_COPY_UNROLL 8

/* How a copy loads: plain (the L1 may hold the line); for a get, from
 * the L2 that holds the memory (`ld.global.cg`: a peer GPU's over
 * NVLink), so that what another SM or GPU stored since this SM last read
 * the line is seen without a fence; or, for an inbox in host memory,
 * fetched again past every cache (`ld.global.cv`): the proxy rewrites the
 * same entries every lap, a piece of a put often a few microseconds after
 * the rank read the piece before it there, and a plain load could be
 * served the earlier lap's line from a cache (L1, or L2, which may keep
 * lines of host memory: not told apart). Seen on an H100: puts in pieces
 * of 16 KiB brought stale bytes in every seed of the model. */
enum { DCU_LOAD_PLAIN = 0, DCU_LOAD_FRESH = 1, DCU_LOAD_HOST = 2 };

template <int Mode, typename T> static __device__ __forceinline__ T dcu_copy_load(const T *p)
{
    if (Mode == DCU_LOAD_FRESH)
        return __ldcg(p);
    if (Mode == DCU_LOAD_HOST)
        return __ldcv(p);
    return *p;
}

/* Copy of n bytes by `nt` threads, this one being thread i of them,
 * element type T; returns how many bytes it copied (whole elements only). */
template <typename T, int Mode = DCU_LOAD_PLAIN>
static __device__ __forceinline__ size_t dcu_copy_elems(char *dst, const char *src, size_t n,
                                                        size_t i, size_t nt)
{
    const T *s = (const T *)src;
    T *d = (T *)dst;
    size_t count = n / sizeof(T);
    for (; i + (DCU_COPY_UNROLL - 1) * nt < count; i += DCU_COPY_UNROLL * nt) {
        T v[DCU_COPY_UNROLL];
#pragma unroll
        for (int k = 0; k < DCU_COPY_UNROLL; k++)
            v[k] = dcu_copy_load<Mode>(s + i + k * nt);
#pragma unroll
        for (int k = 0; k < DCU_COPY_UNROLL; k++)
            d[i + k * nt] = v[k];
    }
    for (; i < count; i += nt)
        d[i] = dcu_copy_load<Mode>(s + i);
    return count * sizeof(T);
}

/* A 16-byte chunk held in four 32-bit registers, read in parts of S
 * bytes (part j of 16 / sizeof(S)): bit operations, so that the chunk
 * never goes to local memory. */
template <typename S> struct dcu_part;
template <> struct dcu_part<uint4> {
    static __device__ __forceinline__ uint4 get(const uint32_t *w, int j)
    {
        (void)j;
        return make_uint4(w[0], w[1], w[2], w[3]);
    }
};
template <> struct dcu_part<uint2> {
    static __device__ __forceinline__ uint2 get(const uint32_t *w, int j)
    {
        return make_uint2(w[2 * j], w[2 * j + 1]);
    }
};
template <> struct dcu_part<uint32_t> {
    static __device__ __forceinline__ uint32_t get(const uint32_t *w, int j) { return w[j]; }
};
template <> struct dcu_part<unsigned short> {
    static __device__ __forceinline__ unsigned short get(const uint32_t *w, int j)
    {
        return (unsigned short)(w[j / 2] >> (16 * (j % 2)));
    }
};
template <> struct dcu_part<unsigned char> {
    static __device__ __forceinline__ unsigned char get(const uint32_t *w, int j)
    {
        return (unsigned char)(w[j / 4] >> (8 * (j % 4)));
    }
};

/* An inbox's payload to a destination `S`-byte aligned (its low 4 bits
 * say which): 16-byte chunks, loaded 16 bytes at a time past every cache
 * and stored S bytes at a time, DCU_COPY_UNROLL chunks in flight a
 * thread. The last chunk is loaded whole too (a payload fills whole
 * 64-byte entries, so it may be read up to the next 16 bytes) and stored
 * a byte at a time, so that every load of up to 4 KiB is in flight at
 * once: host memory is a round trip of about a microsecond a load, and a
 * destination 12 bytes past an aligned one (where a payload lands) would
 * otherwise take 4-byte loads, four round trips for 4 KiB, and a tail
 * after the chunks one more. */
template <typename S>
static __device__ __forceinline__ void dcu_copy_inbox_as(char *dst, const char *src, size_t n,
                                                         size_t i, size_t nt)
{
    const int per = (int)(16 / sizeof(S));
    size_t count = (n + 15u) / 16u;
    for (; i < count; i += DCU_COPY_UNROLL * nt) {
        uint32_t c[DCU_COPY_UNROLL][4];
#pragma unroll
        for (int k = 0; k < DCU_COPY_UNROLL; k++) {
            size_t e = i + (size_t)k * nt;
            if (e < count) {
                uint4 v = dcu_copy_load<DCU_LOAD_HOST>((const uint4 *)(src + e * 16u));
                c[k][0] = v.x, c[k][1] = v.y, c[k][2] = v.z, c[k][3] = v.w;
            }
        }
#pragma unroll
        for (int k = 0; k < DCU_COPY_UNROLL; k++) {
            size_t e = i + (size_t)k * nt;
            if (e + 1u < count || (e + 1u == count && n % 16u == 0)) {
#pragma unroll
                for (int j = 0; j < per; j++)
                    ((S *)(dst + e * 16u))[j] = dcu_part<S>::get(c[k], j);
            } else if (e + 1u == count) {
                for (int j = 0; j < (int)(n % 16u); j++)
                    dst[e * 16u + (size_t)j] = (char)dcu_part<unsigned char>::get(c[k], j);
            }
        }
    }
}

/* dcu_copy_inbox_as for the destination's alignment. */
static __device__ void dcu_copy_inbox(char *dst, const char *src, size_t n, size_t i, size_t nt)
{
    uintptr_t a = (uintptr_t)dst;
    if ((a & 15u) == 0)
        dcu_copy_inbox_as<uint4>(dst, src, n, i, nt);
    else if ((a & 7u) == 0)
        dcu_copy_inbox_as<uint2>(dst, src, n, i, nt);
    else if ((a & 3u) == 0)
        dcu_copy_inbox_as<uint32_t>(dst, src, n, i, nt);
    else if ((a & 1u) == 0)
        dcu_copy_inbox_as<unsigned short>(dst, src, n, i, nt);
    else
        dcu_copy_inbox_as<unsigned char>(dst, src, n, i, nt);
}

/* Copies n bytes with threads 0..nt-1 (this one is thread i), with the
 * widest accesses both addresses allow, narrowing for the tail; Mode: how
 * it loads (dcu_copy_load). */
template <int Mode>
static __device__ __forceinline__ void dcu_copy_with(char *dst, const char *src, size_t n, size_t i,
                                                     size_t nt)
{
    uintptr_t align = (uintptr_t)dst | (uintptr_t)src;
    size_t done = 0;
    if ((align & 15u) == 0)
        done += dcu_copy_elems<int4, Mode>(dst, src, n, i, nt);
    if ((align & 7u) == 0 && n - done >= 8)
        done += dcu_copy_elems<uint2, Mode>(dst + done, src + done, n - done, i, nt);
    if ((align & 3u) == 0 && n - done >= 4)
        done += dcu_copy_elems<uint32_t, Mode>(dst + done, src + done, n - done, i, nt);
    for (size_t k = done + i; k < n; k += nt)
        dst[k] = dcu_copy_load<Mode>(src + k);
}

DCU_FN void dcu_copy_by(char *dst, const char *src, size_t n, size_t i, size_t nt)
{
    dcu_copy_with<DCU_LOAD_PLAIN>(dst, src, n, i, nt);
}

/* Copies n bytes with every thread of the block. */
DCU_FN void dcu_copy(char *dst, const char *src, size_t n)
{
    dcu_copy_by(dst, src, n, threadIdx.x, blockDim.x);
}

/* A get's copy, every thread of the block: loads from the memory's own L2
 * (another SM's or GPU's stores since this SM last read it are seen). */
DCU_FN void dcu_copy_fresh(char *dst, const char *src, size_t n)
{
    dcu_copy_with<DCU_LOAD_FRESH>(dst, src, n, threadIdx.x, blockDim.x);
}

/* The same by threads 0..nt-1 of a group, this one being thread i. */
DCU_FN void dcu_copy_fresh_by(char *dst, const char *src, size_t n, size_t i, size_t nt)
{
    dcu_copy_with<DCU_LOAD_FRESH>(dst, src, n, i, nt);
}

/* One thread: n bytes of whole words, both addresses word-aligned (a
 * small put's payload, copied by the thread that notifies). A plain loop:
 * loading every word first, with the count known only at run time, held
 * 50 more registers in a kernel that inlines it. */
DCU_FN void dcu_copy_tiny(char *dst, const char *src, uint32_t n)
{
    for (uint32_t k = 0; k < n / 4u; k++)
        ((uint32_t *)dst)[k] = ((const uint32_t *)src)[k];
}

/* Copies n bytes of an inbox's payload (in host memory, from an entry's
 * start; readable up to the next 16 bytes) with the lanes of `lanes`
 * (lanes 0 .. k-1 of warp 0): dcu_copy_inbox. */
DCU_FN void dcu_lanes_copy(dcu_lanes_t lanes, char *dst, const char *src, size_t n)
{
    dcu_copy_inbox(dst, src, n, threadIdx.x, (size_t)dcu_lanes_count(lanes));
}

/* ---- the block's element-wise combination -------------------------------------- */

/* Vectors of each array in flight a thread while it combines two. More
 * would be faster alone, but the registers they take make every caller
 * of a collective save more around the call (a kernel with puts and
 * collectives spilled 484 bytes with 4, about 100 with 1; its 8-byte put
 * and flush slowed from 0.61 to 0.73 us). */
#define DCU_COMBINE_UNROLL 1

/* Combinations of two values (the collectives' ops). */
struct dcu_op_sum {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct dcu_op_min {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const
    {
        return b < a ? b : a;
    }
};
struct dcu_op_max {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const
    {
        return b > a ? b : a;
    }
};

/* Two vectors combined component by component (the components stay in
 * registers); a scalar is a vector of one. */
template <typename T, typename F> static __device__ __forceinline__ T dcu_zip(T a, T b, F f)
{
    return f(a, b);
}
#define DCU_ZIP4(V, make)                                                                          \
    template <typename F> static __device__ __forceinline__ V dcu_zip(V a, V b, F f)               \
    {                                                                                              \
        return make(f(a.x, b.x), f(a.y, b.y), f(a.z, b.z), f(a.w, b.w));                           \
    }
#define DCU_ZIP2(V, make)                                                                          \
    template <typename F> static __device__ __forceinline__ V dcu_zip(V a, V b, F f)               \
    {                                                                                              \
        return make(f(a.x, b.x), f(a.y, b.y));                                                     \
    }
DCU_ZIP4(float4, make_float4)
DCU_ZIP4(int4, make_int4)
DCU_ZIP2(float2, make_float2)
DCU_ZIP2(int2, make_int2)
DCU_ZIP2(double2, make_double2)
DCU_ZIP2(longlong2, make_longlong2)
#undef DCU_ZIP4
#undef DCU_ZIP2

/* The 16- and 8-byte vectors of an element type. */
template <typename T> struct dcu_vec;
template <> struct dcu_vec<float> {
    typedef float4 v16;
    typedef float2 v8;
};
template <> struct dcu_vec<int32_t> {
    typedef int4 v16;
    typedef int2 v8;
};
template <> struct dcu_vec<double> {
    typedef double2 v16;
    typedef double v8;
};
template <> struct dcu_vec<int64_t> {
    typedef longlong2 v16;
    typedef int64_t v8;
};

/* acc[e] = f(acc[e], in[e]) for the whole vectors V of count elements
 * (both V-aligned), DCU_COMBINE_UNROLL of them in flight a thread
 * (thread i of nt); returns the elements done. */
template <typename V, typename T, typename F>
static __device__ __forceinline__ size_t dcu_combine_as(T *acc, const T *in, size_t count, size_t i,
                                                        size_t nt, F f)
{
    const size_t per = sizeof(V) / sizeof(T), n = count / per;
    V *a = (V *)acc;
    const V *b = (const V *)in;
    for (; i < n; i += DCU_COMBINE_UNROLL * nt) {
        V x[DCU_COMBINE_UNROLL], y[DCU_COMBINE_UNROLL];
#pragma unroll
        for (int k = 0; k < DCU_COMBINE_UNROLL; k++) {
            size_t e = i + (size_t)k * nt;
            if (e < n) {
                x[k] = a[e];
                y[k] = b[e];
            }
        }
#pragma unroll
        for (int k = 0; k < DCU_COMBINE_UNROLL; k++) {
            size_t e = i + (size_t)k * nt;
            if (e < n)
                a[e] = dcu_zip(x[k], y[k], f);
        }
    }
    return n * per;
}

/* acc[e] = f(acc[e], in[e]) for e < count, by threads 0..nt-1 (this one
 * thread i); both element-aligned. Where acc and in lie alike modulo 16
 * (or 8) bytes, a whole vector a load: one element a load held a rank's
 * adds to about 1 GB/s. */
template <typename T, typename F>
static __device__ __forceinline__ void dcu_combine(T *acc, const T *in, size_t count, size_t i,
                                                   size_t nt, F f)
{
    const uintptr_t apart = (uintptr_t)acc ^ (uintptr_t)in, at = (uintptr_t)acc;
    const int wide = (apart & 15u) == 0 ? 16 : (apart & 7u) == 0 ? 8 : 0;
    size_t head =
        wide ? (size_t)(((uintptr_t)wide - (at & (uintptr_t)(wide - 1))) & (uintptr_t)(wide - 1)) /
                   sizeof(T)
             : count;
    head = head < count ? head : count;
    for (size_t e = i; e < head; e += nt)
        acc[e] = f(acc[e], in[e]);
    size_t done = head;
    if (wide == 16)
        done +=
            dcu_combine_as<typename dcu_vec<T>::v16>(acc + head, in + head, count - head, i, nt, f);
    else if (wide == 8)
        done +=
            dcu_combine_as<typename dcu_vec<T>::v8>(acc + head, in + head, count - head, i, nt, f);
    for (size_t e = done + i; e < count; e += nt)
        acc[e] = f(acc[e], in[e]);
}

/* ---- waiting ------------------------------------------------------------------ */

/* Polls before a waiting rank starts to sleep between polls (sleeps grow
 * from MIN to MAX, so hundreds of idle ranks polling one barrier counter do
 * not crowd the memory the busy ranks use), before it shows itself blocked
 * to the watchdog, and between its reads of the cancel flag (host memory:
 * about a microsecond each). */
#define DCU_WAIT_SPIN_POLLS 4096u
#define DCU_WAIT_BLOCKED_POLLS (DCU_WAIT_SPIN_POLLS + 2000u)
#define DCU_WAIT_CANCEL_EVERY 1024u
/* A rank in a barrier looks into its inbox (host memory) every this many polls. */
#define DCU_WAIT_INBOX_EVERY 64u
#define DCU_WAIT_SLEEP_MIN_NS 64u
#define DCU_WAIT_SLEEP_MAX_NS 4096u
/* Between polls of host memory (a ring entry the host hands back). */
#define DCU_WAIT_HOST_SLEEP_NS 1000u
/* A rank waiting for command-queue room sleeps this long for each ticket
 * still to be consumed before its own, within [HOST_SLEEP, QUEUE_MAX]:
 * far-behind ranks (hundreds of them, each needing a lap of the queue
 * consumed) would otherwise read the queue's count across PCIe every
 * microsecond and slow the proxy and the ranks ahead of them. */
#define DCU_WAIT_QUEUE_NS_PER_TICKET 8u
#define DCU_WAIT_QUEUE_MAX_NS 65536u
#define DCU_WAITER_INIT                                                                            \
    {                                                                                              \
        0u, DCU_WAIT_SLEEP_MIN_NS                                                                  \
    }

/* One step; returns 1 while still spinning (nothing else to look at). */
DCU_FN int dcu_pause(dcu_waiter_t *w)
{
    if (++w->polls < DCU_WAIT_SPIN_POLLS)
        return 1;
    __nanosleep(w->sleep_ns);
    w->sleep_ns = w->sleep_ns < DCU_WAIT_SLEEP_MAX_NS ? 2 * w->sleep_ns : w->sleep_ns;
    return 0;
}

/* One poll of a wait's first phase, which only spins; 0 once it is over
 * (dcu_pause goes on from there). */
DCU_FN int dcu_spinning(dcu_waiter_t *w) { return ++w->polls < DCU_WAIT_SPIN_POLLS; }

DCU_FN void dcu_pause_host(dcu_waiter_t *w)
{
    w->polls++;
    __nanosleep(DCU_WAIT_HOST_SLEEP_NS);
}

/* Waiting for command-queue room, `behind` tickets still to be consumed. */
DCU_FN void dcu_pause_queue(dcu_waiter_t *w, uint32_t behind)
{
    uint32_t ns = behind < DCU_WAIT_QUEUE_MAX_NS / DCU_WAIT_QUEUE_NS_PER_TICKET
                      ? behind * DCU_WAIT_QUEUE_NS_PER_TICKET
                      : DCU_WAIT_QUEUE_MAX_NS;
    w->polls++;
    __nanosleep(ns > DCU_WAIT_HOST_SLEEP_NS ? ns : DCU_WAIT_HOST_SLEEP_NS);
}

#endif /* DCUDA_IMPL_CUDA_PRIMS_CUH */
