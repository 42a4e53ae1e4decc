/* srad's first kernel with padding (seed 002 §6.4.1.3, 1): the host surrounds the image with
 * a one-pixel halo (copies of the border) and pads it to whole tiles, so every work-item treats
 * its pixel alike. The work-group stages a (BS + 2) x (BS + 2) tile, halo included, in a loop
 * with no test of position; the outputs are padded to whole tiles too, so no store is guarded.
 *
 * image is (rows + 2) x (cols + 2) with rows and cols multiples of BS, the pixel (i, j) at
 * (i + 1, j + 1); the outputs are rows x cols. */
#include "common/parskel.h"
#include "study/srad/coefficients.h"

#ifndef BS
#define BS 16
#endif

#define SIDE (BS + 2)

__kernel void srad_coefficients(__global const float *image, __global float *d_n, __global float *d_s,
                                __global float *d_w, __global float *d_e, __global float *coef, uint rows,
                                uint cols, float q0sqr)
{
    __local float tile[SIDE][SIDE];
    uint tx = get_local_id(0), ty = get_local_id(1);
    uint j = get_global_id(0), i = get_global_id(1);
    size_t corner = (size_t)get_group_id(1) * BS * (cols + 2) + get_group_id(0) * BS;

    for (uint k = ty * BS + tx; k < SIDE * SIDE; k += BS * BS)
        tile[k / SIDE][k % SIDE] = image[corner + (size_t)(k / SIDE) * (cols + 2) + k % SIDE];
    barrier(CLK_LOCAL_MEM_FENCE);

    float jc = tile[ty + 1][tx + 1];
    float n = tile[ty][tx + 1] - jc;
    float s = tile[ty + 2][tx + 1] - jc;
    float w = tile[ty + 1][tx] - jc;
    float e = tile[ty + 1][tx + 2] - jc;
    float c = clamp(srad_coefficient(jc, n, s, w, e, q0sqr), 0.0f, 1.0f);

    size_t at = (size_t)i * cols + j;
    d_n[at] = n;
    d_s[at] = s;
    d_w[at] = w;
    d_e[at] = e;
    coef[at] = c;
}
