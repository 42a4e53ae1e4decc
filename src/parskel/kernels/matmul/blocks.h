/* Vector types and the block product shared by the blocked matmul kernels (seed 000 §3.4-3.5).
 * A block is WIDTH x WIDTH elements held as WIDTH row vectors of type VT. */
#ifndef PARSKEL_MATMUL_BLOCKS_H
#define PARSKEL_MATMUL_BLOCKS_H

#include "common/parskel.h"

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifndef WIDTH
#define WIDTH 4
#endif

/* two levels, so that T and WIDTH are expanded before pasting: float + 4 -> float4 */
#define PS_PASTE(a, b) a##b
#define PS_VECTOR(t, w) PS_PASTE(t, w)
#define VT PS_VECTOR(T, WIDTH)

/* Row vector v times the block m (m[0..WIDTH-1] are its rows): one row of a block product.
 * Spelled out per width because OpenCL C has no portable run-time component index. */
#if WIDTH == 2
#define PS_ROW_TIMES_BLOCK(v, m) ((v).s0 * (m)[0] + (v).s1 * (m)[1])
#elif WIDTH == 4
#define PS_ROW_TIMES_BLOCK(v, m) \
    ((v).s0 * (m)[0] + (v).s1 * (m)[1] + (v).s2 * (m)[2] + (v).s3 * (m)[3])
#elif WIDTH == 8
#define PS_ROW_TIMES_BLOCK(v, m) \
    ((v).s0 * (m)[0] + (v).s1 * (m)[1] + (v).s2 * (m)[2] + (v).s3 * (m)[3] + \
     (v).s4 * (m)[4] + (v).s5 * (m)[5] + (v).s6 * (m)[6] + (v).s7 * (m)[7])
#elif WIDTH == 16
#define PS_ROW_TIMES_BLOCK(v, m) \
    ((v).s0 * (m)[0] + (v).s1 * (m)[1] + (v).s2 * (m)[2] + (v).s3 * (m)[3] + \
     (v).s4 * (m)[4] + (v).s5 * (m)[5] + (v).s6 * (m)[6] + (v).s7 * (m)[7] + \
     (v).s8 * (m)[8] + (v).s9 * (m)[9] + (v).sa * (m)[10] + (v).sb * (m)[11] + \
     (v).sc * (m)[12] + (v).sd * (m)[13] + (v).se * (m)[14] + (v).sf * (m)[15])
#else
#error "WIDTH must be an OpenCL vector width: 2, 4, 8 or 16"
#endif

#endif
