/* out[i] = in[order[i]] for elements of any dtype, moved as WORDS units of type E each (the
 * widest of uchar, ushort, uint, ulong that divides the element's size), so that no element
 * needs a vector type's alignment. */
#include "common/parskel.h"

#ifndef E
#define E uint
#endif
#ifndef WORDS
#define WORDS 1
#endif

__kernel void gather(__global const E *in, __global const uint *order, __global E *out, uint n)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    size_t from = (size_t)order[i] * WORDS;
    size_t to = (size_t)i * WORDS;
    for (uint w = 0; w < WORDS; ++w)
        out[to + w] = in[from + w];
}
