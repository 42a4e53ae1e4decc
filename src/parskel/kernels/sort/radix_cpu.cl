#include "common/parskel.h"
#include "keys.h"

#ifndef RADIX_BITS
#define RADIX_BITS 8
#endif
#define BUCKETS (1 << RADIX_BITS)
#define DIGIT(key, shift) (((key) >> (shift)) & (BUCKETS - 1))
#ifndef WITH_VALUES
#define WITH_VALUES 0
#endif

#ifndef AHEAD
#define AHEAD 32
#endif

inline uint run_start(uint n, uint chunk) { return PS_MIN(n, (uint)get_group_id(0) * chunk); }
inline uint run_end(uint n, uint chunk) { return PS_MIN(n, run_start(n, chunk) + chunk); }

__kernel void radix_cpu_histogram(__global const uint *keys, __global uint *counts, uint n, uint chunk,
                                  uint shift, uint encode)
{
    uint groups = get_num_groups(0);
    uint end = run_end(n, chunk);
    uint count[BUCKETS];
    for (uint b = 0; b < BUCKETS; ++b)
        count[b] = 0;
    if (encode) {
        for (uint i = run_start(n, chunk); i < end; ++i)
            count[DIGIT(encode_key(keys[i]), shift)]++;
    } else {
        for (uint i = run_start(n, chunk); i < end; ++i)
            count[DIGIT(keys[i], shift)]++;
    }
    for (uint b = 0; b < BUCKETS; ++b)
        counts[b * groups + get_group_id(0)] = count[b];
}

inline void scatter_run(__global const uint *keys, __global uint *keys_out,
#if WITH_VALUES
                        __global const uint *values, __global uint *values_out,
#endif
                        uint *next, uint start, uint end, uint shift, bool encode, bool decode)
{
    for (uint i = start; i < end; ++i) {
        uint key = keys[i];
        if (encode)
            key = encode_key(key);
        uint to = next[DIGIT(key, shift)]++;
        PS_PREFETCH_WRITE(keys_out + to + AHEAD);
        keys_out[to] = decode ? decode_key(key) : key;
#if WITH_VALUES
        PS_PREFETCH_WRITE(values_out + to + AHEAD);
        values_out[to] = values[i];
#endif
    }
}

#if WITH_VALUES
#define SCATTER(encode, decode) \
    scatter_run(keys, keys_out, values, values_out, next, start, end, shift, encode, decode)
#else
#define SCATTER(encode, decode) scatter_run(keys, keys_out, next, start, end, shift, encode, decode)
#endif

__kernel void radix_cpu_scatter(__global const uint *keys, __global uint *keys_out,
                                __global const uint *counts, uint n, uint chunk, uint shift,
                                uint encode, uint decode
#if WITH_VALUES
                                , __global const uint *values, __global uint *values_out
#endif
                                )
{
    uint groups = get_num_groups(0);
    uint group = get_group_id(0);
    uint next[BUCKETS];
    uint slot = 0;
    for (uint b = 0; b < BUCKETS; ++b) {
        for (uint h = 0; h < groups; ++h) {
            if (h == group)
                next[b] = slot;
            slot += counts[b * groups + h];
        }
    }
    uint start = run_start(n, chunk);
    uint end = run_end(n, chunk);
    if (encode && decode)
        SCATTER(true, true);
    else if (encode)
        SCATTER(true, false);
    else if (decode)
        SCATTER(false, true);
    else
        SCATTER(false, false);
}
