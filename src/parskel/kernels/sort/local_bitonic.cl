/* A whole sort of up to CAPACITY keys in one work-group: keys and their positions in local
 * memory, a bitonic network over them, keys decoded and values gathered on the way out. One
 * launch, for the inputs too small for a multi-pass sort to pay off (the single-tile path).
 *
 * Pairs are ordered by (encoded key, position), so equal keys keep their input order: the sort
 * is stable. Slots past n hold the largest key and positions past every real one. Launched with
 * several work-groups, each sorts its own row of n keys (a batched sort), values moving within
 * their row. Defines: KEY_KIND (keys.h), CAPACITY (a power of two), WG (work-items), WITH_VALUES. */
#include "keys.h"

#ifndef CAPACITY
#define CAPACITY 4096
#endif
#ifndef WG
#define WG 256
#endif
#ifndef WITH_VALUES
#define WITH_VALUES 0
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void local_bitonic(
    __global const uint *keys_in, __global uint *keys_out, __global const uint *values_in,
    __global uint *values_out, uint n)
{
    __local uint key[CAPACITY];
    __local uint pos[CAPACITY];
    uint tid = get_local_id(0);
    size_t row = (size_t)get_group_id(0) * n;
    keys_in += row;
    keys_out += row;
#if WITH_VALUES
    values_in += row;
    values_out += row;
#endif
    /* the network needs a power of two no smaller than n: sort only that much */
    uint size = 1;
    while (size < n)
        size <<= 1;
    for (uint i = tid; i < size; i += WG) {
        key[i] = i < n ? encode_key(keys_in[i]) : 0xffffffffu;
        pos[i] = i;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint box = 2; box <= size; box <<= 1) {
        for (uint stride = box >> 1; stride > 0; stride >>= 1) {
            for (uint t = tid; t < size / 2; t += WG) {
                uint i = 2 * t - (t & (stride - 1));
                uint j = i + stride;
                uint ki = key[i], kj = key[j], pi = pos[i], pj = pos[j];
                int later = ki > kj || (ki == kj && pi > pj);
                /* ascending within boxes whose index bit is clear, descending in the others */
                if (later == ((i & box) == 0)) {
                    key[i] = kj;
                    key[j] = ki;
                    pos[i] = pj;
                    pos[j] = pi;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    for (uint i = tid; i < n; i += WG) {
        keys_out[i] = decode_key(key[i]);
#if WITH_VALUES
        values_out[i] = values_in[pos[i]];
#endif
    }
}
