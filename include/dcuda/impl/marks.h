/*
 * Marks of a rank's steps on the remote path, for placing its turnaround
 * (built only when rank code is compiled with DCUDA_RANK_TRACE, on a GPU;
 * dcuda_bench gets it in a -DDCUDA_PROXY_TRACE=ON build). Device rank 1's
 * thread 0 (the answering rank of the bench's peer rows under --loop)
 * adds the time since its previous mark to the step each mark ends, by
 * the GPU's global timer; at dcuda_rank_finish it prints the mean of each
 * step so far, in ns and in SM cycles ("rank-trace STEP n=COUNT
 * mean_ns=NS cycles=C", device printf). The
 * sums live in the rank code's own module, so they add up over the runs
 * of one program. Everywhere else every call is empty.
 *
 * Phases of a call (the same build, on a GPU): a rank's leader stamps
 * the time at each DCU_TRACE_MARK it passes (one store); after a call
 * between dcu_trace_on and dcu_trace_off, each stamp adds the time since
 * the stamp before it to its site's sum (rows by WORLD rank, in the rank
 * code's module); dcuda_bench prints the first ranks' rows after each
 * timed WORLD row ("trace mode ...").
 */
#ifndef DCUDA_IMPL_MARKS_H
#define DCUDA_IMPL_MARKS_H

#include "prims.h"

enum dcu_mark_step {
    DCU_MARK_WAIT = 0,  /* a blocking wait begins (starts the clock) */
    DCU_MARK_APPLIED,   /* ... an inbox message was found and applied */
    DCU_MARK_WOKE,      /* ... the wait returns (its counter reached) */
    DCU_MARK_PUT,       /* a put begins (after the block met) */
    DCU_MARK_PUT_NET,   /* ... its checks passed, to the network path */
    DCU_MARK_TICKET,    /* ... its command's tickets taken, entries free */
    DCU_MARK_PAYLOAD,   /* ... its payload written, the block met */
    DCU_MARK_PUBLISHED, /* ... its header published (release) */
    DCU_MARK_STEPS
};

#if defined(DCUDA_RANK_TRACE) && defined(__CUDACC__)
#include <stdio.h>

static __device__ unsigned long long dcu_mark_sum[DCU_MARK_STEPS], dcu_mark_n[DCU_MARK_STEPS],
    dcu_mark_last, dcu_mark_cycles[DCU_MARK_STEPS], dcu_mark_last_cycle, dcu_mark_poll_sum;

/* Adds the polls a wait made before its message was found. */
DCU_FN void dcu_mark_polls(const dcuda_state_t *st, uint32_t polls)
{
    if (st->device_rank == 1 && threadIdx.x == 0)
        dcu_mark_poll_sum += polls;
}

DCU_FN void dcu_mark(const dcuda_state_t *st, int step)
{
    if (st->device_rank != 1 || threadIdx.x != 0)
        return;
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    unsigned long long c = clock64();
    if (step != DCU_MARK_WAIT) {
        dcu_mark_sum[step] += t - dcu_mark_last;
        dcu_mark_cycles[step] += c - dcu_mark_last_cycle;
        dcu_mark_n[step]++;
    }
    dcu_mark_last = t;
    dcu_mark_last_cycle = c;
}

DCU_FN void dcu_marks_print(const dcuda_state_t *st)
{
    static const char *const names[DCU_MARK_STEPS] = {
        "wait", "applied", "woke", "put", "put_net", "ticket", "payload", "published"
    };
    if (st->device_rank != 1 || threadIdx.x != 0)
        return;
    if (dcu_mark_n[DCU_MARK_APPLIED])
        printf("rank-trace polls_per_message %.2f\n",
               (double)dcu_mark_poll_sum / (double)dcu_mark_n[DCU_MARK_APPLIED]);
    for (int k = 1; k < DCU_MARK_STEPS; k++)
        if (dcu_mark_n[k])
            printf("rank-trace %s n=%llu mean_ns=%.0f cycles=%.0f\n", names[k], dcu_mark_n[k],
                   (double)dcu_mark_sum[k] / (double)dcu_mark_n[k],
                   (double)dcu_mark_cycles[k] / (double)dcu_mark_n[k]);
}
#else
#define dcu_mark(st, step) ((void)0)
#define dcu_mark_polls(st, polls) ((void)0)
#define dcu_marks_print(st) ((void)0)
#endif

/* The places a call is stamped at (DCU_TRACE_MARK), in the order a
 * pushed collective passes them; a stamp's phase is the time from the
 * stamp before it in that call. A WORLD barrier (barrier.h) stamps CHECKS
 * after its arrival, SEND after its node stores, SPIN once the node's
 * arrivals are in, AGREE once its device is released. */
enum {
    DCU_TRACE_BEGIN = 0, /* dcu_trace_on: the call starts */
    DCU_TRACE_RECORD,    /* its record published (api.h) */
    DCU_TRACE_TAKES,     /* the form chosen (coll.h) */
    DCU_TRACE_STARTED,   /* the window's call start: sync, state, window */
    DCU_TRACE_CHECKS,    /* the call's own checks */
    DCU_TRACE_PUT_DATA,  /* a pushed share: its data written (the last put's) */
    DCU_TRACE_SEND,      /* every share pushed */
    DCU_TRACE_SPIN,      /* a wait's count reached */
    DCU_TRACE_AGREE,     /* the records compared, the status handed on */
    DCU_TRACE_RESULT,    /* the result made */
    DCU_TRACE_RETURN,    /* dcu_trace_off: back in the caller */
    DCU_TRACE_SITES
};

#if defined(DCUDA_RANK_TRACE) && defined(__CUDACC__)
#define DCU_TRACE_RANKS 2048
/* A row: the last call's stamps, the sums of each site's phase, the calls
 * traced. A stamp is one store (no load on the traced path). */
typedef struct dcu_trace_row {
    unsigned long long at[DCU_TRACE_SITES], sum[DCU_TRACE_SITES];
    unsigned long long calls;
} dcu_trace_row_t;
static __device__ dcu_trace_row_t dcu_trace_rows[DCU_TRACE_RANKS];

DCU_FN dcu_trace_row_t *dcu_trace_row(const dcuda_state_t *st)
{
    const int r = st->world_rank;
    return r >= 0 && r < DCU_TRACE_RANKS ? &dcu_trace_rows[r] : (dcu_trace_row_t *)0;
}

DCU_FN void dcu_trace_mark(const dcuda_state_t *st, int site)
{
    dcu_trace_row_t *row = dcu_trace_row(st);
    if (row && dcu_leader())
        row->at[site] = dcu_now_ns();
}

/* All threads: a traced call starts (stamps before now are not its). */
DCU_FN void dcu_trace_on(const dcuda_state_t *st)
{
    dcu_sync();
    dcu_trace_mark(st, DCU_TRACE_BEGIN);
}

/* All threads: the call returned; its stamps, in time order, add their
 * phases to the sums. */
DCU_FN void dcu_trace_off(const dcuda_state_t *st)
{
    dcu_trace_mark(st, DCU_TRACE_RETURN);
    dcu_trace_row_t *row = dcu_trace_row(st);
    if (!row || !dcu_leader())
        return;
    const unsigned long long start = row->at[DCU_TRACE_BEGIN];
    unsigned long long prev = start;
    for (;;) { /* the next stamp after prev, the earliest site first */
        int next = -1;
        for (int k = 1; k < DCU_TRACE_SITES; k++)
            if (row->at[k] > prev && row->at[k] >= start &&
                (next < 0 || row->at[k] < row->at[next]))
                next = k;
        if (next < 0)
            break;
        row->sum[next] += row->at[next] - prev;
        prev = row->at[next];
    }
    row->calls++;
}

DCU_FN void dcu_trace_clear(const dcuda_state_t *st)
{
    dcu_trace_row_t *row = dcu_trace_row(st);
    if (!row || !dcu_leader())
        return;
    for (int k = 0; k < DCU_TRACE_SITES; k++)
        row->sum[k] = row->at[k] = 0u;
    row->calls = 0u;
}
#define DCU_TRACE_MARK(st, site) dcu_trace_mark(st, site)
#else
#define DCU_TRACE_MARK(st, site) ((void)0)
#endif

#endif /* DCUDA_IMPL_MARKS_H */
