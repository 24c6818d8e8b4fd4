/*
 * What the host programs of the horizontal diffusion case study share (the
 * dcuda variants and the bulk-synchronous baseline): their options, and the
 * serial reference, the same hdiff_point over the whole grid, level by
 * level.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app_options.h"
#include "hdiff_host.h"

int hdiff_option(const char *program, const char *arg, hdiff_options_t *o)
{
    static const char *const names[] = { "--hdiff-nx=", "--hdiff-ny=", "--hdiff-nz=",
                                         "--hdiff-iters=", "--hdiff-bands=" };
    int *const fields[] = { &o->nx, &o->ny, &o->nz, &o->iters, &o->bands };
    return app_int_option(program, names, fields, 5, HDIFF_MAX, arg);
}

/* The serial reference: every level of the whole grid, with two rows of 0
 * beyond each end in y; the result of level z is at ref + z * (ny + 4) * nx. */
double *hdiff_reference(const hdiff_data_t *d, double *ms)
{
    size_t nx = (size_t)d->nx, rows = (size_t)d->ny + 2 * HDIFF_HALO, level = rows * nx;
    double *a = calloc(2 * level * (size_t)d->nz, sizeof(double));
    if (!a)
        return NULL;
    double *b = a + level * (size_t)d->nz;
    for (int z = 0; z < d->nz; z++)
        for (int y = 0; y < d->ny; y++)
            for (int x = 0; x < d->nx; x++)
                a[z * level + (size_t)(y + HDIFF_HALO) * nx + (size_t)x] = hdiff_initial(z, y, x);
    struct timespec t0, t1;
    timespec_get(&t0, TIME_UTC);
    for (int k = 0; k < d->iters; k++) {
        const double *old = k % 2 ? b : a;
        double *next = k % 2 ? a : b;
        for (int z = 0; z < d->nz; z++)
            for (int y = 0; y < d->ny; y++)
                for (int x = 0; x < d->nx; x++)
                    next[z * level + (size_t)(y + HDIFF_HALO) * nx + (size_t)x] =
                        hdiff_point(old + z * level, d->nx, x, y + HDIFF_HALO);
    }
    timespec_get(&t1, TIME_UTC);
    *ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (d->iters % 2)
        memmove(a, b, level * (size_t)d->nz * sizeof(double));
    return a;
}
