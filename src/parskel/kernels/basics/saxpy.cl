/* Seed 003: y = alpha * x + y, the one-to-one mapping with a bounds guard. */
#include "common/parskel.h"

__kernel void saxpy(__global const T *x, __global T *y, T alpha, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        y[i] = alpha * x[i] + y[i];
}
