/* Blocked LU decomposition without pivoting (seed 002 §6.1), step 1 of 3 at each block step:
 * one work-group of BS work-items factors the BS x BS block on the diagonal in local memory
 * (Doolittle: unit lower L below the diagonal, U on and above it). Work-item t owns row t.
 * m is n x n, row-major, n a multiple of BS; offset is the block's first row and column. */
#include "common/parskel.h"

#ifndef BS
#define BS 16
#endif

__kernel void lud_diagonal(__global float *m, uint n, uint offset)
{
    __local float s[BS][BS];
    uint t = get_local_id(0);
    __global float *block = m + (size_t)offset * n + offset;

    for (uint r = 0; r < BS; ++r)
        s[r][t] = block[(size_t)r * n + t];
    barrier(CLK_LOCAL_MEM_FENCE);

    /* right-looking elimination: step k divides column k below the pivot and updates the rows
     * below; row k itself is final by then, so reading it while others write is safe */
    for (uint k = 0; k + 1 < BS; ++k) {
        if (t > k) {
            float l = s[t][k] / s[k][k];
            s[t][k] = l;
            for (uint j = k + 1; j < BS; ++j)
                s[t][j] -= l * s[k][j];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    for (uint r = 0; r < BS; ++r)
        block[(size_t)r * n + t] = s[r][t];
}
