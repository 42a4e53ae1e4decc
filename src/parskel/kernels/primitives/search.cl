/* searchsorted: for each of v's elements, where it goes in the sorted array a (binary search).
 * RIGHT 0: the first position whose element is not before it (side="left"); RIGHT 1: the first
 * whose element comes after it (side="right"). Defines of values.h: T, KIND. */
#include "values.h"

#ifndef RIGHT
#define RIGHT 0
#endif

__kernel void searchsorted(__global const T *a, uint n, __global const T *v, __global long *out, uint count)
{
    uint i = get_global_id(0);
    if (i >= count)
        return;
    value_t x = VALUE(v, i);
    uint lo = 0, hi = n;
    while (lo < hi) {
        uint mid = lo + (hi - lo) / 2;
        value_t y = VALUE(a, mid);
#if RIGHT
        bool left_of = !before(x, y);
#else
        bool left_of = before(y, x);
#endif
        if (left_of)
            lo = mid + 1;
        else
            hi = mid;
    }
    out[i] = (long)lo;
}
