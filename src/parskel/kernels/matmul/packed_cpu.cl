/* Packed, register-blocked matrix product shaped for CPUs (beyond seed 000 chapter 3), as in
 * BLAS libraries: A and B are first copied into panels laid out in the order the product reads
 * them, then each work-group (of one work-item) computes one MR x NR tile of C = A B, row-major
 * m x k times k x n, in MR x NV vector registers of VW lanes (NR = NV * VW columns).
 *
 * Panels: ap holds A in row panels of MR rows, each k columns long, column by column
 * (ap[(p * k + kk) * MR + r] = A[p * MR + r][kk]); bp holds B in column panels of NR columns,
 * row by row (bp[(q * k + kk) * NR + j] = B[kk][q * NR + j]). Rows and columns past the
 * matrices are zeros, so the tile loop needs no test; only the store of an edge tile does.
 * Each step of the tile loop reads NV vectors of B and MR scalars of A, both contiguous, and
 * does MR * NV vector multiply-adds. */
#include "common/parskel.h"

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifndef MR
#define MR 6
#endif
#ifndef NV
#define NV 4
#endif
#ifndef VW
#define VW 16
#endif
#define NR (NV * VW)

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define TV CAT(T, VW)
#define VLOAD CAT(vload, VW)
#define VSTORE CAT(vstore, VW)

/* PACK_K columns of A (or rows of B) per work-item of the packing kernels */
#ifndef PACK_K
#define PACK_K 64
#endif

/* work-item (kb, p): columns kb * PACK_K ... of row panel p */
__kernel void pack_a(__global const T *a, __global T *ap, uint m, uint k)
{
    uint kk0 = get_global_id(0) * PACK_K;
    uint p = get_global_id(1);
    uint kk1 = PS_MIN(k, kk0 + PACK_K);
    for (uint r = 0; r < MR; ++r) {
        uint row = p * MR + r;
        __global T *to = ap + (size_t)p * k * MR + r;
        if (row < m) {
            __global const T *from = a + (size_t)row * k;
            for (uint kk = kk0; kk < kk1; ++kk)
                to[(size_t)kk * MR] = from[kk];
        } else {
            for (uint kk = kk0; kk < kk1; ++kk)
                to[(size_t)kk * MR] = (T)0;
        }
    }
}

/* work-item (kb, q): rows kb * PACK_K ... of column panel q */
__kernel void pack_b(__global const T *b, __global T *bp, uint n, uint k)
{
    uint kk0 = get_global_id(0) * PACK_K;
    uint q = get_global_id(1);
    uint kk1 = PS_MIN(k, kk0 + PACK_K);
    uint col = q * NR;
    for (uint kk = kk0; kk < kk1; ++kk) {
        __global const T *from = b + (size_t)kk * n + col;
        __global T *to = bp + ((size_t)q * k + kk) * NR;
        if (col + NR <= n) {
            for (uint v = 0; v < NV; ++v)
                VSTORE(VLOAD(v, from), v, to);
        } else {
            for (uint j = 0; j < NR; ++j)
                to[j] = col + j < n ? from[j] : (T)0;
        }
    }
}

/* Work-group t computes the tile of row panel t % panels_m and column panel t / panels_m:
 * work-groups that run one after another share a panel of B, which stays in the cache. */
__kernel void matmul_packed(__global const T *ap, __global const T *bp, __global T *c, uint m, uint n, uint k,
                            uint panels_m)
{
    uint t = get_group_id(0);
    uint p = t % panels_m;
    uint q = t / panels_m;
    __global const T *a = ap + (size_t)p * k * MR;
    __global const T *b = bp + (size_t)q * k * NR;
    TV acc[MR][NV];
#pragma unroll
    for (uint r = 0; r < MR; ++r)
#pragma unroll
        for (uint v = 0; v < NV; ++v)
            acc[r][v] = PS_VEC(TV, (T)0);
    for (uint kk = 0; kk < k; ++kk, a += MR, b += NR) {
        TV bv[NV];
#pragma unroll
        for (uint v = 0; v < NV; ++v)
            bv[v] = VLOAD(v, b);
#pragma unroll
        for (uint r = 0; r < MR; ++r) {
            T av = a[r];
#pragma unroll
            for (uint v = 0; v < NV; ++v)
                acc[r][v] += av * bv[v];
        }
    }
    uint row0 = p * MR;
    uint col0 = q * NR;
    bool full = col0 + NR <= n;
#pragma unroll
    for (uint r = 0; r < MR; ++r) {
        if (row0 + r >= m)
            break;
        __global T *to = c + (size_t)(row0 + r) * n + col0;
        if (full) {
#pragma unroll
            for (uint v = 0; v < NV; ++v)
                VSTORE(acc[r][v], v, to);
        } else {
            T part[NR];
#pragma unroll
            for (uint v = 0; v < NV; ++v)
                VSTORE(acc[r][v], v, part);
            for (uint j = 0; col0 + j < n; ++j)
                to[j] = part[j];
        }
    }
}
