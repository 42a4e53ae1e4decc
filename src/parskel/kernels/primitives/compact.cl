/* Stream compaction: the elements whose flag is set, in order, to out[positions[i]] (positions:
 * the exclusive scan of the flags); with PARTITION the others follow them, in order, from
 * out[total] on. Elements of any dtype move as WORDS units of type E (as in gather.cl). */
#include "common/parskel.h"

#ifndef E
#define E uint
#endif
#ifndef WORDS
#define WORDS 1
#endif
#ifndef PARTITION
#define PARTITION 0
#endif

__kernel void compact(__global const E *in, __global const uint *flags, __global const uint *positions,
                      __global E *out, uint n, uint total)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    size_t to;
    if (flags[i])
        to = positions[i];
#if PARTITION
    else
        to = total + i - positions[i];
#else
    else
        return;
#endif
    for (uint w = 0; w < WORDS; ++w)
        out[to * WORDS + w] = in[(size_t)i * WORDS + w];
}
