/*
 * probe_mpi: the network path's hop between two proxies, measured alone:
 * a ping-pong of small messages between processes 0 and 1 with the calls
 * the MPI network manager makes (MPI_Isend, a posted MPI_Irecv completed by
 * polling MPI_Test), one-way = round trip / 2. Run under mpirun -np 2; the
 * transport is whatever the launch picks (set OMPI_MCA_btl to compare).
 * Then the stream a large put makes: messages of a network chunk (1 MiB)
 * from 0 to 1, 16 in flight as the manager keeps receives posted, in GB/s:
 * the most the manager can carry, the wire stage of a large put.
 * Prints one line per size.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 20000
#define WARMUP 1000

static void wait_test(MPI_Request *r)
{
    int done = 0;
    while (!done)
        MPI_Test(r, &done, MPI_STATUS_IGNORE);
}

static double pingpong(int me, char *buf, int size)
{
    double t0 = 0;
    for (int i = 0; i < WARMUP + ROUNDS; i++) {
        if (i == WARMUP)
            t0 = MPI_Wtime();
        MPI_Request r;
        if (me == 0) {
            MPI_Isend(buf, size, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &r);
            wait_test(&r);
            MPI_Irecv(buf, size, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &r);
            wait_test(&r);
        } else {
            MPI_Irecv(buf, size, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &r);
            wait_test(&r);
            MPI_Isend(buf, size, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &r);
            wait_test(&r);
        }
    }
    return (MPI_Wtime() - t0) / ROUNDS / 2 * 1e6;
}

#define STREAM_CHUNK (1 << 20)
#define STREAM_DEPTH 16
#define STREAM_BATCHES 32

/* GB/s of STREAM_BATCHES batches of STREAM_DEPTH chunks from 0 to 1. */
static double stream(int me, char *bufs)
{
    MPI_Request r[STREAM_DEPTH];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int b = 0; b < STREAM_BATCHES; b++) {
        for (int i = 0; i < STREAM_DEPTH; i++) {
            char *buf = bufs + (size_t)i * STREAM_CHUNK;
            if (me == 0)
                MPI_Isend(buf, STREAM_CHUNK, MPI_BYTE, 1, 8, MPI_COMM_WORLD, &r[i]);
            else
                MPI_Irecv(buf, STREAM_CHUNK, MPI_BYTE, 0, 8, MPI_COMM_WORLD, &r[i]);
        }
        for (int i = 0; i < STREAM_DEPTH; i++)
            wait_test(&r[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double s = MPI_Wtime() - t0;
    return (double)STREAM_BATCHES * STREAM_DEPTH * STREAM_CHUNK / s / 1e9;
}

int main(int argc, char **argv)
{
    int provided, me, n;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n != 2) {
        if (me == 0)
            fprintf(stderr, "probe_mpi: run with 2 processes\n");
        MPI_Finalize();
        return 1;
    }
    static const int sizes[] = { 48, 112, 1072, 8240, 65584 };
    char *buf = calloc(1, 65584);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double us = pingpong(me, buf, sizes[i]);
        if (me == 0)
            printf("mpi_hop bytes=%d one_way_us=%.3f\n", sizes[i], us);
    }
    free(buf);
    char *bufs = calloc(STREAM_DEPTH, STREAM_CHUNK);
    if (bufs) {
        stream(me, bufs); /* warm-up */
        double gbps = stream(me, bufs);
        if (me == 0)
            printf("mpi_stream bytes=%d in_flight=%d GBps=%.2f\n", STREAM_CHUNK, STREAM_DEPTH, gbps);
    }
    free(bufs);
    MPI_Finalize();
    return 0;
}
