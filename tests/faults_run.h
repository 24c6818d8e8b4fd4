/*
 * The host side of a faults-suite run, shared by its drivers
 * (faults_host.c, endings_host.c): dcuda_host_init with the faults kernel
 * and a result array, a run with its output captured, the results of a
 * rank, and counting lines of captured output.
 */
#ifndef DCUDA_TESTS_FAULTS_RUN_H
#define DCUDA_TESTS_FAULTS_RUN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "faults.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(faults);

typedef struct fault_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    int n; /* WORLD ranks */
    fault_data_t d;
    int64_t *res; /* host copy of d.res */
    size_t res_bytes;
    char *out;               /* captured output of the last run */
    void (*after_run)(void); /* called as soon as dcuda_host_run returns, if set */
} fault_run_t;

static inline int64_t res(const fault_run_t *r, int rank, int slot)
{
    return r->res[(size_t)rank * FAULT_SLOTS + (size_t)slot];
}

/* dcuda_host_init with the faults kernel and a result array. */
static inline int fault_open(fault_run_t *r, int argc, char **argv)
{
    memset(r, 0, sizeof *r);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(faults), 64, &r->h), DCUDA_OK))
        return 1;
    TEST_STATUS(dcuda_host_get_rank_info(r->h, &r->info), DCUDA_OK);
    test_check_rank_setting(&r->info);
    r->n = r->info.rank_count;
    r->res_bytes = (size_t)r->n * FAULT_SLOTS * sizeof *r->res;
    r->res = malloc(r->res_bytes);
    if (!r->res || !TEST_STATUS(dcuda_host_alloc(r->h, r->res_bytes, (void **)&r->d.res), DCUDA_OK))
        return 1;
    return 0;
}

/* Runs the kernel on r->d (output captured into r->out); returns the
 * status. The results of ranks that did not run stay INT64_MIN. */
static inline dcuda_status_t fault_exec_loose(fault_run_t *r)
{
    for (size_t i = 0; i < (size_t)r->n * FAULT_SLOTS; i++)
        r->res[i] = INT64_MIN;
    TEST_STATUS(dcuda_host_copy_in(r->h, r->d.res, r->res, r->res_bytes), DCUDA_OK);
    test_capture_t cap;
    free(r->out);
    r->out = NULL;
    if (!test_capture_begin(&cap))
        return DCUDA_ERR_SYSTEM;
    dcuda_status_t st = dcuda_host_run(r->h, &r->d, sizeof r->d, NULL);
    if (r->after_run)
        r->after_run();
    r->out = test_capture_end(&cap);
    printf("%s---- captured output ----\n%s---- end of captured output ----\n", test_who,
           r->out ? r->out : "");
    TEST_STATUS(dcuda_host_copy_out(r->h, r->res, r->d.res, r->res_bytes), DCUDA_OK);
    return st;
}

/* The same, and every rank of this process must have run the case's setup
 * calls without a failure. */
static inline dcuda_status_t fault_exec(fault_run_t *r)
{
    dcuda_status_t st = fault_exec_loose(r);
    for (int k = test_first_rank(&r->info); k < test_end_rank(&r->info); k++)
        TEST_CHECK(res(r, k, FAULT_RES_SETUP) == 0, "rank %d: a call failed: %s", k,
                   dcuda_status_name((dcuda_status_t)res(r, k, FAULT_RES_SETUP)));
    return st;
}

static inline void fault_close(fault_run_t *r)
{
    TEST_STATUS(dcuda_host_free(r->h, r->d.res), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(r->h), DCUDA_OK);
    free(r->res);
    free(r->out);
}

/* Lines of text that contain a (and b, unless NULL). */
static inline int count_lines(const char *text, const char *a, const char *b)
{
    int n = 0;
    for (const char *line = text; line && (line = test_find_line(line, a, b)) != NULL; n++)
        line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
    return n;
}

#endif /* DCUDA_TESTS_FAULTS_RUN_H */
