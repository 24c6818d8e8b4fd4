/*
 * The MPI network manager: messages as MPI_Isend on a communicator of its
 * own (a duplicate of the processes' communicator, whose ranks are the
 * processes: MPI_COMM_WORLD, or the application's), and a
 * ring of receives posted on any source, completed in the order they were
 * posted. MPI matches arriving messages to receives in posting order and
 * never lets two messages of one sender overtake each other, so the
 * messages of one pair of processes are delivered in the order sent. Only
 * public MPI calls; everything runs on the proxy's thread, which is the
 * thread of dcuda_host_run or, after dcuda_host_run_start, a thread of the
 * runtime while the application's waits: one thread at a time
 * (MPI_THREAD_SERIALIZED, which dcuda asks for when it initialises MPI).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"
#include "util/array.h"
#include "util/msg.h"

#define MPI_NET_TAG 7
/* Receives posted at once. */
#define MPI_NET_RECVS 16

typedef struct sent {
    MPI_Request req;
    void *data;
} sent_t;

struct dcu_net {
    MPI_Comm comm;
    dcu_net_mem_t mem;
    dcu_net_recv_fn recv;
    void *recv_arg;
    MPI_Request recv_req[MPI_NET_RECVS];
    char *recv_buf[MPI_NET_RECVS];
    int recv_head; /* the receive posted first */
    sent_t *sends;
    int send_count, send_cap;
    char why[MPI_MAX_ERROR_STRING + 64];
};

static int mpi_failed(dcu_net_t *n, const char *what, int err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, text, &len);
    snprintf(n->why, sizeof n->why, "MPI network manager: %s: %s", what, text);
    return -1;
}

static int post_recv(dcu_net_t *n, int i)
{
    int err = MPI_Irecv(n->recv_buf[i], (int)DCU_NET_MAX_MESSAGE, MPI_BYTE, MPI_ANY_SOURCE,
                        MPI_NET_TAG, n->comm, &n->recv_req[i]);
    return err == MPI_SUCCESS ? 0 : mpi_failed(n, "MPI_Irecv", err);
}

static void mpi_close(dcu_net_t *n, int abandon)
{
    for (int i = 0; i < MPI_NET_RECVS; i++) {
        if (n->recv_req[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&n->recv_req[i]);
            MPI_Request_free(&n->recv_req[i]);
        }
        dcu_net_buffer_free(&n->mem, n->recv_buf[i]);
    }
    for (int i = 0; i < n->send_count; i++) {
        if (abandon) { /* MPI may still read the buffer: it is left to the process's end */
            MPI_Request_free(&n->sends[i].req);
            continue;
        }
        MPI_Wait(&n->sends[i].req, MPI_STATUS_IGNORE);
        dcu_net_release(&n->mem, n->sends[i].data);
    }
    free(n->sends);
    if (n->comm != MPI_COMM_NULL)
        MPI_Comm_free(&n->comm);
    free(n);
}

/* MPI numbers the processes as the bootstrap does (its communicator, or
 * MPI_COMM_WORLD): of the environment only that and the message memory are
 * needed. */
static dcuda_status_t mpi_open(const dcu_net_env_t *env, dcu_net_recv_fn recv, void *recv_arg,
                               dcu_net_t **out)
{
    dcu_net_t *n = calloc(1, sizeof *n);
    if (!n)
        return DCUDA_ERR_NO_MEMORY;
    n->recv = recv;
    n->recv_arg = recv_arg;
    n->mem = env->mem;
    n->comm = MPI_COMM_NULL;
    for (int i = 0; i < MPI_NET_RECVS; i++)
        n->recv_req[i] = MPI_REQUEST_NULL;
    MPI_Comm base = env->mpi_comm ? *(const MPI_Comm *)env->mpi_comm : MPI_COMM_WORLD;
    int err = MPI_Comm_dup(base, &n->comm);
    if (err != MPI_SUCCESS) {
        mpi_failed(n, "MPI_Comm_dup", err);
        dcu_msg_error("%s", n->why);
        mpi_close(n, 0);
        return DCUDA_ERR_SYSTEM;
    }
    for (int i = 0; i < MPI_NET_RECVS; i++) {
        n->recv_buf[i] = dcu_net_buffer(&n->mem, DCU_NET_MAX_MESSAGE);
        if (!n->recv_buf[i] || post_recv(n, i) != 0) {
            mpi_close(n, 0);
            return DCUDA_ERR_NO_MEMORY;
        }
    }
    *out = n;
    return DCUDA_OK;
}

static dcuda_status_t mpi_send(dcu_net_t *n, int peer, void *data, size_t size)
{
    if (!dcu_array_room((void **)&n->sends, n->send_count, &n->send_cap, sizeof *n->sends)) {
        dcu_net_release(&n->mem, data);
        return DCUDA_ERR_NO_MEMORY;
    }
    sent_t *s = &n->sends[n->send_count];
    int err = MPI_Isend(data, (int)size, MPI_BYTE, peer, MPI_NET_TAG, n->comm, &s->req);
    if (err != MPI_SUCCESS) {
        dcu_net_release(&n->mem, data);
        mpi_failed(n, "MPI_Isend", err);
        return DCUDA_ERR_SYSTEM;
    }
    s->data = data;
    n->send_count++;
    return DCUDA_OK;
}

/* Delivers completed receives in posting order, reposting each. */
static int deliver(dcu_net_t *n)
{
    int done = 0;
    for (;;) {
        int i = n->recv_head, flag = 0, count = 0;
        MPI_Status status;
        int err = MPI_Test(&n->recv_req[i], &flag, &status);
        if (err != MPI_SUCCESS)
            return mpi_failed(n, "MPI_Test (receive)", err);
        if (!flag)
            return done;
        MPI_Get_count(&status, MPI_BYTE, &count);
        if (n->recv(n->recv_arg, status.MPI_SOURCE, n->recv_buf[i], (size_t)count) &&
            !(n->recv_buf[i] = dcu_net_buffer(&n->mem, DCU_NET_MAX_MESSAGE))) {
            snprintf(n->why, sizeof n->why, "MPI network manager: out of memory");
            return -1;
        }
        if (post_recv(n, i) != 0)
            return -1;
        n->recv_head = (i + 1) % MPI_NET_RECVS;
        done = 1;
    }
}

/* Releases the buffers of completed sends. */
static int complete_sends(dcu_net_t *n)
{
    int done = 0;
    for (int i = 0; i < n->send_count;) {
        int flag = 0;
        int err = MPI_Test(&n->sends[i].req, &flag, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            return mpi_failed(n, "MPI_Test (send)", err);
        if (!flag) {
            i++;
            continue;
        }
        dcu_net_release(&n->mem, n->sends[i].data);
        n->sends[i] = n->sends[--n->send_count];
        done = 1;
    }
    return done;
}

static int mpi_progress(dcu_net_t *n)
{
    int a = deliver(n);
    if (a < 0)
        return a;
    int b = complete_sends(n);
    return b < 0 ? b : (a | b);
}

static int mpi_pending(dcu_net_t *n) { return n->send_count; }
static const char *mpi_why(dcu_net_t *n) { return n->why; }

static int mpi_serialized(char *why, size_t why_size)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    if (provided >= MPI_THREAD_SERIALIZED)
        return 1;
    snprintf(why, why_size,
             "MPI was initialised with a thread level below MPI_THREAD_SERIALIZED "
             "(%d): initialise it with MPI_Init_thread and MPI_THREAD_SERIALIZED or higher",
             provided);
    return 0;
}

const dcu_net_ops_t dcu_net_mpi_ops = {
    .version = DCU_NET_VERSION,
    .caps = DCU_NET_CAP_MPI_START, /* one thread drives it: one lane */
    .name = "mpi",
    .open = mpi_open,
    .close = mpi_close,
    .send = mpi_send,
    .progress = mpi_progress,
    .pending = mpi_pending,
    .why = mpi_why,
    .serialized = mpi_serialized,
};
