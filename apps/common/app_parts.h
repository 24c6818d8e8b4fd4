/*
 * What the case studies' rank code, hosts and references share for cutting
 * work: n items cut into `parts` ranges as even as possible (the first
 * n % parts ranges one longer). Callable on the host and on a GPU.
 */
#ifndef DCUDA_APPS_APP_PARTS_H
#define DCUDA_APPS_APP_PARTS_H

#if defined(__CUDACC__)
#define APP_PARTS_FN static inline __host__ __device__
#else
#define APP_PARTS_FN static inline
#endif

/* The first item of range p (p = parts: n, the end of the last range). */
APP_PARTS_FN int app_part_first(int n, int parts, int p)
{
    int q = n / parts, m = n % parts;
    return p * q + (p < m ? p : m);
}

#endif /* DCUDA_APPS_APP_PARTS_H */
