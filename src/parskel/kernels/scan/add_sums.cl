/* The last step of the recursive block scans (seed 000, sections 4.4 and 4.5): add to every
 * element of block g the scanned total of the blocks before it, sums[g]. A block holds
 * PER_ITEM * WG elements; work-item k of a group takes elements k, k + WG, k + 2 WG, ... */
#include "common/parskel.h"

#ifndef WG
#define WG 256
#endif
#ifndef PER_ITEM
#define PER_ITEM 2
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void add_sums(__global T *data, __global const T *sums, uint n)
{
    uint group = get_group_id(0);
    /* the first block's offset is zero */
    if (group == 0)
        return;
    T offset = sums[group];
    uint i = group * (PER_ITEM * WG) + get_local_id(0);
    for (uint k = 0; k < PER_ITEM; ++k, i += WG)
        if (i < n)
            data[i] += offset;
}
