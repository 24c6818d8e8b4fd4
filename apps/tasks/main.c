/*
 * Tasks on the devices of a process (dcuda/dcuda_task.h), the three cases
 * of the seed's TaskAPI: a five-point stencil (Jacobi steps on an N x N
 * grid with a fixed boundary) decomposed into row strips, one task a
 * strip a step, whose input is its rows and the halo rows around them and
 * whose output is its rows of the next grid.
 *
 *   --tasks-mode=stencil  strips at home on the CPU devices in turn, each
 *                         device running its own (no stealing);
 *   --tasks-mode=hybrid   the same with stealing: the GPU (where there is
 *                         one) and idle CPU devices take strips, migrating
 *                         their rows in and out;
 *   --tasks-mode=balance  every strip at home on device 0 (the seed's
 *                         figure 13: one busy device, the others idle),
 *                         at 5, 10 and 20 strips a step, timed without and
 *                         with stealing; a table of times and speedups.
 *
 * Every run's grid is compared bit for bit with a serial reference (the
 * same sums in the same order). Options (besides the --dcuda-* settings):
 * --tasks-n=N (grid side, default 256), --tasks-iters=I (steps, 20),
 * --tasks-ways=K (strips a step, 8; stencil and hybrid), --tasks-cpus=C
 * (CPU devices, 3). Exits 0 when every grid matched.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app_skip.h"
#include "dcuda/dcuda_host.h"
#include "tasks_stencil.h"

DCUDA_KERNEL_DECLARE(tasks_idle);

#ifndef TASKS_GPU_FORMS
dcuda_task_gpu_fn tasks_stencil_gpu_form(void) { return NULL; } /* no CUDA: stencil_gpu.cu */
#endif

typedef struct options {
    int mode; /* 0 stencil, 1 hybrid, 2 balance */
    int n, iters, ways, cpus;
} options_t;

/* The CPU form: rows [1, rows] of in (rows + 2 rows of n) into out. */
static void stencil_cpu(void *arg, const void *in, void *out)
{
    const tasks_strip_t *s = arg;
    tasks_stencil_rows((const float *)in, (float *)out, s->n, s->rows);
}

/* The grid's start: a hot edge, the rest cold. */
static void grid_init(float *g, int n)
{
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            g[(size_t)r * (size_t)n + (size_t)c] = r == 0 ? 100.0f : (float)((r * 7 + c * 3) % 11);
}

/* `iters` steps of the serial reference. */
static void reference(float *g, float *next, int n, int iters)
{
    for (int it = 0; it < iters; it++) {
        memcpy(next, g, (size_t)n * sizeof *g);
        memcpy(next + (size_t)(n - 1) * (size_t)n, g + (size_t)(n - 1) * (size_t)n,
               (size_t)n * sizeof *g);
        tasks_stencil_rows(g, next + n, n, n - 2);
        float *t = g;
        g = next;
        next = t;
    }
    if (iters % 2) /* the result is in g's other buffer: hand it back */
        memcpy(next, g, (size_t)n * (size_t)n * sizeof *g);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* `iters` steps as `ways` strip tasks a step on pool p, homes chosen by
 * `home` (-1: the CPU devices in turn); the grid in g at the end. */
static dcuda_status_t run_tasks(dcuda_task_pool_h p, float *g, float *next, int n, int iters,
                                int ways, int home, int cpus)
{
    tasks_strip_t *strip = calloc((size_t)ways, sizeof *strip);
    dcuda_task_h *t = calloc((size_t)ways, sizeof *t);
    dcuda_status_t st = strip && t ? DCUDA_OK : DCUDA_ERR_NO_MEMORY;
    const int inner = n - 2;
    for (int it = 0; it < iters && st == DCUDA_OK; it++) {
        memcpy(next, g, (size_t)n * sizeof *g); /* the fixed top and bottom rows */
        memcpy(next + (size_t)(n - 1) * (size_t)n, g + (size_t)(n - 1) * (size_t)n,
               (size_t)n * sizeof *g);
        for (int k = 0; k < ways && st == DCUDA_OK; k++) {
            int r0 = 1 + inner * k / ways, r1 = 1 + inner * (k + 1) / ways;
            strip[k] = (tasks_strip_t){ n, r1 - r0 };
            dcuda_task_desc_t d = { stencil_cpu,
                                    tasks_stencil_gpu_form(),
                                    &strip[k],
                                    g + (size_t)(r0 - 1) * (size_t)n,
                                    (size_t)(r1 - r0 + 2) * (size_t)n * sizeof *g,
                                    next + (size_t)r0 * (size_t)n,
                                    (size_t)(r1 - r0) * (size_t)n * sizeof *g,
                                    home >= 0 ? home : k % cpus };
            st = dcuda_task_create(p, &d, &t[k]);
        }
        for (int k = 0; k < ways && t[k]; k++) {
            dcuda_status_t w = dcuda_task_wait(t[k]);
            t[k] = NULL;
            if (st == DCUDA_OK)
                st = w;
        }
        float *s = g;
        g = next;
        next = s;
    }
    if (iters % 2)
        memcpy(next, g, (size_t)n * (size_t)n * sizeof *g);
    free(strip);
    free(t);
    return st;
}

/* One run on a new pool: its grid against the reference; the time. */
static int run_checked(dcuda_host_h h, const options_t *o, int ways, int home, unsigned flags,
                       double *seconds, uint64_t *stolen)
{
    size_t cells = (size_t)o->n * (size_t)o->n;
    float *g = malloc(cells * sizeof *g), *next = malloc(cells * sizeof *g);
    float *rg = malloc(cells * sizeof *g), *rnext = malloc(cells * sizeof *g);
    dcuda_task_pool_h p = NULL;
    int ok = g && next && rg && rnext && dcuda_task_pool_create(h, o->cpus, flags, &p) == DCUDA_OK;
    if (ok) {
        grid_init(g, o->n);
        grid_init(rg, o->n);
        double t0 = now_s();
        dcuda_status_t st = run_tasks(p, g, next, o->n, o->iters, ways, home, o->cpus);
        *seconds = now_s() - t0;
        reference(rg, rnext, o->n, o->iters);
        ok = st == DCUDA_OK && memcmp(g, rg, cells * sizeof *g) == 0;
        if (st != DCUDA_OK)
            fprintf(stderr, "tasks: a task failed: %s\n", dcuda_status_name(st));
        else if (!ok)
            fprintf(stderr, "tasks: the grid differs from the serial reference\n");
        int count = 0, gpu = -1;
        dcuda_task_devices(p, &count, &gpu);
        *stolen = 0;
        for (int d = 0; d < count; d++) {
            dcuda_task_stats_t s;
            dcuda_task_device_stats(p, d, &s);
            *stolen += s.stolen;
        }
        dcuda_task_pool_destroy(p);
    }
    free(g);
    free(next);
    free(rg);
    free(rnext);
    return ok;
}

/* The seed's figure 13: every strip at home on device 0, 5, 10 and 20
 * strips a step, without and with stealing. */
static int balance(dcuda_host_h h, const options_t *o)
{
    static const int ways[] = { 5, 10, 20 };
    int ok = 1;
    printf("%-6s %8s %10s %10s %8s %8s\n", "ways", "n", "alone_ms", "steal_ms", "speedup",
           "stolen");
    for (int i = 0; i < 3; i++) {
        double alone = 0, shared = 0;
        uint64_t none = 0, stolen = 0;
        ok &= run_checked(h, o, ways[i], 0, DCUDA_TASK_NO_STEAL, &alone, &none);
        ok &= run_checked(h, o, ways[i], 0, 0u, &shared, &stolen);
        printf("%-6d %8d %10.2f %10.2f %8.2f %8llu\n", ways[i], o->n, alone * 1e3, shared * 1e3,
               shared > 0 ? alone / shared : 0.0, (unsigned long long)stolen);
    }
    return ok;
}

static int parse(int argc, char **argv, options_t *o)
{
    static const char *const modes[] = { "stencil", "hybrid", "balance" };
    *o = (options_t){ 0, 256, 20, 8, 3 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int *v = strncmp(a, "--tasks-n=", 10) == 0       ? &o->n
                 : strncmp(a, "--tasks-iters=", 14) == 0 ? &o->iters
                 : strncmp(a, "--tasks-ways=", 13) == 0  ? &o->ways
                 : strncmp(a, "--tasks-cpus=", 13) == 0  ? &o->cpus
                                                         : NULL;
        if (v) {
            *v = atoi(strchr(a, '=') + 1);
            continue;
        }
        if (strncmp(a, "--tasks-mode=", 13) == 0) {
            o->mode = -1;
            for (int m = 0; m < 3; m++)
                if (strcmp(a + 13, modes[m]) == 0)
                    o->mode = m;
            if (o->mode < 0)
                return 0;
        } else if (strncmp(a, "--tasks-", 8) == 0) {
            return 0;
        }
    }
    return o->n >= 3 && o->n <= 16384 && o->iters >= 1 && o->ways >= 1 && o->ways <= o->n - 2 &&
           o->cpus >= 1 && o->cpus <= 64 && (o->mode != 2 || o->n >= 22);
}

int main(int argc, char **argv)
{
    options_t o;
    if (!parse(argc, argv, &o)) {
        fprintf(stderr,
                "usage: %s [--tasks-mode=stencil|hybrid|balance] [--tasks-n=N (3 to "
                "16384; balance: 22 and up)] [--tasks-iters=I] [--tasks-ways=K (1 to "
                "N - 2)] [--tasks-cpus=C (1 to 64)]\n",
                argv[0]);
        return 2;
    }
    int skip = app_backend_missing("tasks");
    if (skip)
        return skip;
    dcuda_host_h h;
    dcuda_status_t st = dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(tasks_idle), 32, &h);
    if (st != DCUDA_OK)
        return 1;
    int ok;
    if (o.mode == 2) {
        ok = balance(h, &o);
    } else {
        double seconds = 0;
        uint64_t stolen = 0;
        ok = run_checked(h, &o, o.ways, -1, o.mode == 0 ? DCUDA_TASK_NO_STEAL : 0u, &seconds,
                         &stolen);
        printf("tasks %s: %d x %d grid, %d steps of %d strips on %d CPU devices%s: %s "
               "(%llu strips stolen)\n",
               o.mode == 0 ? "stencil" : "hybrid", o.n, o.n, o.iters, o.ways, o.cpus,
               tasks_stencil_gpu_form() ? " and the GPU" : "", ok ? "matches" : "DIFFERS",
               (unsigned long long)stolen);
    }
    st = dcuda_host_finish(h);
    return ok && st == DCUDA_OK ? 0 : 1;
}
