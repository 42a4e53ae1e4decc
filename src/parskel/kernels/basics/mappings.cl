/* Seed 003: four ways to map work-items onto data. Each kernel writes, into every element it
 * owns, the global index of the work-item that owns it, so the pattern can be read back. */
#include "common/parskel.h"

/* Work-item i owns element i. */
__kernel void one_to_one(__global uint *owner)
{
    uint i = get_global_id(0);
    owner[i] = i;
}

/* Work-item i owns the contiguous run i*per_item ... i*per_item + per_item - 1. */
__kernel void contiguous(__global uint *owner, uint per_item)
{
    uint i = get_global_id(0);
    for (uint k = 0; k < per_item; ++k)
        owner[i * per_item + k] = i;
}

/* Work-item i owns i, i + W, i + 2W, ... where W is the number of work-items. */
__kernel void strided(__global uint *owner, uint per_item)
{
    uint i = get_global_id(0);
    uint items = get_global_size(0);
    for (uint k = 0; k < per_item; ++k)
        owner[i + k * items] = i;
}

/* Within a work-group of L items that owns L*per_item elements, item l owns l, l + L, ... */
__kernel void locally_spaced(__global uint *owner, uint per_item)
{
    uint group_size = get_local_size(0);
    uint base = get_group_id(0) * per_item * group_size + get_local_id(0);
    for (uint k = 0; k < per_item; ++k)
        owner[base + k * group_size] = get_global_id(0);
}
