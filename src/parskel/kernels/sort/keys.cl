/* The key maps of keys.h applied in place, before a sort and after it. */
#include "keys.h"

__kernel void encode_keys(__global uint *keys, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        keys[i] = encode_key(keys[i]);
}

__kernel void decode_keys(__global uint *keys, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        keys[i] = decode_key(keys[i]);
}
