/* Scan on CPUs, for any associative operator (commutativity not needed): a few work-groups of
 * one work-item each, every one owning a contiguous run of ps_chunk elements (the last run is
 * shorter). ps_run_totals combines each run (in PS_CHAINS contiguous parts side by side, so the
 * operator's latency overlaps, the parts then combined in order); ps_run_scan combines the
 * totals of the runs before its own, then scans its run front to back from there. Each pass
 * reads its run in order, which the CPU's prefetchers stream; ps_in may be ps_out (every element
 * is read before it is written, by the same work-item). The last run also stores the total at
 * ps_totals[runs].
 * Glue: PS_T, PS_OP(a, b), PS_EXTRA_PARAMS (the operator's extra arguments), INCLUSIVE and
 * PS_CHAINS. */
#include "common/parskel.h"
#include "identity.h"

__kernel void ps_run_totals(__global const PS_T *ps_in, __global PS_T *ps_totals, __global const PS_T *ps_identity,
                            uint ps_n, uint ps_chunk PS_EXTRA_PARAMS)
{
    uint g = get_group_id(0);
    uint begin = PS_MIN(ps_n, g * ps_chunk), end = PS_MIN(ps_n, begin + ps_chunk);
    uint part = (end - begin + PS_CHAINS - 1) / PS_CHAINS;
    PS_T identity = *ps_identity;
    PS_T chain[PS_CHAINS];
#pragma unroll
    for (uint c = 0; c < PS_CHAINS; ++c)
        chain[c] = identity;
    for (uint t = 0; t < part; ++t) {
#pragma unroll
        for (uint c = 0; c < PS_CHAINS; ++c) {
            uint i = begin + c * part + t;
            if (i < end)
                chain[c] = PS_OP(chain[c], ps_in[i]);
        }
    }
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
    for (uint i = begin; i < end; ++i) {
        PS_T x = ps_in[i];
#if INCLUSIVE
        acc = PS_OP(acc, x);
        ps_out[i] = acc;
#else
        ps_out[i] = acc;
        acc = PS_OP(acc, x);
#endif
    }
    if (g == runs - 1)
        ps_totals[runs] = acc;
}
