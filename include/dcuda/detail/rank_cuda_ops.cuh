/*
 * Memory operations of GPU ranks in PTX: acquire loads and release adds at
 * GPU scope (ranks of one GPU), system-scope accesses to mapped host memory
 * (watchdog status, cancel flag, log ring), and the block-cooperative copy
 * used by puts.
 */
#ifndef DCUDA_DETAIL_RANK_CUDA_OPS_CUH
#define DCUDA_DETAIL_RANK_CUDA_OPS_CUH

#include <stdint.h>

/* Polls before a waiting thread starts to sleep between polls (sleeps grow
 * from MIN to MAX), and before it shows itself blocked to the watchdog. */
#define DCUDA_DEV_SPIN_POLLS 4096u
#define DCUDA_DEV_SLEEP_MIN_NS 64u
#define DCUDA_DEV_SLEEP_MAX_NS 4096u
#define DCUDA_DEV_BLOCKED_POLLS (DCUDA_DEV_SPIN_POLLS + 2000u)

static __device__ __forceinline__ uint32_t dcuda_dev_ld_acquire(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ uint32_t dcuda_dev_ld_acquire_sys(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* Adds v to *p, releasing the calling thread's earlier writes (and, through
 * the preceding __syncthreads, those of its block) at GPU scope. */
static __device__ __forceinline__ void dcuda_dev_red_release(uint32_t *p, uint32_t v)
{
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* The same at system scope: a notification to a rank of another process
 * (another GPU), whose data this rank's block may have written over NVLink. */
static __device__ __forceinline__ void dcuda_dev_red_release_sys(uint32_t *p, uint32_t v)
{
    asm volatile("red.release.sys.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* Acquire load at the scope the rank's counters need: system scope once
 * ranks of other processes (GPUs) write them. */
static __device__ __forceinline__ uint32_t dcuda_dev_ld_acquire_at(const uint32_t *p, int sys)
{
    return sys ? dcuda_dev_ld_acquire_sys(p) : dcuda_dev_ld_acquire(p);
}

static __device__ __forceinline__ void dcuda_dev_st_relaxed_sys(uint32_t *p, uint32_t v)
{
    asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

static __device__ __forceinline__ void dcuda_dev_st_release_sys(uint32_t *p, uint32_t v)
{
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

static __device__ __forceinline__ uint64_t dcuda_dev_globaltimer(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Block-cooperative copy of n bytes, element type T, 8 loads in flight per
 * thread (one block needs ~16 KB in flight to approach its share of HBM
 * bandwidth); returns how many bytes it copied (whole elements only). */
template <typename T>
static __device__ __forceinline__ size_t dcuda_dev_copy_elems(char *dst, const char *src,
                                                             size_t n)
{
    const int unroll = 8;
    const T *s = (const T *)src;
    T *d = (T *)dst;
    size_t count = n / sizeof(T), i = threadIdx.x, nt = blockDim.x;
    for (; i + (unroll - 1) * nt < count; i += unroll * nt) {
        T v[unroll];
#pragma unroll
        for (int k = 0; k < unroll; k++)
            v[k] = s[i + k * nt];
#pragma unroll
        for (int k = 0; k < unroll; k++)
            d[i + k * nt] = v[k];
    }
    for (; i < count; i += nt)
        d[i] = s[i];
    return count * sizeof(T);
}

/* Copies n bytes with the widest accesses both addresses allow, narrowing
 * for the tail. */
static __device__ __forceinline__ void dcuda_dev_copy(char *dst, const char *src, size_t n)
{
    uintptr_t align = (uintptr_t)dst | (uintptr_t)src;
    size_t done = 0;
    if ((align & 15u) == 0)
        done += dcuda_dev_copy_elems<int4>(dst, src, n);
    if ((align & 7u) == 0 && n - done >= 8)
        done += dcuda_dev_copy_elems<uint2>(dst + done, src + done, n - done);
    if ((align & 3u) == 0 && n - done >= 4)
        done += dcuda_dev_copy_elems<uint32_t>(dst + done, src + done, n - done);
    for (size_t i = done + threadIdx.x; i < n; i += blockDim.x)
        dst[i] = src[i];
}

#endif /* DCUDA_DETAIL_RANK_CUDA_OPS_CUH */
