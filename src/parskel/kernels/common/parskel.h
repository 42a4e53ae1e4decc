/* Helpers shared by every parskel kernel. Kernels are written in a portable subset of OpenCL C
 * that the CUDA backend compiles through common/cuda.h. Where OpenCL syntax has no macro
 * equivalent in CUDA C++, kernels use these spellings:
 *
 *   PS_VEC(float4, a, b, c, d)  a vector literal, (float4)(a, b, c, d); PS_VEC(float4, 0)
 *                               sets every lane, and vectors may be joined: PS_VEC(uint8, lo, hi)
 *   PS_LOCAL_PARAM T *p         a helper function's parameter that points into local memory
 *
 * and local memory is declared inside a kernel (__local T s[SIZE]) with a size fixed at build
 * time, never passed as a __local pointer argument. */
#ifndef PARSKEL_COMMON_H
#define PARSKEL_COMMON_H

/* Element type of a kernel generated per dtype; the host passes -DT=<C type>. */
#ifndef T
#define T float
#endif

#ifndef PS_CUDA
#define PS_VEC(type, ...) ((type)(__VA_ARGS__))
#define PS_LOCAL_PARAM __local
#endif

#define PS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PS_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
