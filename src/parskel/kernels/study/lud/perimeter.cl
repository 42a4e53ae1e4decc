/* Blocked LU, step 2: the perimeter kernel of seed 002 §6.1.1, baseline and loop unrolling.
 *
 * Work-group g (of 2 BS work-items) takes block g + 1 of the row strip right of the diagonal
 * block and of the column strip below it. Work-items 0 .. BS-1 solve L_dia X = A for one column
 * of the row block each (forward substitution down the column); work-items BS .. 2BS-1 solve
 * X U_dia = A for one row of the column block each (substitution along the row, then a
 * division by the pivot). Each is a chain of dependent multiply-subtracts.
 *
 * UNROLL selects the seed's unrolling cases (BS must be 16 for them):
 *   0  the loops as written
 *   1  the outer loops fully unrolled, the inner loops unrolled by 2
 *   2  the outer and inner loops of both solves fully unrolled
 *   3  case 2, and the load and store loops fully unrolled too */
#include "common/parskel.h"
#include "study/repeat.h"

#ifndef BS
#define BS 16
#endif
#ifndef UNROLL
#define UNROLL 0
#endif

#if UNROLL && BS != 16
#error "the unrolled perimeter kernels are written for BS 16"
#endif

/* one term of each solve; I and J are compile-time constants once unrolled */
#define ROW_TERM(I, J) if ((J) < (I)) row[I][idx] -= dia[I][J] * row[J][idx];
#define COL_TERM(I, J) if ((J) < (I)) col[idx][I] -= col[idx][J] * dia[J][I];

/* inner loops unrolled by 2, with the odd term left over */
#define ROW_PAIRS(I)                                                                \
    {                                                                              \
        int j = 0;                                                                 \
        for (; j + 1 < (I); j += 2) {                                              \
            row[I][idx] -= dia[I][j] * row[j][idx];                                \
            row[I][idx] -= dia[I][j + 1] * row[j + 1][idx];                        \
        }                                                                          \
        if (j < (I))                                                               \
            row[I][idx] -= dia[I][j] * row[j][idx];                                \
    }
#define COL_PAIRS(I)                                                                \
    {                                                                              \
        int j = 0;                                                                 \
        for (; j + 1 < (I); j += 2) {                                              \
            col[idx][I] -= col[idx][j] * dia[j][I];                                \
            col[idx][I] -= col[idx][j + 1] * dia[j + 1][I];                        \
        }                                                                          \
        if (j < (I))                                                               \
            col[idx][I] -= col[idx][j] * dia[j][I];                                \
    }

#if UNROLL == 1
#define ROW_STEP(ctx, I) ROW_PAIRS(I)
#define COL_STEP(ctx, I) COL_PAIRS(I) col[idx][I] /= dia[I][I];
#else
#define ROW_STEP(ctx, I) PS_REPEAT(16, ROW_TERM, I, 0)
#define COL_STEP(ctx, I) PS_REPEAT(16, COL_TERM, I, 0) col[idx][I] /= dia[I][I];
#endif

/* element e of the three blocks: 2 BS work-items move BS / 2 elements each */
#define LOAD(ctx, k)                                                                  \
    {                                                                              \
        uint e = t + (k) * 2 * BS, i = e / BS, j = e % BS;                         \
        dia[i][j] = d[(size_t)i * n + j];                                          \
        row[i][j] = r[(size_t)i * n + j];                                          \
        col[i][j] = c[(size_t)i * n + j];                                          \
    }
#define STORE(ctx, k)                                                                 \
    {                                                                              \
        uint e = t + (k) * 2 * BS, i = e / BS, j = e % BS;                         \
        r[(size_t)i * n + j] = row[i][j];                                          \
        c[(size_t)i * n + j] = col[i][j];                                          \
    }

__kernel void lud_perimeter(__global float *m, uint n, uint offset)
{
    __local float dia[BS][BS];
    __local float row[BS][BS];
    __local float col[BS][BS];
    uint t = get_local_id(0);
    size_t strip = offset + (get_group_id(0) + 1) * BS;
    __global float *d = m + (size_t)offset * n + offset;
    __global float *r = m + (size_t)offset * n + strip;
    __global float *c = m + strip * n + offset;

#if UNROLL == 3
    PS_REPEAT(8, LOAD, _, 0)
#else
    for (uint k = 0; k < BS / 2; ++k)
        LOAD(_, k)
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    if (t < BS) {
        uint idx = t;
#if UNROLL == 0
        for (uint i = 1; i < BS; ++i)
            for (uint j = 0; j < i; ++j)
                row[i][idx] -= dia[i][j] * row[j][idx];
#else
        PS_REPEAT_OUTER(16, ROW_STEP, _, 0)
#endif
    } else {
        uint idx = t - BS;
#if UNROLL == 0
        for (uint i = 0; i < BS; ++i) {
            for (uint j = 0; j < i; ++j)
                col[idx][i] -= col[idx][j] * dia[j][i];
            col[idx][i] /= dia[i][i];
        }
#else
        PS_REPEAT_OUTER(16, COL_STEP, _, 0)
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);

#if UNROLL == 3
    PS_REPEAT(8, STORE, _, 0)
#else
    for (uint k = 0; k < BS / 2; ++k)
        STORE(_, k)
#endif
}
