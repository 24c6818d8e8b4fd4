/*
 * probe_mpi: the network path's hop between two proxies, measured alone:
 * a ping-pong of small messages between processes 0 and 1 with the calls
 * the MPI network manager makes (MPI_Isend, a posted MPI_Irecv completed by
 * polling MPI_Test), one-way = round trip / 2. Run under mpirun -np 2; the
 * transport is whatever the launch picks (set OMPI_MCA_btl to compare).
 * Then the stream a large put makes: messages of a network chunk (1 MiB)
 * from 0 to 1, 16 in flight as the manager keeps receives posted, in GB/s:
 * the most the manager can carry, the wire stage of a large put; and with
 * 3 in flight, as many as the default credit lets one put have.
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
#define STREAM_CHUNKS 512

/* GB/s of STREAM_CHUNKS chunks from 0 to 1, `depth` of them in flight (a
 * window: the next is posted as the oldest completes; depth 3 is what the
 * default credit, NET_CREDIT of 4 MiB, lets a large put have in flight). */
static double stream(int me, char *bufs, int depth)
{
    MPI_Request r[STREAM_DEPTH];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int c = 0; c < STREAM_CHUNKS + depth; c++) {
        int i = c % depth;
        if (c >= depth)
            wait_test(&r[i]);
        if (c >= STREAM_CHUNKS)
            continue;
        char *buf = bufs + (size_t)i * STREAM_CHUNK;
        if (me == 0)
            MPI_Isend(buf, STREAM_CHUNK, MPI_BYTE, 1, 8, MPI_COMM_WORLD, &r[i]);
        else
            MPI_Irecv(buf, STREAM_CHUNK, MPI_BYTE, 0, 8, MPI_COMM_WORLD, &r[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double s = MPI_Wtime() - t0;
    return (double)STREAM_CHUNKS * STREAM_CHUNK / s / 1e9;
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
    static const int depths[] = { STREAM_DEPTH, 3 };
    for (size_t d = 0; bufs && d < sizeof depths / sizeof depths[0]; d++) {
        stream(me, bufs, depths[d]); /* warm-up */
        double gbps = stream(me, bufs, depths[d]);
        if (me == 0)
            printf("mpi_stream bytes=%d in_flight=%d GBps=%.2f\n", STREAM_CHUNK, depths[d], gbps);
    }
    free(bufs);
    MPI_Finalize();
    return 0;
}
