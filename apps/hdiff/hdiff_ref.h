/*
 * The serial reference of the horizontal diffusion case study (hdiff_ref.c),
 * callable from C and CUDA C++ alike.
 */
#ifndef DCUDA_APPS_HDIFF_REF_H
#define DCUDA_APPS_HDIFF_REF_H

#include "hdiff.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs d->iters iterations on the whole grid of d (d->ny rows, d->nz
 * levels), with two rows of 0 beyond each end in y; returns the result
 * (level z at z * (ny + 4) * nx, rows with their halo rows), NULL when out
 * of memory; *ms gets the time of the iterations. Free with free(). */
double *hdiff_reference(const hdiff_data_t *d, double *ms);

#ifdef __cplusplus
}
#endif

#endif /* DCUDA_APPS_HDIFF_REF_H */
