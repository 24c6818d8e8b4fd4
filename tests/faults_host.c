/*
 * Host driver of the faults suite: dcuda_test_faults <case>. Bad input and
 * faults that used to go wrong silently or hang: allocation sizes that wrap,
 * watchdog limits too large to convert, the limit on allocations other
 * processes reach, descriptors without close-on-exec, a handle used after
 * dcuda_host_finish, frees of unknown pointers, settings read wrongly,
 * notifications nobody consumed, host messages that do not say which
 * process wrote them, and a forked start after the program used CUDA. Each case checks results and the library's words.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dcuda/dcuda_host.h"
#include "faults_run.h"

/* Shared-memory descriptors (memfds) open in this process: what a failed
 * allocation could leave behind. Other descriptors are not counted: a
 * network engine (UCX) may open its own lazily at any time. */
static int count_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    while (dir && (e = readdir(dir)) != NULL) {
        char path[300], target[256];
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, target, sizeof target - 1);
        if (len > 0) {
            target[len] = '\0';
            n += strncmp(target, "/memfd:", 7) == 0;
        }
    }
    if (dir)
        closedir(dir);
    return n;
}

/* ---- item: allocation sizes that wrap while rounding ------------------------ */

static int case_alloc_huge(int argc, char **argv)
{
    /* Sizes that wrap when rounded up, one no object can have, and one too
     * large for any machine. */
    static const size_t sizes[] = {
        SIZE_MAX,       SIZE_MAX - 1, SIZE_MAX - 63, SIZE_MAX - 4095, (size_t)PTRDIFF_MAX + 1,
        (size_t)1 << 62
    };
    enum { COUNT = sizeof sizes / sizeof sizes[0] };
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    int fds = count_fds();
    void *const sentinel = (void *)&r;
    dcuda_status_t got[COUNT];
    void *ptrs[COUNT];
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    for (int i = 0; i < COUNT; i++) {
        ptrs[i] = sentinel;
        got[i] = dcuda_host_alloc(r.h, sizes[i], &ptrs[i]);
    }
    char *out = test_capture_end(&cap);
    printf("%s", out ? out : "");
    for (int i = 0; i < COUNT; i++) {
        char size[32];
        snprintf(size, sizeof size, "%zu", sizes[i]);
        TEST_CHECK(got[i] == DCUDA_ERR_INVALID_ARG || got[i] == DCUDA_ERR_NO_MEMORY,
                   "dcuda_host_alloc(%s bytes) returned %s", size, dcuda_status_name(got[i]));
        TEST_CHECK(ptrs[i] == sentinel, "dcuda_host_alloc(%s bytes) set the pointer", size);
        TEST_CHECK(out && test_find_line(out, "dcuda: error: ", size),
                   "no error message names %s bytes", size);
    }
    TEST_CHECK(count_fds() == fds, "the failed allocations left %d shared-memory descriptors open",
               count_fds() - fds);
    free(out);
    /* Ordinary allocations still work. */
    uint64_t in[512], back[512];
    for (int i = 0; i < 512; i++)
        in[i] = test_word(7, 9, (uint64_t)i);
    void *p = NULL;
    if (TEST_STATUS(dcuda_host_alloc(r.h, sizeof in, &p), DCUDA_OK)) {
        TEST_STATUS(dcuda_host_copy_in(r.h, p, in, sizeof in), DCUDA_OK);
        TEST_STATUS(dcuda_host_copy_out(r.h, back, p, sizeof back), DCUDA_OK);
        TEST_CHECK(memcmp(in, back, sizeof in) == 0, "copy through the allocation differs");
        TEST_STATUS(dcuda_host_free(r.h, p), DCUDA_OK);
    }
    fault_close(&r);
    return 0;
}

/* ---- item: a watchdog limit too large to convert must mean never ------------- */

static void late_run(int argc, char **argv, const char *watchdog)
{
    setenv("DCUDA_WATCHDOG", watchdog, 1);
    setenv("DCUDA_WATCHDOG_CANCEL", "1", 1);
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return;
    r.d.test_case = FAULT_LATE;
    r.d.delay_ms = 1000;
    if (!TEST_STATUS(fault_exec(&r), DCUDA_OK))
        fprintf(stderr, "     (DCUDA_WATCHDOG=%s)\n", watchdog);
    for (int k = test_first_rank(&r.info); k < test_end_rank(&r.info); k++)
        if (!TEST_STATUS(res(&r, k, FAULT_RES_CALL), DCUDA_OK))
            fprintf(stderr, "     (rank %d, DCUDA_WATCHDOG=%s)\n", k, watchdog);
    TEST_CHECK(r.out && !strstr(r.out, "dcuda: watchdog:"),
               "DCUDA_WATCHDOG=%s: the watchdog reported a rank blocked for 1 s", watchdog);
    fault_close(&r);
}

static int case_watchdog_never(int argc, char **argv)
{
    late_run(argc, argv, "inf");
    late_run(argc, argv, "1e12");
    return 0;
}

/* ---- item: allocations that peers reach, and the limit on them --------------- */

#define FAULT_ALLOCS 300

static int case_segments(int argc, char **argv)
{
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    size_t bytes = (size_t)r.info.rank_responsible * FAULT_PART_WORDS * sizeof(int64_t);
    static void *blocks[FAULT_ALLOCS];
    int made = 0;
    dcuda_status_t failed = DCUDA_OK;
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    while (made < FAULT_ALLOCS && (failed = dcuda_host_alloc(r.h, bytes, &blocks[made])) == 0)
        made++;
    char *out = test_capture_end(&cap);
    printf("%s%d allocations made\n%s", test_who, made, out ? out : "");
    if (failed != DCUDA_OK) {
        /* Refused at allocation time, with the reason. */
        TEST_STATUS(failed, DCUDA_ERR_NO_MEMORY);
        TEST_CHECK(r.info.process_count > 1, "allocation %d failed in a process alone", made);
        TEST_CHECK(made >= 200, "only %d allocations before the limit", made);
        TEST_CHECK(out && test_find_line(out, "dcuda_host_alloc", "256"),
                   "no message names dcuda_host_alloc and the limit of 256");
    }
    free(out);
    /* Every allocation that succeeded is reachable: the last holds the ring. */
    if (made == 0)
        return 1;
    r.d.test_case = FAULT_RING_PUT;
    r.d.parts = blocks[made - 1];
    TEST_STATUS(fault_exec(&r), DCUDA_OK);
    for (int k = test_first_rank(&r.info); k < test_end_rank(&r.info); k++) {
        int left = (k + r.n - 1) % r.n;
        TEST_CHECK(res(&r, k, FAULT_RES_CALL) == 0, "rank %d: the ring put failed: %s", k,
                   dcuda_status_name((dcuda_status_t)res(&r, k, FAULT_RES_CALL)));
        TEST_CHECK(res(&r, k, FAULT_RES_VALUE) == FAULT_RING_VALUE(left),
                   "rank %d received %" PRId64 ", expected %" PRId64, k,
                   res(&r, k, FAULT_RES_VALUE), FAULT_RING_VALUE(left));
    }
    while (made > 0)
        TEST_STATUS(dcuda_host_free(r.h, blocks[--made]), DCUDA_OK);
    fault_close(&r);
    return 0;
}

/* ---- item: close-on-exec and seals on the library's descriptors --------------- */

#define FAULT_MAX_FD 4096

/* Checks one descriptor the library opened; 1 if it is a dcuda memfd. */
static int check_fd(int fd, int all_ours)
{
    char path[64], link[256];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(path, link, sizeof link - 1);
    if (len < 0)
        return 0; /* closed meanwhile (the directory walk's own) */
    link[len] = '\0';
    int memfd = strncmp(link, "/memfd:dcuda", 12) == 0;
    int flags = fcntl(fd, F_GETFD);
    if (memfd || all_ours)
        TEST_CHECK(flags >= 0 && (flags & FD_CLOEXEC), "descriptor %d (%s) lacks close-on-exec", fd,
                   link);
    if (!memfd)
        return 0;
    int seals = fcntl(fd, F_GET_SEALS);
    int want = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
    TEST_CHECK(seals >= 0 && (seals & want) == want, "memfd %d (%s) has seals %#x, not %#x", fd,
               link, seals, want);
    TEST_CHECK(ftruncate(fd, 0) != 0 && errno == EPERM, "memfd %d (%s) could be truncated", fd,
               link);
    return 1;
}

static int case_cloexec(int argc, char **argv)
{
    static unsigned char before[FAULT_MAX_FD];
    for (int fd = 0; fd < FAULT_MAX_FD; fd++)
        before[fd] = fcntl(fd, F_GETFD) >= 0;
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    if (r.info.process_count < 2) {
        printf("SKIP %s: needs 2 processes, have %d\n", argv[1], r.info.process_count);
        fault_close(&r);
        return TEST_SKIP;
    }
    TEST_STATUS(fault_exec(&r), DCUDA_OK); /* the peers' memory is mapped now */
    int cpu = strcmp(r.info.backend, "cpu") == 0;
    /* Under mpirun the MPI library opens descriptors of its own. */
    int all_ours = cpu && !getenv("OMPI_COMM_WORLD_SIZE");
    int memfds = 0;
    for (int fd = 0; fd < FAULT_MAX_FD; fd++)
        if (!before[fd] && fcntl(fd, F_GETFD) >= 0)
            memfds += check_fd(fd, all_ours);
    /* CPU ranks: every allocation is a memfd; GPU ranks: process 0 keeps the node's. */
    TEST_CHECK(memfds >= (cpu ? 2 : r.info.process_index == 0), "only %d dcuda memfds found",
               memfds);
    fault_close(&r);
    return 0;
}

/* ---- item: the handle after dcuda_host_finish, frees of unknown pointers ------ */

static void check_finished(dcuda_host_h h)
{
    const double *t;
    int count;
    void *p = NULL;
    char byte = 0;
    dcuda_rank_info_t info;
    TEST_STATUS(dcuda_host_finish(h), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_run(h, NULL, 0, NULL), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_get_rank_info(h, &info), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_get_timings(h, &t, &count), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_alloc(h, 16, &p), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_free(h, &byte), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_copy_in(h, &byte, &byte, 1), DCUDA_ERR_NOT_INITIALIZED);
    TEST_STATUS(dcuda_host_copy_out(h, &byte, &byte, 1), DCUDA_ERR_NOT_INITIALIZED);
    TEST_CHECK(strcmp(dcuda_host_last_error(h), "") == 0, "last error of a finished handle");
}

static int case_lifetime(int argc, char **argv)
{
    dcuda_kernel_t k = DCUDA_KERNEL_REF(faults);
    dcuda_host_h a, b;
    if (!TEST_STATUS(dcuda_host_init(argc, argv, k, 64, &a), DCUDA_OK))
        return 1;
    TEST_STATUS(dcuda_host_finish(a), DCUDA_OK);
    check_finished(a);
    /* A new runtime: the old handle stays finished, the new one works. */
    if (!TEST_STATUS(dcuda_host_init(argc, argv, k, 64, &b), DCUDA_OK))
        return 1;
    TEST_CHECK(a != b, "the new runtime got the finished handle's value");
    check_finished(a);
    fault_data_t d;
    memset(&d, 0, sizeof d);
    TEST_STATUS(dcuda_host_run(b, &d, sizeof d, NULL), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(b), DCUDA_OK);
    check_finished(b);
    return 0;
}

static int case_free_unknown(int argc, char **argv)
{
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    void *p = NULL, *heap = malloc(64);
    char local = 0;
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    dcuda_status_t on_stack = dcuda_host_free(r.h, &local);
    dcuda_status_t on_heap = dcuda_host_free(r.h, heap);
    dcuda_status_t twice = DCUDA_OK, first = DCUDA_ERR_SYSTEM;
    if (dcuda_host_alloc(r.h, 64, &p) == DCUDA_OK) {
        first = dcuda_host_free(r.h, p);
        twice = dcuda_host_free(r.h, p);
    }
    dcuda_status_t null = dcuda_host_free(r.h, NULL);
    char *out = test_capture_end(&cap);
    printf("%s", out ? out : "");
    TEST_STATUS(on_stack, DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(on_heap, DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(first, DCUDA_OK);
    TEST_STATUS(twice, DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(null, DCUDA_OK);
    TEST_CHECK(out && count_lines(out, "dcuda: error:", "dcuda_host_free") == 3,
               "expected 3 error lines naming dcuda_host_free");
    free(out);
    free(heap);
    fault_close(&r);
    return 0;
}

/* ---- item: how settings are read ----------------------------------------------- */

/* dcuda_host_init with argv = {"prog", arg} (arg "" for none), output
 * captured into *out (malloc'd) when out is not NULL; finishes a runtime it
 * started. Returns the status, and the ranks of this process in *ranks. */
static dcuda_status_t init_with(const char *arg, int *ranks, char **out)
{
    char prog[] = "dcuda_test_faults", a[128];
    snprintf(a, sizeof a, "%s", arg);
    char *argv[] = { prog, a, NULL };
    dcuda_host_h h;
    test_capture_t cap;
    int captured = out && test_capture_begin(&cap);
    dcuda_status_t st = dcuda_host_init(arg[0] ? 2 : 1, argv, DCUDA_KERNEL_REF(faults), 64, &h);
    if (captured)
        *out = test_capture_end(&cap);
    if (st == DCUDA_OK) {
        dcuda_rank_info_t info;
        dcuda_host_get_rank_info(h, &info);
        if (ranks)
            *ranks = info.rank_responsible;
        dcuda_host_finish(h);
    }
    return st;
}

/* Expects init with DCUDA_<name>=value in the environment to return want. */
static void env_setting(const char *name, const char *value, dcuda_status_t want)
{
    setenv(name, value, 1);
    if (!TEST_STATUS(init_with("", NULL, NULL), want))
        fprintf(stderr, "     (%s=%s)\n", name, value);
    unsetenv(name);
}

static int case_settings_values(int argc, char **argv)
{
    int ranks = 0;
    (void)argc, (void)argv;
    /* Numbers are decimal (a leading 0 is no octal prefix); 0x is hex. */
    setenv("DCUDA_RANKS", "010", 1);
    if (TEST_STATUS(init_with("", &ranks, NULL), DCUDA_OK))
        TEST_CHECK(ranks == 10, "DCUDA_RANKS=010 gave %d ranks", ranks);
    if (TEST_STATUS(init_with("--dcuda-ranks=012", &ranks, NULL), DCUDA_OK))
        TEST_CHECK(ranks == 12, "--dcuda-ranks=012 gave %d ranks", ranks);
    if (TEST_STATUS(init_with("--dcuda-ranks=0x6", &ranks, NULL), DCUDA_OK))
        TEST_CHECK(ranks == 6, "--dcuda-ranks=0x6 gave %d ranks", ranks);
    /* Blanks before a number are skipped, before its 0x too; an unsigned
     * setting refuses a minus after them as before them. */
    if (TEST_STATUS(init_with("--dcuda-ranks= 0x6", &ranks, NULL), DCUDA_OK))
        TEST_CHECK(ranks == 6, "--dcuda-ranks=' 0x6' gave %d ranks", ranks);
    setenv("DCUDA_RANKS", "3", 1);
    env_setting("DCUDA_RANKS", "08", DCUDA_OK); /* an invalid octal number */
    env_setting("DCUDA_NOTIF_START", "\t7", DCUDA_OK);
    env_setting("DCUDA_NOTIF_START", " -18446744073709551615", DCUDA_ERR_SETTING);
    env_setting("DCUDA_NOTIF_START", " -0", DCUDA_ERR_SETTING);
    /* The network credit: 4096 bytes to 2^32. */
    env_setting("DCUDA_NET_CREDIT", "4096", DCUDA_OK);
    env_setting("DCUDA_NET_CREDIT", "0x100000000", DCUDA_OK);
    env_setting("DCUDA_NET_CREDIT", "4095", DCUDA_ERR_SETTING);
    env_setting("DCUDA_NET_CREDIT", "0", DCUDA_ERR_SETTING);
    env_setting("DCUDA_NET_CREDIT", "4294967297", DCUDA_ERR_SETTING);
    env_setting("DCUDA_NET_CREDIT", "-4096", DCUDA_ERR_SETTING);
    /* 0/1 settings refuse other numbers. */
    static const char *flags[] = { "DCUDA_WATCHDOG_CANCEL", "DCUDA_VERBOSE", "DCUDA_NET_FORCE",
                                   "DCUDA_NET_LOOPBACK" };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        env_setting(flags[i], "2", DCUDA_ERR_SETTING);
        env_setting(flags[i], "-1", DCUDA_ERR_SETTING);
        env_setting(flags[i], "0", DCUDA_OK);
    }
    env_setting("DCUDA_WATCHDOG_CANCEL", "1", DCUDA_OK);
    env_setting("DCUDA_VERBOSE", "1", DCUDA_OK);
    /* The watchdog: off, never, or seconds. */
    static const char *never[] = { "0", "off", "inf", "infinity", "1e12", "1e300", "0.25" };
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        env_setting("DCUDA_WATCHDOG", never[i], DCUDA_OK);
    static const char *bad[] = { "nan", "-1", "-inf", "soon", "" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        env_setting("DCUDA_WATCHDOG", bad[i], DCUDA_ERR_SETTING);
    return 0;
}

/* Init with variable name=1 set draws one warning naming it and, when
 * `closest` is not NULL, suggesting that setting. */
static void near_miss_env(const char *name, const char *closest)
{
    char *out = NULL, hint[96];
    setenv(name, "1", 1);
    TEST_STATUS(init_with("", NULL, &out), DCUDA_OK);
    unsetenv(name);
    if (!out)
        return;
    printf("%s", out);
    const char *line = test_find_line(out, "dcuda: warning:", name);
    TEST_CHECK(line != NULL, "no warning names %s", name);
    snprintf(hint, sizeof hint, "did you mean %s?", closest ? closest : "");
    if (closest)
        TEST_CHECK(line && test_find_line(line, hint, NULL) == line, "%s: no '%s'", name, hint);
    else
        TEST_CHECK(!strstr(out, "did you mean"), "%s: a suggestion for an unrelated name", name);
    free(out);
}

static void near_miss_arg(const char *arg, const char *closest)
{
    char *out = NULL;
    TEST_STATUS(init_with(arg, NULL, &out), DCUDA_ERR_SETTING);
    if (!out)
        return;
    printf("%s", out);
    TEST_CHECK(test_find_line(out, "dcuda: error:", closest) != NULL,
               "argument %s: no error suggesting %s", arg, closest);
    free(out);
}

static int case_settings_near_miss(int argc, char **argv)
{
    (void)argc, (void)argv;
    near_miss_env("DCUDA_RANK", "DCUDA_RANKS");
    near_miss_env("DCUDA_WATCHDOG_CANCELL", "DCUDA_WATCHDOG_CANCEL");
    near_miss_env("DCUDA_WATCHDG", "DCUDA_WATCHDOG");
    near_miss_env("DCUDA_PROCESS", "DCUDA_PROCESSES");
    near_miss_env("DCUDA_HOME_DIRECTORY", NULL);
    near_miss_arg("--dcuda_ranks=3", "--dcuda-ranks=3");
    near_miss_arg("--dcuda-rank=3", "--dcuda-ranks");
    return 0;
}

/* ---- item: notifications nobody consumed ------------------------------------- */

static int case_leftover(int argc, char **argv)
{
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    if (!test_have_ranks(&r.info, 2, argv[1])) {
        fault_close(&r);
        return TEST_SKIP;
    }
    r.d.test_case = FAULT_LEFTOVER;
    r.d.tag = 77; /* the same in every process */
    r.d.count = 4;
    TEST_STATUS(fault_exec(&r), DCUDA_OK);
    int last = r.n - 1;
    char want[128];
    snprintf(want, sizeof want, "rank %d: dcuda_rank_finish: 3 notification(s) of tag %d", last,
             r.d.tag);
    int lines = r.out ? count_lines(r.out, "dcuda: warning:", "notification(s) of tag") : -1;
    if (test_owns(&r.info, last)) {
        TEST_CHECK(r.out && test_find_line(r.out, "dcuda: warning:", want), "no warning '%s'",
                   want);
        TEST_CHECK(lines == 1, "%d warnings about notifications, expected 1", lines);
    } else {
        TEST_CHECK(lines == 0, "%d warnings about notifications, expected none here", lines);
    }
    /* A clean run warns of nothing. */
    r.d.test_case = FAULT_NONE;
    TEST_STATUS(fault_exec(&r), DCUDA_OK);
    TEST_CHECK(r.out && !strstr(r.out, "dcuda: warning:"), "a clean run drew a warning");
    fault_close(&r);
    return 0;
}

/* ---- item: host messages name their process ----------------------------------- */

static int case_msg_process(int argc, char **argv)
{
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    char who[48];
    snprintf(who, sizeof who, "process %d: dcuda_host_run", r.info.process_index);
    test_capture_t cap;
    if (!test_capture_begin(&cap))
        return 1;
    dcuda_status_t st = dcuda_host_run(r.h, NULL, 8, NULL);
    char *out = test_capture_end(&cap);
    printf("%s", out ? out : "");
    TEST_STATUS(st, DCUDA_ERR_INVALID_ARG);
    if (r.info.process_count > 1)
        TEST_CHECK(out && test_find_line(out, "dcuda: error: ", who),
                   "the error line does not say '%s'", who);
    else
        TEST_CHECK(out && test_find_line(out, "dcuda: error: dcuda_host_run", NULL),
                   "a process alone names itself");
    free(out);
    fault_close(&r);
    return 0;
}

/* ---- item: a CUDA call before dcuda_host_init, then a forked start ---------------- */

/* Initialises the CUDA driver as any CUDA call of a program would; 0 if
 * there is no driver here. */
static int touch_cuda(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    int (*init)(unsigned) = NULL;
    if (lib)
        *(void **)&init = dlsym(lib, "cuInit");
    return init && init(0) == 0;
}

static int case_cuda_first(int argc, char **argv)
{
    const char *backend = getenv("DCUDA_BACKEND");
    if (!backend || strcmp(backend, "cuda") != 0) {
        printf("SKIP %s: forking for CPU ranks after a CUDA call is fine\n", argv[1]);
        return TEST_SKIP;
    }
    if (!touch_cuda()) {
        printf("SKIP %s: no CUDA driver that initialises here\n", argv[1]);
        return TEST_SKIP;
    }
    /* Two processes for the GPUs: they cannot be forked now; init says why. */
    setenv("DCUDA_PROCESSES", "2", 1);
    char *out = NULL;
    TEST_STATUS(init_with("", NULL, &out), DCUDA_ERR_UNSUPPORTED);
    printf("%s", out ? out : "");
    TEST_CHECK(out && test_find_line(out, "dcuda: error:", "before any CUDA call"),
               "the refusal does not say to call dcuda_host_init first");
    free(out);
    /* One process still works. */
    setenv("DCUDA_PROCESSES", "1", 1);
    fault_run_t r;
    if (fault_open(&r, argc, argv))
        return 1;
    r.d.test_case = FAULT_NONE;
    TEST_STATUS(fault_exec(&r), DCUDA_OK);
    fault_close(&r);
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "alloc_huge", case_alloc_huge },
        { "watchdog_never", case_watchdog_never },
        { "segments", case_segments },
        { "cloexec", case_cloexec },
        { "lifetime", case_lifetime },
        { "free_unknown", case_free_unknown },
        { "settings_values", case_settings_values },
        { "settings_near_miss", case_settings_near_miss },
        { "leftover", case_leftover },
        { "msg_process", case_msg_process },
        { "cuda_first", case_cuda_first },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
