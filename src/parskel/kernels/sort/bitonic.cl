/* Seed 000, section 5.2.1: one column of a bitonic sorting network. The host pads the keys to a
 * power of two P and launches P/2 work-items once per (box width, increment); each work-item
 * owns one comparator. */
#include "common/parskel.h"

__kernel void bitonic_step(__global uint *keys, uint inc, uint boxwidth)
{
    uint id = get_global_id(0);
    /* The comparator's upper wire: the id with a zero bit inserted at the position of inc. */
    uint low = id & (inc - 1);
    uint i = (id << 1) - low;
    bool ascending = (i & boxwidth) == 0;
    uint a = keys[i];
    uint b = keys[i + inc];
    if (ascending ? a > b : a < b) {
        keys[i] = b;
        keys[i + inc] = a;
    }
}
