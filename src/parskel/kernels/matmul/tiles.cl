/* Seed 000 §3.3: each work-group computes a TILE x TILE tile of C, walking the shared
 * dimension one pair of TILE x TILE tiles of A and B at a time through local memory.
 * The host pads every dimension to a multiple of TILE with zeros, so there is no bounds
 * check; work-groups are TILE x TILE. */
#include "common/parskel.h"

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifndef TILE
#define TILE 16
#endif

/* k and n are the padded widths of A and B (multiples of TILE) */
__kernel void matmul_tiles(__global const T *a, __global const T *b, __global T *c,
                           uint k, uint n)
{
    __local T tile_a[TILE][TILE];
    __local T tile_b[TILE][TILE];

    uint col = get_global_id(0);
    uint row = get_global_id(1);
    uint lx = get_local_id(0);
    uint ly = get_local_id(1);

    __global const T *a_pos = a + (size_t)row * k + lx;
    __global const T *b_pos = b + (size_t)ly * n + col;
    T sum = 0;
    for (uint t = 0; t < k; t += TILE) {
        tile_a[ly][lx] = a_pos[t];
        tile_b[ly][lx] = b_pos[(size_t)t * n];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint i = 0; i < TILE; ++i)
            sum += tile_a[ly][i] * tile_b[i][lx];
        /* the next iteration overwrites the tiles others may still be reading */
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[(size_t)row * n + col] = sum;
}
