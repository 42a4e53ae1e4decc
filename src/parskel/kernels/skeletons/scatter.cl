/* Scatter (out[p[i]] = f(in[i])) and Gather (out[i] = f(in[p[i]])). A position outside the
 * target is not used; it sets ps_bad so the host can refuse the result instead of silently
 * dropping elements. Glue: PS_IN_T, PS_OUT_T, PS_P_T, PS_APPLY(x) (the user call on element
 * ps_i, or x itself), PS_EXTRA_PARAMS. */
#include "common/parskel.h"

__kernel void ps_scatter(__global const PS_IN_T *ps_in, __global const PS_P_T *ps_p,
                         __global PS_OUT_T *ps_out, __global int *ps_bad, uint ps_n,
                         uint ps_size PS_EXTRA_PARAMS)
{
    uint ps_i = get_global_id(0);
    if (ps_i >= ps_n)
        return;
    PS_P_T p = ps_p[ps_i];
    if (p < 0 || (ulong)p >= ps_size) {
        *ps_bad = 1;
        return;
    }
    ps_out[p] = PS_APPLY(ps_in[ps_i]);
}

__kernel void ps_gather(__global const PS_IN_T *ps_in, __global const PS_P_T *ps_p,
                        __global PS_OUT_T *ps_out, __global int *ps_bad, uint ps_n,
                        uint ps_size PS_EXTRA_PARAMS)
{
    uint ps_i = get_global_id(0);
    if (ps_i >= ps_n)
        return;
    PS_P_T p = ps_p[ps_i];
    if (p < 0 || (ulong)p >= ps_size) {
        *ps_bad = 1;
        return;
    }
    ps_out[ps_i] = PS_APPLY(ps_in[p]);
}
