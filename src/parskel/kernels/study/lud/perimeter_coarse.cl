/* Blocked LU, step 2, coarsened: the granularity and vectorization variants of the perimeter
 * kernel (seed 002 §6.1.1.3, 1a and 2).
 *
 * A work-group has 2 BS / COARSEN work-items; each solves COARSEN adjacent columns of the row
 * block, or COARSEN adjacent rows of the column block. The column block is kept transposed in
 * local memory (colT[i][r] holds row r, column i), so that a work-item's rows lie side by side
 * just like its columns of the row block, and both solves have the same shape.
 *
 * VECTOR 1 holds a work-item's COARSEN values as one floatCOARSEN vector (COARSEN 2, 4, 8 or
 * 16): the granularity variant with vector types on top.
 *
 * UNROLL (1, 2, 4 or 8) unrolls the loop over earlier rows, whose length varies from row to row,
 * by the preprocessor (study/repeat.h), the rest of each row's steps one by one: with BS and
 * COARSEN, the variant that combines the seed's optimizations of this kernel. */
#include "common/parskel.h"
#include "study/repeat.h"

#ifndef BS
#define BS 16
#endif
#ifndef COARSEN
#define COARSEN 2
#endif
#ifndef VECTOR
#define VECTOR 0
#endif

#ifndef UNROLL
#define UNROLL 1
#endif

#define ITEMS (BS / COARSEN) /* work-items per strip */

/* STEP(_, j) for j = 0 .. count - 1: UNROLL at a time, then the rest one by one */
#if UNROLL > 1
#define STEPS(STEP, count)                                                                    \
    {                                                                                         \
        uint j = 0;                                                                           \
        for (; j + UNROLL <= (count); j += UNROLL) {                                          \
            PS_REPEAT(UNROLL, STEP, _, j)                                                     \
        }                                                                                     \
        for (; j < (count); ++j) {                                                            \
            STEP(_, j)                                                                        \
        }                                                                                     \
    }
#else
#define STEPS(STEP, count)                                                                    \
    for (uint j = 0; j < (count); ++j) {                                                      \
        STEP(_, j)                                                                            \
    }
#endif

#if VECTOR
#define VT PS_JOIN(float, COARSEN)
#define VLOAD PS_JOIN(vload, COARSEN)
#define VSTORE PS_JOIN(vstore, COARSEN)
#endif

__kernel void lud_perimeter(__global float *m, uint n, uint offset)
{
    __local float dia[BS][BS];
    __local float row[BS][BS];
    __local float colT[BS][BS];
    uint t = get_local_id(0);
    size_t strip = offset + (get_group_id(0) + 1) * BS;
    __global float *d = m + (size_t)offset * n + offset;
    __global float *r = m + (size_t)offset * n + strip;
    __global float *c = m + strip * n + offset;

    for (uint e = t; e < BS * BS; e += 2 * ITEMS) {
        uint i = e / BS, j = e % BS;
        dia[i][j] = d[(size_t)i * n + j];
        row[i][j] = r[(size_t)i * n + j];
        colT[j][i] = c[(size_t)i * n + j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    uint first = t % ITEMS; /* this work-item's first value, in units of COARSEN */
    if (t < ITEMS) {
        for (uint i = 1; i < BS; ++i) {
#if VECTOR
            VT acc = VLOAD(first, &row[i][0]);
#define ROW_STEP(_, j) acc -= dia[i][j] * VLOAD(first, &row[j][0]);
#else
#define ROW_STEP(_, j)                                                       \
    for (uint k = first * COARSEN; k < (first + 1) * COARSEN; ++k)          \
        row[i][k] -= dia[i][j] * row[j][k];
#endif
            STEPS(ROW_STEP, i)
#if VECTOR
            VSTORE(acc, first, &row[i][0]);
#endif
        }
    } else {
        for (uint i = 0; i < BS; ++i) {
#if VECTOR
            VT acc = VLOAD(first, &colT[i][0]);
#define COL_STEP(_, j) acc -= dia[j][i] * VLOAD(first, &colT[j][0]);
#else
#define COL_STEP(_, j)                                                       \
    for (uint k = first * COARSEN; k < (first + 1) * COARSEN; ++k)          \
        colT[i][k] -= dia[j][i] * colT[j][k];
#endif
            STEPS(COL_STEP, i)
#if VECTOR
            VSTORE(acc / dia[i][i], first, &colT[i][0]);
#else
            for (uint k = first * COARSEN; k < (first + 1) * COARSEN; ++k)
                colT[i][k] /= dia[i][i];
#endif
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint e = t; e < BS * BS; e += 2 * ITEMS) {
        uint i = e / BS, j = e % BS;
        r[(size_t)i * n + j] = row[i][j];
        c[(size_t)i * n + j] = colT[j][i];
    }
}
