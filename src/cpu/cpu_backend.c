/*
 * CPU backend, host side: ranks are threads of this process. Memory that
 * ranks see is ordinary host memory, so "mapped" and "rank-visible" memory
 * are the same; copies are memcpy. With several processes, rank-visible
 * memory is shared memory (one memfd per allocation) that the peers map
 * through /proc/<pid>/fd. Launch starts one thread per rank, each running
 * the kernel's C form.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../core/host_internal.h"
#include "../core/hostlog.h"
#include "cpu_internal.h"

#define CPU_DEFAULT_RANKS_PER_CORE 8
#define CPU_MAX_DEFAULT_RANKS 256
#define CPU_RANK_STACK_BYTES (1u << 20)

_Thread_local const dcuda_context_t *dcuda_cpu_thread_ctx;
_Thread_local int dcuda_cpu_thread_rank = -1;

typedef struct cpu_rank_arg {
    dcuda_host_h host;
    int rank;
} cpu_rank_arg_t;

typedef struct cpu_backend {
    pthread_t *threads;
    cpu_rank_arg_t *args;
    int started;
    atomic_int finished;
} cpu_backend_t;

void dcuda_cpu_backoff(unsigned *spins)
{
    unsigned s = (*spins)++;
    if (s < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else if (s < 96) {
        sched_yield();
    } else {
        unsigned shift = s - 96 < 7 ? s - 96 : 7; /* 8 us .. 1 ms */
        struct timespec ts = {0, (long)(8000u << shift)};
        nanosleep(&ts, NULL);
    }
}

static int cpu_available(char *why, size_t why_size)
{
    (void)why;
    (void)why_size;
    return 1;
}

static dcuda_status_t cpu_open(dcuda_host_h h, int threads_per_rank)
{
    long ranks = h->settings.ranks;
    if (ranks == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        ranks = (cores > 0 ? cores : 1) * CPU_DEFAULT_RANKS_PER_CORE;
        if (ranks > CPU_MAX_DEFAULT_RANKS)
            ranks = CPU_MAX_DEFAULT_RANKS;
    }
    cpu_backend_t *b = calloc(1, sizeof *b);
    if (!b)
        return DCUDA_ERR_NO_MEMORY;
    h->backend = b;
    (void)threads_per_rank; /* a CPU rank is one thread */
    snprintf(h->device_name, sizeof h->device_name, "%ld CPU threads", ranks);
    int procs = dcuda_procs_count(), me = dcuda_procs_index();
    h->info = (dcuda_rank_info_t){
        .rank_count = (int)ranks,
        .rank_responsible = (int)ranks,
        .rank_start = 0,
        .device_count = procs,
        .device_index = me,
        .node_count = 1,
        .node_index = 0,
        .process_count = procs,
        .process_index = me,
        .threads_per_rank = 1,
        .backend = "cpu",
        .device_name = h->device_name,
    };
    return DCUDA_OK;
}

static void cpu_close(dcuda_host_h h)
{
    free(h->backend);
    h->backend = NULL;
}

static size_t shm_bytes(uint64_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return size ? ((size_t)size + page - 1) / page * page : page;
}

/* Shared memory peers can map: a memfd, zero-filled. */
static dcuda_status_t shm_alloc(size_t size, void **ptr, dcuda_export_t *ex)
{
    int fd = memfd_create("dcuda-mem", 0);
    void *p = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, (off_t)shm_bytes(size)) == 0)
        p = mmap(NULL, shm_bytes(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        dcuda_hostlog_error("cannot allocate %zu bytes of shared memory: %s", size,
                            strerror(errno));
        if (fd >= 0)
            close(fd);
        return errno == ENOMEM || errno == ENOSPC ? DCUDA_ERR_NO_MEMORY : DCUDA_ERR_SYSTEM;
    }
    ex->kind = DCUDA_EXPORT_MEMFD;
    ex->fd = fd;
    *ptr = p;
    return DCUDA_OK;
}

static dcuda_status_t cpu_alloc(dcuda_host_h h, size_t size, void **ptr, dcuda_export_t *ex)
{
    (void)h;
    if (dcuda_procs_count() > 1)
        return shm_alloc(size, ptr, ex);
    /* Cache-line aligned, like device allocations are (more, in fact). */
    size_t rounded = (size + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (!p)
        return DCUDA_ERR_NO_MEMORY;
    memset(p, 0, rounded ? rounded : 64);
    ex->kind = DCUDA_EXPORT_NONE;
    *ptr = p;
    return DCUDA_OK;
}

static void cpu_free(dcuda_host_h h, void *ptr, const dcuda_export_t *ex)
{
    (void)h;
    if (ex->kind == DCUDA_EXPORT_MEMFD) {
        munmap(ptr, shm_bytes(ex->size));
        close(ex->fd);
    } else {
        free(ptr);
    }
}

static dcuda_status_t cpu_import(dcuda_host_h h, int proc, const dcuda_export_t *ex,
                                 void **local)
{
    (void)h;
    char path[64];
    pid_t pid = (pid_t)dcuda_procs_node()->procs[proc].pid;
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, ex->fd);
    int fd = open(path, O_RDWR);
    void *p = fd < 0 ? MAP_FAILED
                     : mmap(NULL, shm_bytes(ex->size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    if (fd >= 0)
        close(fd);
    if (p == MAP_FAILED) {
        dcuda_hostlog_error("cannot map %llu bytes of process %d's memory (%s): %s",
                            (unsigned long long)ex->size, proc, path, strerror(err));
        return DCUDA_ERR_SYSTEM;
    }
    *local = p;
    return DCUDA_OK;
}

static void cpu_unimport(dcuda_host_h h, void *local, uint64_t size)
{
    (void)h;
    munmap(local, shm_bytes(size));
}

static dcuda_status_t cpu_map_node(dcuda_host_h h, void *node, size_t size, void **rank_ptr)
{
    (void)h;
    (void)size;
    *rank_ptr = node;
    return DCUDA_OK;
}

static void cpu_unmap_node(dcuda_host_h h, void *node)
{
    (void)h;
    (void)node;
}

static dcuda_status_t cpu_alloc_mapped(dcuda_host_h h, size_t size, void **host_ptr,
                                       void **rank_ptr)
{
    (void)h;
    size_t rounded = (size + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (!p)
        return DCUDA_ERR_NO_MEMORY;
    memset(p, 0, rounded ? rounded : 64);
    *host_ptr = *rank_ptr = p;
    return DCUDA_OK;
}

static void cpu_free_mapped(dcuda_host_h h, void *host_ptr)
{
    (void)h;
    free(host_ptr);
}

static dcuda_status_t cpu_copy(dcuda_host_h h, void *dst, const void *src, size_t size)
{
    (void)h;
    memcpy(dst, src, size);
    return DCUDA_OK;
}

/* The ranks may be writing these counters: read them as atomics. */
static dcuda_status_t cpu_peek(dcuda_host_h h, void *dst, const void *src, size_t size)
{
    (void)h;
    const _Atomic uint32_t *s = (const _Atomic uint32_t *)src;
    uint32_t *d = (uint32_t *)dst;
    for (size_t i = 0; i < size / sizeof *d; i++)
        d[i] = atomic_load_explicit(&s[i], memory_order_relaxed);
    return DCUDA_OK;
}

static void *cpu_rank_main(void *p)
{
    cpu_rank_arg_t *a = p;
    dcuda_host_h h = a->host;
    cpu_backend_t *b = h->backend;
    dcuda_cpu_thread_ctx = h->dev_ctx;
    dcuda_cpu_thread_rank = a->rank;
    h->kernel.cpu((dcuda_context_h)h->dev_ctx);
    atomic_store_explicit(&h->status_h[a->rank].phase, DCUDA_PHASE_FINISHED,
                          memory_order_release);
    atomic_fetch_add_explicit(&b->finished, 1, memory_order_release);
    return NULL;
}

static dcuda_status_t cpu_join(dcuda_host_h h);

static dcuda_status_t cpu_launch(dcuda_host_h h)
{
    cpu_backend_t *b = h->backend;
    int n = h->image.device_size;
    b->threads = calloc((size_t)n, sizeof *b->threads);
    b->args = calloc((size_t)n, sizeof *b->args);
    b->started = 0;
    atomic_store(&b->finished, 0);
    if (!b->threads || !b->args) {
        cpu_join(h);
        return DCUDA_ERR_NO_MEMORY;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, CPU_RANK_STACK_BYTES);
    dcuda_status_t st = DCUDA_OK;
    for (int r = 0; r < n; r++) {
        b->args[r] = (cpu_rank_arg_t){h, r};
        int err = pthread_create(&b->threads[r], &attr, cpu_rank_main, &b->args[r]);
        if (err) {
            dcuda_hostlog_error("cannot start CPU rank %d of %d: %s", r, n, strerror(err));
            st = DCUDA_ERR_SYSTEM;
            break;
        }
        b->started++;
    }
    pthread_attr_destroy(&attr);
    /* Ranks that did start wait in rank_init's barrier for the missing
     * ones: cancel their waits (they fail with DCUDA_ERR_TIMEOUT) and join. */
    if (st != DCUDA_OK) {
        atomic_store_explicit(h->cancel_h, DCUDA_CANCEL_WATCHDOG, memory_order_release);
        cpu_join(h);
    }
    return st;
}

static int cpu_finished(dcuda_host_h h)
{
    cpu_backend_t *b = h->backend;
    return atomic_load_explicit(&b->finished, memory_order_acquire) == b->started;
}

static dcuda_status_t cpu_join(dcuda_host_h h)
{
    cpu_backend_t *b = h->backend;
    for (int r = 0; r < b->started; r++)
        pthread_join(b->threads[r], NULL);
    free(b->threads);
    free(b->args);
    b->threads = NULL;
    b->args = NULL;
    b->started = 0;
    return DCUDA_OK;
}

const dcuda_backend_ops_t dcuda_cpu_backend_ops = {
    .name = "cpu",
    .available = cpu_available,
    .open = cpu_open,
    .close = cpu_close,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .import = cpu_import,
    .unimport = cpu_unimport,
    .map_node = cpu_map_node,
    .unmap_node = cpu_unmap_node,
    .alloc_mapped = cpu_alloc_mapped,
    .free_mapped = cpu_free_mapped,
    .copy_in = cpu_copy,
    .copy_out = cpu_copy,
    .peek = cpu_peek,
    .launch = cpu_launch,
    .finished = cpu_finished,
    .join = cpu_join,
};
