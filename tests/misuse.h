/*
 * Shared between the rank code (misuse_kernels.c) and the host driver
 * (misuse_host.c) of the misuse suite: a "probe" is one offending rank API
 * call, described by data so that the host can build many of them and know
 * what each must return and report. A second kernel (misuse_before_init)
 * calls the API on a zeroed state before dcuda_rank_init.
 */
#ifndef DCUDA_TESTS_MISUSE_H
#define DCUDA_TESTS_MISUSE_H

#include "test_common.h"

/* The offending call. */
enum mis_op {
    MIS_PUT = 1,        /* dcuda_put(win, rank, offset, size, src) */
    MIS_PUT_NOTIFY,     /* dcuda_put_notify(..., tag) */
    MIS_NOTIFY,         /* dcuda_notify(rank, comm, tag) */
    MIS_WAIT,           /* dcuda_wait_notifications(tag, count) */
    MIS_TEST,           /* dcuda_test_notifications(tag, count) */
    MIS_FLUSH,          /* dcuda_win_flush(win) */
    MIS_FREE,           /* dcuda_win_free(win) */
    MIS_BARRIER,        /* dcuda_comm_barrier(comm) */
    MIS_COMM_SIZE,      /* dcuda_comm_size(comm) */
    MIS_COMM_RANK,      /* dcuda_comm_rank(comm) */
    MIS_WIN_CREATE,     /* dcuda_win_create(comm, ...) */
    MIS_TIMER_STOP,     /* stop without start */
    MIS_TIMER_START2,   /* start twice */
    MIS_TIMER_MANY,     /* DCUDA_MAX_TIMERS pairs, then one more start */
    MIS_AFTER_FINISH,   /* rank 0: dcuda_notify after dcuda_rank_finish */
    MIS_WIN_LIMIT,      /* every rank: DEVICE windows until creation fails */
    MIS_BROADCAST,      /* dcuda_broadcast(win, offset, size, root = rank) */
    MIS_ALLREDUCE,      /* dcuda_allreduce(win, offset, count = size, type = tag, op = count) */
    MIS_ALLGATHER,      /* dcuda_allgather(win, offset, size) */
    MIS_REDUCE,         /* dcuda_reduce(win, offset, count = size, type = tag, op = count,
                       * root = rank) */
    MIS_REDUCE_SCATTER, /* dcuda_reduce_scatter(win, offset, count = size, type = tag,
                         * op = count) */
    MIS_ALLTOALL,       /* dcuda_alltoall(win, offset, size) */
    MIS_GET,            /* dcuda_get(win, rank, offset, size, dst = src) */
    MIS_GET_NOTIFY      /* dcuda_get_notify(..., tag) */
};

/* Which window handle the probe uses. */
enum mis_win {
    MW_WORLD = 0, /* W: each rank's [target | source] part, WORLD */
    MW_DEVICE,    /* D: each rank's device part, DEVICE */
    MW_ZERO,      /* Z: WORLD, odd ranks expose 0 bytes, even ranks their target part */
    MW_SHARED,    /* S: WORLD, every rank exposes the same shared buffer */
    MW_FREED,     /* a WORLD window created and freed before the probe */
    MW_NEVER,     /* a handle of a slot that was never used */
    MW_NONE       /* DCUDA_WIN_NONE */
};

/* Where the probe's source buffer (a get's destination) is (plus src_off). */
enum mis_src {
    MS_SOURCE = 0, /* my source part (inside W) */
    MS_TARGET,     /* my target part (inside W) */
    MS_GAP,        /* my gap: inside no window */
    MS_DEVPART,    /* my device part (inside D only) */
    MS_OTHER,      /* rank 1's source part */
    MS_SHARED      /* the shared buffer (inside S) */
};

/* Per-rank region of buf: target part, source part, gap, device part. */
#define MIS_TARGET_BYTES 256u
#define MIS_SOURCE_BYTES 256u
#define MIS_GAP_BYTES 256u
#define MIS_DEV_BYTES 256u
#define MIS_REGION (MIS_TARGET_BYTES + MIS_SOURCE_BYTES + MIS_GAP_BYTES + MIS_DEV_BYTES)
#define MIS_SHARED_BYTES 256u
#define MIS_NEVER_SLOT 48 /* slot of MW_NEVER: far above the few windows created */

typedef struct mis_probe {
    int32_t op, win, src, rank, comm, tag, count, reserved;
    uint64_t offset, size, src_off;
} mis_probe_t;

/* Result slots of each rank: res[rank * MIS_SLOTS + slot]. */
enum mis_slot {
    MIS_RES_CALL = 0, /* what the probe call returned (ranks that probed) */
    MIS_RES_VALUE,    /* a value the report must name (state address, handle) */
    MIS_RES_SETUP,    /* first failing call outside the probe (0: none) */
    MIS_RES_COUNT,    /* win limit: windows created before the failure */
    MIS_RES_WIN,      /* win limit: handle returned by the failing create */
    MIS_RES_CALL2,    /* before init: the further calls */
    MIS_RES_CALL3,
    MIS_RES_CALL4,
    MIS_SLOTS
};

typedef struct mis_data {
    mis_probe_t probe;
    unsigned char *buf;    /* [ranks * MIS_REGION], rank-visible */
    unsigned char *shared; /* [MIS_SHARED_BYTES], rank-visible */
    int64_t *res;          /* [ranks * MIS_SLOTS], rank-visible */
} mis_data_t;

#endif /* DCUDA_TESTS_MISUSE_H */
