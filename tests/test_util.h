/*
 * Helpers shared by the host drivers of the test suites: failure
 * accounting, status checks, dispatch of the case named on the command line
 * (unknown case: exit 2; skip: exit 77), and capturing stdout and stderr
 * into one file so that the order of library output can be checked.
 * Host code only. Define _POSIX_C_SOURCE before including anything.
 */
#ifndef DCUDA_TESTS_TEST_UTIL_H
#define DCUDA_TESTS_TEST_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcuda/dcuda_host.h"

#define TEST_SKIP 77

static int test_failures;

/* "process 1 of 2: " once a multi-process run has started, so that the
 * interleaved output of the processes says who failed. */
static char test_who[48];

static inline void test_fail_at(const char *file, int line, const char *what)
{
    test_failures++;
    fprintf(stderr, "%sFAIL %s:%d: %s\n", test_who, file, line, what);
}

/* TEST_CHECK(cond, printf-format, args...): counts and reports a failure. */
#define TEST_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            test_fail_at(__FILE__, __LINE__, #cond);                                               \
            fprintf(stderr, "     ");                                                              \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static inline int test_status_at(const char *file, int line, const char *expr, int got, int want)
{
    if (got == want)
        return 1;
    test_fail_at(file, line, expr);
    fprintf(stderr, "     returned %s (%d), expected %s (%d)\n",
            dcuda_status_name((dcuda_status_t)got), got, dcuda_status_name((dcuda_status_t)want),
            want);
    return 0;
}

/* Checks that expr returns the status `want`; evaluates to 1 if it did. */
#define TEST_STATUS(expr, want) test_status_at(__FILE__, __LINE__, #expr, (int)(expr), (int)(want))

/* Checks that text contains needle. */
#define TEST_CONTAINS(text, needle)                                                                \
    TEST_CHECK(strstr((text), (needle)) != NULL, "'%s' not found in: %s", (needle), (text))

/* Argument i of a case's command line as a number (0x for hex), or dflt. */
static inline long test_arg(int argc, char **argv, int i, long dflt)
{
    return argc > i ? strtol(argv[i], NULL, 0) : dflt;
}

/* A deterministic xorshift generator (seeded by the caller) for the tests
 * that draw random inputs; the next value of *state. */
static inline uint64_t test_rng(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* Start of the first line of text that contains both a and b (b may be
 * NULL), or NULL. */
static inline const char *test_find_line(const char *text, const char *a, const char *b)
{
    const char *line = text;
    while (line && *line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *copy = malloc(len + 1);
        int hit = 0;
        if (copy) {
            memcpy(copy, line, len);
            copy[len] = '\0';
            hit = strstr(copy, a) && (!b || strstr(copy, b));
            free(copy);
        }
        if (hit)
            return line;
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

/* The WORLD ranks this process owns: [test_first_rank, test_end_rank). A
 * process holds the data of these ranks only, so host drivers check these
 * (indexed by WORLD rank) and compute expected values from rank_count. */
static inline int test_first_rank(const dcuda_rank_info_t *info) { return info->rank_start; }
static inline int test_end_rank(const dcuda_rank_info_t *info)
{
    return info->rank_start + info->rank_responsible;
}
static inline int test_owns(const dcuda_rank_info_t *info, int rank)
{
    return rank >= test_first_rank(info) && rank < test_end_rank(info);
}

/* How many processes the environment asks for: DCUDA_PROCESSES when set
 * above 0, the MPI job's size when started by mpirun, else 0 (unknown:
 * DCUDA_PROCESSES=0 means one per GPU). */
static inline long test_processes_asked(void)
{
    static const char *vars[] = { "DCUDA_PROCESSES", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *env = getenv(vars[i]);
        long n = env ? strtol(env, NULL, 10) : 0;
        if (n > 0)
            return n;
    }
    return 0;
}

/* Checks what dcuda_host_get_rank_info says against the settings: with
 * DCUDA_RANKS set, this process must own exactly that many ranks (the
 * setting is per process), the processes as many as asked for, and WORLD
 * numbers the ranks of each process contiguously. Also names the process
 * in failure lines. */
static inline void test_check_rank_setting(const dcuda_rank_info_t *info)
{
    const char *env = getenv("DCUDA_RANKS");
    long want = env ? strtol(env, NULL, 10) : 0, procs = test_processes_asked();
    if (info->process_count > 1)
        snprintf(test_who, sizeof test_who, "process %d of %d: ", info->process_index,
                 info->process_count);
    TEST_CHECK(info->process_count >= 1 && info->process_index >= 0 &&
                   info->process_index < info->process_count,
               "process %d of %d", info->process_index, info->process_count);
    TEST_CHECK(info->rank_responsible >= 1 && info->rank_start >= 0 &&
                   info->rank_start + info->rank_responsible <= info->rank_count,
               "owns ranks %d..+%d of %d", info->rank_start, info->rank_responsible,
               info->rank_count);
    if (info->process_count == 1)
        TEST_CHECK(info->rank_start == 0 && info->rank_responsible == info->rank_count,
                   "one process, but it owns ranks %d..+%d of %d", info->rank_start,
                   info->rank_responsible, info->rank_count);
    if (procs > 0)
        TEST_CHECK(info->process_count == procs, "%ld processes asked for, %d started", procs,
                   info->process_count);
    if (want > 0) {
        TEST_CHECK(info->rank_responsible == want, "DCUDA_RANKS=%ld but this process has %d ranks",
                   want, info->rank_responsible);
        /* Every process has DCUDA_RANKS ranks, WORLD numbers them in order. */
        TEST_CHECK(info->rank_count == want * info->process_count &&
                       info->rank_start == want * info->process_index,
                   "DCUDA_RANKS=%ld, %d processes: WORLD has %d ranks, mine start at %d", want,
                   info->process_count, info->rank_count, info->rank_start);
    }
}

/* The status of a run in which only WORLD rank `culprit` makes an offending
 * call (-1: ranks of every process do). The process owning the culprit must
 * return `want`; a run fails in every process or in none, so another
 * process returns DCUDA_ERR_ABORTED (its ranks did nothing wrong) or `want`
 * (the error reached them too). 1 if the run returned `want`. */
static inline int test_run_status_at(const char *file, int line, const char *expr,
                                     const dcuda_rank_info_t *info, dcuda_status_t got,
                                     dcuda_status_t want, int culprit)
{
    if (want != DCUDA_OK && culprit >= 0 && !test_owns(info, culprit) && got == DCUDA_ERR_ABORTED)
        return 0;
    return test_status_at(file, line, expr, (int)got, (int)want);
}
#define TEST_RUN_STATUS(info, expr, want, culprit)                                                 \
    test_run_status_at(__FILE__, __LINE__, #expr, (info), (expr), (want), (culprit))

/* 1 if there are at least `need` ranks; otherwise says why it skips. */
static inline int test_have_ranks(const dcuda_rank_info_t *info, int need, const char *what)
{
    if (info->rank_count >= need)
        return 1;
    printf("SKIP %s: needs at least %d ranks, have %d (set DCUDA_RANKS)\n", what, need,
           info->rank_count);
    return 0;
}

typedef struct test_case {
    const char *name;
    int (*run)(int argc, char **argv); /* 0: ran (check test_failures), 77: skipped */
} test_case_t;

/* GPUs this process may use: entries of /proc/driver/nvidia/gpus, at most
 * as many as CUDA_VISIBLE_DEVICES names; -1 if that cannot be told (the
 * public API does not count GPUs). */
static inline int test_visible_gpus(void)
{
    DIR *dir = opendir("/proc/driver/nvidia/gpus");
    if (!dir)
        return -1;
    int gpus = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL)
        if (e->d_name[0] != '.')
            gpus++;
    closedir(dir);
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (visible) {
        int named = 0;
        for (const char *p = visible; *p;) {
            size_t len = strcspn(p, ",");
            named += len > 0;
            p += len;
            if (*p == ',')
                p++;
        }
        if (named < gpus)
            gpus = named;
    }
    return gpus;
}

/* 1 if this build of the library has the setting DCUDA_<name>. */
static inline int test_library_has_setting(const char *name)
{
    FILE *f = tmpfile();
    int found = 0;
    if (!f)
        return 1;
    dcuda_settings_print(f);
    rewind(f);
    char line[512];
    size_t len = strlen(name);
    while (!found && fgets(line, sizeof line, f))
        found = strncmp(line, name, len) == 0 && (line[len] == ' ' || line[len] == '\t');
    fclose(f);
    return found;
}

/* Runs the case named by argv[1]; skips when DCUDA_BACKEND names a backend
 * that cannot run here (the GPU suite on a machine without a GPU), when
 * DCUDA_PROCESSES asks for more GPUs than there are, or when the library
 * has no DCUDA_PROCESSES setting yet. Every process of a multi-process run
 * reports its own result. */
static inline int test_run_case(int argc, char **argv, const test_case_t *cases, int count)
{
    const char *name = argc > 1 ? argv[1] : "";
    const char *backend = getenv("DCUDA_BACKEND");
    const char *procs_env = getenv("DCUDA_PROCESSES");
    long procs = procs_env ? strtol(procs_env, NULL, 10) : 0;
    char why[256];
    if (backend && strcmp(backend, "auto") != 0 &&
        !dcuda_host_backend_available(backend, why, sizeof why)) {
        printf("SKIP %s: backend %s unavailable: %s\n", name, backend, why);
        return TEST_SKIP;
    }
    if (procs > 1 && !test_library_has_setting("DCUDA_PROCESSES")) {
        printf("SKIP %s: DCUDA_PROCESSES=%ld, but this build of dcuda has no such setting "
               "(no multi-process support)\n",
               name, procs);
        return TEST_SKIP;
    }
    if (procs > 1 && backend && strcmp(backend, "cuda") == 0) {
        int gpus = test_visible_gpus();
        if (gpus >= 0 && gpus < procs) {
            printf("SKIP %s: DCUDA_PROCESSES=%ld needs a GPU per process, %d visible\n", name,
                   procs, gpus);
            return TEST_SKIP;
        }
    }
    for (int i = 0; i < count; i++) {
        if (strcmp(cases[i].name, name) != 0)
            continue;
        int rc = cases[i].run(argc, argv);
        if (rc == TEST_SKIP)
            return TEST_SKIP;
        if (rc != 0 && test_failures == 0)
            test_fail_at(__FILE__, __LINE__, "case could not run");
        printf("%s%s %s (%d failed checks)\n", test_who, test_failures ? "FAILED" : "PASSED", name,
               test_failures);
        fflush(stdout);
        return test_failures ? 1 : 0;
    }
    fprintf(stderr, "unknown case '%s'; cases:", name);
    for (int i = 0; i < count; i++)
        fprintf(stderr, " %s", cases[i].name);
    fprintf(stderr, "\n");
    return 2;
}

/* main's return: the exit status of the program covers every process
 * (dcuda_host_exit_status waits for the forked ones). */
static inline int test_main(int argc, char **argv, const test_case_t *cases, int count)
{
    return dcuda_host_exit_status(test_run_case(argc, argv, cases, count));
}

/* Starts the runtime of kernel (threads a rank), reads its ranks' info
 * and checks it against the settings, and names this process in failure
 * lines: 1, or 0 after a failed check. */
static inline int test_open_host(int argc, char **argv, dcuda_kernel_t kernel, int threads,
                                 dcuda_host_h *h, dcuda_rank_info_t *info)
{
    if (!TEST_STATUS(dcuda_host_init(argc, argv, kernel, threads, h), DCUDA_OK))
        return 0;
    dcuda_host_get_rank_info(*h, info);
    test_check_rank_setting(info);
    snprintf(test_who, sizeof test_who, "process %d of %d: ", info->process_index,
             info->process_count);
    return 1;
}

/* Memory the ranks reach (dcuda_host_alloc) and this process's host copy
 * of it, `bytes` each, as the randomized drivers fill one before a run
 * and read the other after: 1, or 0 after a failed check (either could
 * not be had). */
static inline int test_alloc_both(dcuda_host_h h, size_t bytes, void **host, void **ranks)
{
    *host = malloc(bytes ? bytes : 1);
    TEST_CHECK(*host != NULL, "out of memory for %zu bytes", bytes);
    return *host && TEST_STATUS(dcuda_host_alloc(h, bytes, ranks), DCUDA_OK);
}

/* Releases what test_alloc_both made (either may be NULL). */
static inline void test_free_both(dcuda_host_h h, void *host, void *ranks)
{
    if (ranks)
        TEST_STATUS(dcuda_host_free(h, ranks), DCUDA_OK);
    free(host);
}

/* The ranks' findings: `per` int64 words a rank of this process, as the
 * ranks write them (`ranks`, handed to them) and as the host reads them
 * after a run (host). */
typedef struct test_words {
    dcuda_host_h h;
    int64_t *host, *ranks;
    int per;   /* words a rank */
    int n;     /* ranks of this process */
    int first; /* WORLD rank of the first */
} test_words_t;

/* Zeroes the findings, here and where the ranks write them. */
static inline void test_words_clear(test_words_t *w)
{
    size_t bytes = (size_t)w->n * (size_t)w->per * sizeof(int64_t);
    memset(w->host, 0, bytes);
    TEST_STATUS(dcuda_host_copy_in(w->h, w->ranks, w->host, bytes), DCUDA_OK);
}

/* Findings of `per` words for info's ranks, zeroed: 1, or 0 after a
 * failed check. */
static inline int test_words_alloc(test_words_t *w, dcuda_host_h h, const dcuda_rank_info_t *info,
                                   int per)
{
    *w = (test_words_t){ h, NULL, NULL, per, info->rank_responsible, info->rank_start };
    size_t bytes = (size_t)w->n * (size_t)per * sizeof(int64_t);
    if (!test_alloc_both(h, bytes, (void **)&w->host, (void **)&w->ranks))
        return 0;
    test_words_clear(w);
    return 1;
}

/* Reads what the ranks wrote. */
static inline void test_words_fetch(test_words_t *w)
{
    TEST_STATUS(dcuda_host_copy_out(w->h, w->host, w->ranks,
                                    (size_t)w->n * (size_t)w->per * sizeof(int64_t)),
                DCUDA_OK);
}

/* Word i of this process's rank dr. */
static inline int64_t test_words_get(const test_words_t *w, int dr, int i)
{
    return w->host[(size_t)dr * (size_t)w->per + (size_t)i];
}

/* Every rank's word i is want. */
static inline void test_words_check(const test_words_t *w, int i, int64_t want, const char *what)
{
    for (int dr = 0; dr < w->n; dr++)
        TEST_CHECK(test_words_get(w, dr, i) == want, "rank %d: %s is %lld, not %lld", w->first + dr,
                   what, (long long)test_words_get(w, dr, i), (long long)want);
}

static inline void test_words_free(test_words_t *w)
{
    test_free_both(w->h, w->host, w->ranks);
    w->host = w->ranks = NULL;
}

/* The buffers of a randomized driver: a region and result slots, each as
 * the host holds it and as the ranks reach it. */
typedef struct test_buffers {
    unsigned char *buf;
    void *ranks_buf;
    size_t buf_bytes;
    int64_t *res;
    void *ranks_res;
    size_t res_bytes;
} test_buffers_t;

/* One run of a randomized driver with user struct `data`: the region
 * zeroed and the results filled with 0x55 (what no rank wrote) go in, the
 * ranks run, both come back. 1 if they came back; 0 after a failed check
 * if the run returned neither DCUDA_OK nor `also_ok`. */
static inline int test_run_buffers(dcuda_host_h h, void *data, size_t size, const test_buffers_t *b,
                                   uint32_t seed, dcuda_status_t also_ok)
{
    memset(b->buf, 0, b->buf_bytes);
    memset(b->res, 0x55, b->res_bytes);
    TEST_STATUS(dcuda_host_copy_in(h, b->ranks_buf, b->buf, b->buf_bytes), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_in(h, b->ranks_res, b->res, b->res_bytes), DCUDA_OK);
    double ms = 0;
    dcuda_status_t st = dcuda_host_run(h, data, size, &ms);
    if (st != DCUDA_OK && st != also_ok) {
        TEST_CHECK(0, "seed %u: the run returned %s: %s", seed, dcuda_status_name(st),
                   dcuda_host_last_error(h));
        return 0;
    }
    TEST_STATUS(dcuda_host_copy_out(h, b->buf, b->ranks_buf, b->buf_bytes), DCUDA_OK);
    TEST_STATUS(dcuda_host_copy_out(h, b->res, b->ranks_res, b->res_bytes), DCUDA_OK);
    return 1;
}

/* Output capture: stdout and stderr both go to one temporary file (one
 * open file description, so writes land in the order they are made). The
 * file is unlinked at once and read through its descriptor, so processes
 * forked during the capture (dcuda_host_init starts a group) each read it,
 * whichever ends first. */
typedef struct test_capture {
    int saved_out, saved_err, fd;
} test_capture_t;

static inline int test_capture_begin(test_capture_t *c)
{
    const char *dir = getenv("TMPDIR");
    char path[256];
    snprintf(path, sizeof path, "%s/dcuda_test_XXXXXX", dir && *dir ? dir : "/tmp");
    c->fd = mkstemp(path);
    if (c->fd < 0) {
        perror("mkstemp");
        return 0;
    }
    unlink(path);
    fflush(stdout);
    fflush(stderr);
    c->saved_out = dup(1);
    c->saved_err = dup(2);
    if (c->saved_out < 0 || c->saved_err < 0 || dup2(c->fd, 1) < 0 || dup2(c->fd, 2) < 0) {
        perror("dup");
        close(c->fd);
        return 0;
    }
    return 1;
}

/* Restores stdout and stderr; returns what was written (malloc'd). */
static inline char *test_capture_end(test_capture_t *c)
{
    fflush(stdout);
    fflush(stderr);
    dup2(c->saved_out, 1);
    dup2(c->saved_err, 2);
    close(c->saved_out);
    close(c->saved_err);
    char *text = NULL;
    off_t size = lseek(c->fd, 0, SEEK_END);
    if (size >= 0 && (text = malloc((size_t)size + 1))) {
        size_t got = 0;
        while (got < (size_t)size) {
            ssize_t n = pread(c->fd, text + got, (size_t)size - got, (off_t)got);
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        text[got] = '\0';
    }
    close(c->fd);
    if (!text)
        perror("reading the captured output");
    return text;
}

#endif /* DCUDA_TESTS_TEST_UTIL_H */
