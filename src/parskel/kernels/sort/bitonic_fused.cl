/* Seed 000, section 5.2.2: bitonic sort with kernel fusion. A work-item loads L = 2, 4, 8 or 16
 * keys spaced by the smallest of log2(L) consecutive increments, runs those comparator columns
 * in registers, and stores the keys once: log2(L) launches become one. */
#include "common/parskel.h"

inline void order(uint *x, uint a, uint b, bool ascending)
{
    uint xa = x[a], xb = x[b];
    if (ascending ? xa > xb : xa < xb) {
        x[a] = xb;
        x[b] = xa;
    }
}

/* Bitonic merge of lvl keys held in a private array; called with constant lvl, so the loops
 * unroll and x stays in registers. */
inline void merge(uint *x, uint lvl, bool ascending)
{
    for (uint span = lvl >> 1; span > 0; span >>= 1)
        for (uint j = 0; j < lvl; ++j)
            if ((j & span) == 0)
                order(x, j, j + span, ascending);
}

/* inc is the largest of the fused increments; the work-item's keys are spaced by the smallest. */
inline void fused(__global uint *keys, uint *x, uint lvl, uint log_lvl, uint inc, uint boxwidth)
{
    uint stride = inc >> (log_lvl - 1);
    uint id = get_global_id(0);
    uint low = id & (stride - 1);
    uint i = ((id - low) << log_lvl) + low;
    bool ascending = (i & boxwidth) == 0;
    for (uint k = 0; k < lvl; ++k)
        x[k] = keys[i + k * stride];
    merge(x, lvl, ascending);
    for (uint k = 0; k < lvl; ++k)
        keys[i + k * stride] = x[k];
}

__kernel void bitonic_fused2(__global uint *keys, uint inc, uint boxwidth)
{
    uint x[2];
    fused(keys, x, 2, 1, inc, boxwidth);
}

__kernel void bitonic_fused4(__global uint *keys, uint inc, uint boxwidth)
{
    uint x[4];
    fused(keys, x, 4, 2, inc, boxwidth);
}

__kernel void bitonic_fused8(__global uint *keys, uint inc, uint boxwidth)
{
    uint x[8];
    fused(keys, x, 8, 3, inc, boxwidth);
}

__kernel void bitonic_fused16(__global uint *keys, uint inc, uint boxwidth)
{
    uint x[16];
    fused(keys, x, 16, 4, inc, boxwidth);
}
