/*
 * CPU backend, host side: ranks are threads of this process. Memory that
 * ranks see is ordinary host memory, so "mapped" and "rank-visible" memory
 * are the same; copies are memcpy. With several processes, rank-visible
 * memory is shared memory (one memfd per allocation) that the peers map
 * through /proc/<pid>/fd. Launch starts one thread per rank, each running
 * the kernel's C form.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "cpu_rank.h"
#include "dcuda/impl/cpu/prims.h" /* DCU_CPU_SLEEP_MAX_NS */
#include "util/memfd.h"
#include "util/msg.h"

#define CPU_DEFAULT_RANKS_PER_CORE 8
#define CPU_MAX_DEFAULT_RANKS 256
/* CPU ranks are threads: at most this many per process. */
#define CPU_MAX_RANKS 8192
/* A waiting rank sleeps at most this long per rank on each core (see
 * cpu_sleep_cap): the wakeups of all waiting ranks then take a bounded
 * share of the cores, however many ranks there are. */
#define CPU_SLEEP_NS_PER_RANK_PER_CORE 16000u
#define CPU_RANK_STACK_BYTES (1u << 20)
#define CPU_ALIGN 64 /* cache-line aligned, like device allocations (which are more) */

typedef struct cpu_rank_arg {
    dcu_backend_t *b;
    int rank;
} cpu_rank_arg_t;

struct dcu_backend {
    dcu_cpu_kernel_fn kernel;
    int ranks;
    int processes;
    dcuda_context_t *ctx; /* of the running kernel */
    pthread_t *threads;
    cpu_rank_arg_t *args;
    char *scratch;         /* every rank's scratch memory (dcuda_rank_shared), or NULL */
    size_t scratch_stride; /* bytes of a rank's part, cache-line rounded */
    int started;
    atomic_int finished;
    uint64_t reads_started, reads_finished; /* read_start's tickets */
    /* write_start's: the copies not yet made (write t at t % WRITES) */
    struct {
        void *dst;
        const void *src;
        size_t size;
    } writes[DCU_BACKEND_WRITES];
    uint64_t writes_started, writes_looked, writes_made, writes_finished;
    uint64_t rmas_started, rmas_looked, rmas_finished; /* rma_start's tickets */
};

static long online_cores(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? cores : 1;
}

/* The longest sleep of a waiting rank: the default, or longer when there
 * are many ranks per core, so that the wakeups of thousands of waiting
 * ranks do not starve the ranks that work (ranks/core * 4 us: at most about
 * 250,000 wakeups a second per core). */
static uint32_t cpu_sleep_cap(int ranks)
{
    uint64_t per_core =
        ((uint64_t)ranks + (uint64_t)online_cores() - 1u) / (uint64_t)online_cores();
    uint64_t cap = per_core * CPU_SLEEP_NS_PER_RANK_PER_CORE;
    return cap > DCU_CPU_SLEEP_MAX_NS ? (uint32_t)cap : DCU_CPU_SLEEP_MAX_NS;
}

static void *zeroed_aligned(size_t size);

/* The ranks' scratch memory: a part of its own for each, cache-line apart. */
static dcuda_status_t alloc_scratch(dcu_backend_t *b, size_t bytes)
{
    size_t stride =
        bytes > SIZE_MAX - CPU_ALIGN ? 0 : (bytes + CPU_ALIGN - 1) & ~(size_t)(CPU_ALIGN - 1);
    if (stride == 0 || stride > SIZE_MAX / (size_t)b->ranks ||
        !(b->scratch = zeroed_aligned(stride * (size_t)b->ranks))) {
        dcu_msg_error("cannot allocate %zu bytes of scratch memory for each of %d CPU ranks", bytes,
                      b->ranks);
        return DCUDA_ERR_NO_MEMORY;
    }
    b->scratch_stride = stride;
    return DCUDA_OK;
}

static int cpu_devices(int in_child, char *why, size_t why_size)
{
    (void)in_child;
    (void)why;
    (void)why_size;
    return 1;
}

static dcuda_status_t cpu_open(const dcu_backend_request_t *req, dcu_backend_t **out,
                               dcu_backend_shape_t *shape)
{
    long ranks = req->ranks;
    if (ranks == 0) {
        ranks = online_cores() * CPU_DEFAULT_RANKS_PER_CORE;
        if (ranks > CPU_MAX_DEFAULT_RANKS)
            ranks = CPU_MAX_DEFAULT_RANKS;
    }
    if (ranks > CPU_MAX_RANKS) {
        dcu_msg_error("RANKS=%ld: CPU ranks are threads, and a process runs at most %d of them "
                      "(spread more over processes: DCUDA_PROCESSES=N, or mpirun -np N)",
                      ranks, CPU_MAX_RANKS);
        return DCUDA_ERR_SETTING;
    }
    dcu_backend_t *b = calloc(1, sizeof *b);
    if (!b)
        return DCUDA_ERR_NO_MEMORY;
    b->kernel = req->kernel.cpu;
    b->ranks = (int)ranks;
    b->processes = req->process_count;
    if (req->shared_bytes && alloc_scratch(b, req->shared_bytes) != DCUDA_OK) {
        free(b);
        return DCUDA_ERR_NO_MEMORY;
    }
    shape->ranks = (int)ranks;
    shape->threads_per_rank = 1; /* a CPU rank is one thread */
    snprintf(shape->device_name, sizeof shape->device_name, "%ld CPU threads", ranks);
    *out = b;
    return DCUDA_OK;
}

static void cpu_close(dcu_backend_t *b)
{
    free(b->scratch);
    free(b);
}

static void *zeroed_aligned(size_t size)
{
    if (size > SIZE_MAX - CPU_ALIGN)
        return NULL;
    size_t rounded = (size + CPU_ALIGN - 1) & ~(size_t)(CPU_ALIGN - 1);
    void *p = aligned_alloc(CPU_ALIGN, rounded ? rounded : CPU_ALIGN);
    if (p)
        memset(p, 0, rounded ? rounded : CPU_ALIGN);
    return p;
}

/* Whole pages for `size` bytes; 0 when that does not fit a size_t. */
static size_t shm_bytes(uint64_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (size > SIZE_MAX - page)
        return 0;
    return size ? ((size_t)size + page - 1) / page * page : page;
}

/* Shared memory peers can map: a memfd, zero-filled. */
static dcuda_status_t shm_alloc(size_t size, void **ptr, dcu_export_t *ex)
{
    if (shm_bytes(size) == 0) {
        dcu_msg_error("cannot allocate %zu bytes of shared memory: more than can be mapped", size);
        return DCUDA_ERR_NO_MEMORY;
    }
    int fd = dcu_memfd_create("dcuda-mem", shm_bytes(size));
    void *p = MAP_FAILED;
    if (fd >= 0)
        p = mmap(NULL, shm_bytes(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        dcu_msg_error("cannot allocate %zu bytes of shared memory: %s", size, strerror(errno));
        if (fd >= 0)
            close(fd);
        return errno == ENOMEM || errno == ENOSPC || errno == EFBIG ? DCUDA_ERR_NO_MEMORY
                                                                    : DCUDA_ERR_SYSTEM;
    }
    ex->kind = DCU_EXPORT_MEMFD;
    ex->fd = fd;
    ex->pid = (int32_t)getpid();
    *ptr = p;
    return DCUDA_OK;
}

static dcuda_status_t cpu_alloc(dcu_backend_t *b, size_t size, void **ptr, dcu_export_t *ex)
{
    if (b->processes > 1)
        return shm_alloc(size, ptr, ex);
    void *p = zeroed_aligned(size);
    if (!p) {
        dcu_msg_error("cannot allocate %zu bytes: out of memory", size);
        return DCUDA_ERR_NO_MEMORY;
    }
    ex->kind = DCU_EXPORT_NONE;
    *ptr = p;
    return DCUDA_OK;
}

static void cpu_free(dcu_backend_t *b, void *ptr, const dcu_export_t *ex)
{
    (void)b;
    if (ex->kind == DCU_EXPORT_MEMFD) {
        munmap(ptr, shm_bytes(ex->size));
        close(ex->fd);
    } else {
        free(ptr);
    }
}

/* Host memory of the application: this process's ranks reach it as it is;
 * other processes cannot map it (it is no memfd of ours). */
static dcuda_status_t cpu_register_mem(dcu_backend_t *b, void *ptr, size_t size, dcu_export_t *ex)
{
    (void)b;
    (void)ptr;
    (void)size;
    ex->kind = DCU_EXPORT_NONE;
    return DCUDA_OK;
}

static dcuda_status_t cpu_import(dcu_backend_t *b, int proc, const dcu_export_t *ex, void **mapped)
{
    (void)b;
    char path[64];
    int fd = dcu_memfd_open_peer((pid_t)ex->pid, ex->fd, path, sizeof path);
    void *p = fd < 0 ? MAP_FAILED
                     : mmap(NULL, shm_bytes(ex->size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    if (fd >= 0)
        close(fd);
    if (p == MAP_FAILED) {
        dcu_msg_error("cannot map %llu bytes of process %d's memory (%s): %s",
                      (unsigned long long)ex->size, proc, path, strerror(err));
        return DCUDA_ERR_SYSTEM;
    }
    *mapped = p;
    return DCUDA_OK;
}

static void cpu_unimport(dcu_backend_t *b, void *mapped, uint64_t size)
{
    (void)b;
    munmap(mapped, shm_bytes(size));
}

static dcuda_status_t cpu_map_host(dcu_backend_t *b, void *host, size_t size, void **rank_ptr)
{
    (void)b;
    (void)size;
    *rank_ptr = host;
    return DCUDA_OK;
}

static void cpu_unmap_host(dcu_backend_t *b, void *host)
{
    (void)b;
    (void)host;
}

static dcuda_status_t cpu_alloc_mapped(dcu_backend_t *b, size_t size, void **host_ptr,
                                       void **rank_ptr)
{
    (void)b;
    void *p = zeroed_aligned(size);
    if (!p)
        return DCUDA_ERR_NO_MEMORY;
    *host_ptr = *rank_ptr = p;
    return DCUDA_OK;
}

static void cpu_free_mapped(dcu_backend_t *b, void *host_ptr)
{
    (void)b;
    free(host_ptr);
}

/* The host's copies, which may run beside the ranks (a copy during a run,
 * as a DMA copy beside a running kernel, or one made before the launch by
 * another thread): aligned 8-byte words (bytes at unaligned ends), each
 * read and written whole with relaxed atomics, so a rank that polls a word
 * with an atomic load sees the old or the new value, never a torn one, and
 * no data race. As fast as memcpy for large copies (20 GB/s for 64 MiB on
 * one core), 0.1 us more for 4 KiB. */
static inline void copy_byte(char *dst, const char *src)
{
    __atomic_store_n(dst, __atomic_load_n(src, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

static void copy_beside_ranks(char *dst, const char *src, size_t size)
{
    size_t i = 0;
    if ((((uintptr_t)dst ^ (uintptr_t)src) & 7u) == 0) {
        for (; i < size && ((uintptr_t)(dst + i) & 7u); i++)
            copy_byte(dst + i, src + i);
        for (; i + 8 <= size; i += 8)
            __atomic_store_n(
                (uint64_t *)(void *)(dst + i),
                __atomic_load_n((const uint64_t *)(const void *)(src + i), __ATOMIC_RELAXED),
                __ATOMIC_RELAXED);
    }
    for (; i < size; i++)
        copy_byte(dst + i, src + i);
}

static dcuda_status_t cpu_copy(dcu_backend_t *b, void *dst, const void *src, size_t size)
{
    (void)b;
    copy_beside_ranks(dst, src, size);
    return DCUDA_OK;
}

static dcuda_status_t cpu_store32(dcu_backend_t *b, uint32_t *dst, uint32_t value)
{
    (void)b;
    __atomic_store_n(dst, value, __ATOMIC_RELEASE);
    return DCUDA_OK;
}

/* Rank memory read for the proxy (a put's source while its rank waits, a
 * get's bytes beside the rank that owns them): copied at once, but told
 * done only at the second look, as a copy engine's read would be, so that
 * the proxy's paths that wait for a read run on CPU ranks too. */
static dcuda_status_t cpu_read_start(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                     uint64_t *ticket)
{
    copy_beside_ranks(dst, src, size);
    *ticket = ++b->reads_started;
    return DCUDA_OK;
}

static int cpu_read_done(dcu_backend_t *b, uint64_t ticket)
{
    if (ticket <= b->reads_finished)
        return 1;
    b->reads_finished = ticket; /* reads finish in the order started */
    return 0;
}

/* A network put's or a host's bytes into rank memory for the proxy: made
 * late, at the second look at a write (with every write before it), as it
 * is told done. Until then rank memory holds what it held, as while a copy
 * engine's write runs: the proxy must keep the source until then, a read
 * it starts too early finds the old bytes, and its paths that wait for a
 * write run on CPU ranks too. */
static void make_writes(dcu_backend_t *b, uint64_t upto)
{
    for (; b->writes_made < upto; b->writes_made++) {
        uint64_t t = b->writes_made + 1u;
        copy_beside_ranks(b->writes[t % DCU_BACKEND_WRITES].dst,
                          b->writes[t % DCU_BACKEND_WRITES].src,
                          b->writes[t % DCU_BACKEND_WRITES].size);
    }
}

/* More than DCU_BACKEND_WRITES in flight (the proxies of several lanes
 * share the backend, each keeping its own count below the limit): the
 * oldest not yet made is made now, before its place is taken. */
static dcuda_status_t cpu_write_start(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                      uint64_t *ticket)
{
    uint64_t t = ++b->writes_started;
    if (t > DCU_BACKEND_WRITES)
        make_writes(b, t - DCU_BACKEND_WRITES);
    b->writes[t % DCU_BACKEND_WRITES].dst = dst;
    b->writes[t % DCU_BACKEND_WRITES].src = src;
    b->writes[t % DCU_BACKEND_WRITES].size = size;
    *ticket = t;
    return DCUDA_OK;
}

static int cpu_write_done(dcu_backend_t *b, uint64_t ticket)
{
    if (ticket <= b->writes_finished)
        return 1;
    if (ticket <= b->writes_looked) { /* the second look: made as it is told done */
        make_writes(b, ticket);
        b->writes_finished = ticket;
        return 1;
    }
    b->writes_looked = ticket;
    return 0;
}

/* The host's RMA: copied at once (each aligned 8-byte word whole, beside
 * the ranks), but told done only at the second look that does not wait,
 * as a copy engine's copy would be, so that a program's paths that find a
 * request still running run on CPU ranks too. */
static dcuda_status_t cpu_rma_start(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                    uint64_t *ticket)
{
    copy_beside_ranks(dst, src, size);
    *ticket = ++b->rmas_started;
    return DCUDA_OK;
}

static int cpu_rma_done(dcu_backend_t *b, uint64_t ticket, int wait)
{
    if (ticket <= b->rmas_finished)
        return 1;
    if (wait || ticket <= b->rmas_looked) {
        b->rmas_finished = ticket; /* copies finish in the order started */
        return 1;
    }
    b->rmas_looked = ticket;
    return 0;
}

/* Every copy is done when it starts: fn runs now. */
static dcuda_status_t cpu_rma_call(dcu_backend_t *b, void (*fn)(void *), void *arg,
                                   uint64_t *ticket)
{
    fn(arg);
    *ticket = ++b->rmas_started;
    return DCUDA_OK;
}

/* The ranks may be writing these counters: read them as atomics, each an
 * acquire (so a word a rank released, as an error record's `filled`,
 * orders what it wrote before for a later peek). */
static dcuda_status_t cpu_peek(dcu_backend_t *b, void *dst, const void *src, size_t size)
{
    (void)b;
    const _Atomic uint32_t *s = (const _Atomic uint32_t *)src;
    uint32_t *d = (uint32_t *)dst;
    for (size_t i = 0; i < size / sizeof *d; i++)
        d[i] = atomic_load_explicit(&s[i], memory_order_acquire);
    return DCUDA_OK;
}

/* A rank thread that ended inside the kernel (pthread_exit, cancellation):
 * the run ends with an error naming it, and the host still sees the rank
 * finished. */
static void cpu_rank_vanished(void *p)
{
    cpu_rank_arg_t *a = p;
    dcu_cpu_rank_vanished(a->b->ctx, a->rank);
    atomic_fetch_add_explicit(&a->b->finished, 1, memory_order_release);
}

static void *cpu_rank_main(void *p)
{
    cpu_rank_arg_t *a = p;
    dcu_backend_t *b = a->b;
    pthread_cleanup_push(cpu_rank_vanished, a);
    dcu_cpu_rank_run(b->ctx, a->rank, b->kernel);
    pthread_cleanup_pop(0);
    atomic_fetch_add_explicit(&b->finished, 1, memory_order_release);
    return NULL;
}

static dcuda_status_t cpu_join(dcu_backend_t *b);

static dcuda_status_t cpu_launch(dcu_backend_t *b, dcuda_context_t *ctx, void *stream)
{
    (void)stream;
    int n = b->ranks;
    b->ctx = ctx;
    ctx->shared_base = b->scratch; /* ranks find their scratch memory here */
    ctx->shared_stride = b->scratch_stride;
    dcu_cpu_sleep_max_ns = cpu_sleep_cap(n);
    b->threads = calloc((size_t)n, sizeof *b->threads);
    b->args = calloc((size_t)n, sizeof *b->args);
    b->started = 0;
    atomic_store(&b->finished, 0);
    if (!b->threads || !b->args) {
        cpu_join(b);
        return DCUDA_ERR_NO_MEMORY;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, CPU_RANK_STACK_BYTES);
    dcuda_status_t st = DCUDA_OK;
    for (int r = 0; r < n; r++) {
        b->args[r] = (cpu_rank_arg_t){ b, r };
        int err = pthread_create(&b->threads[r], &attr, cpu_rank_main, &b->args[r]);
        if (err) {
            dcu_msg_error("cannot start CPU rank %d of %d: %s", r, n, strerror(err));
            st = DCUDA_ERR_SYSTEM;
            break;
        }
        b->started++;
    }
    pthread_attr_destroy(&attr);
    /* Ranks that did start wait in rank_init's barrier for the missing
     * ones: end the run (their waits end with DCUDA_ERR_ABORTED). They are
     * left to the host, which serves them (their log lines may outnumber
     * the log ring's entries) until they finish, then joins; it tells the
     * other processes. */
    if (st != DCUDA_OK)
        atomic_store_explicit(ctx->cancel, DCUDA_CANCEL_ERROR, memory_order_release);
    return st;
}

static int cpu_finished(dcu_backend_t *b)
{
    return atomic_load_explicit(&b->finished, memory_order_acquire) == b->started;
}

static dcuda_status_t cpu_join(dcu_backend_t *b)
{
    for (int r = 0; r < b->started; r++)
        pthread_join(b->threads[r], NULL);
    free(b->threads);
    free(b->args);
    b->threads = NULL;
    b->args = NULL;
    b->started = 0;
    return DCUDA_OK;
}

const dcu_backend_ops_t dcu_cpu_backend_ops = {
    .kind = DCU_BACKEND_CPU,
    .name = "cpu",
    .peer_path = DCUDA_PATH_SHM,
    .devices = cpu_devices,
    .open = cpu_open,
    .close = cpu_close,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .register_mem = cpu_register_mem,
    .import = cpu_import,
    .unimport = cpu_unimport,
    .map_host = cpu_map_host,
    .unmap_host = cpu_unmap_host,
    .alloc_mapped = cpu_alloc_mapped,
    .free_mapped = cpu_free_mapped,
    .copy_in = cpu_copy,
    .copy_out = cpu_copy,
    .peek = cpu_peek,
    .rma_start = cpu_rma_start,
    .rma_done = cpu_rma_done,
    .rma_call = cpu_rma_call,
    .store32 = cpu_store32,
    .read_start = cpu_read_start,
    .read_done = cpu_read_done,
    .write_start = cpu_write_start,
    .write_done = cpu_write_done,
    .launch = cpu_launch,
    .finished = cpu_finished,
    .join = cpu_join,
};
