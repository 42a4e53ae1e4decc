/* Seed 000 §3.2: one element of C = A (m x k) * B (k x n) per work-item, row-major.
 * The range is rounded up to whole work-groups, so work-items outside C return at once. */
#include "common/parskel.h"

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

__kernel void matmul_naive(__global const T *a, __global const T *b, __global T *c,
                           uint m, uint k, uint n)
{
    uint col = get_global_id(0);
    uint row = get_global_id(1);
    if (row >= m || col >= n)
        return;
    /* size_t offsets: a row offset can pass 2^32 elements on a large device */
    __global const T *a_row = a + (size_t)row * k;
    __global const T *b_col = b + col;
    T sum = 0;
    for (uint i = 0; i < k; ++i)
        sum += a_row[i] * b_col[(size_t)i * n];
    c[(size_t)row * n + col] = sum;
}
