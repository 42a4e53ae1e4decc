/* Blocked LU, step 3: the internal kernel of seed 002 §6.1.2, baseline and loop unrolling.
 *
 * A BS x BS work-group updates one block of the trailing matrix: each work-item subtracts the
 * product of its row of the column strip's block (L) and its column of the row strip's block
 * (U), both staged in local memory. UNROLL (1, 2, 4, 8) unrolls the BS-step inner product by
 * that factor, keeping the one accumulator, as the seed did. */
#include "common/parskel.h"
#include "study/repeat.h"

#ifndef BS
#define BS 16
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

#define TERM(ctx, k) sum += col[ty][k] * row[k][tx];

__kernel void lud_internal(__global float *m, uint n, uint offset)
{
    __local float row[BS][BS];
    __local float col[BS][BS];
    uint tx = get_local_id(0), ty = get_local_id(1);
    size_t top = offset + (get_group_id(1) + 1) * BS;  /* first row of the block */
    size_t left = offset + (get_group_id(0) + 1) * BS; /* first column of the block */

    row[ty][tx] = m[(offset + ty) * n + left + tx];
    col[ty][tx] = m[(top + ty) * n + offset + tx];
    barrier(CLK_LOCAL_MEM_FENCE);

    float sum = 0.0f;
#if UNROLL == 1
    for (uint k = 0; k < BS; ++k)
        TERM(_, k)
#else
    for (uint k = 0; k < BS; k += UNROLL) {
        PS_REPEAT(UNROLL, TERM, _, k)
    }
#endif
    m[(top + ty) * n + left + tx] -= sum;
}
