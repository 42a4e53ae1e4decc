/* Two-level scan shaped for CPUs (beyond seed 000 chapter 4): a few work-groups of one
 * work-item each, every one owning a long contiguous run of the input (chunk elements, a
 * multiple of VW; the last run is shorter). run_sums adds up each run; run_scan then scans
 * each run from its carry, the sum of the runs before it. Both read their run front to back
 * in VW-wide vectors, so the input is read twice and the output written once, all streaming.
 * src may be dst: every element is read before it is written, by the same work-item. */
#include "common/parskel.h"

#ifndef VW
#define VW 16
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define TV CAT(T, VW)
#define T8 CAT(T, 8)
#define T16 CAT(T, 16)
#define VLOAD CAT(vload, VW)
#define VSTORE CAT(vstore, VW)

/* Inclusive scan of the lanes of a vector in log2(VW) steps, each adding a copy of the vector
 * with some lanes moved up and the others zero: first within each 16-byte quarter (a shift of
 * bytes, one cheap instruction on a CPU), then the running total of each quarter spread over
 * the quarters above it. SHIFT_UP(v) moves every lane up by one, a zero into the first: the
 * exclusive scan from the inclusive one. */
#define Z (T)0
#if VW == 8
#define LANES_SCAN(v)                                                                         \
    v += PS_VEC(T8, Z, v.s0, Z, v.s2, Z, v.s4, Z, v.s6);                                      \
    v += PS_VEC(T8, Z, Z, v.s1, v.s1, Z, Z, v.s5, v.s5);                                      \
    v += PS_VEC(T8, Z, Z, Z, Z, v.s3, v.s3, v.s3, v.s3)
#define LAST(v) (v).s7
#define SHIFT_UP(v) PS_VEC(T8, Z, (v).s0, (v).s1, (v).s2, (v).s3, (v).s4, (v).s5, (v).s6)
#elif VW == 16
#define LANES_SCAN(v)                                                                         \
    v += PS_VEC(T16, Z, v.s0, v.s1, v.s2, Z, v.s4, v.s5, v.s6, Z, v.s8, v.s9, v.sa, Z, v.sc,  \
                v.sd, v.se);                                                                  \
    v += PS_VEC(T16, Z, Z, v.s0, v.s1, Z, Z, v.s4, v.s5, Z, Z, v.s8, v.s9, Z, Z, v.sc, v.sd); \
    v += PS_VEC(T16, Z, Z, Z, Z, v.s3, v.s3, v.s3, v.s3, Z, Z, Z, Z, v.sb, v.sb, v.sb, v.sb); \
    v += PS_VEC(T16, Z, Z, Z, Z, Z, Z, Z, Z, v.s7, v.s7, v.s7, v.s7, v.s7, v.s7, v.s7, v.s7)
#define LAST(v) (v).sf
#define SHIFT_UP(v)                                                                           \
    PS_VEC(T16, Z, (v).s0, (v).s1, (v).s2, (v).s3, (v).s4, (v).s5, (v).s6, (v).s7, (v).s8,   \
           (v).s9, (v).sa, (v).sb, (v).sc, (v).sd, (v).se)
#else
#error "VW must be 8 or 16"
#endif

inline uint run_start(uint n, uint chunk) { return PS_MIN(n, (uint)get_group_id(0) * chunk); }
inline uint run_end(uint n, uint chunk) { return PS_MIN(n, run_start(n, chunk) + chunk); }

/* sums[g]: the total of run g */
__kernel void run_sums(__global const T *src, __global T *sums, uint n, uint chunk)
{
    uint i = run_start(n, chunk);
    uint end = run_end(n, chunk);
    TV acc = PS_VEC(TV, Z);
    for (; i + VW <= end; i += VW)
        acc += VLOAD(0, src + i);
    LANES_SCAN(acc);
    T total = LAST(acc);
    for (; i < end; ++i)
        total += src[i];
    sums[get_group_id(0)] = total;
}

/* The run scanned from its carry; inclusive is a constant after inlining. The carry is kept in
 * every lane of a vector, so that the only chain from one vector to the next is one addition
 * (the scan of a vector and the broadcast of its total do not wait for the carry). */
inline void scan_run(__global const T *src, __global T *dst, uint i, uint end, T carry, bool inclusive)
{
    TV carries = PS_VEC(TV, carry);
    for (; i + VW <= end; i += VW) {
        TV v = VLOAD(0, src + i);
        LANES_SCAN(v);
        VSTORE((inclusive ? v : SHIFT_UP(v)) + carries, 0, dst + i);
        carries += PS_VEC(TV, LAST(v));
    }
    carry = LAST(carries);
    for (; i < end; ++i) {
        T x = src[i];
        dst[i] = inclusive ? carry + x : carry;
        carry += x;
    }
}

__kernel void run_scan(__global const T *src, __global T *dst, __global const T *sums, uint n, uint chunk,
                       uint inclusive)
{
    T carry = (T)0;
    for (uint g = 0; g < get_group_id(0); ++g)
        carry += sums[g];
    if (inclusive)
        scan_run(src, dst, run_start(n, chunk), run_end(n, chunk), carry, true);
    else
        scan_run(src, dst, run_start(n, chunk), run_end(n, chunk), carry, false);
}
