/*
 * Host driver of the mismatch suite (mismatch.h):
 *
 *   dcuda_test_mismatch world|device|split [case]
 *
 * Runs every case (or the one named by its number) on the communicator
 * named, one run each, with ON_ERROR=continue (a refused call does not
 * end the run by itself) and the watchdog off (only the checks of the
 * calls or the deadlock detector may end a run). Each run must fail in
 * every process with DCUDA_ERR_MISMATCH or DCUDA_ERR_DEADLOCK (a process
 * that only learnt of another's failure: DCUDA_ERR_ABORTED naming it; the
 * refused case may fail first with the refusal), every report must name
 * the calls in the API's words and no library tag, and no rank may have a
 * collective that returned DCUDA_OK with a result its own arguments do
 * not give, nor a call before or after the case fail otherwise.
 */
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcuda/dcuda_host.h"
#include "mismatch.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(mismatch);

/* What a report of each case names: the call of the others (or the
 * culprit's), or the argument that differs. */
static const char *const mm_names[MM_CASES][2] = {
    [MM_OTHER_CALL] = { "dcuda_allreduce", "dcuda_broadcast" },
    [MM_OTHER_GATHER] = { "dcuda_allgather", "dcuda_alltoall" },
    [MM_TWO_BARRIERS] = { "dcuda_comm_barrier", "dcuda_allreduce" },
    [MM_ROOT] = { "dcuda_broadcast", "root" },
    [MM_SIZE_UP] = { "dcuda_broadcast", "size" },
    [MM_SIZE_DOWN] = { "dcuda_broadcast", "size" },
    [MM_TYPE] = { "dcuda_allreduce", "datatype" },
    [MM_OP] = { "dcuda_allreduce", "op" },
    [MM_COUNT] = { "dcuda_allreduce", "count" },
    [MM_OFFSET] = { "dcuda_allreduce", "offset" },
    [MM_REDUCE_ROOT] = { "dcuda_reduce", "root" },
    [MM_RS_COUNT] = { "dcuda_reduce_scatter", "count" },
    [MM_SKIP] = { "dcuda_allreduce", "dcuda_win_free" },
    [MM_REFUSED] = { "dcuda_allreduce", "dcuda_win_free" },
    [MM_SPLIT_SKIP] = { "dcuda_comm_split", "dcuda_comm_barrier" },
    [MM_SPLIT_OFFSET] = { "dcuda_comm_split", "offset" },
};

typedef struct mm_run {
    dcuda_host_h h;
    dcuda_rank_info_t info;
    mm_data_t d;
    int64_t *res;
    size_t res_bytes;
} mm_run_t;

/* Does text name a library tag ("tag 300", "collective tag 34")? */
static int names_library_tag(const char *text)
{
    if (strstr(text, "collective tag"))
        return 1;
    for (const char *p = strstr(text, "tag "); p; p = strstr(p + 4, "tag ")) {
        const char *q = p + 4;
        if (isdigit((unsigned char)*q) && strtol(q, NULL, 10) >= 256)
            return 1;
    }
    return 0;
}

/* The lines of the captured output with `what` ("error", "deadlock:"). */
static int lines_with(const char *out, const char *what, const char *needle)
{
    int n = 0;
    for (const char *line = out; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *copy = strndup(line, len);
        if (copy && strstr(copy, what) && (!needle || strstr(copy, needle)))
            n++;
        free(copy);
        line = end ? end + 1 : NULL;
    }
    return n;
}

/* One run of case c; checks this process's ranks and output. */
static void mm_case(mm_run_t *m, int c)
{
    m->d.test_case = c;
    memset(m->res, 0x55, m->res_bytes);
    TEST_STATUS(dcuda_host_copy_in(m->h, m->d.res, m->res, m->res_bytes), DCUDA_OK);
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return;
    double ms = 0;
    dcuda_status_t st = dcuda_host_run(m->h, &m->d, sizeof m->d, &ms);
    char *out = test_capture_end(&cap);
    const char *err = dcuda_host_last_error(m->h);
    printf("%scase %d: %s after %.0f ms: %s\n", test_who, c, dcuda_status_name(st), ms, err);
    TEST_STATUS(dcuda_host_copy_out(m->h, m->res, m->d.res, m->res_bytes), DCUDA_OK);
    if (!out)
        return;
    const int refused = c == MM_REFUSED;
    TEST_CHECK(st == DCUDA_ERR_MISMATCH || st == DCUDA_ERR_DEADLOCK || st == DCUDA_ERR_ABORTED ||
                   (refused && st == DCUDA_ERR_INVALID_ARG),
               "case %d: the run returned %s: %s\n%s", c, dcuda_status_name(st), err, out);
    if (st == DCUDA_ERR_ABORTED)
        TEST_CHECK(strstr(err, "MISMATCH") || strstr(err, "DEADLOCK") || strstr(err, "deadlock") ||
                       strstr(err, mm_names[c][0]) || strstr(err, mm_names[c][1]) ||
                       (refused && strstr(err, "INVALID_ARG")),
                   "case %d: ended by another process for another reason: %s", c, err);
    if (st == DCUDA_ERR_MISMATCH || (refused && st == DCUDA_ERR_INVALID_ARG))
        TEST_CHECK(
            lines_with(out, "error", mm_names[c][0]) + lines_with(out, "error", mm_names[c][1]) > 0,
            "case %d: no report names %s or %s:\n%s", c, mm_names[c][0], mm_names[c][1], out);
    if (st == DCUDA_ERR_DEADLOCK)
        TEST_CHECK(lines_with(out, "deadlock:   rank", NULL) ==
                       lines_with(out, "deadlock:   rank", "dcuda_"),
                   "case %d: a blocked rank's line names no call:\n%s", c, out);
    TEST_CHECK(!names_library_tag(out), "case %d: a report names a library tag:\n%s", c, out);
    for (int k = 0; k < m->info.rank_responsible; k++) {
        const int64_t *res = m->res + (size_t)k * MM_SLOTS;
        int rank = m->info.rank_start + k;
        TEST_CHECK(res[MM_RES_BAD] == 0,
                   "case %d, rank %d: %" PRId64 " collective(s) returned DCUDA_OK with a wrong "
                   "result",
                   c, rank, res[MM_RES_BAD]);
        TEST_CHECK(res[MM_RES_SETUP] == 0 || res[MM_RES_SETUP] == DCUDA_ERR_DEADLOCK ||
                       res[MM_RES_SETUP] == DCUDA_ERR_MISMATCH,
                   "case %d, rank %d: a call around the case failed with %s", c, rank,
                   dcuda_status_name((dcuda_status_t)res[MM_RES_SETUP]));
        int64_t call = res[MM_RES_CALL];
        TEST_CHECK(call == 0 || call == DCUDA_ERR_MISMATCH || call == DCUDA_ERR_DEADLOCK ||
                       call == DCUDA_ERR_ABORTED || (refused && call == DCUDA_ERR_INVALID_ARG),
                   "case %d, rank %d: the case's call returned %s", c, rank,
                   dcuda_status_name((dcuda_status_t)call));
    }
    free(out);
}

static int mm_main(int argc, char **argv, int on)
{
    mm_run_t m;
    memset(&m, 0, sizeof m);
    setenv("DCUDA_WATCHDOG", "off", 1);
    setenv("DCUDA_ON_ERROR", "continue", 1);
    if (!TEST_STATUS(dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(mismatch), 64, &m.h), DCUDA_OK))
        return 1;
    dcuda_host_get_rank_info(m.h, &m.info);
    test_check_rank_setting(&m.info);
    int smallest = on == MM_ON_DEVICE  ? m.info.rank_responsible
                   : on == MM_ON_SPLIT ? m.info.rank_count / 2
                                       : m.info.rank_count;
    if (smallest < 2 || m.info.rank_count > MM_MAX_RANKS) {
        printf("SKIP %s: needs 2 to %d ranks in each communicator, has %d\n", argv[1], MM_MAX_RANKS,
               smallest);
        TEST_STATUS(dcuda_host_finish(m.h), DCUDA_OK);
        return TEST_SKIP;
    }
    if (m.info.process_count > 1)
        snprintf(test_who, sizeof test_who, "process %d of %d: ", m.info.process_index,
                 m.info.process_count);
    m.d.on = on;
    m.res_bytes = (size_t)m.info.rank_responsible * MM_SLOTS * sizeof *m.res;
    m.res = malloc(m.res_bytes);
    size_t buf_bytes = (size_t)m.info.rank_responsible * MM_PART_BYTES;
    if (m.res && TEST_STATUS(dcuda_host_alloc(m.h, m.res_bytes, (void **)&m.d.res), DCUDA_OK) &&
        TEST_STATUS(dcuda_host_alloc(m.h, buf_bytes, (void **)&m.d.buf), DCUDA_OK)) {
        long only = test_arg(argc, argv, 2, -1);
        for (int c = 0; c < MM_CASES; c++)
            if (only < 0 || only == c)
                mm_case(&m, c);
    }
    if (m.d.buf)
        TEST_STATUS(dcuda_host_free(m.h, m.d.buf), DCUDA_OK);
    if (m.d.res)
        TEST_STATUS(dcuda_host_free(m.h, m.d.res), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(m.h), DCUDA_OK);
    free(m.res);
    return 0;
}

static int case_world(int argc, char **argv) { return mm_main(argc, argv, MM_ON_WORLD); }
static int case_device(int argc, char **argv) { return mm_main(argc, argv, MM_ON_DEVICE); }
static int case_split(int argc, char **argv) { return mm_main(argc, argv, MM_ON_SPLIT); }

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "world", case_world },
        { "device", case_device },
        { "split", case_split },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
