/*
 * Particles (thesis 5.4, the particle case study): what the rank code, the
 * baseline's kernels, the hosts and the serial reference share. Defined
 * here once, so that every variant moves every particle with the same
 * operations.
 *
 * Domain: [0, w] in x by [0, h] in y, cut into h segments of height 1 along
 * y (the cutoff is 1, so a particle's forces come from its own segment and
 * the two next to it). Walls reflect in x and y. Each step:
 *   force on i = sum over j != i with r^2 < 1 of (1 - r^2)^2 (p_i - p_j)
 *   v += force * dt, each component clamped to +-PT_VMAX;  p += v * dt
 * (a soft repulsion, no square root). |v| dt <= 0.5, so a particle moves
 * at most to the next segment in a step.
 *
 * Every variant gets the same bits: each pair's force is computed with
 * operations that are never fused (pt_mul/pt_add: a GPU would otherwise
 * contract them into fused multiply-adds), and forces are summed in 64-bit
 * fixed point (2^-32), whose sums do not depend on their order. So the
 * order of particles in a segment (which differs between variants) does
 * not change a single bit of any result.
 *
 * Particles start uniform at random (a fixed hash of their id), velocities
 * uniform in [-1, 1]. A segment holds at most `cap` particles.
 */
#ifndef DCUDA_APPS_PARTICLES_H
#define DCUDA_APPS_PARTICLES_H

#include <stddef.h>
#include <stdint.h>

#include "app_hash.h"
#include "app_parts.h"

#if defined(__CUDACC__)
#define PT_FN static inline __host__ __device__
#else
#define PT_FN static inline
#endif

#define PT_DT 0.05
#define PT_VMAX 10.0          /* PT_VMAX * PT_DT = 0.5 */
#define PT_FIXED 4294967296.0 /* 2^32: the fixed point of force sums */
#define PT_THREADS 128        /* threads of a GPU rank or baseline block */

typedef struct pt_particle {
    double x, y, vx, vy;
    int64_t id;
} pt_particle_t;

/* A segment's or message's particles: n of them from p. */
typedef struct pt_span {
    const pt_particle_t *p;
    int64_t n;
} pt_span_t;

/* Operations a compiler may not fuse (a GPU's __dmul_rn and __dadd_rn
 * never are; C11 host code is not contracted on the targets we build). */
#if defined(__CUDA_ARCH__)
#define pt_mul(a, b) __dmul_rn((a), (b))
#define pt_add(a, b) __dadd_rn((a), (b))
#define pt_sub(a, b) __dsub_rn((a), (b))
#else
#define pt_mul(a, b) ((a) * (b))
#define pt_add(a, b) ((a) + (b))
#define pt_sub(a, b) ((a) - (b))
#endif

/* A value in [0, 1) from (id, salt): a fixed hash. */
PT_FN double pt_hash01(int64_t id, int salt)
{
    return app_hash01((uint64_t)id * 0x9e3779b97f4a7c15ull +
                      (uint64_t)salt * 0xd1b54a32d192ed03ull);
}

/* Particle id's initial state in a w x h domain. */
PT_FN pt_particle_t pt_initial(int64_t id, int w, int h)
{
    pt_particle_t p;
    p.x = pt_hash01(id, 0) * w;
    p.y = pt_hash01(id, 1) * h;
    p.vx = 2.0 * pt_hash01(id, 2) - 1.0;
    p.vy = 2.0 * pt_hash01(id, 3) - 1.0;
    p.id = id;
    return p;
}

/* The segment (or, in x, the cell) of a coordinate in [0, extent]. */
PT_FN int pt_cell(double c, int extent)
{
    int s = (int)c;
    return s < extent ? s : extent - 1;
}

/* Adds the force of every particle of s on a (but a itself), in fixed point. */
PT_FN void pt_force_add(const pt_particle_t *a, pt_span_t s, int64_t *fx, int64_t *fy)
{
    double x = a->x, y = a->y;
    int64_t id = a->id, sx = *fx, sy = *fy; /* in registers, not through the pointers */
    for (int64_t j = 0; j < s.n; j++) {
        double dx = pt_sub(x, s.p[j].x), dy = pt_sub(y, s.p[j].y);
        double r2 = pt_add(pt_mul(dx, dx), pt_mul(dy, dy));
        if (r2 < 1.0 && s.p[j].id != id) {
            double w = pt_sub(1.0, r2), f = pt_mul(w, w);
            sx += (int64_t)pt_mul(pt_mul(f, dx), PT_FIXED);
            sy += (int64_t)pt_mul(pt_mul(f, dy), PT_FIXED);
        }
    }
    *fx = sx, *fy = sy;
}

PT_FN double pt_clamp(double v) { return v > PT_VMAX ? PT_VMAX : v < -PT_VMAX ? -PT_VMAX : v; }

/* One coordinate and its velocity after a step, reflected at 0 and extent. */
PT_FN void pt_move(double *c, double *v, int64_t force, int extent)
{
    *v = pt_clamp(pt_add(*v, pt_mul((double)force / PT_FIXED, PT_DT)));
    *c = pt_add(*c, pt_mul(*v, PT_DT));
    if (*c < 0.0) {
        *c = -*c;
        *v = -*v;
    } else if (*c > (double)extent) {
        *c = pt_sub(2.0 * extent, *c);
        *v = -*v;
    }
}

/* Particle a after one step, under the force of the particles of `spans`
 * (its own segment's and the neighbours'). */
PT_FN pt_particle_t pt_step(const pt_particle_t *a, const pt_span_t *spans, int count, int w, int h)
{
    int64_t fx = 0, fy = 0;
    for (int i = 0; i < count; i++)
        pt_force_add(a, spans[i], &fx, &fy);
    pt_particle_t b = *a;
    pt_move(&b.x, &b.vx, fx, w);
    pt_move(&b.y, &b.vy, fy, h);
    return b;
}

/* The default capacity of a segment holding `mean` particles on average:
 * far above what a uniform start and a repulsive force produce. */
PT_FN int pt_default_cap(double mean)
{
    int s = 1;
    while ((double)s * s < mean)
        s++;
    return (int)mean + 8 * s + 16;
}

/* ---- the dcuda variant's ranks and memory ------------------------------------------
 *
 * Segments are cut into `active` ranges of at least 2 (as even as
 * possible); WORLD rank r < active owns range r, higher ranks idle. A rank
 * with a range has a part of memory (its window), twice (by parity p):
 *   counts[n]          particles in each of its n segments
 *   segs[n][cap]       their particles, in any order
 *   msg[4]             out[0] to the left neighbour, out[1] to the right,
 *                      in[0] from the left, in[1] from the right
 * then one segment of scratch (the new states of the segment being moved)
 * and a status word (nonzero: a segment overflowed). A message is two
 * counts (nb, nd) and 2 cap slots: the sender's boundary segment from slot
 * 0 and the particles moving into the receiver's segment from slot cap. */

/* User struct of the kernel. */
typedef struct pt_data {
    char *mem;  /* the parts of this process's ranks, back to back */
    int w, h;   /* the domain: h segments over all processes */
    int cap;    /* particles a segment holds at most */
    int iters;  /* the result is in parity iters % 2 */
    int active; /* ranks with segments */
    int first;  /* WORLD rank of the process's first rank */
} pt_data_t;

#define PT_OUT_LEFT 0
#define PT_OUT_RIGHT 1
#define PT_IN_LEFT 2
#define PT_IN_RIGHT 3

/* Ranks that get segments: at least 2 segments each, at most `world`. */
PT_FN int pt_active_ranks(int h, int world)
{
    int a = h / 2 < world ? h / 2 : world;
    return a > 0 ? a : 1;
}

PT_FN int pt_first_segment(const pt_data_t *d, int rank)
{
    return app_part_first(d->h, d->active, rank < d->active ? rank : d->active);
}

PT_FN int pt_segments(const pt_data_t *d, int rank)
{
    return rank < d->active ? pt_first_segment(d, rank + 1) - pt_first_segment(d, rank) : 0;
}

/* The rank owning segment s. */
PT_FN int pt_owner(const pt_data_t *d, int s)
{
    int r = (int)((int64_t)s * d->active / d->h);
    while (r > 0 && pt_first_segment(d, r) > s)
        r--;
    while (r + 1 < d->active && pt_first_segment(d, r + 1) <= s)
        r++;
    return r;
}

PT_FN size_t pt_msg_bytes(int cap)
{
    return 2 * sizeof(int64_t) + 2 * (size_t)cap * sizeof(pt_particle_t);
}

/* Bytes of one parity of a part of n segments. */
PT_FN size_t pt_parity_bytes(int n, int cap)
{
    return (size_t)n * sizeof(int64_t) + (size_t)n * (size_t)cap * sizeof(pt_particle_t) +
           4 * pt_msg_bytes(cap);
}

PT_FN size_t pt_part_bytes(int n, int cap)
{
    return n ? 2 * pt_parity_bytes(n, cap) + (size_t)cap * sizeof(pt_particle_t) + sizeof(int64_t)
             : 0;
}

/* Where rank's part starts, from the start of its process's memory. */
PT_FN size_t pt_rank_offset(const pt_data_t *d, int rank)
{
    size_t at = 0;
    for (int r = d->first; r < rank; r++)
        at += pt_part_bytes(pt_segments(d, r), d->cap);
    return at;
}

/* Offsets inside a part of n segments. */
PT_FN size_t pt_counts_at(int n, int cap, int p) { return (size_t)p * pt_parity_bytes(n, cap); }

PT_FN size_t pt_segment_at(int n, int cap, int p, int i)
{
    return pt_counts_at(n, cap, p) + (size_t)n * sizeof(int64_t) +
           (size_t)i * (size_t)cap * sizeof(pt_particle_t);
}

PT_FN size_t pt_msg_at(int n, int cap, int p, int which)
{
    return pt_segment_at(n, cap, p, n) + (size_t)which * pt_msg_bytes(cap);
}

PT_FN size_t pt_scratch_at(int n, int cap) { return 2 * pt_parity_bytes(n, cap); }

PT_FN size_t pt_status_at(int n, int cap)
{
    return pt_scratch_at(n, cap) + (size_t)cap * sizeof(pt_particle_t);
}

/* A message's particles (its counts are the two words before them). */
PT_FN pt_particle_t *pt_msg_particles(char *part, int n, int cap, int p, int which)
{
    return (pt_particle_t *)(part + pt_msg_at(n, cap, p, which) + 2 * sizeof(int64_t));
}

PT_FN int64_t *pt_msg_counts(char *part, int n, int cap, int p, int which)
{
    return (int64_t *)(part + pt_msg_at(n, cap, p, which));
}

#endif /* DCUDA_APPS_PARTICLES_H */
