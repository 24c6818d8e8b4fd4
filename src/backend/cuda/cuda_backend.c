/*
 * CUDA backend, host side: ranks are the blocks of one persistent kernel.
 *
 * The grid is sized from the occupancy calculator so that every block is
 * resident at once, and launched cooperatively, which the driver refuses
 * (rather than deadlocks) if that ever stops being true. Shared tables live
 * in device memory; what the host reads while the kernel runs (watchdog
 * status, log ring, cancel flag) lives in pinned, mapped host memory.
 *
 * With several processes each drives the GPU of its index; allocations are
 * exported with CUDA IPC handles and peers open them once, reaching them
 * over NVLink or PCIe peer-to-peer; the node segment is registered as
 * mapped host memory so that ranks reach the WORLD barrier slots.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "util/msg.h"

struct dcu_backend {
    int device;
    int threads;
    int ranks;
    int processes;
    const void *kernel;     /* the __global__ function */
    size_t shared_bytes;    /* dynamic shared memory of each block (dcuda_rank_shared) */
    cudaStream_t stream;    /* the persistent kernel */
    cudaStream_t peek;      /* reads while it runs */
    cudaStream_t copies;    /* dcuda_host_copy_in/out (never waits for the kernel) */
    cudaEvent_t app_ready;  /* the application's stream reached the run */
    cudaEvent_t ranks_done; /* the kernel ended: the application's stream goes on */
    cudaStream_t reads;     /* the proxy's reads of rank memory (read_start) */
    cudaEvent_t read_ends[DCU_BACKEND_READS]; /* read t ends at read_ends[t % READS] */
    uint64_t reads_started;
    cudaStream_t writes; /* the proxy's writes of rank memory (write_start) */
    cudaEvent_t write_ends[DCU_BACKEND_WRITES]; /* write t ends at write_ends[t % WRITES] */
    uint64_t writes_started;
    cudaStream_t rmas;                      /* the host's RMA copies (rma_start) */
    cudaEvent_t rma_ends[DCU_BACKEND_RMAS]; /* copy t ends at rma_ends[t % RMAS] */
    uint64_t rmas_started, rmas_finished;
    int launched;
};

static dcuda_status_t cuda_fail(cudaError_t err, const char *what)
{
    dcu_msg_error("%s: %s (%s)", what, cudaGetErrorString(err), cudaGetErrorName(err));
    return DCUDA_ERR_BACKEND;
}

#define CUDA_TRY(call, what)                                                                       \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess)                                                                   \
            return cuda_fail(err_, what);                                                          \
    } while (0)

/* Why cudaGetDeviceCount failed, in the user's terms: no driver at all (a
 * host without NVIDIA's driver, where the runtime says the driver is
 * "insufficient"), a driver older than this build's runtime, or a driver
 * that sees no GPU. */
static void explain_no_device(cudaError_t err, char *why, size_t why_size)
{
    int driver = 0, runtime = CUDART_VERSION;
    if (cudaDriverGetVersion(&driver) != cudaSuccess)
        driver = 0;
    if (driver == 0)
        snprintf(why, why_size,
                 "no NVIDIA driver on this host (libcuda not found): GPU ranks need one; CPU "
                 "ranks run here (DCUDA_BACKEND=cpu)");
    else if (err == cudaErrorInsufficientDriver || driver < runtime)
        snprintf(why, why_size,
                 "the NVIDIA driver supports CUDA %d.%d, this build's CUDA runtime needs %d.%d: "
                 "update the driver",
                 driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    else if (err == cudaErrorNoDevice)
        snprintf(why, why_size, "the NVIDIA driver (CUDA %d.%d) sees no GPU", driver / 1000,
                 driver % 1000 / 10);
    else
        snprintf(why, why_size, "no usable CUDA device (%s: %s)", cudaGetErrorName(err),
                 cudaGetErrorString(err));
}

/* GPUs visible here, or 0 and the reason. */
static int count_in_process(char *why, size_t why_size)
{
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess)
        explain_no_device(err, why, why_size);
    else if (n == 0)
        snprintf(why, why_size, "no CUDA device present");
    return err == cudaSuccess ? n : 0;
}

/* The same, asked of a short-lived child process: a process that forks its
 * peers must not have touched CUDA before. */
static int count_in_child(char *why, size_t why_size)
{
    struct {
        int n;
        char why[200];
    } answer = { 0, "cannot start a process to look for GPUs" };
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        goto done;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        answer.n = count_in_process(answer.why, sizeof answer.why);
        ssize_t w = write(fds[1], &answer, sizeof answer);
        _exit(w == (ssize_t)sizeof answer ? 0 : 1);
    }
    close(fds[1]);
    if (pid > 0) {
        if (read(fds[0], &answer, sizeof answer) != (ssize_t)sizeof answer)
            answer.n = 0;
        waitpid(pid, NULL, 0);
    }
    close(fds[0]);
done:
    if (why && why_size)
        snprintf(why, why_size, "%s", answer.why);
    return answer.n;
}

/* Counted once per process: in a child while this process must stay
 * untouched by CUDA, in this process afterwards. */
static int cuda_devices(int in_child, char *why, size_t why_size)
{
    static int known, count;
    static char reason[200];
    if (!known) {
        count = in_child ? count_in_child(reason, sizeof reason)
                         : count_in_process(reason, sizeof reason);
        known = 1;
    }
    if (why && why_size)
        snprintf(why, why_size, "%s", reason);
    return count;
}

/* Lets the kernel's blocks have b->shared_bytes of dynamic shared memory,
 * or says the most they can have. A block whose static and dynamic shared
 * memory together pass what every block gets unasked (48 KiB) must be
 * allowed more: the kernel is always told its dynamic size, so a smaller
 * one after a larger is right too. */
static dcuda_status_t allow_shared(dcu_backend_t *b, const dcu_backend_request_t *req,
                                   const struct cudaDeviceProp *prop,
                                   const struct cudaFuncAttributes *attr)
{
    size_t most = prop->sharedMemPerBlockOptin - attr->sharedSizeBytes;
    if (b->shared_bytes > most) {
        dcu_msg_error("shared_bytes %zu: a block of kernel %s can have at most %zu bytes of "
                      "dynamic shared memory on %s (%zu of %zu are its static shared memory)",
                      b->shared_bytes, req->kernel.name, most, prop->name, attr->sharedSizeBytes,
                      prop->sharedMemPerBlockOptin);
        return DCUDA_ERR_SETTING;
    }
    CUDA_TRY(cudaFuncSetAttribute(b->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)b->shared_bytes),
             "allowing the kernel its dynamic shared memory");
    return DCUDA_OK;
}

/* Why not one block of the kernel fits an SM, by what it needs. */
static void explain_no_fit(const dcu_backend_t *b, const dcu_backend_request_t *req,
                           const struct cudaDeviceProp *prop, const struct cudaFuncAttributes *attr)
{
    long regs = (long)attr->numRegs * b->threads;
    size_t shared = attr->sharedSizeBytes + b->shared_bytes;
    if (b->threads > attr->maxThreadsPerBlock)
        dcu_msg_error("kernel %s cannot run %d threads per rank on %s: its blocks can have at "
                      "most %d threads (its %d registers a thread allow no more)",
                      req->kernel.name, b->threads, prop->name, attr->maxThreadsPerBlock,
                      attr->numRegs);
    else if (regs > prop->regsPerBlock || regs > prop->regsPerMultiprocessor)
        dcu_msg_error("kernel %s with %d threads per rank cannot run on %s: a block needs %ld "
                      "registers (%d a thread), an SM has %d",
                      req->kernel.name, b->threads, prop->name, regs, attr->numRegs,
                      prop->regsPerMultiprocessor);
    else
        dcu_msg_error("kernel %s with %d threads per rank cannot run on %s: a block needs %zu "
                      "bytes of shared memory (%zu static, %zu of shared_bytes) and %ld "
                      "registers (%d a thread); an SM has %zu bytes and %d registers",
                      req->kernel.name, b->threads, prop->name, shared, attr->sharedSizeBytes,
                      b->shared_bytes, regs, attr->numRegs, prop->sharedMemPerMultiprocessor,
                      prop->regsPerMultiprocessor);
}

/* Ranks = blocks that fit on the GPU at once (bounded by the RANKS setting). */
static dcuda_status_t size_grid(dcu_backend_t *b, const dcu_backend_request_t *req,
                                const struct cudaDeviceProp *prop)
{
    int per_sm = 0;
    struct cudaFuncAttributes attr;
    CUDA_TRY(cudaFuncGetAttributes(&attr, b->kernel), "the kernel's attributes");
    if (b->threads > attr.maxThreadsPerBlock) {
        explain_no_fit(b, req, prop, &attr);
        return DCUDA_ERR_BACKEND;
    }
    dcuda_status_t st = allow_shared(b, req, prop, &attr);
    if (st != DCUDA_OK)
        return st;
    CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, b->kernel, b->threads,
                                                           b->shared_bytes),
             "occupancy of the kernel");
    int fit = per_sm * prop->multiProcessorCount;
    if (fit <= 0) {
        explain_no_fit(b, req, prop, &attr);
        return DCUDA_ERR_BACKEND;
    }
    if (req->ranks > fit) {
        dcu_msg_error("RANKS=%ld but only %d blocks of kernel %s (%d threads) can be resident "
                      "at once on %s; ranks must all run concurrently",
                      req->ranks, fit, req->kernel.name, b->threads, prop->name);
        return DCUDA_ERR_SETTING;
    }
    b->ranks = req->ranks > 0 ? (int)req->ranks : fit;
    return DCUDA_OK;
}

/* Can this GPU reach the GPUs of the processes of its node directly? */
static dcuda_status_t check_peers(int device, const dcu_backend_request_t *req)
{
    for (int i = 0; i < req->peer_count; i++) {
        int other = req->peers[i], can = 0;
        if (other == device)
            continue;
        CUDA_TRY(cudaDeviceCanAccessPeer(&can, device, other), "asking for peer access");
        if (!can) {
            dcu_msg_error("GPU %d cannot reach GPU %d directly (no NVLink or PCIe peer-to-peer "
                          "between them); this build of dcuda needs it for ranks on several "
                          "GPUs",
                          device, other);
            return DCUDA_ERR_UNSUPPORTED;
        }
    }
    return DCUDA_OK;
}

/* Process i of a host drives its GPU i. */
static dcuda_status_t pick_device(dcu_backend_t *b, const dcu_backend_request_t *req)
{
    int gpus = 0, procs = req->host_processes;
    CUDA_TRY(cudaGetDeviceCount(&gpus), "counting GPUs");
    if (procs > gpus) {
        dcu_msg_error("%d processes on this host but %d GPU(s): each process needs a GPU of "
                      "its own (the ranks of all processes must be resident at once)",
                      procs, gpus);
        return DCUDA_ERR_SETTING;
    }
    b->device = req->device;
    CUDA_TRY(cudaSetDevice(b->device), "selecting the GPU");
    return check_peers(b->device, req);
}

/* Whatever open made (a NULL stream or event is skipped). */
static void close_here(dcu_backend_t *b)
{
    for (int i = 0; i < DCU_BACKEND_READS; i++)
        if (b->read_ends[i])
            cudaEventDestroy(b->read_ends[i]);
    for (int i = 0; i < DCU_BACKEND_WRITES; i++)
        if (b->write_ends[i])
            cudaEventDestroy(b->write_ends[i]);
    for (int i = 0; i < DCU_BACKEND_RMAS; i++)
        if (b->rma_ends[i])
            cudaEventDestroy(b->rma_ends[i]);
    if (b->stream)
        cudaStreamDestroy(b->stream);
    if (b->peek)
        cudaStreamDestroy(b->peek);
    if (b->copies)
        cudaStreamDestroy(b->copies);
    if (b->app_ready)
        cudaEventDestroy(b->app_ready);
    if (b->ranks_done)
        cudaEventDestroy(b->ranks_done);
    if (b->reads)
        cudaStreamDestroy(b->reads);
    if (b->writes)
        cudaStreamDestroy(b->writes);
    if (b->rmas)
        cudaStreamDestroy(b->rmas);
    free(b);
}

static dcuda_status_t cuda_open(const dcu_backend_request_t *req, dcu_backend_t **out,
                                dcu_backend_shape_t *shape)
{
    dcu_backend_t *b = calloc(1, sizeof *b);
    if (!b)
        return DCUDA_ERR_NO_MEMORY;
    b->kernel = req->kernel.gpu;
    b->processes = req->process_count;
    struct cudaDeviceProp prop;
    cudaError_t err = cudaSuccess;
    dcuda_status_t st = pick_device(b, req);
    if (st == DCUDA_OK && (err = cudaGetDeviceProperties(&prop, b->device)) != cudaSuccess)
        st = cuda_fail(err, "reading the GPU's properties");
    if (st != DCUDA_OK) {
        /* reported */
    } else if (!prop.cooperativeLaunch) {
        dcu_msg_error("%s cannot launch cooperative kernels", prop.name);
        st = DCUDA_ERR_BACKEND;
    } else if (req->threads_per_rank > prop.maxThreadsPerBlock) {
        dcu_msg_error("threads_per_rank %d exceeds %d on %s", req->threads_per_rank,
                      prop.maxThreadsPerBlock, prop.name);
        st = DCUDA_ERR_INVALID_ARG;
    }
    b->threads = req->threads_per_rank;
    b->shared_bytes = req->shared_bytes;
    if (st == DCUDA_OK)
        st = size_grid(b, req, &prop);
    if (st == DCUDA_OK && ((err = cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking)) ||
                           (err = cudaStreamCreateWithFlags(&b->peek, cudaStreamNonBlocking)) ||
                           (err = cudaStreamCreateWithFlags(&b->copies, cudaStreamNonBlocking)) ||
                           (err = cudaStreamCreateWithFlags(&b->reads, cudaStreamNonBlocking)) ||
                           (err = cudaStreamCreateWithFlags(&b->writes, cudaStreamNonBlocking)) ||
                           (err = cudaStreamCreateWithFlags(&b->rmas, cudaStreamNonBlocking))))
        st = cuda_fail(err, "creating streams");
    if (st == DCUDA_OK &&
        ((err = cudaEventCreateWithFlags(&b->app_ready, cudaEventDisableTiming)) ||
         (err = cudaEventCreateWithFlags(&b->ranks_done, cudaEventDisableTiming))))
        st = cuda_fail(err, "creating events");
    for (int i = 0; st == DCUDA_OK && i < DCU_BACKEND_READS; i++)
        if ((err = cudaEventCreateWithFlags(&b->read_ends[i], cudaEventDisableTiming)))
            st = cuda_fail(err, "creating events");
    for (int i = 0; st == DCUDA_OK && i < DCU_BACKEND_WRITES; i++)
        if ((err = cudaEventCreateWithFlags(&b->write_ends[i], cudaEventDisableTiming)))
            st = cuda_fail(err, "creating events");
    for (int i = 0; st == DCUDA_OK && i < DCU_BACKEND_RMAS; i++)
        if ((err = cudaEventCreateWithFlags(&b->rma_ends[i], cudaEventDisableTiming)))
            st = cuda_fail(err, "creating events");
    if (st != DCUDA_OK) {
        close_here(b);
        return st;
    }
    shape->ranks = b->ranks;
    shape->threads_per_rank = b->threads;
    snprintf(shape->device_name, sizeof shape->device_name, "GPU %d: %.96s, %d SMs", b->device,
             prop.name, prop.multiProcessorCount);
    *out = b;
    return DCUDA_OK;
}

static dcuda_status_t alloc_here(dcu_backend_t *b, size_t size, void **ptr, dcu_export_t *ex)
{
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, size ? size : 1);
    if (err != cudaSuccess) {
        dcu_msg_error("cannot allocate %zu bytes of device memory: %s (%s)", size,
                      cudaGetErrorString(err), cudaGetErrorName(err));
        return DCUDA_ERR_NO_MEMORY;
    }
    /* Zeroed on the copies' stream, finished before it is handed out: the
     * copies that follow do not wait for the legacy default stream. */
    if ((err = cudaMemsetAsync(p, 0, size ? size : 1, b->copies)) == cudaSuccess)
        err = cudaStreamSynchronize(b->copies);
    if (err == cudaSuccess && b->processes > 1) {
        cudaIpcMemHandle_t handle;
        err = cudaIpcGetMemHandle(&handle, p);
        if (err == cudaSuccess) {
            memcpy(ex->handle, &handle, sizeof handle);
            ex->kind = DCU_EXPORT_CUDA_IPC;
        }
    }
    if (err != cudaSuccess) {
        cudaFree(p);
        return cuda_fail(err, "preparing device memory");
    }
    *ptr = p;
    return DCUDA_OK;
}

static void free_here(dcu_backend_t *b, void *ptr, const dcu_export_t *ex)
{
    (void)b;
    (void)ex;
    cudaFree(ptr);
}

static dcuda_status_t import_here(dcu_backend_t *b, int proc, const dcu_export_t *ex, void **mapped)
{
    (void)b;
    cudaIpcMemHandle_t handle;
    memcpy(&handle, ex->handle, sizeof handle);
    cudaError_t err = cudaIpcOpenMemHandle(mapped, handle, cudaIpcMemLazyEnablePeerAccess);
    if (err != cudaSuccess) {
        dcu_msg_error("cannot open %llu bytes of process %d's GPU memory: %s",
                      (unsigned long long)ex->size, proc, cudaGetErrorString(err));
        return DCUDA_ERR_BACKEND;
    }
    return DCUDA_OK;
}

static void unimport_here(dcu_backend_t *b, void *mapped, uint64_t size)
{
    (void)b;
    (void)size;
    cudaIpcCloseMemHandle(mapped);
}

/* The allocation that holds ptr (the driver's cuMemGetAddressRange; the
 * runtime loaded the driver already). 0 when it cannot tell. */
static int allocation_of(const void *ptr, uint64_t *base, uint64_t *size)
{
    typedef int (*range_fn)(unsigned long long *, size_t *, unsigned long long);
    void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!lib)
        return 0;
    range_fn range = NULL;
    *(void **)&range = dlsym(lib, "cuMemGetAddressRange_v2");
    unsigned long long b = 0;
    size_t n = 0;
    int ok = range && range(&b, &n, (unsigned long long)(uintptr_t)ptr) == 0;
    dlclose(lib);
    *base = b;
    *size = n;
    return ok;
}

/* GPU memory the application allocated (cudaMalloc) on this process's GPU:
 * exported with the IPC handle of the allocation that holds it. */
static dcuda_status_t register_mem_here(dcu_backend_t *b, void *ptr, size_t size, dcu_export_t *ex)
{
    struct cudaPointerAttributes attr;
    cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
    if (err != cudaSuccess || attr.type != cudaMemoryTypeDevice || attr.device != b->device) {
        cudaGetLastError();
        dcu_msg_error("dcuda_host_register: %p is not device memory of GPU %d (this process's "
                      "GPU; cudaMalloc it there)",
                      ptr, b->device);
        return DCUDA_ERR_INVALID_ARG;
    }
    uint64_t base = 0, bytes = 0, at = (uint64_t)(uintptr_t)ptr;
    if (!allocation_of(ptr, &base, &bytes) || at - base > bytes || size > bytes - (at - base)) {
        dcu_msg_error("dcuda_host_register: %zu bytes at %p run past the end of the allocation "
                      "that holds them (%llu bytes)",
                      size, ptr, (unsigned long long)bytes);
        return DCUDA_ERR_INVALID_ARG;
    }
    ex->kind = DCU_EXPORT_NONE;
    ex->offset = at - base;
    if (b->processes <= 1)
        return DCUDA_OK;
    cudaIpcMemHandle_t handle;
    err = cudaIpcGetMemHandle(&handle, (void *)(uintptr_t)base);
    if (err != cudaSuccess) {
        cudaGetLastError();
        dcu_msg_error("dcuda_host_register: other processes cannot map the allocation that "
                      "holds %p (%s): register memory of cudaMalloc (not of a stream-ordered "
                      "pool or cudaMallocManaged)",
                      ptr, cudaGetErrorString(err));
        return DCUDA_ERR_INVALID_ARG;
    }
    memcpy(ex->handle, &handle, sizeof handle);
    ex->kind = DCU_EXPORT_CUDA_IPC;
    return DCUDA_OK;
}

static dcuda_status_t map_host_here(dcu_backend_t *b, void *host, size_t size, void **rank_ptr)
{
    (void)b;
    CUDA_TRY(cudaHostRegister(host, size, cudaHostRegisterMapped | cudaHostRegisterPortable),
             "registering host memory");
    CUDA_TRY(cudaHostGetDevicePointer(rank_ptr, host, 0), "mapping host memory");
    return DCUDA_OK;
}

static void unmap_host_here(dcu_backend_t *b, void *host)
{
    (void)b;
    cudaHostUnregister(host);
}

static dcuda_status_t alloc_mapped_here(dcu_backend_t *b, size_t size, void **host_ptr,
                                        void **rank_ptr)
{
    (void)b;
    void *p = NULL;
    CUDA_TRY(cudaHostAlloc(&p, size ? size : 1, cudaHostAllocMapped), "cudaHostAlloc");
    memset(p, 0, size ? size : 1);
    cudaError_t err = cudaHostGetDevicePointer(rank_ptr, p, 0);
    if (err != cudaSuccess) {
        cudaFreeHost(p);
        return cuda_fail(err, "mapping pinned host memory");
    }
    *host_ptr = p;
    return DCUDA_OK;
}

static void free_mapped_here(dcu_backend_t *b, void *host_ptr)
{
    (void)b;
    cudaFreeHost(host_ptr);
}

/* On a stream of their own that waits for nothing else: a copy while the
 * ranks run (dcuda_host_run_start) does not wait for them. */
static dcuda_status_t copy_in_here(dcu_backend_t *b, void *dst, const void *src, size_t size)
{
    CUDA_TRY(cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault, b->copies), "copy to the GPU");
    CUDA_TRY(cudaStreamSynchronize(b->copies), "copy to the GPU");
    return DCUDA_OK;
}

static dcuda_status_t copy_out_here(dcu_backend_t *b, void *dst, const void *src, size_t size)
{
    CUDA_TRY(cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault, b->copies), "copy from the GPU");
    CUDA_TRY(cudaStreamSynchronize(b->copies), "copy from the GPU");
    return DCUDA_OK;
}

static dcuda_status_t peek_here(dcu_backend_t *b, void *dst, const void *src, size_t size)
{
    CUDA_TRY(cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault, b->peek), "reading the GPU");
    CUDA_TRY(cudaStreamSynchronize(b->peek), "reading the GPU");
    return DCUDA_OK;
}

/* A copy on `stream` while the ranks run, told done by an event of a ring
 * of n (copy t ends at ends[t % n]): reads of rank memory for the proxy,
 * and writes of network puts into it. */
static dcuda_status_t copy_start(cudaStream_t stream, cudaEvent_t *ends, unsigned n,
                                 uint64_t *started, void *dst, const void *src, size_t size,
                                 uint64_t *ticket, const char *what)
{
    uint64_t t = *started + 1u;
    CUDA_TRY(cudaMemcpyAsync(dst, src, size, cudaMemcpyDefault, stream), what);
    CUDA_TRY(cudaEventRecord(ends[t % n], stream), what);
    *started = t;
    *ticket = t;
    return DCUDA_OK;
}

static int copy_done(cudaEvent_t end, const char *what)
{
    cudaError_t err = cudaEventQuery(end);
    if (err == cudaErrorNotReady)
        return 0;
    if (err != cudaSuccess) {
        cuda_fail(err, what);
        return -1;
    }
    return 1;
}

static dcuda_status_t cuda_read_start(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                      uint64_t *ticket)
{
    return copy_start(b->reads, b->read_ends, DCU_BACKEND_READS, &b->reads_started, dst, src, size,
                      ticket, "reading a rank's source");
}

static int cuda_read_done(dcu_backend_t *b, uint64_t ticket)
{
    return copy_done(b->read_ends[ticket % DCU_BACKEND_READS], "reading a rank's source");
}

/* A network put's bytes into rank memory, on a stream of their own: they
 * overlap the reads of the puts this process sends. */
static dcuda_status_t cuda_write_start(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                       uint64_t *ticket)
{
    return copy_start(b->writes, b->write_ends, DCU_BACKEND_WRITES, &b->writes_started, dst, src,
                      size, ticket, "writing a put into rank memory");
}

static int cuda_write_done(dcu_backend_t *b, uint64_t ticket)
{
    return copy_done(b->write_ends[ticket % DCU_BACKEND_WRITES], "writing a put into rank memory");
}

/* The host's RMA copy `ticket` ended (waited for when `wait`): 1, 0 while
 * it runs, < 0 when it failed. Copies end in order on their stream. */
static int rma_done_here(dcu_backend_t *b, uint64_t ticket, int wait)
{
    if (ticket <= b->rmas_finished)
        return 1;
    cudaEvent_t end = b->rma_ends[ticket % DCU_BACKEND_RMAS];
    if (wait) {
        cudaError_t err = cudaEventSynchronize(end);
        if (err != cudaSuccess) {
            cuda_fail(err, "copying for the host's RMA");
            return -1;
        }
    }
    int done = copy_done(end, "copying for the host's RMA");
    if (done == 1)
        b->rmas_finished = ticket;
    return done;
}

/* Room for one more on the RMA stream: with DCU_BACKEND_RMAS in flight,
 * the oldest is waited for (its event is the one to reuse). */
static dcuda_status_t rma_room(dcu_backend_t *b)
{
    if (b->rmas_started - b->rmas_finished >= DCU_BACKEND_RMAS &&
        rma_done_here(b, b->rmas_finished + 1u, 1) < 0)
        return DCUDA_ERR_BACKEND;
    return DCUDA_OK;
}

static dcuda_status_t rma_start_here(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                     uint64_t *ticket)
{
    if (rma_room(b) != DCUDA_OK)
        return DCUDA_ERR_BACKEND;
    return copy_start(b->rmas, b->rma_ends, DCU_BACKEND_RMAS, &b->rmas_started, dst, src, size,
                      ticket, "copying for the host's RMA");
}

/* fn on the host, once the copies before it on the RMA stream ended. */
static dcuda_status_t rma_call_here(dcu_backend_t *b, void (*fn)(void *), void *arg,
                                    uint64_t *ticket)
{
    if (rma_room(b) != DCUDA_OK)
        return DCUDA_ERR_BACKEND;
    uint64_t t = b->rmas_started + 1u;
    CUDA_TRY(cudaLaunchHostFunc(b->rmas, fn, arg), "ordering a host notification after its copy");
    /* fn is handed over, and runs: a failure to mark it only says so. */
    cudaError_t err = cudaEventRecord(b->rma_ends[t % DCU_BACKEND_RMAS], b->rmas);
    if (err != cudaSuccess)
        cuda_fail(err, "marking a host notification's call");
    b->rmas_started = t;
    *ticket = t;
    return DCUDA_OK;
}

static dcuda_status_t cuda_bind_thread(dcu_backend_t *b)
{
    CUDA_TRY(cudaSetDevice(b->device), "selecting the GPU");
    return DCUDA_OK;
}

/* The kernel runs on the backend's stream; an application's stream is
 * joined to it by two events, before and after (a kernel that waits for
 * peers must not be captured into a graph, which would run it later). */
static dcuda_status_t order_after(dcu_backend_t *b, cudaStream_t app)
{
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    CUDA_TRY(cudaStreamIsCapturing(app, &capture), "reading the application's stream");
    if (capture != cudaStreamCaptureStatusNone) {
        dcu_msg_error("dcuda_host_run_start: the stream is being captured into a CUDA graph; "
                      "the ranks must run now (they wait for the other processes): start the "
                      "run outside the capture");
        return DCUDA_ERR_UNSUPPORTED;
    }
    CUDA_TRY(cudaEventRecord(b->app_ready, app), "ordering after the application's stream");
    CUDA_TRY(cudaStreamWaitEvent(b->stream, b->app_ready, 0),
             "ordering after the application's stream");
    return DCUDA_OK;
}

static dcuda_status_t launch_here(dcu_backend_t *b, dcuda_context_t *ctx, void *stream)
{
    cudaStream_t app = (cudaStream_t)stream;
    if (app) {
        dcuda_status_t st = order_after(b, app);
        if (st != DCUDA_OK)
            return st;
    }
    void *args[] = { &ctx };
    dim3 grid = { (unsigned)b->ranks, 1, 1 }, block = { (unsigned)b->threads, 1, 1 };
    CUDA_TRY(cudaLaunchCooperativeKernel(b->kernel, grid, block, args, b->shared_bytes, b->stream),
             "launching the persistent kernel");
    b->launched = 1;
    if (app) {
        CUDA_TRY(cudaEventRecord(b->ranks_done, b->stream), "ordering the application's stream");
        CUDA_TRY(cudaStreamWaitEvent(app, b->ranks_done, 0), "ordering the application's stream");
    }
    return DCUDA_OK;
}

static int finished_here(dcu_backend_t *b)
{
    return cudaStreamQuery(b->stream) != cudaErrorNotReady;
}

static dcuda_status_t join_here(dcu_backend_t *b)
{
    if (!b->launched)
        return DCUDA_OK;
    b->launched = 0;
    cudaError_t err = cudaStreamSynchronize(b->stream);
    if (err == cudaSuccess)
        err = cudaGetLastError();
    if (err != cudaSuccess)
        return cuda_fail(err, "the persistent kernel failed");
    return DCUDA_OK;
}

/* ---- every op on this process's GPU, whichever thread calls it --------------
 * A thread the application started has GPU 0 current, not necessarily this
 * process's: an op makes the process's GPU current for its duration and
 * gives the caller its own back (an application that drives another GPU
 * from the same thread keeps it). */

typedef struct device_scope {
    int caller; /* the caller's current GPU, -1 when it was already ours */
} device_scope_t;

static device_scope_t scope_enter(const dcu_backend_t *b)
{
    device_scope_t s = { -1 };
    int current = -1;
    if (cudaGetDevice(&current) != cudaSuccess || current != b->device) {
        cudaGetLastError();
        if (cudaSetDevice(b->device) == cudaSuccess)
            s.caller = current;
    }
    return s;
}

static void scope_leave(device_scope_t s)
{
    if (s.caller >= 0)
        cudaSetDevice(s.caller);
}

#define ON_DEVICE(b, type, call)                                                                   \
    do {                                                                                           \
        device_scope_t scope_ = scope_enter(b);                                                    \
        type result_ = (call);                                                                     \
        scope_leave(scope_);                                                                       \
        return result_;                                                                            \
    } while (0)

#define ON_DEVICE_VOID(b, call)                                                                    \
    do {                                                                                           \
        device_scope_t scope_ = scope_enter(b);                                                    \
        call;                                                                                      \
        scope_leave(scope_);                                                                       \
    } while (0)

static void cuda_close(dcu_backend_t *b) { ON_DEVICE_VOID(b, close_here(b)); }

static dcuda_status_t cuda_alloc(dcu_backend_t *b, size_t size, void **ptr, dcu_export_t *ex)
{
    ON_DEVICE(b, dcuda_status_t, alloc_here(b, size, ptr, ex));
}

static void cuda_free(dcu_backend_t *b, void *ptr, const dcu_export_t *ex)
{
    ON_DEVICE_VOID(b, free_here(b, ptr, ex));
}

static dcuda_status_t cuda_import(dcu_backend_t *b, int proc, const dcu_export_t *ex, void **mapped)
{
    ON_DEVICE(b, dcuda_status_t, import_here(b, proc, ex, mapped));
}

static void cuda_unimport(dcu_backend_t *b, void *mapped, uint64_t size)
{
    ON_DEVICE_VOID(b, unimport_here(b, mapped, size));
}

static dcuda_status_t cuda_register_mem(dcu_backend_t *b, void *ptr, size_t size, dcu_export_t *ex)
{
    ON_DEVICE(b, dcuda_status_t, register_mem_here(b, ptr, size, ex));
}

static dcuda_status_t cuda_map_host(dcu_backend_t *b, void *host, size_t size, void **rank_ptr)
{
    ON_DEVICE(b, dcuda_status_t, map_host_here(b, host, size, rank_ptr));
}

static void cuda_unmap_host(dcu_backend_t *b, void *host)
{
    ON_DEVICE_VOID(b, unmap_host_here(b, host));
}

static dcuda_status_t cuda_alloc_mapped(dcu_backend_t *b, size_t size, void **host_ptr,
                                        void **rank_ptr)
{
    ON_DEVICE(b, dcuda_status_t, alloc_mapped_here(b, size, host_ptr, rank_ptr));
}

static void cuda_free_mapped(dcu_backend_t *b, void *host_ptr)
{
    ON_DEVICE_VOID(b, free_mapped_here(b, host_ptr));
}

static dcuda_status_t cuda_copy_in(dcu_backend_t *b, void *dst, const void *src, size_t size)
{
    ON_DEVICE(b, dcuda_status_t, copy_in_here(b, dst, src, size));
}

static dcuda_status_t cuda_copy_out(dcu_backend_t *b, void *dst, const void *src, size_t size)
{
    ON_DEVICE(b, dcuda_status_t, copy_out_here(b, dst, src, size));
}

/* An aligned 4-byte copy: the copy engine writes it whole. */
static dcuda_status_t cuda_store32(dcu_backend_t *b, uint32_t *dst, uint32_t value)
{
    ON_DEVICE(b, dcuda_status_t, copy_in_here(b, dst, &value, sizeof value));
}

static dcuda_status_t cuda_peek(dcu_backend_t *b, void *dst, const void *src, size_t size)
{
    ON_DEVICE(b, dcuda_status_t, peek_here(b, dst, src, size));
}

static dcuda_status_t cuda_rma_start(dcu_backend_t *b, void *dst, const void *src, size_t size,
                                     uint64_t *ticket)
{
    ON_DEVICE(b, dcuda_status_t, rma_start_here(b, dst, src, size, ticket));
}

static int cuda_rma_done(dcu_backend_t *b, uint64_t ticket, int wait)
{
    ON_DEVICE(b, int, rma_done_here(b, ticket, wait));
}

static dcuda_status_t cuda_rma_call(dcu_backend_t *b, void (*fn)(void *), void *arg,
                                    uint64_t *ticket)
{
    ON_DEVICE(b, dcuda_status_t, rma_call_here(b, fn, arg, ticket));
}

static dcuda_status_t cuda_launch(dcu_backend_t *b, dcuda_context_t *ctx, void *stream)
{
    ON_DEVICE(b, dcuda_status_t, launch_here(b, ctx, stream));
}

static int cuda_finished(dcu_backend_t *b) { ON_DEVICE(b, int, finished_here(b)); }

static dcuda_status_t cuda_join(dcu_backend_t *b) { ON_DEVICE(b, dcuda_status_t, join_here(b)); }

const dcu_backend_ops_t dcu_cuda_backend_ops = {
    .kind = DCU_BACKEND_CUDA,
    .name = "cuda",
    .peer_path = DCUDA_PATH_P2P,
    .devices = cuda_devices,
    .open = cuda_open,
    .close = cuda_close,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .register_mem = cuda_register_mem,
    .import = cuda_import,
    .unimport = cuda_unimport,
    .map_host = cuda_map_host,
    .unmap_host = cuda_unmap_host,
    .alloc_mapped = cuda_alloc_mapped,
    .free_mapped = cuda_free_mapped,
    .copy_in = cuda_copy_in,
    .copy_out = cuda_copy_out,
    .peek = cuda_peek,
    .read_start = cuda_read_start,
    .read_done = cuda_read_done,
    .write_start = cuda_write_start,
    .write_done = cuda_write_done,
    .rma_start = cuda_rma_start,
    .rma_done = cuda_rma_done,
    .rma_call = cuda_rma_call,
    .store32 = cuda_store32,
    .bind_thread = cuda_bind_thread,
    .launch = cuda_launch,
    .finished = cuda_finished,
    .join = cuda_join,
    .task_gpu = &dcu_cuda_task_gpu_ops,
};
