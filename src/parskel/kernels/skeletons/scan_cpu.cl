/* Scan on CPUs, for any associative operator (commutativity not needed), in two shapes.
 *
 * ps_chained_scan, where the device has few cores: one launch of a few work-groups of one
 * work-item, about one per core. The input is cut into tiles of ps_tile elements, which the
 * work-items take in order (a ticket counter). A work-item that takes tile t when tile t - 1 has
 * published its inclusive prefix (always, where one work-item takes the tiles in turn) scans the
 * tile at once from that prefix, in one pass, and publishes its own after it. Otherwise it
 * combines the tile (in PS_CHAINS contiguous parts side by side, so the operator's
 * latency overlaps, the parts then combined in order), publishes that total, looks back over the
 * tiles before it for the combination of all of them (a tile's inclusive prefix where it is
 * published, else its total and on to the one before), publishes its own prefix, and scans the
 * tile from the cache, PS_BLOCK elements at a time. Waiting on another work-item is safe:
 * tickets are taken in order by running work-items, so the tile waited for belongs to one that
 * runs (on another core) or has finished (on this one, where PoCL runs work-groups one after
 * another). ps_state[0] is the ticket counter and ps_state[1 + t] tile t's flag (0 nothing yet,
 * 1 its total, 2 its inclusive prefix), all zero before the launch; the values are in
 * ps_values[2 t] (total) and ps_values[2 t + 1] (prefix), and the last tile leaves the
 * combination of every element in ps_values[2 ps_tiles].
 *
 * ps_run_totals, then ps_run_scan, where it has many: a few work-groups of one work-item each,
 * every one owning a contiguous run of ps_chunk elements (the last run is shorter).
 * ps_run_totals combines each run (in PS_CHAINS parts, as above); ps_run_scan combines the totals
 * of the runs before its own, then scans its run front to back from there. The last run also
 * stores the total at ps_totals[runs].
 *
 * Each pass reads its elements in order through moving pointers, which the CPU's prefetchers
 * stream and the compiler keeps free of index arithmetic; ps_in may be ps_out (every element is
 * read before it is written, by the same work-item).
 * Glue: PS_T, PS_OP(a, b), PS_EXTRA_PARAMS (the operator's extra arguments), INCLUSIVE and
 * PS_CHAINS. */
#include "common/parskel.h"
#include "common/coherent.h"
#include "identity.h"

#define PS_BLOCK 8 /* elements a scan step loads before it combines and stores them */
#define PS_TOTAL 1
#define PS_PREFIX 2

/* one element of the scan: x combined into ps_acc, the result (inclusive) or ps_acc before it
 * (exclusive) stored in d */
#if INCLUSIVE
#define PS_STEP(x, d) ps_acc = PS_OP(ps_acc, x); d = ps_acc;
#else
#define PS_STEP(x, d) d = ps_acc; ps_acc = PS_OP(ps_acc, x);
#endif

/* total = the combination of ps_in[begin, end), in PS_CHAINS parts side by side (the last part
 * takes the rest), then the parts in order */
#define PS_FOLD(begin, end, total)                                                             \
    do {                                                                                       \
        uint ps_part = ((end) - (begin)) / PS_CHAINS;                                          \
        PS_T ps_chain[PS_CHAINS];                                                              \
        _Pragma("unroll") for (uint c = 0; c < PS_CHAINS; ++c) ps_chain[c] = ps_identity_value;  \
        __global const PS_T *ps_p = ps_in + (begin);                                           \
        for (uint k = 0; k < ps_part; ++k, ++ps_p) {                                           \
            _Pragma("unroll") for (uint c = 0; c < PS_CHAINS; ++c)                             \
                ps_chain[c] = PS_OP(ps_chain[c], ps_p[c * ps_part]);                           \
        }                                                                                      \
        for (ps_p = ps_in + (begin) + PS_CHAINS * ps_part; ps_p < ps_in + (end); ++ps_p)       \
            ps_chain[PS_CHAINS - 1] = PS_OP(ps_chain[PS_CHAINS - 1], *ps_p);                   \
        total = ps_identity_value;                                                             \
        _Pragma("unroll") for (uint c = 0; c < PS_CHAINS; ++c) total = PS_OP(total, ps_chain[c]); \
    } while (0)

/* ps_in[begin, end) scanned into ps_out from ps_acc, which ends as the combination through end;
 * a block's elements are all loaded before any is stored (ps_in may be ps_out, and the compiler
 * may not move a load above a store to memory it cannot tell apart) */
#define PS_SCAN(begin, end)                                                                    \
    do {                                                                                       \
        __global const PS_T *ps_src = ps_in + (begin);                                         \
        __global PS_T *ps_dst = ps_out + (begin);                                              \
        uint ps_left = (end) - (begin);                                                        \
        for (; ps_left >= PS_BLOCK; ps_left -= PS_BLOCK, ps_src += PS_BLOCK, ps_dst += PS_BLOCK) { \
            PS_T ps_x[PS_BLOCK];                                                               \
            _Pragma("unroll") for (uint k = 0; k < PS_BLOCK; ++k) ps_x[k] = ps_src[k];         \
            _Pragma("unroll") for (uint k = 0; k < PS_BLOCK; ++k) { PS_STEP(ps_x[k], ps_dst[k]) } \
        }                                                                                      \
        for (; ps_left > 0; --ps_left, ++ps_src, ++ps_dst) {                                   \
            PS_T ps_x1 = *ps_src;                                                              \
            PS_STEP(ps_x1, *ps_dst)                                                            \
        }                                                                                      \
    } while (0)

/* An operator that is a sum of integers, from 0 (PS_LANES, the lanes of a vector:
 * skeletons/scan.py): exact in any order, so a tile is combined and scanned in vectors, as
 * parskel.scan's CPU scans do, rather than an element at a time */
#ifndef PS_LANES
#define PS_LANES 0
#endif
#if PS_LANES
#define T PS_T
#define VW PS_LANES
#include "scan/lanes_cpu.h"
#undef PS_FOLD
#define PS_FOLD(begin, end, total) total = sum_range(ps_in, (begin), (end))
#undef PS_SCAN
#define PS_SCAN(begin, end) ps_acc = scan_run(ps_in, ps_out, (begin), (end), ps_acc, INCLUSIVE)
#endif

/* ps_values[2 t + kind - 1] = value, then tile t's flag: kind */
#define PS_PUBLISH(t, kind, value)                                                             \
    do {                                                                                       \
        ps_values[2 * (t) + (kind) - 1] = (value);                                             \
        PS_DEVICE_FENCE();                                                                     \
        atomic_xchg(&ps_state[1 + (t)], (kind));                                               \
    } while (0)

__kernel void ps_chained_scan(__global const PS_T *ps_in, __global PS_T *ps_out, __global uint *ps_state,
                              __global PS_T *ps_values, __global const PS_T *ps_identity, uint ps_n, uint ps_tile,
                              uint ps_tiles PS_EXTRA_PARAMS)
{
    const PS_T ps_identity_value = *ps_identity;
    for (;;) {
        uint t = atomic_inc(&ps_state[0]);
        if (t >= ps_tiles)
            break;
        uint ps_begin = t * ps_tile, ps_end = PS_MIN(ps_n, ps_begin + ps_tile);
        PS_T ps_acc = ps_identity_value;
        bool ps_known = t == 0;
        if (!ps_known && atomic_or(&ps_state[t], 0u) == PS_PREFIX) {
            PS_DEVICE_FENCE();
            PS_READ_COHERENT(PS_T, ps_acc, ps_values + 2 * (t - 1) + PS_PREFIX - 1);
            ps_known = true;
        }
        if (!ps_known) {
            PS_T ps_total;
            PS_FOLD(ps_begin, ps_end, ps_total);
            PS_PUBLISH(t, PS_TOTAL, ps_total);
            /* the tiles before, from the nearest back: each value goes in front of those after it */
            for (uint j = t; j > 0;) {
                uint ps_flag = atomic_or(&ps_state[j], 0u); /* tile j - 1's */
                if (ps_flag == 0)
                    continue; /* not yet: its work-item is combining it */
                PS_DEVICE_FENCE();
                PS_T ps_value;
                PS_READ_COHERENT(PS_T, ps_value, ps_values + 2 * (j - 1) + ps_flag - 1);
                ps_acc = PS_OP(ps_value, ps_acc);
                if (ps_flag == PS_PREFIX)
                    break;
                --j;
            }
            PS_PUBLISH(t, PS_PREFIX, PS_OP(ps_acc, ps_total));
        }
        PS_SCAN(ps_begin, ps_end);
        if (ps_known)
            PS_PUBLISH(t, PS_PREFIX, ps_acc);
        if (t == ps_tiles - 1)
            ps_values[2 * ps_tiles] = ps_acc;
    }
}

__kernel void ps_run_totals(__global const PS_T *ps_in, __global PS_T *ps_totals, __global const PS_T *ps_identity,
                            uint ps_n, uint ps_chunk PS_EXTRA_PARAMS)
{
    const PS_T ps_identity_value = *ps_identity;
    uint g = get_group_id(0);
    uint begin = PS_MIN(ps_n, g * ps_chunk), end = PS_MIN(ps_n, begin + ps_chunk);
    PS_T ps_total;
    PS_FOLD(begin, end, ps_total);
    ps_totals[g] = ps_total;
}

__kernel void ps_run_scan(__global const PS_T *ps_in, __global PS_T *ps_out, __global PS_T *ps_totals,
                          __global const PS_T *ps_identity, uint ps_n, uint ps_chunk PS_EXTRA_PARAMS)
{
    uint g = get_group_id(0), runs = get_num_groups(0);
    uint begin = PS_MIN(ps_n, g * ps_chunk), end = PS_MIN(ps_n, begin + ps_chunk);
    PS_T ps_acc = *ps_identity;
    for (uint r = 0; r < g; ++r)
        ps_acc = PS_OP(ps_acc, ps_totals[r]);
    PS_SCAN(begin, end);
    if (g == runs - 1)
        ps_totals[runs] = ps_acc;
}
