/*
 * The tutorial's 1D heat diffusion (docs/tutorial.md): what its host side
 * and its rank code share. The line of cells is cut into equal pieces, one
 * per WORLD rank; a fixed boundary value lies beyond each end.
 *
 * Every rank keeps its piece in a slab of doubles (memory from
 * dcuda_host_alloc; the slabs of one process lie one after the other, in
 * rank order):
 *
 *   [halo slot 0: left, right] [halo slot 1: left, right] [cells: copy 0] [cells: copy 1]
 *
 * A halo holds a neighbour's edge cell (or the boundary value); the two
 * copies of the cells are the old and the new values of a Jacobi step.
 *
 * After the steps every rank learns the hottest cell of the whole line
 * with dcuda_allreduce, in a peak area of its own (HALO_PEAK_DOUBLES
 * doubles a rank, the first the value, the rest the call's scratch).
 */
#ifndef DCUDA_TUTORIAL_HALO_H
#define DCUDA_TUTORIAL_HALO_H

#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define HALO_FN static inline __host__ __device__
#else
#define HALO_FN static inline
#endif

/* How a rank keeps a neighbour from overwriting a halo it still reads. */
#define HALO_SCHEME_PARITY 0 /* two halo slots, alternating by iteration */
#define HALO_SCHEME_ACK 1    /* one halo slot, and a "halo free" notification */

/* The deliberate mistakes of the tutorial's step 6 (rank 0 makes them). */
#define HALO_MISTAKE_NONE 0
#define HALO_MISTAKE_SOURCE 1 /* a put from a local variable, outside every window */
#define HALO_MISTAKE_TAG 2    /* a halo sent with the wrong tag */

/* Step 7: the ranks tell their host that their cells of a watched step
 * are ready (a notification to the host, dcuda_notify_host), and the host
 * tells each rank when it has read them (a notification from the host,
 * dcuda_host_notify; a tag the halo exchange does not use). */
#define HALO_TAG_CELLS_READY 0
#define HALO_TAG_HOST_READ 4

/* The two sides of a halo slot. */
#define HALO_LEFT 0
#define HALO_RIGHT 1

/* The fixed values beyond the ends of the line. */
#define HALO_BOUNDARY_LEFT 100.0
#define HALO_BOUNDARY_RIGHT -40.0

/* Doubles of a rank's peak area: room for dcuda_allreduce of one double
 * on up to 2^31 ranks (dcuda_allreduce_room). */
#define HALO_PEAK_DOUBLES 32

/* User struct of the kernel. */
typedef struct halo_data {
    double *slabs;    /* this process's slabs, see above */
    double *peaks;    /* this process's peak areas, one after the other */
    int cells;        /* cells per rank */
    int iters;        /* Jacobi steps; the result is in copy iters % 2 */
    int scheme;       /* HALO_SCHEME_* */
    int mistake;      /* HALO_MISTAKE_* */
    int watch;        /* step 7: the host reads the cells every `watch` steps (0: never) */
    int64_t *handles; /* step 7: each rank's window handle, for the host (one a rank) */
} halo_data_t;

/* Doubles in one slab. */
HALO_FN size_t halo_slab_doubles(int cells) { return 4 + 2 * (size_t)cells; }

/* Index in a slab of halo `side` of `slot`. */
HALO_FN size_t halo_index(int slot, int side) { return 2 * (size_t)slot + (size_t)side; }

/* Index in a slab of the first cell of `copy`. */
HALO_FN size_t halo_cells_index(int cells, int copy) { return 4 + (size_t)copy * (size_t)cells; }

/* Initial value of the cell with global index g: in [0, 100), far from
 * smooth, so every step changes every cell, edge cells included. */
HALO_FN double halo_initial(size_t g)
{
    uint32_t h = (uint32_t)g * 2654435761u;
    return (double)((h >> 8) % 1000u) / 10.0;
}

/* One Jacobi step of the heat equation (diffusion number 1/4) for a cell
 * and its two neighbours. Written without a multiply-add that a compiler
 * could fuse, so C and CUDA round it alike and results compare bit for
 * bit. */
HALO_FN double halo_update(double left, double mid, double right)
{
    return 0.25 * ((left + right) + (mid + mid));
}

#endif /* DCUDA_TUTORIAL_HALO_H */
