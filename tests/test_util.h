/*
 * Helpers shared by the host drivers of the test suites: failure
 * accounting, status checks, dispatch of the case named on the command line
 * (unknown case: exit 2; skip: exit 77), and capturing stdout and stderr
 * into one file so that the order of library output can be checked.
 * Host code only. Define _POSIX_C_SOURCE before including anything.
 */
#ifndef DCUDA_TESTS_TEST_UTIL_H
#define DCUDA_TESTS_TEST_UTIL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcuda/dcuda_host.h"

#define TEST_SKIP 77

static int test_failures;

static inline void test_fail_at(const char *file, int line, const char *what)
{
    test_failures++;
    fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what);
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

/* With DCUDA_RANKS set, the runtime must have started exactly that many. */
static inline void test_check_rank_setting(const dcuda_rank_info_t *info)
{
    const char *env = getenv("DCUDA_RANKS");
    long want = env ? strtol(env, NULL, 10) : 0;
    if (want > 0)
        TEST_CHECK(info->rank_count == want, "DCUDA_RANKS=%ld but %d ranks started", want,
                   info->rank_count);
}

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

/* Runs the case named by argv[1]; skips when DCUDA_BACKEND names a backend
 * that cannot run here (the GPU suite on a machine without a GPU). */
static inline int test_main(int argc, char **argv, const test_case_t *cases, int count)
{
    const char *name = argc > 1 ? argv[1] : "";
    const char *backend = getenv("DCUDA_BACKEND");
    char why[256];
    if (backend && strcmp(backend, "auto") != 0 &&
        !dcuda_host_backend_available(backend, why, sizeof why)) {
        printf("SKIP %s: backend %s unavailable: %s\n", name, backend, why);
        return TEST_SKIP;
    }
    for (int i = 0; i < count; i++) {
        if (strcmp(cases[i].name, name) != 0)
            continue;
        int rc = cases[i].run(argc, argv);
        if (rc == TEST_SKIP)
            return TEST_SKIP;
        if (rc != 0 && test_failures == 0)
            test_fail_at(__FILE__, __LINE__, "case could not run");
        printf("%s %s (%d failed checks)\n", test_failures ? "FAILED" : "PASSED", name,
               test_failures);
        return test_failures ? 1 : 0;
    }
    fprintf(stderr, "unknown case '%s'; cases:", name);
    for (int i = 0; i < count; i++)
        fprintf(stderr, " %s", cases[i].name);
    fprintf(stderr, "\n");
    return 2;
}

/* Output capture: stdout and stderr both go to one temporary file (one
 * open file description, so writes land in the order they are made). */
typedef struct test_capture {
    int saved_out, saved_err;
    char path[256];
} test_capture_t;

static inline int test_capture_begin(test_capture_t *c)
{
    const char *dir = getenv("TMPDIR");
    snprintf(c->path, sizeof c->path, "%s/dcuda_test_XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(c->path);
    if (fd < 0) {
        perror("mkstemp");
        return 0;
    }
    fflush(stdout);
    fflush(stderr);
    c->saved_out = dup(1);
    c->saved_err = dup(2);
    if (c->saved_out < 0 || c->saved_err < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
        perror("dup");
        close(fd);
        return 0;
    }
    close(fd);
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
    FILE *f = fopen(c->path, "rb");
    if (f) {
        long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
        if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)size + 1))) {
            size_t got = fread(text, 1, (size_t)size, f);
            text[got] = '\0';
        }
        fclose(f);
    }
    unlink(c->path);
    if (!text)
        perror("reading the captured output");
    return text;
}

#endif /* DCUDA_TESTS_TEST_UTIL_H */
