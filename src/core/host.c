/*
 * The host API: starts the process group, picks a backend, builds the
 * shared tables, runs kernels while the proxy serves rank commands and the
 * monitor prints rank logs and watches for stuck ranks and dead peers, and
 * hands back user data, timings and the first rank error.
 */
#include <net/if.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/boot.h"
#include "core.h"
#include "core/task.h"
#include "dcuda/dcuda_version.h"
#include "node/node.h"
#include "util/clock.h"
#include "util/logfmt.h"
#include "util/msg.h"
#include "util/nvtx.h"
#include "util/proc.h"

static const dcu_backend_ops_t *const backends[] = {
#if defined(DCUDA_HAVE_CUDA)
    &dcu_cuda_backend_ops,
#endif
    &dcu_cpu_backend_ops,
};
#define BACKEND_COUNT (sizeof backends / sizeof backends[0])

static const dcu_backend_ops_t *backend_by_name(const char *name)
{
    for (size_t i = 0; i < BACKEND_COUNT; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

static const dcu_backend_ops_t *backend_of_kind(dcu_backend_kind_t kind)
{
    for (size_t i = 0; i < BACKEND_COUNT; i++)
        if (backends[i]->kind == kind)
            return backends[i];
    return NULL;
}

/* Devices of backend `ops` here; asked in a child until the process group
 * has started (a process that forks must not have touched CUDA). */
static int backend_devices(const dcu_backend_ops_t *ops, char *why, size_t why_size)
{
    return ops->devices(!dcu_boot_started(), why, why_size);
}

/* Can backend `ops` run kernel k here? Fills a reason when not. */
static int backend_can_run(const dcu_backend_ops_t *ops, const dcuda_kernel_t *k, char *why,
                           size_t why_size)
{
    int gpu = ops->kind == DCU_BACKEND_CUDA;
    if (gpu ? !k->gpu : !k->cpu) {
        snprintf(why, why_size, "kernel %s was not compiled for %s ranks", k->name,
                 gpu ? "GPU" : "CPU");
        return 0;
    }
    return backend_devices(ops, why, why_size) > 0;
}

int dcuda_host_backend_available(const char *backend, char *why, size_t why_size)
{
    char none[8];
    if (!why || why_size == 0) {
        why = none;
        why_size = sizeof none;
    }
    const dcu_backend_ops_t *ops = backend ? backend_by_name(backend) : NULL;
    if (!ops) {
        snprintf(why, why_size, "this build of dcuda has no %s backend",
                 backend ? backend : "(null)");
        return 0;
    }
    return backend_devices(ops, why, why_size) > 0;
}

/* auto does not take the GPUs: say why. With GPUs here and a kernel that
 * has no GPU form that is a mistake of the build, so it is a warning that
 * names the fix; otherwise a verbose note. */
static void warn_cpu_instead(const dcu_backend_ops_t *gpu, const dcuda_kernel_t *k, const char *why)
{
    char none[256];
    int gpus = k->gpu ? 0 : backend_devices(gpu, none, sizeof none);
    if (gpus > 0)
        dcu_msg_warn("kernel %s has no GPU form, so its ranks run as CPU threads although %d "
                     "GPU(s) are here: build its rank code with dcuda_add_rank_code() in a "
                     "project with CUDA enabled (or with nvcc -x cu); DCUDA_BACKEND=cpu says "
                     "CPU ranks are meant",
                     k->name, gpus);
    else
        dcu_msg_info("not using the cuda backend: %s", why);
}

static dcuda_status_t pick_backend(const dcuda_settings_t *s, const dcuda_kernel_t *k,
                                   const dcu_backend_ops_t **out)
{
    char why[256] = "";
    const dcu_backend_ops_t *ops;
    if (!s->backend_auto) {
        ops = backend_of_kind(s->backend_kind);
        if (!ops) {
            dcu_msg_error("backend %s: this build of dcuda has no %s backend", s->backend,
                          s->backend);
            return DCUDA_ERR_BACKEND;
        }
        if (!backend_can_run(ops, k, why, sizeof why)) {
            dcu_msg_error("backend %s cannot run kernel %s: %s", s->backend, k->name, why);
            return DCUDA_ERR_BACKEND;
        }
        *out = ops;
        return DCUDA_OK;
    }
    const dcu_backend_ops_t *gpu = backend_of_kind(DCU_BACKEND_CUDA);
    char gpu_why[256] = "this build of dcuda has no cuda backend";
    if (gpu && backend_can_run(gpu, k, gpu_why, sizeof gpu_why)) {
        *out = gpu;
        return DCUDA_OK;
    }
    if (gpu)
        warn_cpu_instead(gpu, k, gpu_why);
    ops = backend_of_kind(DCU_BACKEND_CPU);
    if (!backend_can_run(ops, k, why, sizeof why)) {
        dcu_msg_error("no backend can run kernel %s: cuda: %s; cpu: %s", k->name, gpu_why, why);
        return DCUDA_ERR_BACKEND;
    }
    *out = ops;
    return DCUDA_OK;
}

/* GPUs the ranks could use, for the process-count policy: none when the
 * ranks will be CPU ranks (the setting, or a kernel without a GPU form). */
static const dcuda_settings_t *count_settings;
static const dcuda_kernel_t *count_kernel;

/* Could the ranks be GPU ranks? */
static int gpu_ranks_possible(void)
{
    return backend_of_kind(DCU_BACKEND_CUDA) &&
           (count_settings->backend_auto || count_settings->backend_kind != DCU_BACKEND_CPU) &&
           count_kernel->gpu;
}

static int count_gpus(void)
{
    if (!gpu_ranks_possible())
        return 0;
    /* Counted in a child, unless CUDA is initialised here already (a child
     * could not count then; this process can). */
    return backend_of_kind(DCU_BACKEND_CUDA)->devices(!dcu_proc_cuda_initialised(), NULL, 0);
}

static const char *fork_hazard(void)
{
    if (!gpu_ranks_possible() || !dcu_proc_cuda_initialised())
        return NULL;
    return "this process has used CUDA already (a CUDA call before dcuda_host_init), and a "
           "forked child cannot use CUDA then";
}

/* Every interface NET_IF names exists here (a name with a colon is a UCX
 * device, "mlx5_0:1", not checked): else DCUDA_ERR_SETTING, listing the
 * interfaces this host has. */
static dcuda_status_t check_net_if(const dcuda_settings_t *s)
{
    char names[sizeof s->net_if];
    snprintf(names, sizeof names, "%s", s->net_if);
    for (char *save = NULL, *name = strtok_r(names, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        if (strchr(name, ':') || if_nametoindex(name) != 0)
            continue;
        char have[256] = "";
        struct if_nameindex *all = if_nameindex();
        for (struct if_nameindex *i = all; i && i->if_index; i++)
            snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", have[0] ? ", " : "",
                     i->if_name);
        if (all)
            if_freenameindex(all);
        dcu_msg_error("setting NET_IF: this host has no interface '%s' (it has: %s)", name,
                      have[0] ? have : "none");
        return DCUDA_ERR_SETTING;
    }
    return DCUDA_OK;
}

/* The NET_IF setting reaches an MPI that dcuda initialises (Open MPI's
 * TCP transport, and UCX beneath it), unless the user set those already. */
static void pass_net_if(const dcuda_settings_t *s)
{
    if (!s->net_if[0])
        return;
    setenv("OMPI_MCA_btl_tcp_if_include", s->net_if, 0);
    setenv("UCX_NET_DEVICES", s->net_if, 0);
}

/* The process group: on the application's MPI communicator when it gave
 * one, else as the launcher or the settings say. */
static dcuda_status_t start_group(const dcuda_settings_t *s, const dcuda_kernel_t *k,
                                  const void *mpi_comm)
{
    count_settings = s;
    count_kernel = k;
    pass_net_if(s);
    dcu_nvtx_push(DCU_NVTX_INIT_BOOTSTRAP);
    dcuda_status_t st = mpi_comm ? dcu_boot_start_comm(s->processes, mpi_comm)
                                 : dcu_boot_start(s->processes, count_gpus, fork_hazard);
    dcu_nvtx_pop();
    return st;
}

/* After the start, steps of every process: the settings they must share,
 * which of them share a node (processes of one kind of ranks: `kind`),
 * and the node segment. */
static dcuda_status_t join_group(const dcuda_settings_t *s, dcu_backend_kind_t kind)
{
    dcu_nvtx_push(DCU_NVTX_INIT_NODE);
    dcuda_status_t st = dcu_settings_agree(s);
    if (st == DCUDA_OK)
        st = dcu_boot_find_nodes((int)(s->net_force || s->net_loopback), (int)kind);
    if (st == DCUDA_OK)
        st = dcu_node_open();
    dcu_nvtx_pop();
    return st;
}

/* The backend runs the device: rank info from its shape and the group. */
static dcuda_status_t open_backend(dcuda_host_h h, const dcuda_init_params_t *params)
{
    int me = dcu_boot_rank();
    dcu_backend_request_t req;
    memset(&req, 0, sizeof req);
    req.kernel = h->kernel;
    req.threads_per_rank = params->threads_per_rank;
    req.shared_bytes = params->shared_bytes;
    req.ranks = h->settings.ranks;
    req.process_count = dcu_boot_size();
    req.device = dcu_boot_host_index(me);
    req.host_processes = dcu_boot_host_size(me);
    for (int p = 0; p < dcu_boot_size(); p++)
        if (p != me && dcu_boot_node(p) == dcu_boot_node(me))
            req.peers[req.peer_count++] = dcu_boot_host_index(p);
    dcu_backend_shape_t shape;
    memset(&shape, 0, sizeof shape);
    dcu_nvtx_push(DCU_NVTX_INIT_BACKEND);
    dcuda_status_t st = h->ops->open(&req, &h->backend, &shape);
    dcu_nvtx_pop();
    if (st != DCUDA_OK)
        return st;
    snprintf(h->device_name, sizeof h->device_name, "%s", shape.device_name);
    h->shared_bytes = params->shared_bytes;
    h->info = (dcuda_rank_info_t){
        .rank_count = shape.ranks,
        .rank_responsible = shape.ranks,
        .rank_start = 0,
        .device_count = dcu_boot_size(),
        .device_index = dcu_boot_rank(),
        .node_count = dcu_boot_node_count(),
        .node_index = dcu_boot_node(me),
        .process_count = dcu_boot_size(),
        .process_index = dcu_boot_rank(),
        .threads_per_rank = shape.threads_per_rank,
        .backend = h->ops->name,
        .device_name = h->device_name,
    };
    return DCUDA_OK;
}

/* The network manager, when some process is on another node. */
static dcuda_status_t pick_net(dcuda_host_h h)
{
    char why[1200];
    if (!h->net_peers)
        return DCUDA_OK;
    dcu_net_choice_t choice = h->settings.net_choice;
    if (choice == DCU_NET_NONE) {
        dcu_msg_error("%d process(es) are on other nodes%s, but NET=none", h->net_peers,
                      h->settings.net_loopback ? " (NET_LOOPBACK=1)"
                      : h->settings.net_force  ? " (NET_FORCE=1)"
                                               : "");
        return DCUDA_ERR_UNSUPPORTED;
    }
    /* auto: MPI where it can run (processes started by mpirun) and one
     * lane will do, else UCX. */
    int mpirun = dcu_boot_is_mpi(), automatic = choice == DCU_NET_AUTO;
    if (automatic)
        choice = dcu_net_auto(mpirun, (int)h->settings.proxy_lanes);
    dcu_nvtx_push(DCU_NVTX_INIT_PLUGIN);
    h->net_ops = dcu_net_find(choice, why, sizeof why);
    dcu_nvtx_pop();
    if (!h->net_ops) {
        dcu_msg_error("%d process(es) are on other nodes, but %s%s", h->net_peers, why,
                      automatic && !mpirun ? ", and the MPI one needs mpirun" : "");
        return DCUDA_ERR_UNSUPPORTED;
    }
    if ((h->net_ops->caps & DCU_NET_CAP_MPI_START) && !mpirun) {
        dcu_msg_error("the %s network manager needs the processes started by mpirun (they "
                      "were %s)",
                      h->net_ops->name, dcu_boot_mode_name());
        return DCUDA_ERR_UNSUPPORTED;
    }
    dcu_msg_info("process %d reaches %d process(es) through the %s network manager%s",
                 dcu_boot_rank(), h->net_peers, h->net_ops->name,
                 h->settings.net_loopback ? " (NET_LOOPBACK=1: itself too)"
                 : h->settings.net_force  ? " (NET_FORCE=1)"
                                          : "");
    return DCUDA_OK;
}

/* After the backend opened: peers learn this device, ranks the node, and
 * the network path gets its manager. */
static dcuda_status_t join_world(dcuda_host_h h)
{
    dcu_nvtx_push(DCU_NVTX_INIT_PEERS);
    dcuda_status_t st = dcu_peers_agree(h);
    if (st == DCUDA_OK && dcu_node())
        st = h->ops->map_host(h->backend, dcu_node(), sizeof(dcu_node_t), &h->node_rank);
    if (st == DCUDA_OK)
        st = pick_net(h);
    dcu_nvtx_pop();
    return st;
}

/* Lanes want a core each beside the host thread's: on fewer (mpirun binds
 * the process of a small job to one core) they take turns and are slower
 * than one lane. */
static void tell_lanes(int lanes)
{
    dcu_msg_info("%d proxy lanes (threads) serve this process's ranks on the network path", lanes);
    int cores = dcu_proc_cores();
    if (cores > 0 && cores < lanes)
        dcu_msg_warn("PROXY_LANES=%d: this process may run on %d core(s), and its host thread "
                     "and %d lane threads take turns on them (mpirun binds a small job's "
                     "processes to one core each: --bind-to none, or --map-by with more "
                     "cores a process)",
                     lanes, cores, lanes - 1);
}

/* The proxy may read a large put's source when it lies in one allocation
 * of this process (GPU memory a copy engine reaches; not a rank's stack,
 * shared memory or device heap). */
static int proxy_may_read(void *arg, uint64_t addr, uint64_t size)
{
    dcuda_host_h h = arg;
    for (int i = 0; i < h->mem_count; i++) {
        uint64_t base = (uint64_t)(uintptr_t)h->mems[i].ptr, end = base + h->mems[i].ex.size;
        if (addr >= base && addr < end && size <= end - addr)
            return 1;
    }
    return 0;
}

static dcuda_status_t create_proxy(dcuda_host_h h)
{
    dcu_proxy_config_t c;
    memset(&c, 0, sizeof c);
    c.entries = h->cmd_h;
    c.capacity = h->image.cmd.capacity;
    c.replies = h->replies_h;
    c.cmd_tail = h->cmd_tail_h;
    c.ranks = h->image.device_size;
    c.net_ops = h->net_ops;
    c.net_env = (dcu_net_env_t){ .process_index = dcu_boot_rank(),
                                 .process_count = dcu_boot_size(),
                                 .allgather = dcu_boot_allgather,
                                 .gather_max = DCU_BOOT_GATHER_MAX,
                                 .mpi_comm = dcu_boot_mpi_comm(),
                                 .describe = dcu_boot_describe,
                                 .net_if = h->settings.net_if }; /* the proxy adds mem */
    c.ops = h->ops;
    c.backend = h->backend;
    c.process_count = dcu_boot_size();
    c.process_index = dcu_boot_rank();
    c.proc_first = h->proc_first;
    c.path = h->path;
    c.own_table = h->image.win_entries[0 /* WORLD */];
    c.lib = (char *)h->image.lib;
    c.lib_stride = h->image.lib_stride;
    c.inbox = h->inbox_h;
    c.inbox_tail = h->inbox_tail_h;
    c.net_barrier = h->net_barrier_h;
    c.cancel = h->cancel_h;
    c.notes = h->notes;
    c.notes_first = h->image.world_first;
    c.net_credit = (uint64_t)h->settings.net_credit;
    c.inbox_max = (uint32_t)h->settings.net_inbox_max;
    c.readable = proxy_may_read;
    c.readable_arg = h;
    dcu_lane_ring_t rings[DCUDA_MAX_PROXY_LANES];
    for (int l = 0; l < h->proxy_lanes; l++)
        rings[l] = (dcu_lane_ring_t){ h->lane_cmd_h[l], h->image.cmd_lanes[l].capacity,
                                      h->lane_tail_h[l] };
    dcu_nvtx_push(DCU_NVTX_INIT_PROXY);
    dcuda_status_t st = dcu_proxies_create(&c, h->proxy_lanes, rings, &h->proxy);
    dcu_nvtx_pop();
    if (st == DCUDA_OK && dcu_proxies_count(h->proxy) > 1)
        tell_lanes(dcu_proxies_count(h->proxy));
    return st;
}

/* Everything init built, in reverse (the struct itself stays). */
static void host_release(dcuda_host_h h)
{
    dcu_task_pools_release(h); /* their tasks may still copy through the backend */
    if (h->proxy)
        dcu_proxies_destroy(h->proxy);
    if (h->monitor)
        dcu_monitor_destroy(h);
    dcu_deadlock_destroy(h);
    dcu_host_notes_fini(h);
    dcu_rma_fini(h);
    dcu_context_destroy(h);
    dcu_peers_release(h);
    while (h->mem_count > 0)
        dcu_mem_free(h, h->mems[h->mem_count - 1].ptr);
    free(h->mems);
    if (h->node_rank)
        h->ops->unmap_host(h->backend, dcu_node());
    h->ops->close(h->backend);
}

/* A step of dcuda_host_init, agreed by every process: a process whose step
 * failed still takes part, so none waits in the next collective step for
 * it; every process then fails, the others naming the one that failed. */
static dcuda_status_t agree(dcuda_status_t mine, const char *step)
{
    int who = -1;
    dcu_nvtx_push(DCU_NVTX_INIT_AGREE);
    dcuda_status_t all = dcu_boot_agree(mine, &who);
    dcu_nvtx_pop();
    if (mine == DCUDA_OK && all != DCUDA_OK && who >= 0) {
        dcu_msg_error("dcuda_host_init: process %d failed %s (%s), so dcuda_host_init fails in "
                      "every process",
                      who, step, dcuda_status_name(all));
        return DCUDA_ERR_PEER;
    }
    return mine != DCUDA_OK ? mine : all;
}

static const char *init_arg_problem(dcuda_host_h *host, dcuda_kernel_t kernel,
                                    const dcuda_init_params_t *params)
{
    if (!host)
        return "host is NULL";
    if (!params || params->size < sizeof(dcuda_init_params_t))
        return "params is NULL or not from DCUDA_INIT_PARAMS_DEFAULT (size too small)";
    if (params->threads_per_rank < 1)
        return "threads_per_rank must be >= 1";
    if (!kernel.cpu && !kernel.gpu)
        return "kernel has neither a CPU nor a GPU form";
    return NULL;
}

/* A new host of kernel with its settings read; a failure to read them is
 * kept in *st (the group starts on the defaults, and this process's
 * failure is agreed on later). NULL when out of memory. */
static dcuda_host_h host_new(int argc, char **argv, dcuda_kernel_t kernel, dcuda_status_t *st)
{
    dcuda_host_h h = calloc(1, sizeof *h);
    if (!h) {
        *st = DCUDA_ERR_NO_MEMORY;
        return NULL;
    }
    dcu_host_forget_retired(); /* h has another address now */
    h->kernel = kernel;
    if (!h->kernel.name)
        h->kernel.name = "(unnamed)";
    dcu_rma_init(h);
    for (int i = 0; i < DCU_HOST_WAIT_SLOTS; i++)
        atomic_store(&h->host_waits[i].tag, -1);
    dcu_boot_enter(DCU_CALL_INIT);
    *st = dcu_settings_load(argc, argv, &h->settings);
    if (*st == DCUDA_OK) {
        dcu_msg_set_level(dcu_msg_level_of(h->settings.log_level));
        dcu_msg_set_verbose((int)h->settings.verbose);
        dcu_msg_set_file(h->settings.log_file);
    } else
        dcu_settings_defaults(&h->settings);
    return h;
}

/* The group joined and the backend opened, each step agreed on by every
 * process (st: how reading the settings went). */
static dcuda_status_t host_open(dcuda_host_h h, const dcuda_init_params_t *params,
                                dcuda_status_t st)
{
    /* A process whose settings cannot be read still joins the group (a
     * launcher's, or one started before), so that the others learn why
     * its init failed rather than wait for it. */
    if (st == DCUDA_OK || dcu_boot_under_launcher() || dcu_boot_started()) {
        dcuda_status_t group = start_group(&h->settings, &h->kernel, params->mpi_comm);
        st = st == DCUDA_OK ? group : st;
    }
    if (st == DCUDA_OK)
        st = check_net_if(&h->settings);
    int together = dcu_boot_size() > 1;
    if (together)
        st = agree(st, "reading its settings");
    /* The backend first: processes of GPU ranks and of CPU ranks may run
     * one program, and a node holds processes of one kind. */
    if (st == DCUDA_OK)
        st = pick_backend(&h->settings, &h->kernel, &h->ops);
    if (together)
        st = agree(st, "choosing its backend");
    if (st == DCUDA_OK)
        st = join_group(&h->settings, h->ops->kind);
    if (st == DCUDA_OK)
        st = open_backend(h, params);
    if (together)
        st = agree(st, "opening its backend");
    return st;
}

/* WORLD's peers, the proxy lanes, the context's tables, the monitor, the
 * detector and the proxies (the tables agreed on by every process). */
static dcuda_status_t host_build(dcuda_host_h h)
{
    dcuda_status_t st = join_world(h);
    if (st == DCUDA_OK) {
        h->proxy_lanes = dcu_proxies_fit((int)h->settings.proxy_lanes, h->net_ops, h->proc_first,
                                         h->info.process_count);
        st = h->proxy_lanes < 1 ? DCUDA_ERR_SETTING : DCUDA_OK;
    }
    dcu_nvtx_push(DCU_NVTX_INIT_CONTEXT);
    if (st == DCUDA_OK)
        st = dcu_context_create(h);
    if (st == DCUDA_OK)
        st = dcu_monitor_create(h);
    if (st == DCUDA_OK)
        st = dcu_deadlock_create(h);
    if (st == DCUDA_OK)
        st = dcu_host_notes_init(h);
    dcu_nvtx_pop();
    st = agree(st, "building its tables");
    if (st == DCUDA_OK)
        st = create_proxy(h);
    return st;
}

static dcuda_status_t host_init(int argc, char **argv, dcuda_kernel_t kernel,
                                const dcuda_init_params_t *params, dcuda_host_h *host)
{
    const char *problem = init_arg_problem(host, kernel, params);
    if (problem) {
        dcu_msg_error("dcuda_host_init: %s (kernel %s, threads_per_rank %d)", problem,
                      kernel.name ? kernel.name : "(unnamed)",
                      params ? params->threads_per_rank : 0);
        return DCUDA_ERR_INVALID_ARG;
    }
    dcuda_status_t st;
    dcuda_host_h h = host_new(argc, argv, kernel, &st);
    if (!h)
        return st;
    st = host_open(h, params, st);
    if (st != DCUDA_OK) {
        if (h->backend)
            h->ops->close(h->backend);
        free(h);
        return st;
    }
    st = host_build(h);
    if (st != DCUDA_OK) {
        host_release(h);
        free(h);
        return st;
    }
    dcu_host_set_live(h);
    dcu_msg_info("dcuda %s; kernel %s: %d ranks on %s backend (%s), %d thread(s) per rank; "
                 "process %d of %d (%s), WORLD ranks %d..%d",
                 dcuda_version_string(), h->kernel.name, h->info.rank_responsible, h->info.backend,
                 h->info.device_name, h->info.threads_per_rank, h->info.process_index,
                 h->info.process_count, dcu_boot_mode_name(), h->info.rank_start,
                 h->info.rank_start + h->info.rank_responsible - 1);
    *host = h;
    return DCUDA_OK;
}

/* ---- the host API's entry points: each under the API lock ------------------------ */

dcuda_status_t dcuda_host_init_params(int argc, char **argv, dcuda_kernel_t kernel,
                                      const dcuda_init_params_t *params, dcuda_host_h *host)
{
    dcu_host_lock();
    dcuda_status_t st = DCUDA_OK;
    if (dcu_host_live()) {
        dcu_msg_error("dcuda_host_init: a host runtime is already live in this process "
                      "(call dcuda_host_finish first)");
        st = DCUDA_ERR_INVALID_ARG;
    }
    dcu_nvtx_push(DCU_NVTX_INIT);
    if (st == DCUDA_OK)
        st = host_init(argc, argv, kernel, params, host);
    dcu_nvtx_pop();
    dcu_host_unlock();
    return st;
}

dcuda_status_t dcuda_host_init(int argc, char **argv, dcuda_kernel_t kernel, int threads_per_rank,
                               dcuda_host_h *host)
{
    dcuda_init_params_t params = DCUDA_INIT_PARAMS_DEFAULT;
    params.threads_per_rank = threads_per_rank;
    return dcuda_host_init_params(argc, argv, kernel, &params, host);
}

dcuda_status_t dcuda_host_get_rank_info(dcuda_host_h h, dcuda_rank_info_t *info)
{
    dcu_host_lock();
    dcuda_status_t st = dcu_host_check(h, "dcuda_host_get_rank_info");
    if (st == DCUDA_OK && !info)
        st = DCUDA_ERR_INVALID_ARG;
    if (st == DCUDA_OK)
        *info = h->info;
    dcu_host_unlock();
    return st;
}

dcuda_status_t dcuda_host_get_timings(dcuda_host_h h, const double **timings_ms, int *count)
{
    dcu_host_lock();
    dcuda_status_t st = dcu_host_idle(h, "dcuda_host_get_timings");
    if (st == DCUDA_OK && (!timings_ms || !count))
        st = DCUDA_ERR_INVALID_ARG;
    if (st == DCUDA_OK) {
        *timings_ms = h->timings;
        *count = h->timing_count;
    }
    dcu_host_unlock();
    return st;
}

const char *dcuda_host_last_error(dcuda_host_h h)
{
    dcu_host_lock();
    const char *text = h && h == dcu_host_live() ? h->last_error : "";
    dcu_host_unlock();
    return text;
}

dcuda_status_t dcuda_host_alloc(dcuda_host_h h, size_t size, void **ptr)
{
    dcu_host_lock();
    dcuda_status_t st = dcu_host_idle(h, "dcuda_host_alloc");
    if (st == DCUDA_OK)
        st = ptr ? dcu_mem_alloc_user(h, size, ptr) : DCUDA_ERR_INVALID_ARG;
    dcu_host_unlock();
    return st;
}

dcuda_status_t dcuda_host_register(dcuda_host_h h, void *ptr, size_t size)
{
    dcu_host_lock();
    dcuda_status_t st = dcu_host_idle(h, "dcuda_host_register");
    if (st == DCUDA_OK)
        st = dcu_mem_register(h, ptr, size);
    dcu_host_unlock();
    return st;
}

dcuda_status_t dcuda_host_deregister(dcuda_host_h h, void *ptr)
{
    dcu_host_lock();
    dcuda_status_t st = dcu_host_idle(h, "dcuda_host_deregister");
    if (st == DCUDA_OK)
        st = dcu_mem_deregister(h, ptr);
    dcu_host_unlock();
    return st;
}

dcuda_status_t dcuda_host_free(dcuda_host_h h, void *ptr)
{
    dcu_host_lock();
    dcuda_status_t st = dcu_host_idle(h, "dcuda_host_free");
    if (st == DCUDA_OK && ptr)
        st = dcu_mem_free_user(h, ptr);
    dcu_host_unlock();
    return st;
}

/* Copies between host memory and memory ranks use, either way (also while
 * the ranks run). */
static dcuda_status_t host_copy(dcuda_host_h h, void *dst, const void *src, size_t size, int out)
{
    dcu_host_lock();
    dcuda_status_t st = dcu_host_check(h, out ? "dcuda_host_copy_out" : "dcuda_host_copy_in");
    if (st == DCUDA_OK && size && (!dst || !src))
        st = DCUDA_ERR_INVALID_ARG;
    if (st == DCUDA_OK && size)
        st = (out ? h->ops->copy_out : h->ops->copy_in)(h->backend, dst, src, size);
    dcu_host_unlock();
    return st;
}

dcuda_status_t dcuda_host_copy_in(dcuda_host_h h, void *dst, const void *src, size_t size)
{
    return host_copy(h, dst, src, size, 0);
}

dcuda_status_t dcuda_host_copy_out(dcuda_host_h h, void *dst, const void *src, size_t size)
{
    return host_copy(h, dst, src, size, 1);
}

/* A step of every process first (none releases what another may still
 * use; a process in another call is named), then everything goes, even
 * when the step failed. */
dcuda_status_t dcuda_host_finish(dcuda_host_h h)
{
    dcu_host_lock();
    dcuda_status_t st = dcu_host_idle(h, "dcuda_host_finish");
    if (st == DCUDA_OK) {
        dcu_nvtx_push(DCU_NVTX_FINISH);
        dcu_boot_enter(DCU_CALL_FINISH);
        st = dcu_boot_barrier();
        host_release(h);
        dcu_host_retire(h);
        dcu_nvtx_pop();
    }
    dcu_host_unlock();
    return st;
}

int dcuda_host_exit_status(int status)
{
    dcu_host_lock();
    int code = dcu_boot_exit_status(status);
    dcu_host_unlock();
    return code;
}
