/* srad's second kernel, the same for every variant (seed 002 §6.4 studies the first): the
 * divergence of c times the gradient, and the image's step along it,
 *     out = image + lambda / 4 (c d_n + c_south d_s + c d_w + c_east d_e),
 * with the south and east coefficients clamped at the border. The differences and c have a
 * row stride of `stride`; image and out are rows x cols. */
#include "common/parskel.h"

__kernel void srad_update(__global const float *image, __global const float *d_n, __global const float *d_s,
                          __global const float *d_w, __global const float *d_e, __global const float *coef,
                          __global float *out, uint rows, uint cols, uint stride, float lambda)
{
    uint j = get_global_id(0), i = get_global_id(1);
    if (i >= rows || j >= cols)
        return;
    size_t at = (size_t)i * stride + j;
    float c = coef[at];
    float south = coef[(size_t)PS_MIN(i + 1, rows - 1) * stride + j];
    float east = coef[(size_t)i * stride + PS_MIN(j + 1, cols - 1)];
    float divergence = c * d_n[at] + south * d_s[at] + c * d_w[at] + east * d_e[at];
    out[(size_t)i * cols + j] = image[(size_t)i * cols + j] + 0.25f * lambda * divergence;
}
