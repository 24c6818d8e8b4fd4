/*
 * The memory operations probe_queue.cu times, each one PTX instruction
 * with its order and scope spelled out (ld: acquire, st: release; gpu:
 * the device, sys: the host too), and the GPU's nanosecond timer. The
 * library's own are in include/dcuda/impl/cuda/prims.cuh.
 */
#ifndef DCUDA_BENCH_PROBE_PTX_CUH
#define DCUDA_BENCH_PROBE_PTX_CUH

#define PROBE_LD(name, sem, scope)                                                                 \
    static __device__ __forceinline__ unsigned name(const unsigned *p)                             \
    {                                                                                              \
        unsigned v;                                                                                \
        asm volatile("ld." #sem "." #scope ".global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); \
        return v;                                                                                  \
    }
#define PROBE_ST(name, op, sem, scope)                                                             \
    static __device__ __forceinline__ void name(unsigned *p, unsigned v)                           \
    {                                                                                              \
        asm volatile(#op "." #sem "." #scope ".global" op##_SUFFIX " [%0], %1;" ::"l"(p), "r"(v)   \
                     : "memory");                                                                  \
    }
#define st_SUFFIX ".u32"

PROBE_LD(ld_acquire_sys, acquire, sys)
PROBE_LD(ld_acquire_gpu, acquire, gpu)
PROBE_ST(st_release_sys, st, release, sys)

/* The eight 8-byte words of a 64-byte entry, as four relaxed 16-byte
 * loads of system scope in flight at once. */
static __device__ __forceinline__ void read_entry_sys(const unsigned long long *e,
                                                      unsigned long long x[8])
{
    for (int i = 0; i < 8; i += 2)
        asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];"
                     : "=l"(x[i]), "=l"(x[i + 1])
                     : "l"(e + i)
                     : "memory");
}

/* The GPU's global timer, in ns. */
static __device__ __forceinline__ unsigned long long global_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

#endif /* DCUDA_BENCH_PROBE_PTX_CUH */
