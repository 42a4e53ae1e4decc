/* Seed 000, section 5.2.4: radix sort whose per-work-item histograms live in local memory
 * (arrays indexed at run time are costly in registers on many GPUs). counts holds
 * BUCKETS x WG uints (WG: the work-group size, fixed at build time), laid out bucket-major,
 * counts[bucket * size + lid], so that neighbouring work-items touch neighbouring banks.
 * No work-item reads another's counts, so no barrier is needed. */
#include "common/parskel.h"
#include "radix.h"

__kernel void radix_histogram(__global const uint *keys, __global uint *histograms, uint shift)
{
    uint item = get_global_id(0);
    uint items = get_global_size(0);
    uint lid = get_local_id(0);
    uint size = WG;
    __local uint counts[BUCKETS * WG];
    for (uint b = 0; b < BUCKETS; ++b)
        counts[b * size + lid] = 0;
    __global const uint *mine = keys + item * KEYS_PER_ITEM;
    for (uint k = 0; k < KEYS_PER_ITEM; ++k)
        counts[DIGIT(mine[k], shift) * size + lid]++;
    for (uint b = 0; b < BUCKETS; ++b)
        histograms[b * items + item] = counts[b * size + lid];
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
    uint lid = get_local_id(0);
    uint size = WG;
    __local uint next[BUCKETS * WG];
    for (uint b = 0; b < BUCKETS; ++b)
        next[b * size + lid] = offsets[b * items + item];
    uint first = item * KEYS_PER_ITEM;
    for (uint k = 0; k < KEYS_PER_ITEM; ++k) {
        uint key = keys[first + k];
        uint to = next[DIGIT(key, shift) * size + lid]++;
        keys_out[to] = key;
#if WITH_VALUES
        values_out[to] = values[first + k];
#endif
    }
}
