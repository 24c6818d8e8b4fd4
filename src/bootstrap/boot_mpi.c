/*
 * MPI mode: the processes were started by an MPI launcher. dcuda joins the
 * job's MPI (initialising it, with MPI_THREAD_SERIALIZED, when the program has
 * not) and uses it to start: its size and rank, which processes share a
 * node, and the records of host steps (the network path has its own
 * manager), on a duplicate of MPI_COMM_WORLD, or of a communicator the
 * application gave (then the application initialised MPI, and its members
 * are the program's processes). A step is a nonblocking allgather, tested
 * with pauses between the tests, so a process that waits long says so
 * rather than spin silently. MPI is finalised at exit when dcuda
 * initialised it, unless a peer died (a collective finalise would then
 * wait forever).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "boot.h"
#include "dcuda/shared/layout.h"
#include "modes.h"
#include "util/clock.h"
#include "util/msg.h"

/* Tests of a step's allgather before the first pause; the pause grows to
 * MPI_PAUSE_MAX_NS. */
#define MPI_SPINS 200u
#define MPI_PAUSE_MIN_NS (20 * DCU_NS_PER_US)
#define MPI_PAUSE_MAX_NS (2 * DCU_NS_PER_MS)

static struct {
    int owned;      /* dcuda initialised MPI */
    int abandoned;  /* a peer died */
    MPI_Comm comm;  /* the processes' communicator (a duplicate) */
    MPI_Comm given; /* the application's, or MPI_COMM_NULL */
} mp = { 0, 0, MPI_COMM_NULL, MPI_COMM_NULL };

static dcuda_status_t mpi_fail(const char *what, int err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, text, &len);
    dcu_msg_error("MPI bootstrap: %s: %s", what, text);
    return DCUDA_ERR_SYSTEM;
}

static void mpi_at_exit(void)
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (mp.owned && !mp.abandoned && !finalized)
        MPI_Finalize();
}

const void *dcu_boot_mpi_comm_used(void) { return &mp.comm; }

int dcu_boot_mpi_same_comm(const void *comm)
{
    int same = MPI_UNEQUAL;
    if (!comm)
        return mp.given == MPI_COMM_NULL;
    if (mp.given == MPI_COMM_NULL)
        return 0;
    MPI_Comm_compare(*(const MPI_Comm *)comm, mp.given, &same);
    return same == MPI_IDENT;
}

static void mpi_abandon(void) { mp.abandoned = 1; }

static int mpi_usable(void)
{
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    return inited && !finalized;
}

static int mpi_node_key(void)
{
    MPI_Comm node_comm;
    int rank = 0, key = 0;
    MPI_Comm_rank(mp.comm, &rank);
    if (MPI_Comm_split_type(mp.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm) !=
        MPI_SUCCESS)
        return rank;
    MPI_Allreduce(&rank, &key, 1, MPI_INT, MPI_MIN, node_comm);
    MPI_Comm_free(&node_comm);
    return key;
}

/* The processes are the members of `base`: a duplicate of it becomes
 * theirs. */
static dcuda_status_t join(long processes, MPI_Comm base, int *count, int *index)
{
    int rank = 0, size = 0;
    int err = MPI_Comm_dup(base, &mp.comm);
    if (err != MPI_SUCCESS)
        return mpi_fail("MPI_Comm_dup", err);
    MPI_Comm_rank(mp.comm, &rank);
    MPI_Comm_size(mp.comm, &size);
    if (processes && processes != size) {
        dcu_msg_error("MPI bootstrap: %d processes, but DCUDA_PROCESSES asks for %ld", size,
                      processes);
        return DCUDA_ERR_SETTING;
    }
    *count = size;
    *index = rank;
    return DCUDA_OK;
}

dcuda_status_t dcu_boot_mpi_start(long processes, int *count, int *index)
{
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int err = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
        if (err != MPI_SUCCESS)
            return mpi_fail("MPI_Init_thread", err);
        mp.owned = 1;
        atexit(mpi_at_exit);
    }
    return join(processes, MPI_COMM_WORLD, count, index);
}

dcuda_status_t dcu_boot_mpi_start_comm(long processes, const void *comm, int *count, int *index)
{
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized) {
        dcu_msg_error("dcuda_host_init: an MPI communicator was given, but MPI is %s",
                      finalized ? "finalised already" : "not initialised (call MPI_Init first)");
        return DCUDA_ERR_INVALID_ARG;
    }
    MPI_Comm given = *(const MPI_Comm *)comm;
    if (given == MPI_COMM_NULL) {
        dcu_msg_error("dcuda_host_init: the MPI communicator given is MPI_COMM_NULL");
        return DCUDA_ERR_INVALID_ARG;
    }
    mp.given = given;
    return join(processes, given, count, index);
}

static dcuda_status_t mpi_allgather(const void *mine, void *all, size_t size, const char *where,
                                    char *why, size_t why_size)
{
    MPI_Request req;
    snprintf(why, why_size, "MPI failed in %s (its message is above)", where);
    int err = MPI_Iallgather(mine, (int)size, MPI_BYTE, all, (int)size, MPI_BYTE, mp.comm, &req);
    if (err != MPI_SUCCESS)
        return mpi_fail("allgather", err);
    uint64_t start = 0, warned = 0, pause = MPI_PAUSE_MIN_NS;
    for (unsigned tests = 0;; tests++) {
        int done = 0;
        err = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            return mpi_fail("allgather", err);
        if (done)
            return DCUDA_OK;
        dcu_boot_waiting();
        if (tests < MPI_SPINS)
            continue;
        uint64_t now = dcu_clock_ns();
        if (!start)
            start = warned = now;
        if (now - warned >= DCU_BOOT_WARN_NS) {
            int rank = 0;
            MPI_Comm_rank(mp.comm, &rank);
            dcu_msg_warn("process %d has waited %.0f s in %s for the other processes (one that "
                         "does not reach it: a missing host call, or one still computing)",
                         rank, (double)(now - start) / DCU_NS_PER_S, where);
            warned = now;
        }
        dcu_clock_sleep_ns(pause);
        pause = pause < MPI_PAUSE_MAX_NS / 2 ? 2 * pause : MPI_PAUSE_MAX_NS;
    }
}

static int mpi_exit_status(int status) { return status; }

const dcu_boot_ops_t dcu_boot_mpi_ops = {
    .version = DCU_BOOT_OPS_VERSION,
    .name = "MPI",
    .caps = DCU_BOOT_CAP_MPI,
    .allgather = mpi_allgather,
    .node_key = mpi_node_key,
    .usable = mpi_usable,
    .abandon = mpi_abandon,
    .exit_status = mpi_exit_status,
    .child_status = NULL,
};
