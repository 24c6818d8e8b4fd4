/*
 * What the host programs of the horizontal diffusion case study share
 * (hdiff_host.c), callable from C and CUDA C++ alike: their options and the
 * serial reference they are checked against.
 */
#ifndef DCUDA_APPS_HDIFF_HOST_H
#define DCUDA_APPS_HDIFF_HOST_H

#include "hdiff.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The options every variant takes (--hdiff-<name>=<int>, 1..HDIFF_MAX);
 * bands 0: the variant's default. */
#define HDIFF_MAX 100000
typedef struct hdiff_options {
    int nx, ny, nz, iters, bands;
} hdiff_options_t;
#define HDIFF_OPTIONS_DEFAULT                                                                      \
    {                                                                                              \
        128, 320, 26, 200, 0                                                                       \
    }

/* Reads arg into *o if it is one of those options: 1 if it was, 0 if it is
 * none of them, -1 (said on stderr, named after `program`) if its value is
 * bad. */
int hdiff_option(const char *program, const char *arg, hdiff_options_t *o);

/* Runs d->iters iterations on the whole grid of d (d->ny rows, d->nz
 * levels), with two rows of 0 beyond each end in y; returns the result
 * (level z at z * (ny + 4) * nx, rows with their halo rows), NULL when out
 * of memory; *ms gets the time of the iterations. Free with free(). */
double *hdiff_reference(const hdiff_data_t *d, double *ms);

#ifdef __cplusplus
}
#endif

#endif /* DCUDA_APPS_HDIFF_HOST_H */
