/*
 * The network manager contract (a plugin's part: plugin.h): how the proxy
 * moves messages between
 * processes (of other nodes) through an existing engine. One small ops
 * table per manager, versioned, so that a manager built for another
 * contract is refused.
 *
 * A manager delivers byte strings between processes of the program
 * (numbered as the bootstrap numbers them), in order for each pair of
 * processes; a process may send to itself (NET_LOOPBACK). It is driven by one thread: the proxy's (the thread that runs
 * dcuda_host_run), which calls progress often while ranks run.
 */
#ifndef DCU_PLUGIN_NET_OPS_H
#define DCU_PLUGIN_NET_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "dcuda/dcuda_status.h"

#define DCU_NET_VERSION 9u /* 9: capability flags */
/* Largest message a manager must carry: a put's payload chunk (at most
 * DCU_NET_PUT_CHUNK) and its header, or a barrier's window parts for tens
 * of thousands of ranks. */
#define DCU_NET_PUT_CHUNK (1024u * 1024u)
#define DCU_NET_MAX_MESSAGE (DCU_NET_PUT_CHUNK + 4096u)

typedef struct dcu_net dcu_net_t;

/* A message from process `peer` arrived in `data`, a receive buffer from
 * env.mem.buffer_alloc (its start). It returns 0 when it is done with the
 * buffer (the manager receives into it again), nonzero when it keeps it:
 * the manager then takes a new buffer from buffer_alloc for its next
 * receive and never touches this one again; the receiver hands it to
 * buffer_free itself. */
typedef int (*dcu_net_recv_fn)(void *arg, int peer, void *data, size_t size);

/* Every process contributes `size` (<= gather_max) bytes; all receive all,
 * in process order. Collective (the bootstrap's allgather). */
typedef dcuda_status_t (*dcu_net_gather_fn)(const void *mine, void *all, size_t size);

/* Memory for messages (a NULL function: malloc or free). A manager takes
 * its receive buffers from buffer_alloc and gives them back to buffer_free;
 * a message handed to send goes back to release once the manager no longer
 * reads it (sent, refused or failed). The proxy receives into pinned memory
 * and sends from its pinned staging buffers this way. */
typedef struct dcu_net_mem {
    void *(*buffer_alloc)(void *arg, size_t size);
    void (*buffer_free)(void *arg, void *buf);
    void (*release)(void *arg, void *msg);
    void *arg;
} dcu_net_mem_t;

/* What a manager learns of the program at open: who this process is, how
 * many there are, a way to exchange a few bytes with all of them before
 * the network is up (a manager that is not MPI needs it to find its
 * peers), and where its message memory comes from. */
typedef struct dcu_net_env {
    int process_index, process_count;
    dcu_net_gather_fn allgather;
    size_t gather_max;
    dcu_net_mem_t mem;
    /* Processes started through MPI: the address of the MPI_Comm they use
     * (its ranks are the process indices); NULL otherwise. */
    const void *mpi_comm;
    /* "process 1 (pid 4242 on node7)", for the manager's messages. */
    const char *(*describe)(int p, char *buf, size_t size);
    /* The NET_IF setting: the interfaces to use ("": the manager's own
     * choice). */
    const char *net_if;
    /* Proxy lanes a process (0 or 1: none): process_index is then a lane's
     * number, process p's lane l being p * lanes + l. */
    int lanes;
} dcu_net_env_t;

/* What a manager can and needs (dcu_net_ops_t.caps). */
enum {
    DCU_NET_CAP_LANES = 1u << 0,     /* several proxy lanes a process may each open it */
    DCU_NET_CAP_MPI_START = 1u << 1, /* needs the processes started through MPI */
};

typedef struct dcu_net_ops {
    uint32_t version; /* DCU_NET_VERSION */
    const char *name;
    uint32_t caps; /* DCU_NET_CAP_* */
    /* Collective over the program's processes. */
    dcuda_status_t (*open)(const dcu_net_env_t *env, dcu_net_recv_fn recv, void *recv_arg,
                           dcu_net_t **out);
    /* abandon: a peer process was lost; release what is local, wait for
     * nothing (sends to it may never complete, and an engine may trip on
     * its half-closed connections). */
    void (*close)(dcu_net_t *n, int abandon);
    /* Sends `size` (<= DCU_NET_MAX_MESSAGE) bytes to process `peer`. The
     * manager owns `data` from now on and hands it to env.mem.release once
     * sent (also when it fails). */
    dcuda_status_t (*send)(dcu_net_t *n, int peer, void *data, size_t size);
    /* Completes sends and delivers arrivals; > 0 if it did anything, < 0 on
     * a network error (dcu_net_ops_t.why tells). */
    int (*progress)(dcu_net_t *n);
    /* Sends not yet completed. */
    int (*pending)(dcu_net_t *n);
    /* The last error, as text. */
    const char *(*why)(dcu_net_t *n);
    /* May threads take turns driving the manager (never two at once)? The
     * host thread of a run of dcuda_host_run_start is not the one that
     * opened it. 0, and why, when not. */
    int (*serialized)(char *why, size_t why_size);
    /* The process whose connection the last error lost (a dead peer), or
     * -1 (another error, or a manager that cannot tell: NULL). */
    int (*lost)(dcu_net_t *n);
} dcu_net_ops_t;

/* Message memory through env.mem (see dcu_net_mem_t). */
void *dcu_net_buffer(const dcu_net_mem_t *m, size_t size);
void dcu_net_buffer_free(const dcu_net_mem_t *m, void *buf);
void dcu_net_release(const dcu_net_mem_t *m, void *msg);

#endif /* DCU_PLUGIN_NET_OPS_H */
