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
    /* Branch-free: min/max and two stores measured faster than a conditional swap (the
     * work-items of a group never diverge, and a CPU compiler can pack them into lanes). */
    uint a = keys[i];
    uint b = keys[i + inc];
    uint lo = min(a, b);
    uint hi = max(a, b);
    keys[i] = ascending ? lo : hi;
    keys[i + inc] = ascending ? hi : lo;
}
