/* MapOverlap: the user function sees element i and its neighbours within PS_RADIUS, copied into
 * a private window (1D: w[-d..d]; 2D: ps_get(w, dr, dc)). Outside the container the window
 * holds the neutral value (PS_BOUNDARY 0), the nearest element (1, clamp), the element from the
 * other end (2, wrap), or the mirror image about the edge element (3, mirror: -1 -> 1); with 4
 * (none) the elements nearer the edge than PS_RADIUS are not computed (nor written).
 * Glue: PS_DIMS (1 or 2: only that kernel is built, since the user call may name the 2D indices
 * ps_row and ps_col), PS_IN_T, PS_OUT_T, PS_RADIUS, PS_BOUNDARY, PS_ELEMENT (the user call on
 * ps_center), PS_EXTRA_PARAMS. */
#include "common/parskel.h"
#define PS_T PS_IN_T
#include "identity.h"

#define PS_WIDTH (2 * PS_RADIUS + 1)

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
    if (ps_i < PS_RADIUS || ps_i + PS_RADIUS >= ps_n)
        return;
#endif
    PS_IN_T ps_w[PS_WIDTH];
    for (int k = -PS_RADIUS; k <= PS_RADIUS; ++k) {
        int j = ps_fold((int)ps_i + k, (int)ps_n);
        ps_w[k + PS_RADIUS] = j < 0 ? *ps_neutral : ps_in[j];
    }
    const PS_IN_T *ps_center = ps_w + PS_RADIUS;
    ps_out[ps_i] = PS_ELEMENT;
}

#else
__kernel void ps_map_overlap_2d(__global const PS_IN_T *ps_in, __global PS_OUT_T *ps_out,
                                __global const PS_IN_T *ps_neutral, uint ps_rows,
                                uint ps_cols PS_EXTRA_PARAMS)
{
    uint ps_col = get_global_id(0), ps_row = get_global_id(1);
    if (ps_row >= ps_rows || ps_col >= ps_cols)
        return;
#if PS_BOUNDARY == 4
    if (ps_row < PS_RADIUS || ps_row + PS_RADIUS >= ps_rows || ps_col < PS_RADIUS || ps_col + PS_RADIUS >= ps_cols)
        return;
#endif
    uint ps_i = ps_row * ps_cols + ps_col;
    PS_IN_T ps_w[PS_WIDTH * PS_WIDTH];
    for (int dr = -PS_RADIUS; dr <= PS_RADIUS; ++dr) {
        int r = ps_fold((int)ps_row + dr, (int)ps_rows);
        for (int dc = -PS_RADIUS; dc <= PS_RADIUS; ++dc) {
            int c = ps_fold((int)ps_col + dc, (int)ps_cols);
            ps_w[(dr + PS_RADIUS) * PS_WIDTH + dc + PS_RADIUS] =
                (r < 0 || c < 0) ? *ps_neutral : ps_in[r * (int)ps_cols + c];
        }
    }
    const PS_IN_T *ps_center = ps_w + PS_RADIUS * PS_WIDTH + PS_RADIUS;
    ps_out[ps_i] = PS_ELEMENT;
}
#endif
