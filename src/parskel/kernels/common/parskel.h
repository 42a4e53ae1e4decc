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

/* PS_TILE_LOCAL(type, name, count): a kernel's one large local array, declared where its other
 * local arrays are: __local type name[count]. CUDA gives a block at most 48 KB of such fixed
 * arrays; there a source built with PS_DYNAMIC_LOCAL=1 takes the array from dynamic shared
 * memory instead, which the host gives each launch of the kernel (Kernel.take_dynamic_local),
 * up to the device's opt-in limit (227 KB on Hopper). */
#if defined(PS_CUDA) && defined(PS_DYNAMIC_LOCAL) && PS_DYNAMIC_LOCAL
#define PS_TILE_LOCAL(type, name, count) \
    extern __shared__ __align__(16) unsigned char ps_dynamic_local[]; \
    type *name = (type *)ps_dynamic_local
#else
#define PS_TILE_LOCAL(type, name, count) __local type name[count]
#endif

/* PS_PREFETCH_WRITE(p): a hint that *p is written soon. A CPU compiler turns it into a
 * prefetch for writing, which keeps scattered stores from waiting for their cache lines;
 * elsewhere it is nothing. It never faults, so p may point past the end of a buffer. */
#if defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__))
#define PS_PREFETCH_WRITE(p) __builtin_prefetch((p), 1, 3)
#else
#define PS_PREFETCH_WRITE(p)
#endif

/* PS_INLINE: a helper function the compiler should inline (CUDA's __forceinline__). */
#ifndef PS_INLINE
#ifdef PS_CUDA
#define PS_INLINE __forceinline__
#else
#define PS_INLINE inline
#endif
#endif

#define PS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PS_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
