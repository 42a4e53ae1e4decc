/* Reduce and MapReduce in one launch, for any associative operator (commutativity not needed).
 *
 * The input is cut into one contiguous chunk per warp of the grid (a multiple of a warp's span). A warp walks its chunk in spans of R_LANES * ITEMS elements: each lane folds
 * ITEMS consecutive ones (read as VEC-wide vectors where the host allows), the warp combines its
 * lanes in order by shuffles, and lane 0 folds the spans in order. Without warp operations a
 * warp is one work-item, which walks its chunk alone. (On GPUs, an operator that commutes is
 * folded by whole work-groups over tiles instead: see below.) The work-group then combines its
 * warps in order and publishes its partial; the last group to finish (an atomic counter, reset
 * for the next launch) combines the partials in order into ps_out[0], with one warp.
 *
 * Glue: PS_T (result type), PS_IN_T (input type; PS_IN_VT its VEC-wide vector), PS_MAP(x, i)
 * (element x at index i, mapped for MapReduce), PS_OP(a, b), PS_MAP_EXTRA_PARAMS/_ARGS and
 * PS_OP_EXTRA_PARAMS/_ARGS (the extra arguments of the map function and of the operator),
 * PS_WG (the work-group size), ITEMS, VEC and PS_CHAINS (independent folds per work-item: 1 on
 * GPUs, several on CPUs), PS_COMMUTES (1 when the operator commutes: a CPU's folds may then
 * take elements in turn, so that they read consecutive elements the compiler loads as vectors;
 * a GPU's lanes then fold elements a warp's width apart and combine once, at the end). */
#include "common/parskel.h"
#include "common/subgroup.h"
#include "common/coherent.h"
#include "identity.h"

#define WG PS_WG
#define PS_GROUP_T PS_T
#define PS_GROUP_OP(a, b) PS_OP(a, b)
#define PS_GROUP_EXTRA_PARAMS PS_OP_EXTRA_PARAMS
#define PS_GROUP_EXTRA_ARGS PS_OP_EXTRA_ARGS
#include "common/group_scan.h"

#if PS_GROUP_USES_WARPS
#define R_LANES 32
#else
#define R_LANES 1
#endif
#define R_SPAN (R_LANES * ITEMS)
#ifndef PS_COMMUTES
#define PS_COMMUTES 0
#endif
#define PS_FOLDS 32 /* a CPU's folds of an operator that commutes: two AVX-512 vectors of floats */

#if VEC == 4
#define PS_SPLIT(v, e) e[0] = v.s0; e[1] = v.s1; e[2] = v.s2; e[3] = v.s3;
#elif VEC == 2
#define PS_SPLIT(v, e) e[0] = v.s0; e[1] = v.s1;
#endif

/* acc combined with the mapped elements of ITEMS / VEC whole vectors (ITEMS elements without
 * vectors) from element base: vector k * stride + offset, k = 0, 1, ... A lane reads its own
 * consecutive ones with stride 1 and offset 0, or a warp's lanes read whole lines together
 * with stride R_LANES and offset lane. */
PS_INLINE PS_T ps_fold_vectors(__global const PS_IN_T *ps_in, uint base, uint stride, uint offset, PS_T acc,
                               uint ps_cols PS_MAP_EXTRA_PARAMS PS_OP_EXTRA_PARAMS)
{
#if VEC > 1
    __global const PS_IN_VT *v = (__global const PS_IN_VT *)(ps_in + base);
#pragma unroll
    for (uint k = 0; k < ITEMS / VEC; ++k) {
        uint at = k * stride + offset;
        PS_IN_VT t = v[at];
        PS_IN_T e[VEC];
        PS_SPLIT(t, e)
#pragma unroll
        for (uint c = 0; c < VEC; ++c)
            acc = PS_OP(acc, PS_MAP(e[c], base + at * VEC + c));
    }
#else
#pragma unroll
    for (uint k = 0; k < ITEMS; ++k) {
        uint at = base + k * stride + offset;
        acc = PS_OP(acc, PS_MAP(ps_in[at], at));
    }
#endif
    return acc;
}

/* acc combined with the mapped elements first .. first + ITEMS - 1 that are below end */
PS_INLINE PS_T ps_fold_items(__global const PS_IN_T *ps_in, uint first, uint end, PS_T acc,
                             uint ps_cols PS_MAP_EXTRA_PARAMS PS_OP_EXTRA_PARAMS)
{
    if (first + ITEMS <= end)
        return ps_fold_vectors(ps_in, first, 1, 0, acc, ps_cols PS_MAP_EXTRA_ARGS PS_OP_EXTRA_ARGS);
    for (uint i = first; i < end; ++i)
        acc = PS_OP(acc, PS_MAP(ps_in[i], i));
    return acc;
}

#if R_LANES > 1
/* x of every lane of the warp combined pairwise in order into lane 0: after step d, lane k (a
 * multiple of 2d) holds lanes k .. k + 2d - 1 */
PS_INLINE PS_T ps_lanes_combined(PS_T x, uint lane PS_OP_EXTRA_PARAMS)
{
    for (uint d = 1; d < R_LANES; d <<= 1) {
        PS_T other;
        PS_SHFL_DOWN_ANY(PS_T, other, x, d);
        if ((lane & (2 * d - 1)) == 0)
            x = PS_OP(x, other);
    }
    return x;
}
#endif

__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1)))
void ps_reduce(__global const PS_IN_T *ps_in, __global PS_T *ps_out, __global PS_T *ps_partials,
               __global uint *ps_counter, __global const PS_T *ps_identity, uint ps_n, uint ps_cols PS_MAP_EXTRA_PARAMS PS_OP_EXTRA_PARAMS)
{
    __local PS_T scratch[PS_GROUP_SCRATCH];
    __local uint last_s;
    PS_T identity = *ps_identity;
    uint lid = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
    uint lane = lid % R_LANES;
    PS_T acc = identity;
#if R_LANES > 1 && PS_COMMUTES
    /* GPUs, an operator that commutes: the group walks a contiguous run of whole tiles of
     * PS_WG * ITEMS elements (the runs shared out evenly), its warps reading a span of each tile
     * side by side, so that memory sees one wide stream per group rather than one per warp (on
     * an H200, 4.42 TB/s against 4.27 at 2^28 floats). Each lane folds its own elements across
     * the spans, a warp's loads cover whole lines (lane l reads vectors l, l + R_LANES, ... of
     * a span), and the lanes combine once, at the end (in any order: the operator commutes) */
    uint tile = PS_WG * ITEMS, tiles = (ps_n + tile - 1) / tile;
    uint begin = (uint)PS_MIN((ulong)g * tiles / groups * tile, (ulong)ps_n);
    uint end = (uint)PS_MIN((ulong)(g + 1) * tiles / groups * tile, (ulong)ps_n);
    for (uint t = begin + lid / R_LANES * R_SPAN; t < end; t += tile) {
        if (t + R_SPAN <= end) {
            acc = ps_fold_vectors(ps_in, t, R_LANES, lane, acc, ps_cols PS_MAP_EXTRA_ARGS PS_OP_EXTRA_ARGS);
        } else {
            for (uint i = t + lane; i < end; i += R_LANES)
                acc = PS_OP(acc, PS_MAP(ps_in[i], i));
        }
    }
    acc = ps_lanes_combined(acc, lane PS_OP_EXTRA_ARGS);
#else
    /* otherwise each warp (each work-item on CPUs) walks a chunk of its own, in order */
    uint warps = groups * (PS_WG / R_LANES);
    uint chunk = ((ps_n + warps - 1) / warps + R_SPAN - 1) / R_SPAN * R_SPAN;
    uint warp = g * (PS_WG / R_LANES) + lid / R_LANES;
    uint begin = PS_MIN(warp * chunk, ps_n);
    uint end = PS_MIN(begin + chunk, ps_n);
    for (uint t = begin; t < end; t += R_SPAN) {
#if R_LANES > 1
        PS_T x = ps_fold_items(ps_in, t + lane * ITEMS, end, identity, ps_cols PS_MAP_EXTRA_ARGS PS_OP_EXTRA_ARGS);
        acc = PS_OP(acc, ps_lanes_combined(x, lane PS_OP_EXTRA_ARGS));
#elif PS_CHAINS == 1
        acc = ps_fold_items(ps_in, t, end, acc, ps_cols PS_MAP_EXTRA_ARGS PS_OP_EXTRA_ARGS);
#else
        break;
#endif
    }
#endif
#if R_LANES == 1 && PS_CHAINS > 1 && PS_COMMUTES
    {
        /* CPUs, an operator that commutes: fold c takes elements c, c + PS_FOLDS, ... of the
         * chunk, so each step reads PS_FOLDS consecutive elements into independent folds, which
         * the compiler turns into vector loads and operations. The loads go through a pointer
         * that moves with t: indexed by the uint t + c, which may wrap, they are not known to be
         * consecutive and stay scalar (3 times slower on an AVX2 CPU) */
        PS_T fold[PS_FOLDS];
#pragma unroll
        for (uint c = 0; c < PS_FOLDS; ++c)
            fold[c] = identity;
        uint t = begin;
        __global const PS_IN_T *step = ps_in + begin;
        for (; t + PS_FOLDS <= end; t += PS_FOLDS, step += PS_FOLDS) {
#pragma unroll
            for (uint c = 0; c < PS_FOLDS; ++c)
                fold[c] = PS_OP(fold[c], PS_MAP(step[c], t + c));
        }
        for (; t < end; ++t)
            fold[0] = PS_OP(fold[0], PS_MAP(ps_in[t], t));
#pragma unroll
        for (uint c = 0; c < PS_FOLDS; ++c)
            acc = PS_OP(acc, fold[c]);
    }
#elif R_LANES == 1 && PS_CHAINS > 1
    {
        /* CPUs: the chunk in PS_CHAINS contiguous parts folded side by side, so that the
         * operator's latency overlaps across independent chains; the parts then combine in order */
        uint part = ((end - begin + PS_CHAINS - 1) / PS_CHAINS + ITEMS - 1) / ITEMS * ITEMS;
        PS_T chain[PS_CHAINS];
#pragma unroll
        for (uint c = 0; c < PS_CHAINS; ++c)
            chain[c] = identity;
        for (uint t = 0; t < part; t += ITEMS) {
#pragma unroll
            for (uint c = 0; c < PS_CHAINS; ++c) {
                uint lo = PS_MIN(begin + c * part, end), hi = PS_MIN(lo + part, end);
                if (lo + t < hi)
                    chain[c] = ps_fold_items(ps_in, lo + t, hi, chain[c], ps_cols PS_MAP_EXTRA_ARGS PS_OP_EXTRA_ARGS);
            }
        }
#pragma unroll
        for (uint c = 0; c < PS_CHAINS; ++c)
            acc = PS_OP(acc, chain[c]);
    }
#endif
    PS_T total;
    ps_group_exclusive_scan(lane == 0 ? acc : identity, identity, scratch, &total PS_OP_EXTRA_ARGS);
    if (lid == 0) {
        ps_partials[g] = total;
        PS_DEVICE_FENCE();
        last_s = atomic_inc(ps_counter) == groups - 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the last group combines the partials with its first warp (or work-item), without
     * barriers: those are kept out of conditions */
    if (last_s && lid < R_LANES) {
        PS_DEVICE_FENCE();
        uint per = (groups + R_LANES - 1) / R_LANES;
        uint lo = PS_MIN(lid * per, groups), hi = PS_MIN(lo + per, groups);
        PS_T x = identity;
        for (uint i = lo; i < hi; ++i) {
            PS_T p;
            PS_READ_COHERENT(PS_T, p, ps_partials + i);
            x = PS_OP(x, p);
        }
#if R_LANES > 1
        x = ps_lanes_combined(x, lane PS_OP_EXTRA_ARGS);
#endif
        if (lid == 0) {
            ps_out[0] = x;
            *ps_counter = 0;
        }
    }
}
