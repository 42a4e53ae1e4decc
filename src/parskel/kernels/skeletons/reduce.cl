/* Reduce and MapReduce: each work-group folds one contiguous chunk, each work-item a contiguous
 * piece of it, then the group combines neighbours pairwise (interleaved tree). Operands are
 * combined strictly in index order, so an associative operator needs no commutativity.
 * The host applies ps_reduce_partials until one value is left.
 * Glue: PS_T (result type), PS_IN_T, PS_LOAD(i) (element i of the input, mapped for
 * MapReduce), PS_OP(a, b) (the user operator), PS_MAP_EXTRA_PARAMS and PS_OP_EXTRA_PARAMS
 * (the extra arguments of the map function and of the operator), PS_WG (the work-group size). */
#include "common/parskel.h"
#include "identity.h"

#define PS_GROUP_FOLD(ACC_LOAD)                                                     \
    __local PS_T ps_scratch[PS_WG];                                                 \
    uint g = get_group_id(0), t = get_local_id(0), L = get_local_size(0);           \
    uint begin = g * ps_chunk;                                                      \
    uint end = PS_MIN(begin + ps_chunk, ps_n);                                      \
    uint per = (ps_chunk + L - 1) / L;                                              \
    uint lo = PS_MIN(begin + t * per, end);                                         \
    uint hi = PS_MIN(lo + per, end);                                                \
    PS_T acc = *ps_identity;                                                        \
    for (uint ps_i = lo; ps_i < hi; ++ps_i)                                         \
        acc = PS_OP(acc, ACC_LOAD(ps_i));                                           \
    ps_scratch[t] = acc;                                                            \
    barrier(CLK_LOCAL_MEM_FENCE);                                                   \
    for (uint s = 1; s < L; s <<= 1) {                                              \
        if ((t & (2 * s - 1)) == 0 && t + s < L)                                    \
            ps_scratch[t] = PS_OP(ps_scratch[t], ps_scratch[t + s]);                \
        barrier(CLK_LOCAL_MEM_FENCE);                                               \
    }                                                                               \
    if (t == 0)                                                                     \
        ps_out[g] = ps_scratch[0];

#define PS_PARTIAL(i) ps_in[i]

__kernel void ps_reduce_first(__global const PS_IN_T *ps_in, __global PS_T *ps_out,
                              __global const PS_T *ps_identity, uint ps_n, uint ps_chunk,
                              uint ps_cols
                              PS_MAP_EXTRA_PARAMS PS_OP_EXTRA_PARAMS)
{
    PS_GROUP_FOLD(PS_LOAD)
}

__kernel void ps_reduce_partials(__global const PS_T *ps_in, __global PS_T *ps_out,
                                 __global const PS_T *ps_identity, uint ps_n, uint ps_chunk
                                 PS_OP_EXTRA_PARAMS)
{
    PS_GROUP_FOLD(PS_PARTIAL)
}
