/* Scan, inclusive or exclusive, for any associative operator (commutativity not needed).
 * ps_scan_blocks: each work-group scans a block of L * PS_PER_ITEM elements (each work-item
 * folds PS_PER_ITEM contiguous ones, the group scans those folds Hillis-Steele style, then each
 * work-item rescans its elements from its prefix) and writes the block's total to ps_sums.
 * The host scans ps_sums exclusively (recursively) and ps_scan_add puts each block's offset
 * in front of its elements: earlier operands always stay on the left.
 * Glue: PS_T, PS_OP(a, b), PS_EXTRA_PARAMS, PS_WG (the work-group size). */
#include "common/parskel.h"
#include "identity.h"

#ifndef PS_PER_ITEM
#define PS_PER_ITEM 4
#endif

__kernel void ps_scan_blocks(__global const PS_T *ps_in, __global PS_T *ps_out,
                             __global PS_T *ps_sums, __global const PS_T *ps_identity,
                             uint ps_n, uint ps_inclusive PS_EXTRA_PARAMS)
{
    __local PS_T ps_scratch[PS_WG];
    uint g = get_group_id(0), t = get_local_id(0), L = get_local_size(0);
    uint lo = PS_MIN(g * L * PS_PER_ITEM + t * PS_PER_ITEM, ps_n);
    uint hi = PS_MIN(lo + PS_PER_ITEM, ps_n);
    PS_T identity = *ps_identity;
    PS_T acc = identity;
    for (uint i = lo; i < hi; ++i)
        acc = PS_OP(acc, ps_in[i]);
    ps_scratch[t] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 1; s < L; s <<= 1) {
        PS_T v = ps_scratch[t];
        if (t >= s)
            v = PS_OP(ps_scratch[t - s], v);
        barrier(CLK_LOCAL_MEM_FENCE);
        ps_scratch[t] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    PS_T run = t > 0 ? ps_scratch[t - 1] : identity;
    for (uint i = lo; i < hi; ++i) {
        PS_T x = ps_in[i];
        if (ps_inclusive) {
            run = PS_OP(run, x);
            ps_out[i] = run;
        } else {
            ps_out[i] = run;
            run = PS_OP(run, x);
        }
    }
    if (t == L - 1)
        ps_sums[g] = ps_scratch[L - 1];
}

__kernel void ps_scan_add(__global PS_T *ps_out, __global const PS_T *ps_offsets, uint ps_n,
                          uint ps_block PS_EXTRA_PARAMS)
{
    uint i = get_global_id(0);
    if (i < ps_n && i >= ps_block)
        ps_out[i] = PS_OP(ps_offsets[i / ps_block], ps_out[i]);
}
