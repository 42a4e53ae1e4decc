/* Map, Zip, MapArray and Generate: a grid-stride loop, a work-item handling elements
 * i, i + S, i + 2S, ... (S the launch's work-items), PS_MAP_UNROLL (8 or 4) at a time so that
 * as many loads are in flight before the stores (the output may alias an input: each element
 * is read and written by one work-item only). On GPUs the host launches enough work-groups to fill the device, not
 * one work-item per element; on CPUs one work-item per element (runtime/traits.py says why):
 * there ps_map_flat covers the whole work-groups without a bound check, which PoCL turns into
 * one vectorised loop over the group, and ps_map the last ps_n - ps_first elements.
 * The glue defines PS_INPUT_PARAMS (one __global pointer per input), PS_OUT_PARAM, PS_OUT_T and
 * PS_VOID (1 when the user function returns nothing), PS_EXTRA_PARAMS and PS_ELEMENT_AT(i), the
 * user call on element i, whose per-axis indices it computes from i and ps_e1, ps_e2, ps_e3, the
 * extents of axes 1 to 3 (1 past the container's last axis). */
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
