/*
 * What the host programs of the particle case study share (the dcuda
 * variant and the bulk-synchronous baseline): their options, the serial
 * reference and the check against it. The reference knows nothing of
 * segments or ranks: it bins the particles into cells of 1 x 1 every step
 * and sums each particle's forces over the 3 x 3 cells around it, with
 * the same pt_step; fixed-point force sums make its results bit for bit
 * those of every other order. The particles of a step are shared among
 * the host's cores (each particle's new state depends on the old states
 * alone, so any split gives the same bits).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_options.h"
#include "particles_host.h"

int pt_option(const char *program, const char *arg, pt_options_t *o)
{
    static const char *const names[] = { "--particles-n=", "--particles-w=", "--particles-segs=",
                                         "--particles-iters=", "--particles-cap=" };
    int *const fields[] = { &o->n, &o->w, &o->segs, &o->iters, &o->cap };
    return app_int_option(program, names, fields, 5, PT_MAX, arg);
}

int pt_capacity(const pt_options_t *o)
{
    return o->cap ? o->cap : pt_default_cap((double)o->n / o->segs);
}

/* Sorts a into `sorted` by cell (cell c's particles from start[c]). */
static void bin(const pt_particle_t *a, int64_t n, int w, int h, pt_particle_t *sorted,
                int64_t *start, int64_t *cursor)
{
    size_t cells = (size_t)w * (size_t)h;
    memset(start, 0, (cells + 1) * sizeof *start);
    for (int64_t i = 0; i < n; i++)
        start[(size_t)pt_cell(a[i].y, h) * (size_t)w + (size_t)pt_cell(a[i].x, w) + 1]++;
    for (size_t c = 0; c < cells; c++)
        start[c + 1] += start[c];
    memcpy(cursor, start, cells * sizeof *cursor);
    for (int64_t i = 0; i < n; i++)
        sorted[cursor[(size_t)pt_cell(a[i].y, h) * (size_t)w + (size_t)pt_cell(a[i].x, w)]++] =
            a[i];
}

/* Particle a after a step, from the 3 x 3 cells around its own. */
static pt_particle_t step_one(const pt_particle_t *a, int w, int h, const pt_particle_t *sorted,
                              const int64_t *start)
{
    pt_span_t s[9];
    int count = 0, cx = pt_cell(a->x, w), cy = pt_cell(a->y, h);
    for (int y = cy - 1; y <= cy + 1; y++)
        for (int x = cx - 1; x <= cx + 1; x++) {
            if (y < 0 || y >= h || x < 0 || x >= w)
                continue;
            size_t c = (size_t)y * (size_t)w + (size_t)x;
            s[count].p = sorted + start[c];
            s[count++].n = start[c + 1] - start[c];
        }
    return pt_step(a, s, count, w, h);
}

/* One thread's share of a step: particles [lo, hi) of the sorted ones. */
typedef struct share {
    const pt_particle_t *sorted;
    const int64_t *start;
    pt_particle_t *next;
    int64_t lo, hi;
    int w, h;
} share_t;

static void *step_share(void *arg)
{
    const share_t *s = arg;
    for (int64_t i = s->lo; i < s->hi; i++)
        s->next[i] = step_one(&s->sorted[i], s->w, s->h, s->sorted, s->start);
    return NULL;
}

/* The new state of every sorted particle, into next, on up to 16 cores. */
static void step_all(const pt_particle_t *sorted, const int64_t *start, pt_particle_t *next,
                     int64_t n, int w, int h)
{
    enum { MAX_THREADS = 16 };
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int)cores;
    if (n < 4096)
        threads = 1;
    pthread_t tid[MAX_THREADS];
    share_t shares[MAX_THREADS];
    int started = 0;
    for (int t = 0; t < threads; t++) {
        share_t s = { sorted, start, next, n * t / threads, n * (t + 1) / threads, w, h };
        shares[t] = s;
        if (t > 0 && pthread_create(&tid[t], NULL, step_share, &shares[t]) == 0)
            started |= 1 << t;
        else if (t > 0)
            step_share(&shares[t]); /* no thread: this one does it */
    }
    step_share(&shares[0]);
    for (int t = 1; t < threads; t++)
        if (started & (1 << t))
            pthread_join(tid[t], NULL);
}

pt_particle_t *pt_reference(int64_t n, int w, int h, int iters, double *ms)
{
    size_t cells = (size_t)w * (size_t)h, bytes = (size_t)(n ? n : 1) * sizeof(pt_particle_t);
    pt_particle_t *a = malloc(bytes), *b = malloc(bytes), *sorted = malloc(bytes);
    int64_t *start = malloc((cells + 1) * sizeof *start), *cursor = malloc(cells * sizeof *cursor);
    if (!a || !b || !sorted || !start || !cursor) {
        free(a), free(b), free(sorted), free(start), free(cursor);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        a[i] = pt_initial(i, w, h);
    struct timespec t0, t1;
    timespec_get(&t0, TIME_UTC);
    for (int k = 0; k < iters; k++) {
        /* In cell order, kept from step to step: the cells around a
         * particle stay in cache, and binning moves little. */
        bin(a, n, w, h, sorted, start, cursor);
        step_all(sorted, start, b, n, w, h);
        pt_particle_t *t = a;
        a = b, b = t;
    }
    timespec_get(&t1, TIME_UTC);
    *ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    for (int64_t i = 0; i < n; i++)
        b[a[i].id] = a[i];
    free(a), free(sorted), free(start), free(cursor);
    return b;
}

int64_t pt_expected(const pt_particle_t *ref, int64_t n, int h, int lo, int hi)
{
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
        int s = pt_cell(ref[i].y, h);
        count += s >= lo && s < hi;
    }
    return count;
}

int64_t pt_check_segment(const pt_particle_t *ref, int64_t n, int h, int s,
                         const pt_particle_t *got, int64_t count, unsigned char *seen)
{
    int64_t bad = 0;
    for (int64_t j = 0; j < count; j++) {
        int64_t id = got[j].id;
        if (id < 0 || id >= n || seen[id]) {
            bad++;
            continue;
        }
        seen[id] = 1;
        const pt_particle_t *r = &ref[id];
        bad += memcmp(&got[j].x, &r->x, 4 * sizeof(double)) != 0 || pt_cell(r->y, h) != s;
    }
    return bad;
}
