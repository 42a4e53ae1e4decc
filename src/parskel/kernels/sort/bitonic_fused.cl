/* Seed 000, section 5.2.2: bitonic sort with kernel fusion. A work-item loads L = 2, 4, 8 or 16
 * keys spaced by the smallest of log2(L) consecutive increments, runs those comparator columns
 * in registers, and stores the keys once: log2(L) launches become one.
 *
 * The L keys are held in a uintL vector: a bitonic merge compares the lower half of the vector
 * with the upper half lane by lane (min/max on vectors, no branches) and then merges each half,
 * so every level is one vector operation and nothing is indexed at run time. */
#include "common/parskel.h"

inline uint2 load2(__global const uint *p, uint stride)
{
    return PS_VEC(uint2, p[0], p[stride]);
}

inline void store2(__global uint *p, uint stride, uint2 x)
{
    p[0] = x.s0;
    p[stride] = x.s1;
}

inline uint2 merge2(uint2 x, bool ascending)
{
    uint lo = min(x.s0, x.s1);
    uint hi = max(x.s0, x.s1);
    return ascending ? PS_VEC(uint2, lo, hi) : PS_VEC(uint2, hi, lo);
}

/* Keys of level N from those of level H = N / 2. */
#define LEVEL(N, H)                                                                           \
    inline uint##N load##N(__global const uint *p, uint stride)                               \
    {                                                                                         \
        return PS_VEC(uint##N, load##H(p, stride), load##H(p + H * stride, stride));         \
    }                                                                                         \
    inline void store##N(__global uint *p, uint stride, uint##N x)                            \
    {                                                                                         \
        store##H(p, stride, x.lo);                                                            \
        store##H(p + H * stride, stride, x.hi);                                               \
    }                                                                                         \
    inline uint##N merge##N(uint##N x, bool ascending)                                        \
    {                                                                                         \
        uint##H lo = min(x.lo, x.hi);                                                         \
        uint##H hi = max(x.lo, x.hi);                                                         \
        return PS_VEC(uint##N, merge##H(ascending ? lo : hi, ascending),                      \
                      merge##H(ascending ? hi : lo, ascending));                              \
    }

LEVEL(4, 2)
LEVEL(8, 4)
LEVEL(16, 8)

/* inc is the largest of the fused increments; a work-item's keys are spaced by the smallest.
 * Returns the work-item's first key and sets the stride and the direction. */
inline uint first_wire(uint inc, uint log_lvl, uint boxwidth, uint *stride, bool *ascending)
{
    *stride = inc >> (log_lvl - 1);
    uint id = get_global_id(0);
    uint low = id & (*stride - 1);
    uint i = ((id - low) << log_lvl) + low;
    *ascending = (i & boxwidth) == 0;
    return i;
}

#define FUSED_KERNEL(N, LOG)                                                                  \
    __kernel void bitonic_fused##N(__global uint *keys, uint inc, uint boxwidth)              \
    {                                                                                         \
        uint stride;                                                                          \
        bool ascending;                                                                       \
        __global uint *p = keys + first_wire(inc, LOG, boxwidth, &stride, &ascending);        \
        store##N(p, stride, merge##N(load##N(p, stride), ascending));                         \
    }

FUSED_KERNEL(2, 1)
FUSED_KERNEL(4, 2)
FUSED_KERNEL(8, 3)
FUSED_KERNEL(16, 4)
