/* Scan on CPUs, for any associative operator (commutativity not needed): a few work-groups of
 * one work-item each, every one owning a contiguous run of ps_chunk elements (the last run is
 * shorter). ps_run_totals combines each run (in PS_CHAINS contiguous parts side by side, so the
 * operator's latency overlaps, the parts then combined in order); ps_run_scan combines the
 * totals of the runs before its own, then scans its run front to back from there, PS_BLOCK
 * elements at a time. Each pass reads its run in order through moving pointers, which the CPU's
 * prefetchers stream and the compiler keeps free of index arithmetic; ps_in may be ps_out (every
 * element is read before it is written, by the same work-item). The last run also stores the
 * total at ps_totals[runs].
 * Glue: PS_T, PS_OP(a, b), PS_EXTRA_PARAMS (the operator's extra arguments), INCLUSIVE and
 * PS_CHAINS. */
#include "common/parskel.h"
#include "identity.h"

#define PS_BLOCK 8 /* elements ps_run_scan loads before it combines and stores them */

__kernel void ps_run_totals(__global const PS_T *ps_in, __global PS_T *ps_totals, __global const PS_T *ps_identity,
                            uint ps_n, uint ps_chunk PS_EXTRA_PARAMS)
{
    uint g = get_group_id(0);
    uint begin = PS_MIN(ps_n, g * ps_chunk), end = PS_MIN(ps_n, begin + ps_chunk);
    /* chain c folds part elements from begin + c * part; the last chain then takes the rest */
    uint part = (end - begin) / PS_CHAINS;
    PS_T identity = *ps_identity;
    PS_T chain[PS_CHAINS];
#pragma unroll
    for (uint c = 0; c < PS_CHAINS; ++c)
        chain[c] = identity;
    __global const PS_T *p = ps_in + begin;
    for (uint t = 0; t < part; ++t, ++p) {
#pragma unroll
        for (uint c = 0; c < PS_CHAINS; ++c)
            chain[c] = PS_OP(chain[c], p[c * part]);
    }
    for (p = ps_in + begin + PS_CHAINS * part; p < ps_in + end; ++p)
        chain[PS_CHAINS - 1] = PS_OP(chain[PS_CHAINS - 1], *p);
    PS_T acc = identity;
#pragma unroll
    for (uint c = 0; c < PS_CHAINS; ++c)
        acc = PS_OP(acc, chain[c]);
    ps_totals[g] = acc;
}

__kernel void ps_run_scan(__global const PS_T *ps_in, __global PS_T *ps_out, __global PS_T *ps_totals,
                          __global const PS_T *ps_identity, uint ps_n, uint ps_chunk PS_EXTRA_PARAMS)
{
    uint g = get_group_id(0), runs = get_num_groups(0);
    uint begin = PS_MIN(ps_n, g * ps_chunk), end = PS_MIN(ps_n, begin + ps_chunk);
    PS_T acc = *ps_identity;
    for (uint r = 0; r < g; ++r)
        acc = PS_OP(acc, ps_totals[r]);
    /* a block's elements are all loaded before any is stored: ps_in may be ps_out, and the
     * compiler may not move a load above a store to memory it cannot tell apart */
    __global const PS_T *src = ps_in + begin;
    __global PS_T *dst = ps_out + begin;
    uint left = end - begin;
    for (; left >= PS_BLOCK; left -= PS_BLOCK, src += PS_BLOCK, dst += PS_BLOCK) {
        PS_T x[PS_BLOCK];
#pragma unroll
        for (uint k = 0; k < PS_BLOCK; ++k)
            x[k] = src[k];
#pragma unroll
        for (uint k = 0; k < PS_BLOCK; ++k) {
#if INCLUSIVE
            acc = PS_OP(acc, x[k]);
            dst[k] = acc;
#else
            dst[k] = acc;
            acc = PS_OP(acc, x[k]);
#endif
        }
    }
    for (; left > 0; --left, ++src, ++dst) {
        PS_T x = *src;
#if INCLUSIVE
        acc = PS_OP(acc, x);
        *dst = acc;
#else
        *dst = acc;
        acc = PS_OP(acc, x);
#endif
    }
    if (g == runs - 1)
        ps_totals[runs] = acc;
}
