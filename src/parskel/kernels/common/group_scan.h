/* Work-group scan of one value per work-item, for any associative operator (commutativity not
 * needed: earlier operands always stay on the left).
 *
 * The includer defines PS_GROUP_T (the type), PS_GROUP_OP(a, b), PS_GROUP_EXTRA_PARAMS and
 * PS_GROUP_EXTRA_ARGS (the operator's extra arguments, ", T ps_x0" and ", ps_x0", or nothing),
 * and WG, the work-group size, fixed at build time. The kernel declares the scratch array,
 * __local PS_GROUP_T s[PS_GROUP_SCRATCH], and every work-item of the group calls the function.
 *
 * With warp operations (common/subgroup.h) each warp scans by shuffles and one warp scans the
 * warp totals: two barriers. Elsewhere the values go through local memory and are raked in
 * segments of PS_RAKE by WG / PS_RAKE work-items; the segment totals are scanned by one. */
#ifndef PARSKEL_COMMON_GROUP_SCAN_H
#define PARSKEL_COMMON_GROUP_SCAN_H

#include "subgroup.h"

#if WG % 4 == 0
#define PS_RAKE 4
#else
#define PS_RAKE 1
#endif
#define PS_GROUP_USES_WARPS (PS_WARP_OPS && WG % 32 == 0)
#define PS_GROUP_SCRATCH (WG + WG / PS_RAKE + 34)

/* The exclusive prefix of x over the work-items before this one (identity for the first);
 * *total receives the combination of every work-item's x. s may be reused after the call. */
PS_INLINE PS_GROUP_T ps_group_exclusive_scan(PS_GROUP_T x, PS_GROUP_T identity, PS_LOCAL_PARAM PS_GROUP_T *s,
                                             PS_GROUP_T *total PS_GROUP_EXTRA_PARAMS)
{
    uint lid = get_local_id(0);
    PS_GROUP_T result;
#if PS_GROUP_USES_WARPS
    uint lane = lid & 31u, warp = lid >> 5;
    const uint warps = WG / 32;
    PS_GROUP_T inc = x;
    for (uint d = 1; d < 32; d <<= 1) {
        PS_GROUP_T up;
        PS_SHFL_UP_ANY(PS_GROUP_T, up, inc, d);
        if (lane >= d)
            inc = PS_GROUP_OP(up, inc);
    }
    PS_GROUP_T exc;
    PS_SHFL_UP_ANY(PS_GROUP_T, exc, inc, 1);
    if (lane == 0)
        exc = identity;
    if (lane == 31)
        s[warp] = inc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (warp == 0) {
        PS_GROUP_T w = lane < warps ? s[lane] : identity;
        PS_GROUP_T winc = w;
        for (uint d = 1; d < warps; d <<= 1) {
            PS_GROUP_T up;
            PS_SHFL_UP_ANY(PS_GROUP_T, up, winc, d);
            if (lane >= d)
                winc = PS_GROUP_OP(up, winc);
        }
        PS_GROUP_T wexc;
        PS_SHFL_UP_ANY(PS_GROUP_T, wexc, winc, 1);
        ps_warp_sync();
        if (lane < warps)
            s[lane] = lane == 0 ? identity : wexc;
        if (lane == warps - 1)
            s[32] = winc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    result = PS_GROUP_OP(s[warp], exc);
    *total = s[32];
#else
    const uint rakers = WG / PS_RAKE;
    s[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < rakers) {
        PS_GROUP_T a = s[lid * PS_RAKE];
        for (uint k = 1; k < PS_RAKE; ++k)
            a = PS_GROUP_OP(a, s[lid * PS_RAKE + k]);
        s[WG + lid] = a;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        PS_GROUP_T a = identity;
        for (uint r = 0; r < rakers; ++r) {
            PS_GROUP_T t = s[WG + r];
            s[WG + r] = a;
            a = PS_GROUP_OP(a, t);
        }
        s[WG + rakers] = a;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint first = lid / PS_RAKE * PS_RAKE;
    result = s[WG + lid / PS_RAKE];
    for (uint k = first; k < lid; ++k)
        result = PS_GROUP_OP(result, s[k]);
    *total = s[WG + rakers];
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    return result;
}

#endif
