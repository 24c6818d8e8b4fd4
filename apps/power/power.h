/*
 * Power iteration (thesis 5.7, the power iteration case study): what the
 * rank code, the hosts and the serial reference share, on top of SpMV's
 * grid, blocks and row loop (../spmv/spmv.h).
 *
 *   b_k = y_k / ||y_k||,  y_{k+1} = A b_k,  fac_k = 1 / ||y_k||
 *
 * y_0 is the starting vector. Each iteration multiplies x = fac_k * A y_k
 * (the normalisation folded into the multiplication: the same product,
 * with no pass of its own over the vector), and x becomes y_{k+1}. After K
 * iterations b_K = fac_K * y_K estimates the dominant eigenvector and
 * 1 / fac_K = ||A b_{K-1}|| the dominant eigenvalue.
 *
 * Matrix and vector: SpMV's pattern with the absolute values (1..4), and
 * y_0 = |SpMV's b| + 1 (1..9): a positive matrix has one simple eigenvalue
 * of largest modulus (Perron-Frobenius) and a positive starting vector has
 * a component along its eigenvector, so the iteration converges.
 *
 * Grid and work are SpMV's (spmv.h): device (i, j) owns block A_ij; rank l
 * of every device owns the same part of its rows and of its vectors. The
 * first grid row holds y (its part y_j), the first grid column ends each
 * iteration with x_i.
 */
#ifndef DCUDA_APPS_POWER_H
#define DCUDA_APPS_POWER_H

#include "spmv.h"

/* Element c of the starting vector y_0. */
SPMV_FN double power_initial_y(int c)
{
    double b = spmv_initial_b(c);
    return (b < 0 ? -b : b) + 1.0;
}

/* Value of nonzero e of row `row` of block (i, j). */
SPMV_FN double power_entry_val(int i, int j, int row, int e)
{
    double v = spmv_entry_val(i, j, row, e);
    return v < 0 ? -v : v;
}

/*
 * The window of a device, in doubles (every rank of the device exposes all
 * of it). Everything a later iteration writes while others may still read
 * the last one's is kept twice, by parity (k % 2):
 *   y[2]        n each: the vector multiplied (y_k at parity k % 2)
 *   x[2]        n each: x = fac * A y, summed along the row
 *   recv[steps] n each: partial sums received at each step of the row
 *   partial[2]  `ranks` each: the ranks' sums of squares of x (first column)
 *   devsum[2]   q each: the first column devices' sums of squares, by grid row
 *   fac[2]      1 each
 *   norm2[3]    SPMV_SCALE_PARTS each, one device only: the sum of the
 *               squares of x_k in parts, added to by every rank (slot
 *               k % 3; power_kernel.c says why three suffice); slot 2
 *               holds ||y_0||^2 (in its part 0) at the start
 */
SPMV_FN size_t power_at_y(int n, int parity) { return (size_t)parity * (size_t)n; }
SPMV_FN size_t power_at_x(int n, int parity) { return (size_t)(2 + parity) * (size_t)n; }
SPMV_FN size_t power_at_recv(int n) { return 4 * (size_t)n; }
SPMV_FN size_t power_at_partial(int n, int q, int ranks, int parity)
{
    return (size_t)(4 + spmv_steps(q)) * (size_t)n + (size_t)parity * (size_t)ranks;
}
SPMV_FN size_t power_at_devsum(int n, int q, int ranks, int parity)
{
    return power_at_partial(n, q, ranks, 2) + (size_t)parity * (size_t)q;
}
SPMV_FN size_t power_at_fac(int n, int q, int ranks, int parity)
{
    return power_at_devsum(n, q, ranks, 2) + (size_t)parity;
}
SPMV_FN size_t power_at_norm2(int n, int q, int ranks, int slot)
{
    return power_at_fac(n, q, ranks, 2) + (size_t)slot * SPMV_SCALE_PARTS;
}
SPMV_FN size_t power_window_doubles(int n, int q, int ranks)
{
    return power_at_norm2(n, q, ranks, 3);
}

#endif /* DCUDA_APPS_POWER_H */
