/*
 * What the host programs of the particle case study share
 * (particles_host.c), callable from C and CUDA C++ alike: their options,
 * the initial particles, the serial reference and the check against it.
 */
#ifndef DCUDA_APPS_PARTICLES_HOST_H
#define DCUDA_APPS_PARTICLES_HOST_H

#include "particles.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The options every variant takes (--particles-<name>=<int>); n and segs
 * are per process (weak scaling: the domain grows in y); cap 0: the
 * default for the mean particles per segment (pt_default_cap). */
#define PT_MAX 100000000
typedef struct pt_options {
    int n, w, segs, iters, cap;
} pt_options_t;
#define PT_OPTIONS_DEFAULT                                                                         \
    {                                                                                              \
        410600, 416, 416, 100, 0                                                                   \
    }

/* Reads arg into *o if it is one of those options: 1 if it was, 0 if it is
 * none of them, -1 (said on stderr, named after `program`) if its value is
 * bad. */
int pt_option(const char *program, const char *arg, pt_options_t *o);

/* The segment capacity: asked for, or the default for the mean
 * particles per segment. */
int pt_capacity(const pt_options_t *o);

/* Runs iters steps of n particles in a w x h domain serially, with cells
 * of 1 x 1 (no segments); returns the particles indexed by id, NULL when
 * out of memory; *ms gets the time of the steps. Free with free(). */
pt_particle_t *pt_reference(int64_t n, int w, int h, int iters, double *ms);

/* Particles of ref (n of them) that lie in segments [lo, hi). */
int64_t pt_expected(const pt_particle_t *ref, int64_t n, int h, int lo, int hi);

/* Checks the count particles a variant holds in segment s against ref:
 * each must be a known id seen once (seen: n flags, 0 before the first
 * call), bit for bit equal to the reference, in segment s. Returns how
 * many are not. */
int64_t pt_check_segment(const pt_particle_t *ref, int64_t n, int h, int s,
                         const pt_particle_t *got, int64_t count, unsigned char *seen);

#ifdef __cplusplus
}
#endif

#endif /* DCUDA_APPS_PARTICLES_HOST_H */
