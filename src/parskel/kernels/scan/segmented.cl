/* Segmented scans and reductions: the running OP of the elements since the head of their
 * segment, for scans along an axis (every row a segment), of dtypes the other scans do not
 * take (8- and 16-bit integers, bool, float16, complex) and of segments given by head flags.
 *
 * Each work-item owns a contiguous run of CHUNK elements (fewer in the last). In three steps:
 *   segmented_reduce  each run's total since its last head, and whether it holds a head;
 *   (the host scans those totals the same way, inclusively, with their heads: carries)
 *   segmented_scan    each run scanned from its carry (the total of the run before it), the
 *                     running value starting again from the identity at every head.
 * The operator (x, y) with heads is associative, so the levels compose like a plain scan.
 *
 * Elements are COMPONENTS values of T (2 for complex numbers, added part by part), read from
 * TIN and converted: IN_KIND 0 converts with a cast, 1 reads bool (any nonzero byte is 1), 2
 * reads float16 bits (ushort) into float. Integers are added in the unsigned type of their
 * width, so that they wrap as NumPy's do. HEADS 0 takes a flag of type HEAD_T per element
 * (nonzero: a segment starts there), 1 starts a segment every `row` elements. OP 0 add, 1
 * multiply, 2 min, 3 max; IDENTITY is the operator's identity in T.
 *
 * segment_heads and segment_totals turn segments given by offsets into heads, and an
 * inclusive segmented scan into each segment's total (the identity for an empty one). */
#include "common/parskel.h"

#ifndef TIN
#define TIN T
#endif
#ifndef COMPONENTS
#define COMPONENTS 1
#endif
#ifndef IN_KIND
#define IN_KIND 0
#endif
#ifndef HEADS
#define HEADS 0
#endif
#ifndef OP
#define OP 0
#endif
#ifndef IDENTITY
#define IDENTITY 0
#endif
#ifndef INCLUSIVE
#define INCLUSIVE 1
#endif
#ifndef HEAD_T
#define HEAD_T uchar
#endif

#if OP == 0
#define COMBINE(a, b) ((T)((a) + (b)))
#elif OP == 1
#define COMBINE(a, b) ((T)((a) * (b)))
#elif OP == 2
#define COMBINE(a, b) ((b) < (a) || (b) != (b) ? (b) : (a))
#else
#define COMBINE(a, b) ((b) > (a) || (b) != (b) ? (b) : (a))
#endif
/* min and max above carry a NaN along once one is met, as np.minimum.accumulate does */

#if IN_KIND == 2
#include "common/half.h"
#define LOAD(x) ((T)half_bits_to_float(x))
#elif IN_KIND == 1
#define LOAD(x) ((T)((x) != 0))
#else
#define LOAD(x) ((T)(x))
#endif

inline bool is_head(__global const HEAD_T *heads, uint i, uint row)
{
#if HEADS
    return i % row == 0;
#else
    return heads[i] != 0;
#endif
}

inline uint run_begin(uint n, uint chunk) { return PS_MIN(n, (uint)get_global_id(0) * chunk); }
inline uint run_finish(uint n, uint chunk) { return PS_MIN(n, run_begin(n, chunk) + chunk); }

/* sums[c]: the OP of run c's elements from its last head on (all of them if it has none);
 * sum_heads[c]: whether run c holds a head */
__kernel void segmented_reduce(__global const TIN *in, __global const HEAD_T *heads, __global T *sums,
                               __global HEAD_T *sum_heads, uint n, uint row, uint chunk)
{
    uint c = get_global_id(0);
    uint begin = run_begin(n, chunk), end = run_finish(n, chunk);
    if (begin >= end)
        return;
    T acc[COMPONENTS];
    for (uint k = 0; k < COMPONENTS; ++k)
        acc[k] = IDENTITY;
    HEAD_T any = 0;
    for (uint i = begin; i < end; ++i) {
        if (is_head(heads, i, row)) {
            any = 1;
            for (uint k = 0; k < COMPONENTS; ++k)
                acc[k] = IDENTITY;
        }
        for (uint k = 0; k < COMPONENTS; ++k)
            acc[k] = COMBINE(acc[k], LOAD(in[(size_t)i * COMPONENTS + k]));
    }
    for (uint k = 0; k < COMPONENTS; ++k)
        sums[(size_t)c * COMPONENTS + k] = acc[k];
    sum_heads[c] = any;
}

/* out: the scan of each run, starting from carries[c - 1] (the inclusive scan of the runs'
 * sums) unless this is the first run or carried is 0 */
__kernel void segmented_scan(__global const TIN *in, __global const HEAD_T *heads, __global const T *carries,
                             __global T *out, uint n, uint row, uint chunk, uint carried)
{
    uint c = get_global_id(0);
    uint begin = run_begin(n, chunk), end = run_finish(n, chunk);
    if (begin >= end)
        return;
    T acc[COMPONENTS];
    for (uint k = 0; k < COMPONENTS; ++k)
        acc[k] = carried && c ? carries[(size_t)(c - 1) * COMPONENTS + k] : (T)IDENTITY;
    for (uint i = begin; i < end; ++i) {
        if (is_head(heads, i, row))
            for (uint k = 0; k < COMPONENTS; ++k)
                acc[k] = IDENTITY;
        for (uint k = 0; k < COMPONENTS; ++k) {
            size_t at = (size_t)i * COMPONENTS + k;
            T x = LOAD(in[at]);
#if INCLUSIVE
            acc[k] = COMBINE(acc[k], x);
            out[at] = acc[k];
#else
            out[at] = acc[k];
            acc[k] = COMBINE(acc[k], x);
#endif
        }
    }
}

/* heads[offsets[j]] = 1 for each of the `count` offsets inside the n elements (heads zeroed
 * before): the elements past the last offset are a segment of their own */
__kernel void segment_heads(__global const long *offsets, uint count, uint n, __global HEAD_T *heads)
{
    uint j = get_global_id(0);
    if (j < count && offsets[j] < (long)n)
        heads[offsets[j]] = 1;
}

/* totals[j]: the inclusive segmented scan at segment j's last element, or the identity */
__kernel void segment_totals(__global const T *scanned, __global const long *offsets, uint segments,
                             __global T *totals)
{
    uint j = get_global_id(0);
    if (j >= segments)
        return;
    bool empty = offsets[j] >= offsets[j + 1];
    for (uint k = 0; k < COMPONENTS; ++k)
        totals[(size_t)j * COMPONENTS + k] =
            empty ? (T)IDENTITY : scanned[(size_t)(offsets[j + 1] - 1) * COMPONENTS + k];
}
