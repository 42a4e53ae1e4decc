/* Global-memory bandwidth with seed 003's four mappings of work-items onto data.
 *
 *   MAPPING  1 one-to-one: item i takes element i (PER_ITEM is 1)
 *            2 contiguous one-to-many: item i takes i*PER_ITEM ... i*PER_ITEM + PER_ITEM - 1
 *            3 strided one-to-many: item i takes i, i + W, i + 2W, ... (W work-items in all)
 *            4 locally spaced: in a work-group of L items owning L*PER_ITEM elements, item l
 *              takes l, l + L, l + 2L, ...
 *   ACCESS   0 copy (dst = src), 1 read only, 2 write only
 *   PER_ITEM elements per work-item
 *
 * The read-only kernel adds up what it reads and stores the sum only when flag * sum != 0: the
 * host passes flag = 0, so no write is timed, yet no load can be dropped. */
#include "common/parskel.h"

#ifndef MAPPING
#define MAPPING 1
#endif
#ifndef ACCESS
#define ACCESS 0
#endif
#ifndef PER_ITEM
#define PER_ITEM 1
#endif

#define ONE_TO_ONE 1
#define CONTIGUOUS 2
#define STRIDED 3
#define LOCALLY_SPACED 4

#define COPY 0
#define READ 1
#define WRITE 2

/* the element that work-item's k-th access touches */
inline size_t element(uint k)
{
#if MAPPING == ONE_TO_ONE
    return get_global_id(0);
#elif MAPPING == CONTIGUOUS
    return get_global_id(0) * PER_ITEM + k;
#elif MAPPING == STRIDED
    return get_global_id(0) + (size_t)k * get_global_size(0);
#elif MAPPING == LOCALLY_SPACED
    return get_group_id(0) * get_local_size(0) * PER_ITEM + get_local_id(0) + (size_t)k * get_local_size(0);
#else
#error "unknown MAPPING"
#endif
}

__kernel void traffic(__global const T *src, __global T *dst, T value, int flag)
{
#if ACCESS == READ
    T sum = (T)0;
#endif
    _Pragma("unroll") for (uint k = 0; k < PER_ITEM; ++k)
    {
        size_t i = element(k);
#if ACCESS == COPY
        dst[i] = src[i];
#elif ACCESS == READ
        sum += src[i];
#elif ACCESS == WRITE
        dst[i] = value;
#endif
    }
#if ACCESS == READ
    if ((T)flag * sum != (T)0)
        dst[get_global_id(0)] = sum;
#endif
}

/* Work-item i copies element i * stride: a stride above 1 leaves the rest of each memory
 * transaction unused, so the useful bandwidth falls with the stride. */
__kernel void stride_copy(__global const T *src, __global T *dst, uint stride)
{
    size_t i = get_global_id(0) * (size_t)stride;
    dst[i] = src[i];
}
