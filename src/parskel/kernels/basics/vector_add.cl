/* Seed 000, chapter 2: c = a + b, one work-item per element. The global size is rounded up to
 * a multiple of the work-group size, so surplus work-items return at the guard. */
#include "common/parskel.h"

__kernel void vector_add(__global const T *a, __global const T *b, __global T *c, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}
