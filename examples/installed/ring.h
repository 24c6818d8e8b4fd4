/* The README's example: shared by its host and rank code. */
#ifndef DCUDA_EXAMPLE_RING_H
#define DCUDA_EXAMPLE_RING_H
typedef struct ring {
    int *slots; /* one int per rank */
    int wrong;  /* set by a rank that saw a wrong value */
} ring_t;
#endif
