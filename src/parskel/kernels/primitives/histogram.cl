/* Counts of elements by bin: histogram (bins between edges) and bincount (the element is its
 * bin). Each work-group counts its elements in local memory when the counts fit there
 * (LOCAL_BINS: the most bins it holds, or 0), then adds them to the global counts; otherwise
 * every element adds to the global counts. Work-groups take elements in a grid-stride loop.
 *
 * MODE 0: the element is its bin (an integer; one outside 0 .. bins - 1 counts nowhere).
 * MODE 1: edges[0..bins] (E, ascending) bound the bins; an element in [edges[b], edges[b + 1])
 * counts for bin b, the last bin also takes edges[bins]; others (and NaNs) count nowhere.
 * EVEN: the edges are evenly spaced from `low` by 1 / `scale`: the bin is computed, then
 * corrected by comparing with the edges, so that it is exactly the bin of the edges as given
 * (NumPy's). Defines of values.h: T, KIND.
 *
 * WEIGHTS 1: each element adds its weight w[i] (W; W_HALF 1 for float16 bits) instead of 1.
 * There are no atomic additions of floating-point numbers in OpenCL C, so the sums are kept as
 * bits in integer words and added with a compare-and-swap loop: ACC_KIND 0 adds integer weights
 * as 64-bit integers (two's complement), 1 adds floating-point weights as doubles, 2 as floats
 * (a device without double precision). 64-bit words need cl_khr_int64_base_atomics. */
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
#ifndef WEIGHTS
#define WEIGHTS 0
#endif
#ifndef ACC_KIND
#define ACC_KIND 0
#endif
#ifndef W_HALF
#define W_HALF 0
#endif

#if !WEIGHTS
typedef uint count_t;
#define PS_WEIGHTS_PARAM
#define PS_ADD(p, i) atomic_inc(p)
#define PS_MERGE(p, v) atomic_add((p), (v))
#else
#ifndef PS_CUDA
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#if ACC_KIND == 1
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#endif
#define PS_WEIGHTS_PARAM , __global const W *w
#if W_HALF
#define PS_WEIGHT(i) half_bits_to_float(w[i])
#else
#define PS_WEIGHT(i) (w[i])
#endif
/* *p += v for a number F kept as the bits U of an integer word, in any address space */
#define PS_CAS_ADD(p, v, U, F, AS_U, AS_F, CAS)                                                   \
    do {                                                                                          \
        U ps_old = *(p), ps_seen;                                                                 \
        do {                                                                                      \
            ps_seen = ps_old;                                                                     \
            ps_old = CAS((p), ps_seen, AS_U(AS_F(ps_seen) + (v)));                                \
        } while (ps_old != ps_seen);                                                              \
    } while (0)
#if ACC_KIND == 0
typedef ulong count_t;
#define PS_MERGE(p, v) atom_add((p), (v))
#define PS_ADD(p, i) PS_MERGE(p, (ulong)(long)PS_WEIGHT(i))
#elif ACC_KIND == 1
typedef ulong count_t;
#define PS_MERGE(p, v) PS_CAS_ADD(p, as_double(v), ulong, double, as_ulong, as_double, atom_cmpxchg)
#define PS_ADD(p, i) PS_CAS_ADD(p, (double)PS_WEIGHT(i), ulong, double, as_ulong, as_double, atom_cmpxchg)
#else
typedef uint count_t;
#define PS_MERGE(p, v) PS_CAS_ADD(p, as_float(v), uint, float, as_uint, as_float, atomic_cmpxchg)
#define PS_ADD(p, i) PS_CAS_ADD(p, (float)PS_WEIGHT(i), uint, float, as_uint, as_float, atomic_cmpxchg)
#endif
#endif

/* the bin of element i, or -1 */
inline int bin_of(__global const T *x, uint i, __global const E *edges, uint bins, E low, E scale)
{
#if MODE == 0
    int b = (int)x[i];
    return b < (int)bins ? b : -1;
#else
    E value = (E)VALUE(x, i);
    if (!(value >= edges[0] && value <= edges[bins])) /* outside, or NaN */
        return -1;
#if EVEN
    /* a span too narrow for bins / span (subnormal) gives an infinite scale, and the element
     * at `low` then 0 * inf: NaN, which starts at bin 0 (as a C conversion it is undefined) */
    E at = (value - low) * scale;
    int b = at > 0 ? (int)PS_MIN((E)(bins - 1), at) : 0;
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
    __global const T *x, uint n, __global const E *edges, uint bins, E low, E scale,
    __global count_t *counts PS_WEIGHTS_PARAM)
{
    uint stride = get_global_size(0);
#if LOCAL_BINS
    __local count_t mine[LOCAL_BINS];
    for (uint b = get_local_id(0); b < bins; b += WG)
        mine[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = get_global_id(0); i < n; i += stride) {
        int b = bin_of(x, i, edges, bins, low, scale);
        if (b >= 0)
            PS_ADD(&mine[b], i);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = get_local_id(0); b < bins; b += WG)
        if (mine[b]) /* zero counts, and sums whose bits are zero (+0.0), add nothing */
            PS_MERGE(&counts[b], mine[b]);
#else
    for (uint i = get_global_id(0); i < n; i += stride) {
        int b = bin_of(x, i, edges, bins, low, scale);
        if (b >= 0)
            PS_ADD(&counts[b], i);
    }
#endif
}
