/* Turning one kind of scan into the other, for variants that produce only one of them. */
#include "common/parskel.h"

/* Exclusive from inclusive: a shift by one. dst must not be src. */
__kernel void shift_right(__global const T *src, __global T *dst, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        dst[i] = i ? src[i - 1] : (T)0;
}

/* Inclusive from exclusive: add the input back. dst may be x (each element is read, then written). */
__kernel void add_input(__global const T *exclusive, __global const T *x, __global T *dst, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        dst[i] = exclusive[i] + x[i];
}
