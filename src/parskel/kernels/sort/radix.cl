/* Seed 000, section 5.2.3: radix sort with a private histogram per work-item. */
#include "common/parskel.h"
#include "radix.h"

__kernel void radix_histogram(__global const uint *keys, __global uint *histograms, uint shift)
{
    uint item = get_global_id(0);
    uint items = get_global_size(0);
    uint count[BUCKETS];
    for (uint b = 0; b < BUCKETS; ++b)
        count[b] = 0;
    __global const uint *mine = keys + item * KEYS_PER_ITEM;
    for (uint k = 0; k < KEYS_PER_ITEM; ++k)
        count[DIGIT(mine[k], shift)]++;
    for (uint b = 0; b < BUCKETS; ++b)
        histograms[b * items + item] = count[b];
}

__kernel void radix_permute(__global const uint *keys, __global uint *keys_out,
                            __global const uint *offsets, uint shift
#if WITH_VALUES
                            , __global const uint *values, __global uint *values_out
#endif
                            )
{
    uint item = get_global_id(0);
    uint items = get_global_size(0);
    uint next[BUCKETS];
    for (uint b = 0; b < BUCKETS; ++b)
        next[b] = offsets[b * items + item];
    uint first = item * KEYS_PER_ITEM;
    for (uint k = 0; k < KEYS_PER_ITEM; ++k) {
        uint key = keys[first + k];
        uint to = next[DIGIT(key, shift)]++;
        keys_out[to] = key;
#if WITH_VALUES
        values_out[to] = values[first + k];
#endif
    }
}
