/* MapOverlap: the user function sees element i and its neighbours within the radius along each
 * axis (PS_R0 for the first), copied into a private window stored row-major (1D: w[-d..d]; more
 * axes: ps_get(w, d0, d1, ...), defined with the user functions). Outside the container the
 * window holds the neutral value (PS_BOUNDARY 0), the nearest element (1, clamp), the element
 * from the other end (2, wrap), or the mirror image about the edge element (3, mirror: -1 -> 1);
 * with 4 (none) the elements nearer an edge than the radius along that axis are not computed
 * (nor written).
 * Glue: PS_DIMS (1, 2, 3 or 4: only that kernel is built, since the user call names that
 * kernel's indices), PS_IN_T, PS_OUT_T, PS_R0.., PS_BOUNDARY, PS_ELEMENT (the user call on
 * ps_center), PS_EXTRA_PARAMS. A Tensor3 runs in the kernel for 4 axes, as a Tensor4 of
 * extent 1 and radius 0 on axis 0 (which leaves the window's layout as it is). */
#include "common/parskel.h"
#define PS_T PS_IN_T
#include "identity.h"

#define PS_W0 (2 * PS_R0 + 1)
#if PS_DIMS > 1
#define PS_W1 (2 * PS_R1 + 1)
#endif
#if PS_DIMS > 2
#define PS_W2 (2 * PS_R2 + 1)
#define PS_W3 (2 * PS_R3 + 1)
#endif

/* Whether index i of an axis of n elements is at least r from both edges (boundary none); a
 * function, not an expression, so that a radius of 0 makes no comparison of an unsigned with 0. */
inline int ps_inner(uint i, uint r, uint n)
{
    return i >= r && i + r < n;
}

/* The index inside 0..n-1 that position j stands for; -1 for the neutral value. */
inline int ps_fold(int j, int n)
{
    if (j >= 0 && j < n)
        return j;
#if PS_BOUNDARY == 0
    return -1;
#elif PS_BOUNDARY == 1
    return j < 0 ? 0 : n - 1;
#elif PS_BOUNDARY == 2
    j %= n;
    return j < 0 ? j + n : j;
#else
    if (n == 1)
        return 0;
    int period = 2 * (n - 1);
    j %= period;
    if (j < 0)
        j += period;
    return j < n ? j : period - j;
#endif
}

#if PS_DIMS == 1
__kernel void ps_map_overlap_1d(__global const PS_IN_T *ps_in, __global PS_OUT_T *ps_out,
                                __global const PS_IN_T *ps_neutral, uint ps_n PS_EXTRA_PARAMS)
{
    uint ps_i = get_global_id(0);
    if (ps_i >= ps_n)
        return;
#if PS_BOUNDARY == 4
    if (!ps_inner(ps_i, PS_R0, ps_n))
        return;
#endif
    PS_IN_T ps_w[PS_W0];
    for (int k = -PS_R0; k <= PS_R0; ++k) {
        int j = ps_fold((int)ps_i + k, (int)ps_n);
        ps_w[k + PS_R0] = j < 0 ? *ps_neutral : ps_in[j];
    }
    const PS_IN_T *ps_center = ps_w + PS_R0;
    ps_out[ps_i] = PS_ELEMENT;
}

#elif PS_DIMS == 2
__kernel void ps_map_overlap_2d(__global const PS_IN_T *ps_in, __global PS_OUT_T *ps_out,
                                __global const PS_IN_T *ps_neutral, uint ps_rows,
                                uint ps_cols PS_EXTRA_PARAMS)
{
    uint ps_col = get_global_id(0), ps_row = get_global_id(1);
    if (ps_row >= ps_rows || ps_col >= ps_cols)
        return;
#if PS_BOUNDARY == 4
    if (!ps_inner(ps_row, PS_R0, ps_rows) || !ps_inner(ps_col, PS_R1, ps_cols))
        return;
#endif
    uint ps_i = ps_row * ps_cols + ps_col;
    PS_IN_T ps_w[PS_W0 * PS_W1];
    for (int dr = -PS_R0; dr <= PS_R0; ++dr) {
        int r = ps_fold((int)ps_row + dr, (int)ps_rows);
        for (int dc = -PS_R1; dc <= PS_R1; ++dc) {
            int c = ps_fold((int)ps_col + dc, (int)ps_cols);
            ps_w[(dr + PS_R0) * PS_W1 + dc + PS_R1] = (r < 0 || c < 0) ? *ps_neutral : ps_in[r * (int)ps_cols + c];
        }
    }
    const PS_IN_T *ps_center = ps_w + PS_R0 * PS_W1 + PS_R1;
    ps_out[ps_i] = PS_ELEMENT;
}

#else
/* One work-item per element, launched flat (a grid has at most three axes): the element's
 * indices come from its flat index and the extents ps_e0..ps_e3. */
__kernel void ps_map_overlap_nd(__global const PS_IN_T *ps_in, __global PS_OUT_T *ps_out,
                                __global const PS_IN_T *ps_neutral, uint ps_n, uint ps_e0, uint ps_e1,
                                uint ps_e2, uint ps_e3 PS_EXTRA_PARAMS)
{
    uint ps_i = get_global_id(0);
    if (ps_i >= ps_n)
        return;
    uint ps_i3 = ps_i % ps_e3, ps_i2 = ps_i / ps_e3 % ps_e2;
    uint ps_i1 = ps_i / ps_e3 / ps_e2 % ps_e1, ps_i0 = ps_i / ps_e3 / ps_e2 / ps_e1;
#if PS_BOUNDARY == 4
    if (!ps_inner(ps_i0, PS_R0, ps_e0) || !ps_inner(ps_i1, PS_R1, ps_e1) || !ps_inner(ps_i2, PS_R2, ps_e2) ||
        !ps_inner(ps_i3, PS_R3, ps_e3))
        return;
#endif
    PS_IN_T ps_w[PS_W0 * PS_W1 * PS_W2 * PS_W3];
    int k = 0;
    for (int d0 = -PS_R0; d0 <= PS_R0; ++d0) {
        int j0 = ps_fold((int)ps_i0 + d0, (int)ps_e0);
        for (int d1 = -PS_R1; d1 <= PS_R1; ++d1) {
            int j1 = ps_fold((int)ps_i1 + d1, (int)ps_e1);
            for (int d2 = -PS_R2; d2 <= PS_R2; ++d2) {
                int j2 = ps_fold((int)ps_i2 + d2, (int)ps_e2);
                for (int d3 = -PS_R3; d3 <= PS_R3; ++d3) {
                    int j3 = ps_fold((int)ps_i3 + d3, (int)ps_e3);
                    ps_w[k++] = (j0 < 0 || j1 < 0 || j2 < 0 || j3 < 0)
                                    ? *ps_neutral
                                    : ps_in[((j0 * (int)ps_e1 + j1) * (int)ps_e2 + j2) * (int)ps_e3 + j3];
                }
            }
        }
    }
    const PS_IN_T *ps_center = ps_w + ((PS_R0 * PS_W1 + PS_R1) * PS_W2 + PS_R2) * PS_W3 + PS_R3;
    ps_out[ps_i] = PS_ELEMENT;
}
#endif
