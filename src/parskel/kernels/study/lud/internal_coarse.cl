/* Blocked LU, step 3, coarsened: the two granularity variants of the internal kernel (seed 002
 * §6.1.2.3, 1a). A work-item updates ROWS x COLS elements of its block:
 *
 *   COLS > 1 (the seed's first way, the work-group's width divided by COLS): columns
 *            tx, tx + BS / COLS, ...: strided, BS / COLS apart;
 *   ROWS > 1 (the second way, its height divided by ROWS): rows ROWS ty ... ROWS ty + ROWS - 1,
 *            adjacent.
 *
 * The work-group is (BS / COLS) x (BS / ROWS). UNROLL (1, 2, 4 or 8) unrolls the BS-step inner
 * product by the preprocessor (study/repeat.h), for the variant that combines the three. */
#include "common/parskel.h"
#include "study/repeat.h"

#ifndef BS
#define BS 16
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef COLS
#define COLS 1
#endif

#ifndef UNROLL
#define UNROLL 1
#endif

#define WIDE (BS / COLS) /* the work-group's width */
/* step k of every element's inner product */
#define TERM(_, k)                                                                   \
    for (uint a = 0; a < ROWS; ++a)                                                  \
        for (uint b = 0; b < COLS; ++b)                                              \
            sum[a][b] += col[ty * ROWS + a][(k)] * row[(k)][tx + b * WIDE];

__kernel void lud_internal(__global float *m, uint n, uint offset)
{
    __local float row[BS][BS];
    __local float col[BS][BS];
    uint tx = get_local_id(0), ty = get_local_id(1);
    size_t top = offset + (get_group_id(1) + 1) * BS;
    size_t left = offset + (get_group_id(0) + 1) * BS;

    for (uint a = 0; a < ROWS; ++a) {
        for (uint b = 0; b < COLS; ++b) {
            uint i = ty * ROWS + a, j = tx + b * WIDE;
            row[i][j] = m[(offset + i) * n + left + j];
            col[i][j] = m[(top + i) * n + offset + j];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    float sum[ROWS][COLS];
    for (uint a = 0; a < ROWS; ++a)
        for (uint b = 0; b < COLS; ++b)
            sum[a][b] = 0.0f;
#if UNROLL == 1
    for (uint k = 0; k < BS; ++k) {
        TERM(_, k)
    }
#else
    for (uint k = 0; k < BS; k += UNROLL) {
        PS_REPEAT(UNROLL, TERM, _, k)
    }
#endif
    for (uint a = 0; a < ROWS; ++a)
        for (uint b = 0; b < COLS; ++b)
            m[(top + ty * ROWS + a) * n + left + tx + b * WIDE] -= sum[a][b];
}
