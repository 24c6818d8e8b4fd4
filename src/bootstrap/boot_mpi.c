/*
 * MPI mode: the processes were started by an MPI launcher. dcuda joins the
 * job's MPI (initialising it, with MPI_THREAD_SERIALIZED, when the program has
 * not) and uses it to start: its size and rank, which processes share a
 * node, allgathers and barriers (the network path has its own manager), on
 * a duplicate of MPI_COMM_WORLD, or of a communicator the application gave
 * (then the application initialised MPI, and its members are the program's
 * processes). MPI is finalised at exit when dcuda initialised it, unless a
 * peer died (a collective finalise would then wait forever).
 */
#include <mpi.h>
#include <stdlib.h>

#include "boot.h"
#include "dcuda/shared/layout.h"
#include "modes.h"
#include "util/msg.h"

static struct {
    int owned;     /* dcuda initialised MPI */
    int abandoned; /* a peer died */
    MPI_Comm comm; /* the processes' communicator (a duplicate) */
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

void dcu_boot_mpi_abandon(void) { mp.abandoned = 1; }

int dcu_boot_mpi_node_key(void)
{
    MPI_Comm node_comm;
    int rank = 0, key = 0;
    MPI_Comm_rank(mp.comm, &rank);
    if (MPI_Comm_split_type(mp.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                            &node_comm) != MPI_SUCCESS)
        return rank;
    MPI_Allreduce(&rank, &key, 1, MPI_INT, MPI_MIN, node_comm);
    MPI_Comm_free(&node_comm);
    return key;
}

dcuda_status_t dcu_boot_mpi_barrier(void)
{
    int err = MPI_Barrier(mp.comm);
    return err == MPI_SUCCESS ? DCUDA_OK : mpi_fail("barrier", err);
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
    if (size > DCUDA_MAX_PROCESSES) {
        dcu_msg_error("MPI bootstrap: %d processes, but this build supports at most %d", size,
                      DCUDA_MAX_PROCESSES);
        return DCUDA_ERR_SETTING;
    }
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

dcuda_status_t dcu_boot_mpi_allgather(const void *mine, void *all, size_t size)
{
    int err = MPI_Allgather(mine, (int)size, MPI_BYTE, all, (int)size, MPI_BYTE, mp.comm);
    return err == MPI_SUCCESS ? DCUDA_OK : mpi_fail("allgather", err);
}
