/*
 * The UCX network manager: messages as tagged sends of UCX's public UCP
 * API, between one context and one worker per process.
 *
 * Start: every process creates its worker and exchanges the worker's
 * address through the bootstrap's allgather. An address is larger than one
 * allgather carries, so a first round carries each address's length (0:
 * this process could not start UCX, and every process fails naming it),
 * and the rounds after it the addresses in pieces of the bootstrap's size.
 * A last round agrees that every process posted its receives. Endpoints
 * are made on first use: the first message to a process connects to it,
 * so a process holds connections to the processes it sends to (its
 * partners in the barrier's rounds, its tree neighbours, the targets of
 * its ranks), not to the job; what it keeps of every process is its
 * address (tens of bytes) and a few words of state. A process may send
 * itself (NET_LOOPBACK): its endpoint to its own worker is one like any.
 *
 * Order: a message is sent with its sender's process index as tag, and
 * received by a ring of receives posted for any sender, delivered in the
 * order they were posted. UCP matches the messages of one endpoint in the
 * order they were sent (MPI's non-overtaking rule, on which Open MPI's UCX
 * layer relies: eager or rendezvous, one fragment or many), and receives in
 * the order they were posted; so the messages of one pair of processes are
 * delivered in the order sent, even when a later small message completes
 * before an earlier large one. Tagged receives give that with UCP's own
 * matching rule and no callback; active messages would be handed over
 * inside UCP's callbacks (to be copied and queued here) and, above the
 * rendezvous threshold, fetched later by receives of their own.
 *
 * Threads: the worker is UCS_THREAD_MODE_SERIALIZED; everything (open,
 * sends, progress, close) runs on the proxy's thread, one thread at a time
 * (the host thread of a run of dcuda_host_run_start drives it in turn). No UCP callback reaches the
 * proxy: requests are polled (ucp_request_check_status,
 * ucp_tag_recv_request_test) and arrivals are delivered by progress, after
 * ucp_worker_progress returned. The one callback, an endpoint's error
 * handler, only records the failure.
 *
 * Faults: endpoints use UCP_ERR_HANDLING_MODE_PEER, so a peer process that
 * ends makes its endpoint fail instead of the program. Closing an endpoint
 * also fails the peer's endpoint, so a closing manager first sends every
 * peer it connected to a goodbye (its own tag bit, received by one receive
 * for any sender, posted again after each): an endpoint that fails after
 * its peer's goodbye is a peer that finished. One that fails without is
 * reported by progress, naming the process, after a short grace in which a
 * goodbye still on its way may arrive.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

#include "net/net.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/msg.h"

/* Receives posted at once. */
#define UCX_NET_RECVS 16
/* Tags: the sender's process index; this bit marks a goodbye. */
#define UCX_BYE_BIT ((ucp_tag_t)1 << 63)
/* ucp_worker_progress calls in one progress at most. */
#define UCX_PROGRESS_ROUNDS 64
/* The transports of the context unless UCX_TLS says otherwise: every one
 * but those between processes of one host. */
#define UCX_NET_TLS "^sm"
/* How long close waits for its goodbyes and endpoint flushes. */
#define UCX_CLOSE_NS (2 * DCU_NS_PER_S)
/* How long a failed endpoint may wait for its peer's goodbye. */
#define UCX_GRACE_NS (1 * DCU_NS_PER_S)

typedef struct peer {
    ucp_ep_h ep;     /* NULL until the first message to it */
    void *close_req; /* closing its endpoint */
    uint64_t failed_ns;
    ucs_status_t failed; /* UCS_OK until its endpoint fails */
    int said_bye;
} peer_t;

typedef struct sent {
    void *req; /* NULL: done */
    void *data;
    int peer;
} sent_t;

typedef struct slot {
    void *req; /* NULL: done (info holds the message) */
    ucp_tag_recv_info_t info;
    char *buf;
} slot_t;

struct dcu_net {
    ucp_context_h ctx;
    ucp_worker_h worker;
    int me, count;
    peer_t *peers;
    /* Every process's worker address, `stride` bytes apart. */
    char *addrs;
    size_t stride;
    /* The processes connected to, in the order connected. */
    int *linked;
    int link_count;
    void *bye_req; /* the receive of the next goodbye, from any process */
    char bye_buf[1];
    dcu_net_recv_fn recv;
    void *recv_arg;
    dcu_net_mem_t mem;
    slot_t slots[UCX_NET_RECVS];
    int recv_head; /* the receive posted first */
    int recvs_posted;
    sent_t *sends;
    int send_count, send_cap;
    int closing;
    const char *(*describe)(int p, char *buf, size_t size);
    char net_if[64]; /* the NET_IF setting ("": UCX chooses) */
    char why[256];
    int lost; /* the process the last error lost, or -1 */
};

static int ucx_failed(dcu_net_t *n, const char *what, ucs_status_t st)
{
    n->lost = -1;
    snprintf(n->why, sizeof n->why, "UCX network manager: %s: %s", what, ucs_status_string(st));
    return -1;
}

/* ---- start -------------------------------------------------------------------------- */

static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    peer_t *p = arg;
    if (p->failed == UCS_OK) {
        p->failed = status;
        p->failed_ns = dcu_clock_ns();
    }
}

/* Context, worker and its address. */
static int start_worker(dcu_net_t *n, ucp_address_t **addr, size_t *len)
{
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK)
        return ucx_failed(n, "ucp_config_read", st);
    /* Processes of a node reach each other through dcuda's own shared
     * memory (or CUDA IPC); this context is for the network alone. Without
     * the shared-memory transports it makes no segments that another user
     * of the group could attach (mode 0660). UCX_TLS, when set, decides. */
    if (!getenv("UCX_TLS") && (st = ucp_config_modify(config, "TLS", UCX_NET_TLS)) != UCS_OK) {
        ucp_config_release(config);
        return ucx_failed(n, "ucp_config_modify(TLS=" UCX_NET_TLS ")", st);
    }
    /* NET_IF names the devices; it wins over UCX_NET_DEVICES. */
    if (n->net_if[0] && (st = ucp_config_modify(config, "NET_DEVICES", n->net_if)) != UCS_OK) {
        ucp_config_release(config);
        return ucx_failed(n, "ucp_config_modify(NET_DEVICES, the NET_IF setting)", st);
    }
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS |
                      UCP_PARAM_FIELD_MT_WORKERS_SHARED | UCP_PARAM_FIELD_NAME,
        .features = UCP_FEATURE_TAG,
        .estimated_num_eps = (size_t)n->count,
        .mt_workers_shared = 0,
        .name = "dcuda",
    };
    st = ucp_init(&params, config, &n->ctx);
    ucp_config_release(config);
    if (st != UCS_OK)
        return ucx_failed(n, "ucp_init", st);
    ucp_worker_params_t wp = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SERIALIZED,
    };
    st = ucp_worker_create(n->ctx, &wp, &n->worker);
    if (st != UCS_OK)
        return ucx_failed(n, "ucp_worker_create", st);
    st = ucp_worker_get_address(n->worker, addr, len);
    return st == UCS_OK ? 0 : ucx_failed(n, "ucp_worker_get_address", st);
}

/* Round 0: every address's length (0: that process failed). */
static dcuda_status_t gather_lengths(dcu_net_t *n, const dcu_net_env_t *env, size_t len,
                                     size_t *longest)
{
    uint64_t mine = len, *all = calloc((size_t)n->count, sizeof *all);
    if (!all)
        return DCUDA_ERR_NO_MEMORY;
    dcuda_status_t st = env->allgather(&mine, all, sizeof mine);
    *longest = 0;
    for (int p = 0; st == DCUDA_OK && p < n->count; p++) {
        if (all[p] == 0) {
            if (p != n->me)
                snprintf(n->why, sizeof n->why,
                         "UCX network manager: process %d could not start UCX", p);
            st = DCUDA_ERR_PEER;
        } else if (all[p] > *longest) {
            *longest = all[p];
        }
    }
    free(all);
    return st;
}

/* The addresses, `stride` bytes apart, in pieces of gather_max bytes. */
static dcuda_status_t gather_addresses(dcu_net_t *n, const dcu_net_env_t *env,
                                       const ucp_address_t *addr, size_t len, size_t stride,
                                       char *addrs)
{
    size_t piece = env->gather_max;
    char *mine = calloc(1, piece), *all = malloc((size_t)n->count * piece);
    dcuda_status_t st = mine && all ? DCUDA_OK : DCUDA_ERR_NO_MEMORY;
    for (size_t at = 0; st == DCUDA_OK && at < stride; at += piece) {
        size_t size = stride - at < piece ? stride - at : piece;
        memset(mine, 0, piece);
        if (at < len)
            memcpy(mine, (const char *)addr + at, len - at < size ? len - at : size);
        st = env->allgather(mine, all, size);
        for (int p = 0; st == DCUDA_OK && p < n->count; p++)
            memcpy(addrs + (size_t)p * stride + at, all + (size_t)p * size, size);
    }
    free(mine);
    free(all);
    return st;
}

/* Process p's endpoint, made on the first message to it; NULL (n->why
 * says why) when it cannot be made. */
static ucp_ep_h endpoint(dcu_net_t *n, int p)
{
    peer_t *q = &n->peers[p];
    if (q->ep)
        return q->ep;
    ucp_ep_params_t ep = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
        .address = (const ucp_address_t *)(n->addrs + (size_t)p * n->stride),
        .err_mode = UCP_ERR_HANDLING_MODE_PEER,
        .err_handler = { .cb = ep_failed, .arg = q },
    };
    ucs_status_t st = ucp_ep_create(n->worker, &ep, &q->ep);
    if (st != UCS_OK) {
        char what[64];
        q->ep = NULL;
        snprintf(what, sizeof what, "ucp_ep_create (process %d)", p);
        ucx_failed(n, what, st);
        return NULL;
    }
    n->linked[n->link_count++] = p;
    if (n->describe) {
        char who[128];
        n->describe(p, who, sizeof who);
        dcu_msg_info("UCX network manager: connected to %s (%d connection(s) of %d processes)", who,
                     n->link_count, n->count);
    }
    return q->ep;
}

/* Exchanges the addresses, kept for connecting on first use; a process
 * that failed to start (addr NULL) still takes part in the first round, so
 * that all fail. */
static dcuda_status_t join(dcu_net_t *n, const dcu_net_env_t *env, const ucp_address_t *addr,
                           size_t len)
{
    size_t stride = 0;
    dcuda_status_t st = gather_lengths(n, env, addr ? len : 0, &stride);
    if (st != DCUDA_OK)
        return st;
    n->addrs = malloc((size_t)n->count * stride);
    n->stride = stride;
    if (!n->addrs)
        return DCUDA_ERR_NO_MEMORY; /* the others wait in the next round: as for MPI */
    return gather_addresses(n, env, addr, len, stride, n->addrs);
}

/* ---- receives ----------------------------------------------------------------------- */

/* Always a request (NO_IMM_CMPL): UCX 1.13 leaves param->recv_info unset
 * when a receive without callback completes at once, so the message's
 * length and sender are read from the request (ucp_tag_recv_request_test). */
static int post_recv(dcu_net_t *n, int i)
{
    slot_t *s = &n->slots[i];
    ucp_request_param_t param = { .op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL };
    void *r = ucp_tag_recv_nbx(n->worker, s->buf, DCU_NET_MAX_MESSAGE, 0, UCX_BYE_BIT, &param);
    if (UCS_PTR_IS_ERR(r) || !r)
        return ucx_failed(n, "ucp_tag_recv_nbx", r ? UCS_PTR_STATUS(r) : UCS_ERR_NO_PROGRESS);
    s->req = r;
    s->info = (ucp_tag_recv_info_t){ 0 };
    return 0;
}

/* The receive of the next goodbye, whoever sends it (its tag names the
 * sender). */
static int post_bye(dcu_net_t *n)
{
    ucp_request_param_t param = { .op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL };
    void *r = ucp_tag_recv_nbx(n->worker, n->bye_buf, 0, UCX_BYE_BIT, UCX_BYE_BIT, &param);
    if (UCS_PTR_IS_ERR(r) || !r)
        return ucx_failed(n, "ucp_tag_recv_nbx (goodbye)",
                          r ? UCS_PTR_STATUS(r) : UCS_ERR_NO_PROGRESS);
    n->bye_req = r;
    return 0;
}

static int post_all(dcu_net_t *n)
{
    if (post_bye(n) != 0)
        return -1;
    for (int i = 0; i < UCX_NET_RECVS; i++) {
        n->slots[i].buf = dcu_net_buffer(&n->mem, DCU_NET_MAX_MESSAGE);
        if (!n->slots[i].buf) {
            snprintf(n->why, sizeof n->why, "UCX network manager: out of memory");
            return -1;
        }
        if (post_recv(n, i) != 0)
            return -1;
        n->recvs_posted = i + 1;
    }
    return 0;
}

/* ---- close -------------------------------------------------------------------------- */

/* Progresses until `done` holds or the deadline passed. */
static void progress_until(dcu_net_t *n, int (*done)(dcu_net_t *), uint64_t deadline)
{
    while (!done(n) && dcu_clock_ns() < deadline)
        if (!ucp_worker_progress(n->worker))
            sched_yield();
}

static int complete_sends(dcu_net_t *n);

static int sends_done(dcu_net_t *n)
{
    complete_sends(n);
    return n->send_count == 0;
}

static void say_bye(dcu_net_t *n, uint64_t deadline)
{
    static char none[1];
    ucp_request_param_t param = { .op_attr_mask = 0 };
    for (int k = 0; k < n->link_count; k++) {
        int p = n->linked[k];
        peer_t *q = &n->peers[p];
        if (p == n->me || !q->ep || q->failed != UCS_OK) /* not to itself (NET_LOOPBACK) */
            continue;
        void *r = ucp_tag_send_nbx(q->ep, none, 0, UCX_BYE_BIT | (ucp_tag_t)n->me, &param);
        if (UCS_PTR_IS_PTR(r) && r &&
            dcu_array_room((void **)&n->sends, n->send_count, &n->send_cap, sizeof *n->sends))
            n->sends[n->send_count++] = (sent_t){ r, NULL, p };
        else if (UCS_PTR_IS_PTR(r) && r)
            ucp_request_free(r);
    }
    progress_until(n, sends_done, deadline);
}

static int closes_done(dcu_net_t *n)
{
    for (int k = 0; k < n->link_count; k++) {
        void *r = n->peers[n->linked[k]].close_req;
        if (r && ucp_request_check_status(r) == UCS_INPROGRESS)
            return 0;
    }
    return 1;
}

/* Flushes the endpoints of live peers (force-closes failed ones). */
static void close_eps(dcu_net_t *n, uint64_t deadline, int force)
{
    for (int k = 0; k < n->link_count; k++) {
        peer_t *q = &n->peers[n->linked[k]];
        if (!q->ep)
            continue;
        ucp_request_param_t param = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
            .flags = force || q->failed != UCS_OK ? UCP_EP_CLOSE_FLAG_FORCE : 0,
        };
        void *r = ucp_ep_close_nbx(q->ep, &param);
        q->ep = NULL;
        q->close_req = UCS_PTR_IS_PTR(r) ? r : NULL;
    }
    if (!force)
        progress_until(n, closes_done, deadline);
    for (int k = 0; k < n->link_count; k++)
        if (n->peers[n->linked[k]].close_req) /* one still flushing: released when done */
            ucp_request_free(n->peers[n->linked[k]].close_req);
}

/* Receives and sends still posted: cancelled and released (UCP releases a
 * request still in flight once it ends). */
static void release_requests(dcu_net_t *n)
{
    for (int i = 0; i < n->recvs_posted; i++) {
        if (n->slots[i].req) {
            ucp_request_cancel(n->worker, n->slots[i].req);
            ucp_request_free(n->slots[i].req);
        }
    }
    if (n->bye_req) {
        ucp_request_cancel(n->worker, n->bye_req);
        ucp_request_free(n->bye_req);
    }
    for (int i = 0; i < n->send_count; i++)
        if (n->sends[i].req)
            ucp_request_free(n->sends[i].req);
}

/* Messages that arrived after the manager stopped reading (a peer's last
 * beat or acknowledgement, sent while this process closed): received and
 * dropped, so that the worker holds none unmatched when it is destroyed
 * (UCX would print a warning for each, on stdout). */
static void drop_unread(dcu_net_t *n, uint64_t deadline)
{
    (void)ucp_worker_progress(n->worker);
    ucp_tag_recv_info_t info;
    ucp_tag_message_h m;
    while (dcu_clock_ns() < deadline && (m = ucp_tag_probe_nb(n->worker, 0, 0, 1, &info))) {
        void *buf = malloc(info.length ? info.length : 1);
        ucp_request_param_t param = { .op_attr_mask = 0 };
        void *r = buf ? ucp_tag_msg_recv_nbx(n->worker, buf, info.length, m, &param) : NULL;
        if (UCS_PTR_IS_PTR(r) && r) {
            while (ucp_request_check_status(r) == UCS_INPROGRESS && dcu_clock_ns() < deadline)
                (void)ucp_worker_progress(n->worker);
            int landed = ucp_request_check_status(r) != UCS_INPROGRESS;
            ucp_request_free(r);
            if (!landed)
                return; /* buf stays the receive's (one, at most, left behind) */
        }
        free(buf);
        if (!buf || UCS_PTR_IS_ERR(r))
            return;
    }
}

/* bye: the manager opened, so the peers wait for its goodbye. */
static void shut(dcu_net_t *n, int bye, int abandon)
{
    n->closing = 1;
    if (n->worker) {
        uint64_t deadline = dcu_clock_ns() + UCX_CLOSE_NS;
        if (bye && !abandon)
            say_bye(n, deadline);
        close_eps(n, abandon ? dcu_clock_ns() : deadline, abandon);
        release_requests(n);
        if (!abandon)
            drop_unread(n, deadline);
        ucp_worker_destroy(n->worker);
    }
    if (n->ctx)
        ucp_cleanup(n->ctx);
    for (int i = 0; i < UCX_NET_RECVS; i++)
        dcu_net_buffer_free(&n->mem, n->slots[i].buf);
    for (int i = 0; i < n->send_count; i++)
        dcu_net_release(&n->mem, n->sends[i].data);
    free(n->sends);
    free(n->peers);
    free(n->linked);
    free(n->addrs);
    free(n);
}

/* Abandoned (a peer process was lost): endpoints closed by force and the
 * worker not progressed (UCX 1.13's TCP transport can trip an assertion
 * on a connection its peer's death half-closed). */
static void ucx_close(dcu_net_t *n, int abandon) { shut(n, 1, abandon); }

/* The last round of the start: every process posted its receives, or
 * every one fails alike. */
static dcuda_status_t agree(dcu_net_t *n, const dcu_net_env_t *env, dcuda_status_t mine)
{
    int32_t ok = mine == DCUDA_OK;
    int32_t *all = calloc((size_t)n->count, sizeof *all);
    if (!all)
        return DCUDA_ERR_NO_MEMORY;
    dcuda_status_t st = env->allgather(&ok, all, sizeof ok);
    for (int p = 0; st == DCUDA_OK && p < n->count; p++) {
        if (!all[p]) {
            if (p != n->me)
                snprintf(n->why, sizeof n->why,
                         "UCX network manager: process %d could not start its network path", p);
            st = p == n->me ? mine : DCUDA_ERR_PEER;
        }
    }
    free(all);
    return st;
}

static dcuda_status_t ucx_open(const dcu_net_env_t *env, dcu_net_recv_fn recv, void *recv_arg,
                               dcu_net_t **out)
{
    dcu_net_t *n = calloc(1, sizeof *n);
    if (n) {
        n->lost = -1;
        n->peers = calloc((size_t)env->process_count, sizeof *n->peers);
        n->linked = calloc((size_t)env->process_count, sizeof *n->linked);
    }
    if (!n || !n->peers || !n->linked || env->gather_max < sizeof(uint64_t)) {
        dcuda_status_t st = n && n->peers && n->linked ? DCUDA_ERR_INVALID_ARG /* a length */
                                                       : DCUDA_ERR_NO_MEMORY;
        if (n) {
            free(n->peers);
            free(n->linked);
        }
        free(n);
        return st;
    }
    n->recv = recv;
    n->recv_arg = recv_arg;
    n->mem = env->mem;
    n->describe = env->describe;
    snprintf(n->net_if, sizeof n->net_if, "%s", env->net_if ? env->net_if : "");
    n->me = env->process_index;
    n->count = env->process_count;
    ucp_address_t *addr = NULL;
    size_t len = 0;
    int started = start_worker(n, &addr, &len) == 0;
    dcuda_status_t st = join(n, env, started ? addr : NULL, len);
    if (addr)
        ucp_worker_release_address(n->worker, addr);
    if (st == DCUDA_OK && post_all(n) != 0)
        st = DCUDA_ERR_SYSTEM;
    if (st != DCUDA_ERR_PEER) /* a process that ended takes part in no round */
        st = agree(n, env, st);
    if (st != DCUDA_OK) {
        if (n->why[0])
            dcu_msg_error("%s", n->why);
        shut(n, 0, 0);
        return st;
    }
    *out = n;
    return DCUDA_OK;
}

/* ---- send and progress -------------------------------------------------------------- */

/* Why process p cannot be reached, into n->why; -1. */
static int peer_lost(dcu_net_t *n, int p)
{
    peer_t *q = &n->peers[p];
    char who[128];
    n->describe(p, who, sizeof who);
    n->lost = q->said_bye ? -1 : p;
    if (q->said_bye)
        snprintf(n->why, sizeof n->why, "UCX network manager: %s has closed its network path", who);
    else
        snprintf(n->why, sizeof n->why, "UCX network manager: lost the connection to %s (%s)", who,
                 ucs_status_string(q->failed));
    return -1;
}

static dcuda_status_t ucx_send(dcu_net_t *n, int peer, void *data, size_t size)
{
    if (peer < 0 || peer >= n->count || n->peers[peer].failed != UCS_OK) {
        dcu_net_release(&n->mem, data);
        if (peer >= 0 && peer < n->count)
            peer_lost(n, peer);
        else
            snprintf(n->why, sizeof n->why, "UCX network manager: no process %d", peer);
        return DCUDA_ERR_SYSTEM;
    }
    if (!dcu_array_room((void **)&n->sends, n->send_count, &n->send_cap, sizeof *n->sends)) {
        dcu_net_release(&n->mem, data);
        return DCUDA_ERR_NO_MEMORY;
    }
    ucp_ep_h ep = endpoint(n, peer);
    if (!ep) {
        dcu_net_release(&n->mem, data);
        return DCUDA_ERR_SYSTEM;
    }
    ucp_request_param_t param = { .op_attr_mask = 0 };
    void *r = ucp_tag_send_nbx(ep, data, size, (ucp_tag_t)n->me, &param);
    if (UCS_PTR_IS_ERR(r)) {
        dcu_net_release(&n->mem, data);
        char what[64];
        snprintf(what, sizeof what, "send to process %d", peer);
        ucx_failed(n, what, UCS_PTR_STATUS(r));
        return DCUDA_ERR_SYSTEM;
    }
    if (!r) {
        dcu_net_release(&n->mem, data); /* sent at once */
        return DCUDA_OK;
    }
    n->sends[n->send_count++] = (sent_t){ r, data, peer };
    return DCUDA_OK;
}

/* Has the receive of slot i completed? -1 on an error. */
static int slot_done(dcu_net_t *n, int i)
{
    slot_t *s = &n->slots[i];
    if (!s->req)
        return 1;
    ucs_status_t st = ucp_tag_recv_request_test(s->req, &s->info);
    if (st == UCS_INPROGRESS)
        return 0;
    ucp_request_free(s->req);
    s->req = NULL;
    if (st == UCS_OK)
        return 1;
    ucp_tag_t from = s->info.sender_tag;
    if (from < (ucp_tag_t)n->count && n->peers[from].failed != UCS_OK)
        return peer_lost(n, (int)from);
    return ucx_failed(n, "receive", st);
}

/* Delivers completed receives in posting order, reposting each. */
static int deliver(dcu_net_t *n)
{
    int done = 0;
    for (;;) {
        int i = n->recv_head, r = slot_done(n, i);
        if (r <= 0)
            return r < 0 ? r : done;
        ucp_tag_t from = n->slots[i].info.sender_tag;
        if (from >= (ucp_tag_t)n->count) {
            snprintf(n->why, sizeof n->why,
                     "UCX network manager: a message with tag %#llx, from no process",
                     (unsigned long long)from);
            return -1;
        }
        if (n->recv(n->recv_arg, (int)from, n->slots[i].buf, n->slots[i].info.length) &&
            !(n->slots[i].buf = dcu_net_buffer(&n->mem, DCU_NET_MAX_MESSAGE))) {
            snprintf(n->why, sizeof n->why, "UCX network manager: out of memory");
            return -1;
        }
        if (post_recv(n, i) != 0)
            return -1;
        n->recv_head = (i + 1) % UCX_NET_RECVS;
        done = 1;
    }
}

/* Releases the buffers of completed sends. */
static int complete_sends(dcu_net_t *n)
{
    int done = 0;
    for (int i = 0; i < n->send_count;) {
        sent_t *s = &n->sends[i];
        ucs_status_t st = ucp_request_check_status(s->req);
        if (st == UCS_INPROGRESS) {
            i++;
            continue;
        }
        int peer = s->peer;
        ucp_request_free(s->req);
        dcu_net_release(&n->mem, s->data);
        *s = n->sends[--n->send_count];
        if (st != UCS_OK && !n->closing)
            return n->peers[peer].failed != UCS_OK ? peer_lost(n, peer) : ucx_failed(n, "send", st);
        done = 1;
    }
    return done;
}

/* Goodbyes that arrived: their senders finished. */
static int take_byes(dcu_net_t *n)
{
    while (n->bye_req) {
        ucp_tag_recv_info_t info = { 0 };
        ucs_status_t st = ucp_tag_recv_request_test(n->bye_req, &info);
        if (st == UCS_INPROGRESS)
            return 0;
        ucp_request_free(n->bye_req);
        n->bye_req = NULL;
        if (st != UCS_OK)
            return n->closing ? 0 : ucx_failed(n, "receive (goodbye)", st);
        ucp_tag_t from = info.sender_tag & ~UCX_BYE_BIT;
        if (from < (ucp_tag_t)n->count)
            n->peers[from].said_bye = 1;
        if (post_bye(n) != 0)
            return -1;
    }
    return 0;
}

/* A peer whose endpoint failed without its goodbye, once the grace passed
 * (only the processes connected to have endpoints to fail). */
static int check_peers(dcu_net_t *n)
{
    if (take_byes(n) < 0)
        return -1;
    uint64_t now = 0;
    for (int k = 0; k < n->link_count; k++) {
        peer_t *q = &n->peers[n->linked[k]];
        if (q->failed == UCS_OK || q->said_bye)
            continue;
        if (!now)
            now = dcu_clock_ns();
        if (now - q->failed_ns > UCX_GRACE_NS)
            return peer_lost(n, n->linked[k]);
    }
    return 0;
}

/* > 0 only when a message was delivered or a send completed: UCX's own
 * internal events do not keep the proxy's thread from resting. */
static int ucx_progress(dcu_net_t *n)
{
    for (int i = 0; i < UCX_PROGRESS_ROUNDS && ucp_worker_progress(n->worker); i++) {
    }
    int a = deliver(n);
    if (a < 0)
        return a;
    int b = complete_sends(n);
    if (b < 0)
        return b;
    if (check_peers(n) < 0)
        return -1;
    return a | b;
}

static int ucx_pending(dcu_net_t *n) { return n->send_count; }
static const char *ucx_why(dcu_net_t *n) { return n->why; }

static int ucx_serialized(char *why, size_t why_size)
{
    (void)why;
    (void)why_size;
    return 1;
}

static int ucx_lost(dcu_net_t *n) { return n->lost; }

const dcu_net_ops_t dcu_net_ucx_ops = {
    .version = DCU_NET_VERSION,
    .caps = DCU_NET_CAP_LANES,
    .name = "ucx",
    .open = ucx_open,
    .close = ucx_close,
    .send = ucx_send,
    .progress = ucx_progress,
    .pending = ucx_pending,
    .why = ucx_why,
    .serialized = ucx_serialized,
    .lost = ucx_lost,
};
