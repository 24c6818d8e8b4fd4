/*
 * The thesis' distributed reduction (Listings 3.1 and 3.2): shared between
 * the host side and the rank code of the demo.
 */
#ifndef DCUDA_DEMO_REDUCE_H
#define DCUDA_DEMO_REDUCE_H

/* Values each rank owns (independent of threads per rank). */
#define REDUCE_VALUES_PER_RANK 128

typedef struct reduce_data {
    double *
        data; /* [device ranks * REDUCE_VALUES_PER_RANK] values, then [WORLD ranks] receive slots */
    double *buffer; /* = data + device ranks * REDUCE_VALUES_PER_RANK */
    double result;  /* written by rank 0 */
} reduce_data_t;

#endif
