/*
 * Host side of the reduction demo (the thesis' Listing 3.1): random integer
 * values (exact in double), summed by the ranks and by a serial loop.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dcuda/dcuda_host.h"
#include "demo.h"
#include "reduce.h"

DCUDA_KERNEL_DECLARE(reduce);

static int run_reduce(dcuda_host_h h)
{
    dcuda_rank_info_t info;
    dcuda_host_get_rank_info(h, &info);
    size_t n = (size_t)info.rank_responsible * REDUCE_VALUES_PER_RANK;
    size_t bytes = (n + (size_t)info.rank_responsible) * sizeof(double);
    double *values = malloc(bytes), expect = 0;
    reduce_data_t user = {0};
    if (!values || dcuda_host_alloc(h, bytes, (void **)&user.data) != DCUDA_OK) {
        free(values);
        return 1;
    }
    srand(12345);
    for (size_t i = 0; i < n; i++) {
        values[i] = (double)(rand() % 1000000);
        expect += values[i];
    }
    for (size_t i = n; i < n + (size_t)info.rank_responsible; i++)
        values[i] = -1.0;
    user.buffer = user.data + n;
    dcuda_host_copy_in(h, user.data, values, bytes);

    double ms = 0;
    dcuda_status_t st = dcuda_host_run(h, &user, sizeof user, &ms);
    const double *timings;
    int ntimings = 0;
    dcuda_host_get_timings(h, &timings, &ntimings);
    int ok = st == DCUDA_OK && user.result == expect;
    printf("reduce: %d ranks (%s, %s), %zu values: sum %.1f, serial reference %.1f: %s\n",
           info.rank_count, info.backend, info.device_name, n, user.result, expect,
           ok ? "MATCH" : "MISMATCH");
    printf("reduce: kernel %.3f ms, reduction (timer) %.3f ms\n", ms,
           ntimings > 0 ? timings[0] : -1.0);
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
