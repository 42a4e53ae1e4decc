/* srad, the first kernel of seed 002 §6.4 as the seed found it: a BS x BS tile of the image in
 * local memory, the neighbours beyond the tile's edges in four more local arrays, and branches
 * wherever a pixel sits on an edge of its tile or of the image (whose neighbours are clamped:
 * a pixel on the border is its own neighbour outside).
 *
 * Writes the four differences and the diffusion coefficient c (clamped to [0, 1]) of every
 * pixel, rows x cols, row-major. */
#include "common/parskel.h"
#include "study/srad/coefficients.h"

#ifndef BS
#define BS 16
#endif

__kernel void srad_coefficients(__global const float *image, __global float *d_n, __global float *d_s,
                                __global float *d_w, __global float *d_e, __global float *coef, uint rows,
                                uint cols, float q0sqr)
{
    __local float tile[BS][BS];
    __local float north[BS], south[BS], west[BS], east[BS];
    uint tx = get_local_id(0), ty = get_local_id(1);
    uint j = get_global_id(0), i = get_global_id(1);
    /* work-items beyond the image stand on its last row or column */
    uint ci = i < rows ? i : rows - 1;
    uint cj = j < cols ? j : cols - 1;

    tile[ty][tx] = image[(size_t)ci * cols + cj];
    if (ty == 0) {
        if (ci == 0)
            north[tx] = image[cj];
        else
            north[tx] = image[(size_t)(ci - 1) * cols + cj];
    }
    if (ty == BS - 1) {
        if (ci == rows - 1)
            south[tx] = image[(size_t)ci * cols + cj];
        else
            south[tx] = image[(size_t)(ci + 1) * cols + cj];
    }
    if (tx == 0) {
        if (cj == 0)
            west[ty] = image[(size_t)ci * cols];
        else
            west[ty] = image[(size_t)ci * cols + cj - 1];
    }
    if (tx == BS - 1) {
        if (cj == cols - 1)
            east[ty] = image[(size_t)ci * cols + cj];
        else
            east[ty] = image[(size_t)ci * cols + cj + 1];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    float jc = tile[ty][tx];
    float n, s, w, e;
    if (ty == 0 && tx == 0) {
        n = north[tx] - jc;
        s = tile[ty + 1][tx] - jc;
        w = west[ty] - jc;
        e = tile[ty][tx + 1] - jc;
    } else if (ty == 0 && tx == BS - 1) {
        n = north[tx] - jc;
        s = tile[ty + 1][tx] - jc;
        w = tile[ty][tx - 1] - jc;
        e = east[ty] - jc;
    } else if (ty == BS - 1 && tx == BS - 1) {
        n = tile[ty - 1][tx] - jc;
        s = south[tx] - jc;
        w = tile[ty][tx - 1] - jc;
        e = east[ty] - jc;
    } else if (ty == BS - 1 && tx == 0) {
        n = tile[ty - 1][tx] - jc;
        s = south[tx] - jc;
        w = west[ty] - jc;
        e = tile[ty][tx + 1] - jc;
    } else if (ty == 0) {
        n = north[tx] - jc;
        s = tile[ty + 1][tx] - jc;
        w = tile[ty][tx - 1] - jc;
        e = tile[ty][tx + 1] - jc;
    } else if (tx == BS - 1) {
        n = tile[ty - 1][tx] - jc;
        s = tile[ty + 1][tx] - jc;
        w = tile[ty][tx - 1] - jc;
        e = east[ty] - jc;
    } else if (ty == BS - 1) {
        n = tile[ty - 1][tx] - jc;
        s = south[tx] - jc;
        w = tile[ty][tx - 1] - jc;
        e = tile[ty][tx + 1] - jc;
    } else if (tx == 0) {
        n = tile[ty - 1][tx] - jc;
        s = tile[ty + 1][tx] - jc;
        w = west[ty] - jc;
        e = tile[ty][tx + 1] - jc;
    } else {
        n = tile[ty - 1][tx] - jc;
        s = tile[ty + 1][tx] - jc;
        w = tile[ty][tx - 1] - jc;
        e = tile[ty][tx + 1] - jc;
    }

    float c = srad_coefficient(jc, n, s, w, e, q0sqr);
    if (c < 0.0f)
        c = 0.0f;
    else if (c > 1.0f)
        c = 1.0f;

    if (i < rows && j < cols) {
        size_t at = (size_t)i * cols + j;
        d_n[at] = n;
        d_s[at] = s;
        d_w[at] = w;
        d_e[at] = e;
        coef[at] = c;
    }
}
