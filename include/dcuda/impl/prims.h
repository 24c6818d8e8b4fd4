/*
 * The backend's primitives for the rank engine: the GPU's under nvcc, the
 * CPU's when compiled as C11 (inside libdcuda only).
 */
#ifndef DCUDA_IMPL_PRIMS_H
#define DCUDA_IMPL_PRIMS_H

#if defined(__CUDACC__)
#include "cuda/prims.cuh"
#else
#include "cpu/prims.h"
#endif

#endif /* DCUDA_IMPL_PRIMS_H */
