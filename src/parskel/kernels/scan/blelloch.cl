/* Seed 000 section 4.3: Blelloch's work-efficient scan over a whole buffer whose length is a
 * power of two, one launch per tree level; global size = number of parent nodes of the level. */
#include "common/parskel.h"

__kernel void up_sweep(__global T *tree, uint offset)
{
    uint right = (get_global_id(0) + 1) * (offset << 1) - 1;
    tree[right] += tree[right - offset];
}

__kernel void down_sweep(__global T *tree, uint offset)
{
    uint right = (get_global_id(0) + 1) * (offset << 1) - 1;
    T left = tree[right - offset];
    tree[right - offset] = tree[right];
    tree[right] += left;
}
