/*
 * The host API: picks a backend, builds the shared tables, runs kernels
 * while the monitor prints rank logs and watches for stuck ranks, and hands
 * back user data, timings and the first rank error.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host_internal.h"
#include "hostlog.h"

static const dcuda_backend_ops_t *backend_by_name(const char *name)
{
#if defined(DCUDA_HAVE_CUDA)
    if (strcmp(name, "cuda") == 0)
        return &dcuda_cuda_backend_ops;
#endif
    if (strcmp(name, "cpu") == 0)
        return &dcuda_cpu_backend_ops;
    return NULL;
}

/* Can backend `ops` run kernel k here? Fills a reason when not. */
static int backend_can_run(const dcuda_backend_ops_t *ops, const dcuda_kernel_t *k, char *why,
                           size_t why_size)
{
    int gpu = strcmp(ops->name, "cuda") == 0;
    if (gpu ? !k->gpu : !k->cpu) {
        snprintf(why, why_size, "kernel %s was not compiled for %s ranks", k->name,
                 gpu ? "GPU" : "CPU");
        return 0;
    }
    return ops->available(why, why_size);
}

int dcuda_host_backend_available(const char *backend, char *why, size_t why_size)
{
    char none[8];
    if (!why || why_size == 0) {
        why = none;
        why_size = sizeof none;
    }
    const dcuda_backend_ops_t *ops = backend ? backend_by_name(backend) : NULL;
    if (!ops) {
        snprintf(why, why_size, "this build of dcuda has no %s backend",
                 backend ? backend : "(null)");
        return 0;
    }
    return ops->available(why, why_size);
}

static dcuda_status_t pick_backend(const dcuda_settings_t *s, const dcuda_kernel_t *k,
                                   const dcuda_backend_ops_t **out)
{
    char why[256] = "";
    const dcuda_backend_ops_t *ops;
    if (strcmp(s->backend, "auto") != 0) {
        ops = backend_by_name(s->backend);
        if (!ops) {
            dcuda_hostlog_error("backend %s: this build of dcuda has no %s backend", s->backend,
                                s->backend);
            return DCUDA_ERR_BACKEND;
        }
        if (!backend_can_run(ops, k, why, sizeof why)) {
            dcuda_hostlog_error("backend %s cannot run kernel %s: %s", s->backend, k->name, why);
            return DCUDA_ERR_BACKEND;
        }
        *out = ops;
        return DCUDA_OK;
    }
    ops = backend_by_name("cuda");
    if (ops && backend_can_run(ops, k, why, sizeof why)) {
        *out = ops;
        return DCUDA_OK;
    }
    if (ops)
        dcuda_hostlog_info("not using the cuda backend: %s", why);
    ops = backend_by_name("cpu");
    if (!backend_can_run(ops, k, why, sizeof why)) {
        dcuda_hostlog_error("no backend can run kernel %s: %s", k->name, why);
        return DCUDA_ERR_BACKEND;
    }
    *out = ops;
    return DCUDA_OK;
}

/* Processes when not started by mpirun: DCUDA_PROCESSES, or one per GPU
 * when the ranks will be GPU ranks (counted without touching CUDA in this
 * process, which would keep the forked ones from using it). */
static int wanted_processes(const dcuda_settings_t *s, const dcuda_kernel_t *k)
{
    if (s->processes > 0)
        return (int)s->processes;
#if defined(DCUDA_HAVE_CUDA)
    if (strcmp(s->backend, "cpu") != 0 && k->gpu) {
        int gpus = dcuda_cuda_count_devices(NULL, 0);
        if (gpus > 1)
            return gpus < DCUDA_MAX_PROCESSES ? gpus : DCUDA_MAX_PROCESSES;
    }
#else
    (void)k;
#endif
    return 1;
}

/* One host runtime per process at a time (its exports live in the node
 * segment under the process's name). */
static int hosts_live;

/* After the backend opened: peers learn this device, ranks the node. */
static dcuda_status_t join_world(dcuda_host_h h)
{
    dcuda_status_t st = dcuda_peers_agree(h);
    if (st == DCUDA_OK && dcuda_procs_count() > 1)
        st = h->ops->map_node(h, dcuda_procs_node(), sizeof(dcuda_node_t), &h->node_rank);
    return st;
}

/* Everything init built, in reverse. */
static void host_release(dcuda_host_h h)
{
    if (h->monitor)
        dcuda_monitor_destroy(h);
    dcuda_context_destroy(h);
    dcuda_peers_release(h);
    while (h->mem_count > 0)
        dcuda_mem_free(h, h->mems[h->mem_count - 1].ptr);
    free(h->mems);
    if (h->node_rank)
        h->ops->unmap_node(h, dcuda_procs_node());
    h->ops->close(h);
    free(h);
}

dcuda_status_t dcuda_host_init(int argc, char **argv, dcuda_kernel_t kernel,
                               int threads_per_rank, dcuda_host_h *host)
{
    if (!host || (!kernel.cpu && !kernel.gpu) || threads_per_rank < 1) {
        dcuda_hostlog_error("dcuda_host_init: %s (kernel %s, threads_per_rank %d)",
                            !host ? "host is NULL" : threads_per_rank < 1
                                                         ? "threads_per_rank must be >= 1"
                                                         : "kernel has neither a CPU nor a GPU form",
                            kernel.name ? kernel.name : "(unnamed)", threads_per_rank);
        return DCUDA_ERR_INVALID_ARG;
    }
    dcuda_host_h h = calloc(1, sizeof *h);
    if (!h)
        return DCUDA_ERR_NO_MEMORY;
    h->kernel = kernel;
    if (!h->kernel.name)
        h->kernel.name = "(unnamed)";
    dcuda_status_t st = dcuda_settings_load(argc, argv, &h->settings);
    if (st == DCUDA_OK && hosts_live) {
        dcuda_hostlog_error("dcuda_host_init: a host runtime is already live in this process "
                            "(call dcuda_host_finish first)");
        st = DCUDA_ERR_INVALID_ARG;
    }
    if (st == DCUDA_OK) {
        dcuda_hostlog_set_verbose((int)h->settings.verbose);
        st = dcuda_procs_start(&h->settings, wanted_processes(&h->settings, &h->kernel));
    }
    if (st == DCUDA_OK)
        st = pick_backend(&h->settings, &h->kernel, &h->ops);
    if (st == DCUDA_OK)
        st = h->ops->open(h, threads_per_rank);
    if (st != DCUDA_OK) {
        free(h);
        return st;
    }
    st = join_world(h);
    if (st == DCUDA_OK)
        st = dcuda_context_create(h);
    if (st == DCUDA_OK)
        st = dcuda_monitor_create(h);
    if (st != DCUDA_OK) {
        host_release(h);
        return st;
    }
    hosts_live = 1;
    dcuda_hostlog_info("kernel %s: %d ranks on %s backend (%s), %d thread(s) per rank; "
                       "process %d of %d (%s), WORLD ranks %d..%d",
                       h->kernel.name, h->info.rank_responsible, h->info.backend,
                       h->info.device_name, h->info.threads_per_rank, h->info.process_index,
                       h->info.process_count, dcuda_procs_mode(), h->info.rank_start,
                       h->info.rank_start + h->info.rank_responsible - 1);
    *host = h;
    return DCUDA_OK;
}

dcuda_status_t dcuda_host_get_rank_info(dcuda_host_h h, dcuda_rank_info_t *info)
{
    if (!h)
        return DCUDA_ERR_NOT_INITIALIZED;
    if (!info)
        return DCUDA_ERR_INVALID_ARG;
    *info = h->info;
    return DCUDA_OK;
}

/* After work (a command or a log line) the host keeps polling without sleep
 * for a while, since more usually follows; then it sleeps between polls. */
#define HOST_BUSY_NS (2 * 1000 * 1000)

static void idle_pause(void)
{
    struct timespec ts = {0, 200 * 1000};
    nanosleep(&ts, NULL);
}

/* Launches, monitors until every rank returned, joins. */
static dcuda_status_t run_ranks(dcuda_host_h h)
{
    dcuda_monitor_start(h);
    dcuda_status_t st = h->ops->launch(h);
    if (st != DCUDA_OK)
        return st;
    uint64_t last_work = 0;
    for (unsigned round = 0;; round++) {
        /* Asking whether the ranks are done costs a few microseconds on a
         * GPU: while busy, ask every 256th round only. */
        int busy = dcuda_now_ns() - last_work <= HOST_BUSY_NS;
        if ((!busy || (round & 255u) == 0) && h->ops->finished(h))
            break;
        if (dcuda_monitor_poll(h))
            last_work = dcuda_now_ns();
        else if (!busy)
            idle_pause();
    }
    st = h->ops->join(h);
    dcuda_monitor_drain(h);
    return st;
}

dcuda_status_t dcuda_host_run(dcuda_host_h h, void *user_data, size_t user_size,
                              double *elapsed_ms)
{
    if (!h) {
        dcuda_hostlog_error("dcuda_host_run: called before dcuda_host_init (host is NULL)");
        return DCUDA_ERR_NOT_INITIALIZED;
    }
    if (user_size && !user_data) {
        dcuda_hostlog_error("dcuda_host_run: user_data is NULL but user_size is %zu", user_size);
        return DCUDA_ERR_INVALID_ARG;
    }
    h->last_error[0] = '\0';
    h->timing_count = 0;
    h->lost[0] = '\0';
    dcuda_status_t st = dcuda_context_reset(h, user_data, user_size);
    if (st == DCUDA_OK)
        st = dcuda_peers_exchange(h);
    if (st == DCUDA_OK)
        st = h->ops->copy_in(h, h->dev_ctx, &h->image, sizeof h->image);
    /* Every process is ready: no rank can reach tables still being reset. */
    if (st == DCUDA_OK)
        st = dcuda_procs_barrier("dcuda_host_run");
    if (st == DCUDA_ERR_PEER)
        snprintf(h->last_error, sizeof h->last_error, "%s", dcuda_procs_why());
    if (st != DCUDA_OK)
        return st;
    uint64_t t0 = dcuda_now_ns();
    st = run_ranks(h);
    uint64_t t1 = dcuda_now_ns();
    if (st == DCUDA_OK && user_size)
        st = h->ops->copy_out(h, user_data, h->user_dev, user_size);
    if (st == DCUDA_OK)
        st = dcuda_context_collect_timers(h);
    if (elapsed_ms)
        *elapsed_ms = (double)(t1 - t0) / 1e6;
    if (h->lost[0]) {
        snprintf(h->last_error, sizeof h->last_error, "%s", h->lost);
        return DCUDA_ERR_PEER;
    }
    dcuda_error_record_t err;
    if (st == DCUDA_OK)
        st = h->ops->copy_out(h, &err, h->image.error, sizeof err);
    if (st == DCUDA_OK && err.status != 0) {
        char text[sizeof h->last_error - 32];
        dcuda_log_entry_text(&err.first, text, sizeof text);
        snprintf(h->last_error, sizeof h->last_error, "rank %d: %s", (int)err.rank, text);
        dcuda_hostlog_info("kernel %s: %u rank call(s) failed; first: %s", h->kernel.name,
                           (unsigned)err.count, h->last_error);
        st = (dcuda_status_t)err.status;
    }
    return st;
}

dcuda_status_t dcuda_host_get_timings(dcuda_host_h h, const double **timings_ms, int *count)
{
    if (!h)
        return DCUDA_ERR_NOT_INITIALIZED;
    if (!timings_ms || !count)
        return DCUDA_ERR_INVALID_ARG;
    *timings_ms = h->timings;
    *count = h->timing_count;
    return DCUDA_OK;
}

const char *dcuda_host_last_error(dcuda_host_h h) { return h ? h->last_error : ""; }

dcuda_status_t dcuda_host_alloc(dcuda_host_h h, size_t size, void **ptr)
{
    if (!h)
        return DCUDA_ERR_NOT_INITIALIZED;
    if (!ptr)
        return DCUDA_ERR_INVALID_ARG;
    return dcuda_mem_alloc(h, size, ptr);
}

dcuda_status_t dcuda_host_free(dcuda_host_h h, void *ptr)
{
    if (!h)
        return DCUDA_ERR_NOT_INITIALIZED;
    if (ptr)
        dcuda_mem_free(h, ptr);
    return DCUDA_OK;
}

dcuda_status_t dcuda_host_copy_in(dcuda_host_h h, void *dst, const void *src, size_t size)
{
    if (!h)
        return DCUDA_ERR_NOT_INITIALIZED;
    if (size && (!dst || !src))
        return DCUDA_ERR_INVALID_ARG;
    return size ? h->ops->copy_in(h, dst, src, size) : DCUDA_OK;
}

dcuda_status_t dcuda_host_copy_out(dcuda_host_h h, void *dst, const void *src, size_t size)
{
    if (!h)
        return DCUDA_ERR_NOT_INITIALIZED;
    if (size && (!dst || !src))
        return DCUDA_ERR_INVALID_ARG;
    return size ? h->ops->copy_out(h, dst, src, size) : DCUDA_OK;
}

dcuda_status_t dcuda_host_finish(dcuda_host_h h)
{
    if (!h)
        return DCUDA_ERR_NOT_INITIALIZED;
    host_release(h);
    hosts_live = 0;
    return DCUDA_OK;
}
