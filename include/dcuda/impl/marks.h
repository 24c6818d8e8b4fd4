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
 */
#ifndef DCUDA_IMPL_MARKS_H
#define DCUDA_IMPL_MARKS_H

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

#endif /* DCUDA_IMPL_MARKS_H */
