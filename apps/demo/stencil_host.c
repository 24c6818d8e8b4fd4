/*
 * Host side of the heat stencil demo: builds a grid with a pseudo-random
 * interior and fixed boundary values, hands each rank its band (stencil.h),
 * runs the Jacobi iterations on the ranks and the very same iterations
 * serially, and compares every cell bit for bit.
 *
 * Options (besides the --dcuda-* settings): --stencil-nx=N, --stencil-ny=N
 * (grid size including the boundary, at least 3) and --stencil-iters=N.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dcuda/dcuda_host.h"
#include "demo.h"
#include "stencil.h"

DCUDA_KERNEL_DECLARE(stencil);

#define STENCIL_MAX_SIDE (1 << 16)

typedef struct stencil_run {
    int nx, ny, iters;
    double *init;   /* [ny][nx] initial grid */
    double *ref;    /* [ny][nx] serial result */
    double *block;  /* host copy of the ranks' buffers */
    size_t doubles; /* size of block */
    double ref_ms;  /* time of the serial reference */
    /* Outcome. */
    dcuda_status_t status;
    double kernel_ms, max_diff;
    size_t bad, checked; /* cells that differ, cells compared */
} stencil_run_t;

/* Reads --stencil-<name>=<int> options into the run; 0 if all are valid. */
static int parse_args(int argc, char **argv, stencil_run_t *r)
{
    static const char *names[] = { "--stencil-nx=", "--stencil-ny=", "--stencil-iters=" };
    int *fields[] = { &r->nx, &r->ny, &r->iters };
    for (int i = 1; i < argc; i++) {
        for (int f = 0; f < 3; f++) {
            size_t len = strlen(names[f]);
            if (strncmp(argv[i], names[f], len) != 0)
                continue;
            char *end;
            long v = strtol(argv[i] + len, &end, 10);
            if (end == argv[i] + len || *end || v < (f < 2 ? 3 : 1) || v > STENCIL_MAX_SIDE) {
                fprintf(stderr, "stencil: bad option %s (sides 3..%d, iterations 1..%d)\n", argv[i],
                        STENCIL_MAX_SIDE, STENCIL_MAX_SIDE);
                return 1;
            }
            *fields[f] = (int)v;
        }
    }
    return 0;
}

/* Fixed-seed generator (xorshift64), the same on every platform. */
static double next_random(unsigned long long *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) / 9007199254740992.0; /* [0, 1) */
}

/* Distinct fixed values on the four sides, random values inside. */
static void init_grid(const stencil_run_t *r)
{
    unsigned long long seed = 0x9e3779b97f4a7c15ull;
    for (int y = 0; y < r->ny; y++)
        for (int x = 0; x < r->nx; x++) {
            double v;
            if (y == 0)
                v = 100.0;
            else if (y == r->ny - 1)
                v = -40.0;
            else if (x == 0)
                v = 25.0;
            else if (x == r->nx - 1)
                v = 60.0;
            else
                v = 100.0 * next_random(&seed);
            r->init[(size_t)y * r->nx + x] = v;
        }
}

/* The serial reference: the same iterations on the whole grid, each point
 * by stencil_point with the same operands in the same order. 0 on success. */
static int reference(stencil_run_t *r)
{
    size_t n = (size_t)r->nx * r->ny, nx = (size_t)r->nx;
    double *a = malloc(n * sizeof(double));
    struct timespec t0, t1;
    if (!a)
        return 1;
    memcpy(a, r->init, n * sizeof(double));
    memcpy(r->ref, r->init, n * sizeof(double));
    timespec_get(&t0, TIME_UTC); /* C11 (strict C11 has no clock_gettime) */
    for (int k = 0; k < r->iters; k++) {
        const double *old = k % 2 ? r->ref : a;
        double *next = k % 2 ? a : r->ref;
        for (size_t y = 1; y + 1 < (size_t)r->ny; y++)
            for (size_t x = 1; x + 1 < nx; x++) {
                const double *c = old + y * nx + x;
                next[y * nx + x] = stencil_point(c[-(long)nx], c[nx], c[-1], c[1]);
            }
    }
    timespec_get(&t1, TIME_UTC);
    r->ref_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (r->iters % 2 == 0)
        memcpy(r->ref, a, n * sizeof(double));
    free(a);
    return 0;
}

/* Fills both buffers of each of this device's ranks with its rows and
 * halo rows of the initial grid. */
static void pack(const stencil_run_t *r, const dcuda_rank_info_t *info)
{
    size_t row = (size_t)r->nx;
    for (int rank = info->rank_start; rank < info->rank_start + info->rank_responsible; rank++) {
        int rows = stencil_rows(r->ny, info->rank_count, rank);
        int first = stencil_first_row(r->ny, info->rank_count, rank);
        double *buf =
            r->block + stencil_offset(r->nx, r->ny, info->rank_count, info->rank_start, rank);
        for (int b = 0; rows > 0 && b < 2; b++)
            memcpy(buf + (size_t)b * (rows + 2) * row, r->init + (size_t)(first - 1) * row,
                   (size_t)(rows + 2) * row * sizeof(double));
    }
}

/* Compares the rows of this device's ranks (result buffer iters % 2) with
 * the reference. */
static void compare(stencil_run_t *r, const dcuda_rank_info_t *info)
{
    size_t row = (size_t)r->nx;
    r->bad = r->checked = 0;
    r->max_diff = 0;
    for (int rank = info->rank_start; rank < info->rank_start + info->rank_responsible; rank++) {
        int rows = stencil_rows(r->ny, info->rank_count, rank);
        int first = stencil_first_row(r->ny, info->rank_count, rank);
        const double *buf =
            r->block + stencil_offset(r->nx, r->ny, info->rank_count, info->rank_start, rank);
        const double *got = buf + (size_t)(r->iters % 2) * (rows + 2) * row + row;
        const double *want = r->ref + (size_t)first * row;
        for (size_t i = 0; i < (size_t)rows * row; i++) {
            double diff = fabs(got[i] - want[i]);
            if (!(got[i] == want[i]))
                r->bad++;
            if (!isnan(r->max_diff) && !(diff <= r->max_diff))
                r->max_diff = diff; /* a NaN sticks */
        }
        r->checked += (size_t)rows * row;
    }
}

/* Cells of the reference that the iterations changed (0: a no-op). */
static size_t changed_cells(const stencil_run_t *r)
{
    size_t n = (size_t)r->nx * r->ny, changed = 0;
    for (size_t i = 0; i < n; i++)
        changed += r->ref[i] != r->init[i];
    return changed;
}

static void report(const stencil_run_t *r, const dcuda_rank_info_t *info, dcuda_host_h h, int ok)
{
    const double *timings;
    int ntimings = 0;
    dcuda_host_get_timings(h, &timings, &ntimings);
    double iter_ms = ntimings > 0 ? timings[0] : -1.0;
    double cells = (double)(r->nx - 2) * (double)(r->ny - 2) * (double)r->iters;
    printf("stencil: %d ranks (%s, %s), %dx%d grid, %d iterations: max |diff| vs serial "
           "reference %g in %zu cells (%s)\n",
           info->rank_count, info->backend, info->device_name, r->nx, r->ny, r->iters, r->max_diff,
           r->checked, ok ? "MATCH" : "MISMATCH");
    printf("stencil: kernel %.3f ms, iterations (timer) %.3f ms = %.1f Mcells/s; "
           "serial reference %.3f ms = %.1f Mcells/s\n",
           r->kernel_ms, iter_ms, iter_ms > 0 ? cells / iter_ms / 1e3 : 0.0, r->ref_ms,
           r->ref_ms > 0 ? cells / r->ref_ms / 1e3 : 0.0);
    if (r->bad)
        printf("stencil: %zu cells differ from the reference\n", r->bad);
    if (!changed_cells(r))
        printf("stencil: the iterations changed no cell: nothing was tested\n");
    if (r->status != DCUDA_OK)
        printf("stencil: run failed: %s (%s)\n", dcuda_status_string(r->status),
               dcuda_host_last_error(h));
}

/* Runs the ranks on the packed grid and checks their result. */
static int run_stencil(dcuda_host_h h, stencil_run_t *r)
{
    dcuda_rank_info_t info;
    dcuda_host_get_rank_info(h, &info);
    int end = info.rank_start + info.rank_responsible;
    r->doubles = stencil_offset(r->nx, r->ny, info.rank_count, info.rank_start, end);
    size_t bytes = r->doubles * sizeof(double), cells = (size_t)r->nx * r->ny;
    stencil_data_t user = { 0 };
    r->init = malloc(cells * sizeof(double));
    r->ref = malloc(cells * sizeof(double));
    r->block = malloc(bytes ? bytes : 1);
    if (!r->init || !r->ref || !r->block ||
        dcuda_host_alloc(h, bytes ? bytes : 1, (void **)&user.grid) != DCUDA_OK) {
        fprintf(stderr, "stencil: out of memory for a %dx%d grid\n", r->nx, r->ny);
        return 1;
    }
    init_grid(r);
    if (reference(r) != 0) {
        fprintf(stderr, "stencil: out of memory for the serial reference\n");
        dcuda_host_free(h, user.grid);
        return 1;
    }
    pack(r, &info);
    r->status = dcuda_host_copy_in(h, user.grid, r->block, bytes);
    user.nx = r->nx;
    user.ny = r->ny;
    user.iters = r->iters;
    if (r->status == DCUDA_OK)
        r->status = dcuda_host_run(h, &user, sizeof user, &r->kernel_ms);
    if (r->status == DCUDA_OK)
        r->status = dcuda_host_copy_out(h, r->block, user.grid, bytes);
    if (r->status == DCUDA_OK)
        compare(r, &info);
    int ok = r->status == DCUDA_OK && r->bad == 0 && changed_cells(r) > 0;
    if (ok && info.process_index != 0)
        demo_quiet = 1; /* process 0 speaks for the others unless they fail */
    else
        report(r, &info, h, ok);
    dcuda_host_free(h, user.grid);
    return ok ? 0 : 1;
}

int demo_stencil(int argc, char **argv)
{
    stencil_run_t r = { 0 };
    dcuda_host_h h;
    r.nx = 512;
    r.ny = 1024;
    r.iters = 200;
    if (parse_args(argc, argv, &r) != 0)
        return 1;
    if (dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(stencil), 128, &h) != DCUDA_OK)
        return 1;
    int rc = run_stencil(h, &r);
    dcuda_host_finish(h);
    free(r.init);
    free(r.ref);
    free(r.block);
    return rc;
}
