/*
 * Host side of the reduction demo (the thesis' Listing 3.1): pseudo-random
 * integer values (exact in double) that depend only on their WORLD index,
 * summed by the ranks of every process and by a serial loop over all of
 * them. Rank 0 (in process 0) ends with the total.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dcuda/dcuda_host.h"
#include "demo.h"
#include "reduce.h"

DCUDA_KERNEL_DECLARE(reduce);

/* Value number i of WORLD (a hash, so that every process agrees). */
static double value_of(size_t i)
{
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull + 12345;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return (double)(x % 1000000);
}

static int run_reduce(dcuda_host_h h)
{
    dcuda_rank_info_t info;
    dcuda_host_get_rank_info(h, &info);
    size_t n = (size_t)info.rank_responsible * REDUCE_VALUES_PER_RANK;
    size_t first = (size_t)info.rank_start * REDUCE_VALUES_PER_RANK;
    size_t all = (size_t)info.rank_count * REDUCE_VALUES_PER_RANK;
    /* This process's values, then a receive slot per WORLD rank. */
    size_t bytes = (n + (size_t)info.rank_count) * sizeof(double);
    double *values = malloc(bytes), expect = 0;
    reduce_data_t user = { 0 };
    if (!values || dcuda_host_alloc(h, bytes, (void **)&user.data) != DCUDA_OK) {
        free(values);
        return 1;
    }
    for (size_t i = 0; i < all; i++)
        expect += value_of(i);
    for (size_t i = 0; i < n; i++)
        values[i] = value_of(first + i);
    for (size_t i = n; i < n + (size_t)info.rank_count; i++)
        values[i] = -1.0;
    user.buffer = user.data + n;
    dcuda_host_copy_in(h, user.data, values, bytes);

    double ms = 0;
    dcuda_status_t st = dcuda_host_run(h, &user, sizeof user, &ms);
    const double *timings;
    int ntimings = 0;
    dcuda_host_get_timings(h, &timings, &ntimings);
    /* Only process 0 holds rank 0's result; the others check their run. */
    int ok = st == DCUDA_OK && (info.process_index != 0 || user.result == expect);
    demo_quiet = ok && info.process_index != 0;
    if (!demo_quiet) {
        printf("reduce: %d ranks in %d process(es) (%s, %s), %zu values: sum %.1f, serial "
               "reference %.1f: %s\n",
               info.rank_count, info.process_count, info.backend, info.device_name, all,
               user.result, expect, ok ? "MATCH" : "MISMATCH");
        printf("reduce: kernel %.3f ms, reduction (timer) %.3f ms\n", ms,
               ntimings > 0 ? timings[0] : -1.0);
    }
    if (st != DCUDA_OK)
        printf("reduce: run failed: %s (%s)\n", dcuda_status_string(st), dcuda_host_last_error(h));
    dcuda_host_free(h, user.data);
    free(values);
    return ok ? 0 : 1;
}

int demo_reduce(int argc, char **argv)
{
    dcuda_host_h h;
    if (dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(reduce), 128, &h) != DCUDA_OK)
        return 1;
    int rc = run_reduce(h);
    dcuda_host_finish(h);
    return rc;
}
