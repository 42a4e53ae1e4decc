/* Map, Zip, MapArray and Generate. ps_map: a grid-stride loop, a work-item handling elements
 * i, i + S, i + 2S, ... (S the launch's work-items), PS_MAP_UNROLL (8 or 4) at a time so that
 * as many loads are in flight before the stores (the output may alias an input: each element
 * is read and written by one work-item only). On GPUs the host launches enough work-groups to
 * fill the device, not one work-item per element; on CPUs one work-item per element
 * (runtime/traits.py says why): there ps_map_flat covers the whole work-groups without a bound
 * check, which PoCL turns into one vectorised loop over the group, and ps_map the last
 * ps_n - ps_first elements.
 * The glue defines PS_INPUT_PARAMS (one __global pointer per input), PS_OUT_PARAM, PS_OUT_T and
 * PS_VOID (1 when the user function returns nothing), PS_EXTRA_PARAMS and PS_ELEMENT_AT(i), the
 * user call on element i, whose per-axis indices it computes from i and ps_e1, ps_e2, ps_e3, the
 * extents of axes 1 to 3 (1 past the container's last axis).
 *
 * Where every input and the output hold scalars of one size (4 or 8 bytes) on a GPU, the glue
 * also defines PS_LANES (16 bytes' worth of elements), PS_OUT_VT (the result's vector type),
 * PS_VEC_LOADS (vector ps_q of input k, as ps_q<k>), PS_VEC_AT(ps_c, ps_s), the user call on
 * lane ps_c (component ps_s) of those vectors, and PS_VEC_ROWS, the rows of a tile: ps_map_vec
 * then reads and writes whole 16-byte vectors, as a copy does (x * x over 2^28 floats on an
 * H100: 0.86x of a copy's time with scalars, 0.93-0.95x with vectors). */
#include "common/parskel.h"

#define PS_AT(i) PS_ELEMENT_AT((i))
#ifndef PS_MAP_UNROLL
#define PS_MAP_UNROLL 4 /* elements in flight per work-item: 4, or 8 */
#endif

__kernel void ps_map_flat(PS_INPUT_PARAMS PS_OUT_PARAM uint ps_n, uint ps_e1, uint ps_e2, uint ps_e3 PS_EXTRA_PARAMS)
{
    uint i = get_global_id(0);
#if PS_VOID
    PS_AT(i);
#else
    ps_out[i] = PS_AT(i);
#endif
}

__kernel void ps_map(PS_INPUT_PARAMS PS_OUT_PARAM uint ps_n, uint ps_e1, uint ps_e2, uint ps_e3,
                     uint ps_first PS_EXTRA_PARAMS)
{
    uint stride = get_global_size(0);
    uint i = ps_first + get_global_id(0);
#if PS_VOID
    for (; i < ps_n; i += stride)
        PS_AT(i);
#else
    for (; i + (PS_MAP_UNROLL - 1) * stride < ps_n; i += PS_MAP_UNROLL * stride) {
        PS_OUT_T ps_v[PS_MAP_UNROLL];
#pragma unroll
        for (uint ps_u = 0; ps_u < PS_MAP_UNROLL; ++ps_u)
            ps_v[ps_u] = PS_AT(i + ps_u * stride);
#pragma unroll
        for (uint ps_u = 0; ps_u < PS_MAP_UNROLL; ++ps_u)
            ps_out[i + ps_u * stride] = ps_v[ps_u];
    }
    for (; i < ps_n; i += stride)
        ps_out[i] = PS_AT(i);
#endif
}

#ifdef PS_LANES
/* Elements in vectors of PS_LANES (the buffers are 16-byte aligned), in tiles of PS_VEC_ROWS
 * rows (a row: one vector a work-item), one tile a work-group: the host launches a work-group
 * per tile. A work-group loads its tile's vectors before it stores them, skipping those past
 * the last; then the first ps_n % PS_LANES work-items take one of the elements after the last
 * whole vector. A grid that filled the device once, each work-group walking a run of rows, was
 * 6-8 % slower on an H200 (map.py's VEC_ROWS). */
#if PS_LANES == 4
#define PS_VEC_REST(ps_r) ps_r.s2 = PS_VEC_AT(2, s2); ps_r.s3 = PS_VEC_AT(3, s3);
#else
#define PS_VEC_REST(ps_r)
#endif
/* ps_r = the results of vector ps_q_at: its loads, then the user call on each lane */
#define PS_VEC_RESULT(ps_r, ps_q_at)                                                            \
    {                                                                                           \
        uint ps_q = (ps_q_at);                                                                  \
        PS_VEC_LOADS                                                                            \
        ps_r.s0 = PS_VEC_AT(0, s0);                                                             \
        ps_r.s1 = PS_VEC_AT(1, s1);                                                             \
        PS_VEC_REST(ps_r)                                                                       \
    }

__kernel void ps_map_vec(PS_INPUT_PARAMS PS_OUT_PARAM uint ps_n, uint ps_e1, uint ps_e2, uint ps_e3 PS_EXTRA_PARAMS)
{
    uint vectors = ps_n / PS_LANES, ps_l = get_local_size(0);
    uint ps_q0 = get_group_id(0) * ps_l * PS_VEC_ROWS + get_local_id(0);
    PS_OUT_VT ps_rs[PS_VEC_ROWS];
#pragma unroll
    for (uint ps_k = 0; ps_k < PS_VEC_ROWS; ++ps_k)
        if (ps_q0 + ps_k * ps_l < vectors)
            PS_VEC_RESULT(ps_rs[ps_k], ps_q0 + ps_k * ps_l)
#pragma unroll
    for (uint ps_k = 0; ps_k < PS_VEC_ROWS; ++ps_k)
        if (ps_q0 + ps_k * ps_l < vectors)
            ((__global PS_OUT_VT *)ps_out)[ps_q0 + ps_k * ps_l] = ps_rs[ps_k];
    uint t = vectors * PS_LANES + get_global_id(0);
    if (t < ps_n)
        ps_out[t] = PS_AT(t);
}
#endif
