/*
 * Host driver of the test of tasks (dcuda/dcuda_task.h):
 *   dcuda_test_tasks model [seed [runs]] | steal | nosteal | misuse | finish
 *
 * model: a seeded mix of tasks on every device of a pool (three CPU
 * devices and the GPU where there is one): words of an input turned into
 * an output (out = in * mul + add, the task's own numbers), sizes from
 * none to 64 KiB, homes drawn, some synchronous, some cancelled at once;
 * each waited for, its status checked (a cancel that was accepted: the
 * wait says DCUDA_ERR_CANCELED and the output is untouched; else
 * DCUDA_OK) and every output against this file's own reference; the
 * devices' counts add up to the tasks that ran. steal: tasks that take a
 * while, all at home on device 0 of three: the idle devices steal some,
 * migrate them and write their outputs back (counts and bytes checked);
 * nosteal: the same with DCUDA_TASK_NO_STEAL, device 0 runs them all.
 * misuse: each bad argument refused with DCUDA_ERR_INVALID_ARG. finish:
 * tasks left queued in a pool never destroyed run before dcuda_host_finish
 * returns.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcuda/dcuda_host.h"
#include "tasks.h"
#include "test_util.h"

DCUDA_KERNEL_DECLARE(tasks_idle);

#ifndef TASKS_GPU_FORMS
dcuda_task_gpu_fn tasks_gpu_form(void) { return NULL; } /* no CUDA here: tasks_gpu.cu */
#endif

#define TASKS_CPU_DEVICES 3
#define TASKS_MODEL_COUNT 48
#define TASKS_MAX_WORDS 16384u
#define TASKS_UNTOUCHED 0xdeadbeefu

/* The CPU form: out = in * mul + add, word by word (then, for the steal
 * case, a pause of arg->spin_us). */
static void tasks_cpu_form(void *arg, const void *in, void *out)
{
    const tasks_arg_t *a = arg;
    const uint32_t *x = in;
    uint32_t *y = out;
    for (uint32_t i = 0; i < a->words; i++)
        y[i] = x[i] * a->mul + a->add;
    if (a->spin_us) {
        struct timespec ts = { 0, (long)a->spin_us * 1000L };
        nanosleep(&ts, NULL);
    }
}

/* A task's data at its home: its input and output (host memory, or of
 * dcuda_host_alloc for the GPU), and this file's copy of the input. */
typedef struct tasks_item {
    tasks_arg_t arg;
    uint32_t *in, *out, *ref_in;
    int home, on_gpu, cancelled;
    dcuda_task_h task;
    dcuda_status_t st;
} tasks_item_t;

static int tasks_open(int argc, char **argv, dcuda_host_h *h)
{
    dcuda_rank_info_t info;
    return test_open_host(argc, argv, DCUDA_KERNEL_REF(tasks_idle), 32, h, &info) ? 0 : 1;
}

/* The item's buffers at its home, its input drawn from rng. */
static int tasks_fill(dcuda_host_h h, tasks_item_t *it, uint64_t *rng)
{
    size_t bytes = (size_t)it->arg.words * 4u;
    it->ref_in = malloc(bytes ? bytes : 4u);
    uint32_t *untouched = malloc(bytes ? bytes : 4u);
    if (!it->ref_in || !untouched)
        return 0;
    for (uint32_t i = 0; i < it->arg.words; i++) {
        it->ref_in[i] = (uint32_t)test_rng(rng);
        untouched[i] = TASKS_UNTOUCHED;
    }
    int ok = 1;
    if (it->on_gpu) {
        ok = TEST_STATUS(dcuda_host_alloc(h, bytes, (void **)&it->in), DCUDA_OK) &&
             TEST_STATUS(dcuda_host_alloc(h, bytes, (void **)&it->out), DCUDA_OK) &&
             TEST_STATUS(dcuda_host_copy_in(h, it->in, it->ref_in, bytes), DCUDA_OK) &&
             TEST_STATUS(dcuda_host_copy_in(h, it->out, untouched, bytes), DCUDA_OK);
    } else {
        it->in = malloc(bytes ? bytes : 4u);
        it->out = malloc(bytes ? bytes : 4u);
        ok = it->in && it->out;
        if (ok) {
            memcpy(it->in, it->ref_in, bytes);
            memcpy(it->out, untouched, bytes);
        }
    }
    free(untouched);
    return ok;
}

/* The item's output against the reference (or untouched, when cancelled);
 * its buffers freed. */
static void tasks_check(dcuda_host_h h, tasks_item_t *it, int k, uint32_t seed)
{
    size_t bytes = (size_t)it->arg.words * 4u;
    uint32_t *got = malloc(bytes ? bytes : 4u);
    if (!got)
        return;
    if (it->on_gpu)
        TEST_STATUS(dcuda_host_copy_out(h, got, it->out, bytes), DCUDA_OK);
    else
        memcpy(got, it->out, bytes);
    for (uint32_t i = 0; i < it->arg.words; i++) {
        uint32_t want = it->cancelled ? TASKS_UNTOUCHED : it->ref_in[i] * it->arg.mul + it->arg.add;
        if (got[i] != want) {
            TEST_CHECK(got[i] == want, "seed %u: task %d (home %d%s): word %u is %#x, want %#x",
                       seed, k, it->home, it->cancelled ? ", cancelled" : "", i, got[i], want);
            break;
        }
    }
    free(got);
    if (it->on_gpu) {
        dcuda_host_free(h, it->in);
        dcuda_host_free(h, it->out);
    } else {
        free(it->in);
        free(it->out);
    }
    free(it->ref_in);
}

static dcuda_task_desc_t tasks_desc(tasks_item_t *it)
{
    dcuda_task_desc_t d = {
        tasks_cpu_form, tasks_gpu_form(),           &it->arg, it->in, (size_t)it->arg.words * 4u,
        it->out,        (size_t)it->arg.words * 4u, it->home
    };
    return d;
}

/* One seeded run of the model on pool p. */
static void tasks_model_run(dcuda_host_h h, dcuda_task_pool_h p, uint32_t seed)
{
    int ndev = 0, gpu = -1;
    TEST_STATUS(dcuda_task_devices(p, &ndev, &gpu), DCUDA_OK);
    dcuda_task_stats_t before[TASKS_CPU_DEVICES + 1], after;
    for (int d = 0; d < ndev; d++)
        TEST_STATUS(dcuda_task_device_stats(p, d, &before[d]), DCUDA_OK);
    uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 1u;
    static tasks_item_t items[TASKS_MODEL_COUNT];
    int ran = 0;
    for (int k = 0; k < TASKS_MODEL_COUNT; k++) {
        tasks_item_t *it = &items[k];
        memset(it, 0, sizeof *it);
        uint64_t draw = test_rng(&rng);
        static const uint32_t sizes[] = { 0, 1, 3, 16, 255, 1024, 4097, TASKS_MAX_WORDS };
        it->arg = (tasks_arg_t){ sizes[draw % 8u], (uint32_t)(draw >> 8) | 1u,
                                 (uint32_t)(draw >> 40), 0u };
        it->home = (int)((draw >> 20) % (uint64_t)ndev);
        it->on_gpu = it->home == gpu;
        if (!tasks_fill(h, it, &rng))
            return;
        dcuda_task_desc_t d = tasks_desc(it);
        const int sync = (draw >> 30) % 5u == 0;
        if (sync) {
            TEST_STATUS(dcuda_task_create(p, &d, NULL), DCUDA_OK);
            ran++;
            continue;
        }
        if (!TEST_STATUS(dcuda_task_create(p, &d, &it->task), DCUDA_OK))
            return;
        if ((draw >> 33) % 6u == 0) /* cancelled at once: before it ran, or refused after */
            it->cancelled = dcuda_task_cancel(it->task) == DCUDA_OK;
    }
    for (int k = 0; k < TASKS_MODEL_COUNT; k++) {
        tasks_item_t *it = &items[k];
        if (it->task) {
            int done = 0;
            TEST_STATUS(dcuda_task_test(it->task, &done), DCUDA_OK);
            TEST_STATUS(dcuda_task_wait(it->task), it->cancelled ? DCUDA_ERR_CANCELED : DCUDA_OK);
            ran += !it->cancelled;
        }
        tasks_check(h, it, k, seed);
    }
    uint64_t counted = 0, stolen = 0;
    for (int d = 0; d < ndev; d++) {
        TEST_STATUS(dcuda_task_device_stats(p, d, &after), DCUDA_OK);
        counted += after.run - before[d].run;
        stolen += after.stolen - before[d].stolen;
    }
    TEST_CHECK(counted == (uint64_t)ran, "seed %u: the devices count %llu tasks run, not %d", seed,
               (unsigned long long)counted, ran);
    printf("seed %u: %d tasks on %d devices (GPU: %d), %d ran, %llu stolen\n", seed,
           TASKS_MODEL_COUNT, ndev, gpu, ran, (unsigned long long)stolen);
}

static int case_model(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_task_pool_h p = NULL;
    uint32_t seed = (uint32_t)test_arg(argc, argv, 2, 1);
    long runs = test_arg(argc, argv, 3, 3);
    if (tasks_open(argc, argv, &h))
        return 1;
    if (TEST_STATUS(dcuda_task_pool_create(h, TASKS_CPU_DEVICES, 0u, &p), DCUDA_OK)) {
        for (long i = 0; i < runs && !test_failures; i++)
            tasks_model_run(h, p, seed + (uint32_t)i);
        TEST_STATUS(dcuda_task_pool_destroy(p), DCUDA_OK);
    }
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    return 0;
}

/* Tasks of a pause each, all at home on device 0 (host memory). */
static void tasks_imbalanced(unsigned flags)
{
    enum { N = 24 };
    dcuda_host_h h;
    dcuda_task_pool_h p = NULL;
    if (tasks_open(0, NULL, &h))
        return;
    if (!TEST_STATUS(dcuda_task_pool_create(h, TASKS_CPU_DEVICES, flags, &p), DCUDA_OK))
        return;
    static tasks_item_t items[N];
    uint64_t rng = 7u;
    for (int k = 0; k < N; k++) {
        tasks_item_t *it = &items[k];
        memset(it, 0, sizeof *it);
        it->arg = (tasks_arg_t){ 256u + (uint32_t)k, 3u + (uint32_t)k, 11u, 2000u };
        if (!tasks_fill(h, it, &rng))
            return;
        dcuda_task_desc_t d = tasks_desc(it);
        d.gpu = NULL;
        TEST_STATUS(dcuda_task_create(p, &d, &it->task), DCUDA_OK);
    }
    for (int k = 0; k < N; k++) {
        TEST_STATUS(dcuda_task_wait(items[k].task), DCUDA_OK);
        tasks_check(h, &items[k], k, 0);
    }
    dcuda_task_stats_t s[TASKS_CPU_DEVICES];
    uint64_t run = 0, stolen = 0, migrated = 0;
    for (int d = 0; d < TASKS_CPU_DEVICES; d++) {
        TEST_STATUS(dcuda_task_device_stats(p, d, &s[d]), DCUDA_OK);
        run += s[d].run;
        stolen += s[d].stolen;
        migrated += s[d].migrated;
        TEST_CHECK(d == 0 ? s[d].stolen == 0 : s[d].stolen == s[d].run,
                   "device %d ran %llu tasks, %llu of them stolen", d, (unsigned long long)s[d].run,
                   (unsigned long long)s[d].stolen);
    }
    TEST_CHECK(run == N, "the devices ran %llu tasks of %d", (unsigned long long)run, N);
    if (flags & DCUDA_TASK_NO_STEAL) {
        TEST_CHECK(s[0].run == N && stolen == 0, "device 0 ran %llu, %llu were stolen",
                   (unsigned long long)s[0].run, (unsigned long long)stolen);
    } else {
        /* Each stolen task moved its input in and its output back: the
         * same number of words, between 256 and 256 + N - 1 of them. */
        TEST_CHECK(stolen > 0, "no task was stolen from the busy device");
        TEST_CHECK(migrated >= stolen * 2u * 256u * 4u && migrated <= stolen * 2u * (256u + N) * 4u,
                   "%llu bytes migrated for %llu stolen tasks", (unsigned long long)migrated,
                   (unsigned long long)stolen);
    }
    printf("%d tasks at home on device 0: ran %llu, %llu, %llu (stolen %llu, %llu bytes "
           "migrated)\n",
           N, (unsigned long long)s[0].run, (unsigned long long)s[1].run,
           (unsigned long long)s[2].run, (unsigned long long)stolen, (unsigned long long)migrated);
    TEST_STATUS(dcuda_task_pool_destroy(p), DCUDA_OK);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
}

static int case_steal(int argc, char **argv)
{
    (void)argc, (void)argv;
    tasks_imbalanced(0u);
    return 0;
}

static int case_nosteal(int argc, char **argv)
{
    (void)argc, (void)argv;
    tasks_imbalanced(DCUDA_TASK_NO_STEAL);
    return 0;
}

static int case_misuse(int argc, char **argv)
{
    dcuda_host_h h;
    dcuda_task_pool_h p = NULL, q = NULL;
    if (tasks_open(argc, argv, &h))
        return 1;
    TEST_STATUS(dcuda_task_pool_create(h, 65, 0u, &q), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_task_pool_create(h, 1, 2u, &q), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_task_pool_create(h, -1, 0u, &q), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_task_pool_create(h, 1, 0u, NULL), DCUDA_ERR_INVALID_ARG);
    TEST_CHECK(q == NULL, "a refused pool was handed out");
    if (!TEST_STATUS(dcuda_task_pool_create(h, 2, 0u, &p), DCUDA_OK))
        return 1;
    uint32_t in[4] = { 1, 2, 3, 4 }, out[4];
    tasks_arg_t a = { 4u, 2u, 1u, 0u };
    dcuda_task_desc_t good = { tasks_cpu_form, NULL, &a, in, sizeof in, out, sizeof out, 1 };
    dcuda_task_desc_t d = good;
    dcuda_task_h t = NULL;
    d.home = 2; /* the GPU (the task has no GPU form), or no device */
    TEST_STATUS(dcuda_task_create(p, &d, &t), DCUDA_ERR_INVALID_ARG);
    d = good;
    d.home = -1;
    TEST_STATUS(dcuda_task_create(p, &d, &t), DCUDA_ERR_INVALID_ARG);
    d = good;
    d.cpu = NULL;
    TEST_STATUS(dcuda_task_create(p, &d, &t), DCUDA_ERR_INVALID_ARG);
    d = good;
    d.in = NULL;
    TEST_STATUS(dcuda_task_create(p, &d, &t), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_task_create(p, NULL, &t), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_task_create(NULL, &good, &t), DCUDA_ERR_INVALID_ARG);
    TEST_CHECK(t == NULL, "a refused task was handed out");
    TEST_STATUS(dcuda_task_create(p, &good, NULL), DCUDA_OK); /* synchronous: done on return */
    TEST_CHECK(out[0] == 3u && out[3] == 9u, "the synchronous task wrote %u .. %u", out[0], out[3]);
    TEST_STATUS(dcuda_task_create(p, &good, &t), DCUDA_OK);
    int done = 0;
    while (!done)
        TEST_STATUS(dcuda_task_test(t, &done), DCUDA_OK);
    TEST_STATUS(dcuda_task_cancel(t), DCUDA_ERR_INVALID_ARG); /* it ran */
    TEST_STATUS(dcuda_task_wait(t), DCUDA_OK);
    TEST_STATUS(dcuda_task_wait(NULL), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_task_test(NULL, &done), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_task_device_stats(p, 9, &(dcuda_task_stats_t){ 0 }), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_task_pool_destroy(p), DCUDA_OK);
    TEST_STATUS(dcuda_task_pool_destroy(p), DCUDA_ERR_INVALID_ARG);
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    return 0;
}

/* Tasks queued in a pool that is never destroyed: dcuda_host_finish runs
 * them (their outputs written) and frees the pool. */
static int case_finish(int argc, char **argv)
{
    enum { N = 16 };
    dcuda_host_h h;
    dcuda_task_pool_h p = NULL;
    static uint32_t in[N][64], out[N][64];
    static tasks_arg_t a[N];
    if (tasks_open(argc, argv, &h))
        return 1;
    if (!TEST_STATUS(dcuda_task_pool_create(h, 2, 0u, &p), DCUDA_OK))
        return 1;
    for (int k = 0; k < N; k++) {
        a[k] = (tasks_arg_t){ 64u, (uint32_t)k + 2u, 5u, 500u };
        for (int i = 0; i < 64; i++)
            in[k][i] = (uint32_t)(k * 64 + i);
        dcuda_task_desc_t d = { tasks_cpu_form, NULL,   &a[k],         in[k],
                                sizeof in[k],   out[k], sizeof out[k], k % 2 };
        dcuda_task_h t;
        TEST_STATUS(dcuda_task_create(p, &d, &t), DCUDA_OK); /* never waited for */
    }
    TEST_STATUS(dcuda_host_finish(h), DCUDA_OK);
    for (int k = 0; k < N; k++)
        for (int i = 0; i < 64; i++)
            if (out[k][i] != in[k][i] * a[k].mul + a[k].add) {
                TEST_CHECK(0, "task %d's word %d is %u after dcuda_host_finish", k, i, out[k][i]);
                break;
            }
    return 0;
}

int main(int argc, char **argv)
{
    static const test_case_t cases[] = {
        { "model", case_model },   { "steal", case_steal },   { "nosteal", case_nosteal },
        { "misuse", case_misuse }, { "finish", case_finish },
    };
    return test_main(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
