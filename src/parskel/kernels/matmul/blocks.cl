/* Seed 000 §3.4: each work-item computes one WIDTH x WIDTH block of C from vector loads of
 * A and B straight from global memory, no local memory. The host pads every dimension to a
 * multiple of WIDTH; the range is rounded up to whole work-groups, hence the bounds check. */
#include "matmul/blocks.h"

/* blocks_m: block rows of C; kv, nv: vectors per row of A and of B (and C) */
__kernel void matmul_blocks(__global const VT *a, __global const VT *b, __global VT *c,
                            uint blocks_m, uint kv, uint nv)
{
    uint col = get_global_id(0);
    uint row = get_global_id(1);
    if (row >= blocks_m || col >= nv)
        return;

    __global const VT *a_block = a + (size_t)row * WIDTH * kv;
    __global const VT *b_col = b + col;
    VT acc[WIDTH];
    for (uint r = 0; r < WIDTH; ++r)
        acc[r] = PS_VEC(VT, 0);

    for (uint i = 0; i < kv; ++i) {
        VT av[WIDTH], bv[WIDTH];
        for (uint r = 0; r < WIDTH; ++r)
            av[r] = a_block[(size_t)r * kv + i];
        for (uint s = 0; s < WIDTH; ++s)
            bv[s] = b_col[((size_t)i * WIDTH + s) * nv];
        for (uint r = 0; r < WIDTH; ++r)
            acc[r] += PS_ROW_TIMES_BLOCK(av[r], bv);
    }

    __global VT *c_block = c + (size_t)row * WIDTH * nv + col;
    for (uint r = 0; r < WIDTH; ++r)
        c_block[(size_t)r * nv] = acc[r];
}
