/* Seed 000, section 5.2.5: radix_local.cl with the keys (and values) read as uint16 vectors,
 * fewer and larger memory requests. KEYS_PER_ITEM must be a multiple of 16. Vector lanes
 * cannot be indexed at run time, so each step is written once per lane with LANES. */
#include "common/parskel.h"
#include "radix.h"

#define VECTORS_PER_ITEM (KEYS_PER_ITEM / 16)
#define LANES(F) F(s0) F(s1) F(s2) F(s3) F(s4) F(s5) F(s6) F(s7) \
                 F(s8) F(s9) F(sa) F(sb) F(sc) F(sd) F(se) F(sf)

__kernel void radix_histogram(__global const uint16 *keys, __global uint *histograms, uint shift)
{
    uint item = get_global_id(0);
    uint items = get_global_size(0);
    uint lid = get_local_id(0);
    uint size = WG;
    __local uint counts[BUCKETS * WG];
    for (uint b = 0; b < BUCKETS; ++b)
        counts[b * size + lid] = 0;
    __global const uint16 *mine = keys + item * VECTORS_PER_ITEM;
    for (uint v = 0; v < VECTORS_PER_ITEM; ++v) {
        uint16 digits = (mine[v] >> shift) & (uint)RADIX_MASK;
#define COUNT(lane) counts[digits.lane * size + lid]++;
        LANES(COUNT)
#undef COUNT
    }
    for (uint b = 0; b < BUCKETS; ++b)
        histograms[b * items + item] = counts[b * size + lid];
}

__kernel void radix_permute(__global const uint16 *keys, __global uint *keys_out,
                            __global const uint *offsets, uint shift
#if WITH_VALUES
                            , __global const uint16 *values, __global uint *values_out
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
    uint first = item * VECTORS_PER_ITEM;
    for (uint v = 0; v < VECTORS_PER_ITEM; ++v) {
        uint16 key = keys[first + v];
        uint16 digits = (key >> shift) & (uint)RADIX_MASK;
#if WITH_VALUES
        uint16 value = values[first + v];
#define PLACE(lane) { uint to = next[digits.lane * size + lid]++; \
                      keys_out[to] = key.lane; values_out[to] = value.lane; }
#else
#define PLACE(lane) keys_out[next[digits.lane * size + lid]++] = key.lane;
#endif
        LANES(PLACE)
#undef PLACE
    }
}
