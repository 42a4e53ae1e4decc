/* Seed 000 §3.5: blocks and tiles together. A TILE x TILE work-group computes a tile of
 * TILE x TILE blocks of WIDTH x WIDTH elements; each step stages one such tile of A and of B
 * in local memory, every work-item loading one block of each. The host pads every dimension
 * to a multiple of TILE * WIDTH, so there is no bounds check. */
#include "matmul/blocks.h"

#ifndef TILE
#define TILE 16
#endif

/* kv, nv: vectors per row of A and of B (and C) */
__kernel void matmul_blocks_tiles(__global const VT *a, __global const VT *b, __global VT *c,
                                  uint kv, uint nv)
{
    /* TILE * WIDTH element rows of TILE vectors each */
    __local VT tile_a[TILE * WIDTH][TILE];
    __local VT tile_b[TILE * WIDTH][TILE];

    uint col = get_global_id(0);
    uint row = get_global_id(1);
    uint lx = get_local_id(0);
    uint ly = get_local_id(1);

    __global const VT *a_block = a + (size_t)row * WIDTH * kv + lx;
    __global const VT *b_block = b + (size_t)ly * WIDTH * nv + col;
    VT acc[WIDTH];
    for (uint r = 0; r < WIDTH; ++r)
        acc[r] = PS_VEC(VT, 0);

    for (uint t = 0; t < kv; t += TILE) {
        for (uint r = 0; r < WIDTH; ++r) {
            tile_a[ly * WIDTH + r][lx] = a_block[(size_t)r * kv + t];
            tile_b[ly * WIDTH + r][lx] = b_block[((size_t)t * WIDTH + r) * nv];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint i = 0; i < TILE; ++i) {
            VT av[WIDTH], bv[WIDTH];
            for (uint r = 0; r < WIDTH; ++r)
                av[r] = tile_a[ly * WIDTH + r][i];
            for (uint s = 0; s < WIDTH; ++s)
                bv[s] = tile_b[i * WIDTH + s][lx];
            for (uint r = 0; r < WIDTH; ++r)
                acc[r] += PS_ROW_TIMES_BLOCK(av[r], bv);
        }
        /* the next step overwrites the tiles others may still be reading */
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    __global VT *c_block = c + (size_t)row * WIDTH * nv + col;
    for (uint r = 0; r < WIDTH; ++r)
        c_block[(size_t)r * nv] = acc[r];
}
