/* Counts of elements by bin: histogram (bins between edges) and bincount (the element is its
 * bin). Each work-group counts its elements in local memory when the counts fit there
 * (LOCAL_BINS: the most bins it holds, or 0), then adds them to the global counts; otherwise
 * every element adds to the global counts. Work-groups take elements in a grid-stride loop.
 *
 * MODE 0: the element is its bin (an integer below bins). MODE 1: edges[0..bins] (E, ascending)
 * bound the bins; an element in [edges[b], edges[b + 1]) counts for bin b, the last bin also
 * takes edges[bins]; others (and NaNs) count nowhere. EVEN: the edges are evenly spaced from
 * `low` by 1 / `scale`: the bin is computed, then corrected by comparing with the edges, so
 * that it is exactly the bin of the edges as given (NumPy's). Defines of values.h: T, KIND. */
#include "values.h"

#ifndef MODE
#define MODE 1
#endif
#ifndef EVEN
#define EVEN 0
#endif
#ifndef LOCAL_BINS
#define LOCAL_BINS 0
#endif
#ifndef E
#define E float
#endif
#ifndef WG
#define WG 256
#endif

/* the bin of element i, or -1 */
inline int bin_of(__global const T *x, uint i, __global const E *edges, uint bins, E low, E scale)
{
#if MODE == 0
    return (int)x[i];
#else
    E value = (E)VALUE(x, i);
    if (!(value >= edges[0] && value <= edges[bins])) /* outside, or NaN */
        return -1;
#if EVEN
    int b = (int)PS_MIN((E)(bins - 1), (value - low) * scale);
    while (b > 0 && value < edges[b])
        --b;
    while (b < (int)bins - 1 && value >= edges[b + 1])
        ++b;
    return b;
#else
    uint lo = 0, hi = bins + 1; /* the first edge above value, then its bin */
    while (lo < hi) {
        uint mid = lo + (hi - lo) / 2;
        if (edges[mid] <= value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (int)PS_MIN(lo - 1, bins - 1);
#endif
#endif
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void histogram(
    __global const T *x, uint n, __global const E *edges, uint bins, E low, E scale, __global uint *counts)
{
    uint stride = get_global_size(0);
#if LOCAL_BINS
    __local uint mine[LOCAL_BINS];
    for (uint b = get_local_id(0); b < bins; b += WG)
        mine[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = get_global_id(0); i < n; i += stride) {
        int b = bin_of(x, i, edges, bins, low, scale);
        if (b >= 0)
            atomic_inc(&mine[b]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = get_local_id(0); b < bins; b += WG)
        if (mine[b])
            atomic_add(&counts[b], mine[b]);
#else
    for (uint i = get_global_id(0); i < n; i += stride) {
        int b = bin_of(x, i, edges, bins, low, scale);
        if (b >= 0)
            atomic_inc(&counts[b]);
    }
#endif
}
