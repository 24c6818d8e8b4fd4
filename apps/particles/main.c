/*
 * The particle case study (thesis 5.4), dcuda variant: places the initial
 * particles (n per process, in segs segments of height 1 per process: weak
 * scaling) in the segments of their ranks (particles.h), runs the steps on
 * the ranks, runs the very same steps serially and checks every particle
 * bit for bit: each must be in the right segment, once. Prints the time
 * per step (the ranks' timer) and exits 0 only when all match.
 *
 * Options (besides the --dcuda-* settings), thesis sizes by default:
 *   --particles-n=410600 (per process) --particles-w=416
 *   --particles-segs=416 (per process) --particles-iters=100
 *   --particles-cap=C (particles a segment holds; default from the mean)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_skip.h"
#include "dcuda/dcuda_host.h"
#include "particles.h"
#include "particles_host.h"

DCUDA_KERNEL_DECLARE(particles);

/* Reads the --particles-* options (others are dcuda's); 0 if all are valid. */
static int parse(int argc, char **argv, pt_options_t *o)
{
    for (int i = 1; i < argc; i++)
        if (pt_option("particles", argv[i], o) < 0)
            return 1;
    return 0;
}

/* This process's ranks with segments: [lo, hi). */
typedef struct local {
    int lo, hi;
    char *host; /* a host copy of their parts */
} local_t;

static int is_local(const local_t *l, int r) { return r >= l->lo && r < l->hi; }

static char *part_of(const pt_data_t *d, const local_t *l, int r)
{
    return l->host + pt_rank_offset(d, r);
}

/* Appends p to the count at *n (particles from at); 0 if it fits. */
static int append(pt_particle_t *at, int64_t *n, int cap, pt_particle_t p)
{
    if (*n >= cap)
        return 1;
    at[(*n)++] = p;
    return 0;
}

/* Parity 0: every particle in its segment, and in the in-message of the
 * rank whose range ends next to its segment (the first halos). 0 if every
 * segment holds its particles. */
static int fill(const pt_data_t *d, const local_t *l, int64_t n)
{
    int over = 0;
    for (int64_t id = 0; id < n; id++) {
        pt_particle_t p = pt_initial(id, d->w, d->h);
        int s = pt_cell(p.y, d->h), r = pt_owner(d, s), first = pt_first_segment(d, r);
        int last = first + pt_segments(d, r) - 1;
        if (is_local(l, r)) {
            char *part = part_of(d, l, r);
            int segs = pt_segments(d, r);
            over |=
                append((pt_particle_t *)(part + pt_segment_at(segs, d->cap, 0, s - first)),
                       (int64_t *)(part + pt_counts_at(segs, d->cap, 0)) + (s - first), d->cap, p);
        }
        int next = s == last && r + 1 < d->active ? r + 1 : -1, prev = s == first ? r - 1 : -1;
        for (int k = 0; k < 2; k++) {
            int to = k ? prev : next, which = k ? PT_IN_RIGHT : PT_IN_LEFT;
            if (to < 0 || !is_local(l, to))
                continue;
            char *part = part_of(d, l, to);
            int segs = pt_segments(d, to);
            over |= append(pt_msg_particles(part, segs, d->cap, 0, which),
                           pt_msg_counts(part, segs, d->cap, 0, which), d->cap, p);
        }
    }
    return over;
}

/* Particles of this process that differ from the reference, are missing
 * or are there twice; *over: a segment overflowed during the run. */
static int64_t compare(const pt_data_t *d, const local_t *l, const pt_particle_t *ref, int64_t n,
                       int *over)
{
    unsigned char *seen = calloc((size_t)(n ? n : 1), 1);
    int64_t bad = 0, found = 0;
    if (!seen)
        return 1;
    for (int r = l->lo; r < l->hi; r++) {
        char *part = part_of(d, l, r);
        int segs = pt_segments(d, r), p = d->iters % 2;
        *over |= *(int64_t *)(part + pt_status_at(segs, d->cap)) != 0;
        for (int i = 0; i < segs; i++) {
            int64_t count = ((int64_t *)(part + pt_counts_at(segs, d->cap, p)))[i];
            const pt_particle_t *got =
                (const pt_particle_t *)(part + pt_segment_at(segs, d->cap, p, i));
            bad += pt_check_segment(ref, n, d->h, pt_first_segment(d, r) + i, got, count, seen);
            found += count;
        }
    }
    int64_t expected =
        pt_expected(ref, n, d->h, pt_first_segment(d, l->lo), pt_first_segment(d, l->hi));
    free(seen);
    return bad + (found > expected ? found - expected : expected - found);
}

/* Runs the case once; 0 when every particle of this process matches. */
static int run(dcuda_host_h h, const dcuda_rank_info_t *info, pt_data_t *d, int64_t n)
{
    local_t l = { info->rank_start, info->rank_start + info->rank_responsible, NULL };
    l.lo = l.lo < d->active ? l.lo : d->active;
    l.hi = l.hi < d->active ? l.hi : d->active;
    size_t bytes = pt_rank_offset(d, l.hi) - pt_rank_offset(d, l.lo);
    double ref_ms = 0, ms = 0;
    l.host = calloc(bytes ? bytes : 1, 1);
    pt_particle_t *ref = pt_reference(n, d->w, d->h, d->iters, &ref_ms);
    if (!l.host || !ref || dcuda_host_alloc(h, bytes ? bytes : 8, (void **)&d->mem)) {
        fprintf(stderr, "particles: out of memory\n");
        return 1;
    }
    int over = fill(d, &l, n);
    dcuda_status_t st = DCUDA_OK;
    if (over)
        fprintf(stderr,
                "particles: a segment holds more than %d particles at the start: raise "
                "--particles-cap\n",
                d->cap);
    else
        st = dcuda_host_copy_in(h, d->mem, l.host, bytes);
    if (!over && st == DCUDA_OK)
        st = dcuda_host_run(h, d, sizeof *d, &ms);
    if (!over && st == DCUDA_OK)
        st = dcuda_host_copy_out(h, l.host, d->mem, bytes);
    int64_t bad = !over && st == DCUDA_OK ? compare(d, &l, ref, n, &over) : 0;
    if (over)
        fprintf(stderr,
                "particles: a segment overflowed (more than %d particles): raise "
                "--particles-cap\n",
                d->cap);
    const double *timings = NULL;
    int count = 0;
    dcuda_host_get_timings(h, &timings, &count);
    double step_us = count > 0 ? timings[0] * 1e3 / d->iters : -1;
    printf("particles: dcuda, %d ranks (%d with segments; %s, %s), process %d of %d, %lld "
           "particles in %d x %d, %d steps: %.2f us per step (%.0f Mparticles/s), run %.3f ms; "
           "serial %.1f us per step; %s\n",
           info->rank_count, d->active, info->backend, info->device_name, info->process_index,
           info->process_count, (long long)n, d->w, d->h, d->iters, step_us,
           step_us > 0 ? (double)n / step_us : 0, ms, ref_ms * 1e3 / d->iters,
           st != DCUDA_OK ? dcuda_status_name(st)
           : bad || over  ? "MISMATCH"
                          : "MATCH");
    if (bad)
        printf("particles: %lld particles differ from the serial reference\n", (long long)bad);
    dcuda_host_free(h, d->mem);
    free(l.host);
    free(ref);
    return st != DCUDA_OK || bad || over;
}

int main(int argc, char **argv)
{
    pt_options_t o = PT_OPTIONS_DEFAULT;
    dcuda_host_h h;
    dcuda_rank_info_t info;
    if (parse(argc, argv, &o))
        return 2;
    if (app_backend_missing("particles"))
        return APP_SKIP;
    dcuda_status_t st = dcuda_host_init(argc, argv, DCUDA_KERNEL_REF(particles), PT_THREADS, &h);
    if (st != DCUDA_OK)
        return dcuda_host_exit_status(1);
    dcuda_host_get_rank_info(h, &info);
    int segs = o.segs * info.process_count;
    pt_data_t d = { NULL,           o.w,
                    segs,           pt_capacity(&o),
                    o.iters,        pt_active_ranks(segs, info.rank_count),
                    info.rank_start };
    int failed = run(h, &info, &d, (int64_t)o.n * info.process_count);
    dcuda_host_finish(h);
    return dcuda_host_exit_status(failed);
}
