/* AllPairs: C[row][col] = reduce over l of zip(A[row][l], B[l][col]), folded in order of l, so
 * the reduce operator need only be associative. One work-item per element of C.
 * Glue: PS_T (result), PS_A_T, PS_B_T, PS_ZIP(a, b) and PS_OP(x, y) (the user calls, which may
 * use ps_row, ps_col, ps_l), PS_EXTRA_PARAMS. */
#include "common/parskel.h"
#include "identity.h"

__kernel void ps_all_pairs(__global const PS_A_T *ps_a, __global const PS_B_T *ps_b,
                           __global PS_T *ps_c, __global const PS_T *ps_identity, uint ps_n,
                           uint ps_k, uint ps_m PS_EXTRA_PARAMS)
{
    uint ps_col = get_global_id(0), ps_row = get_global_id(1);
    if (ps_row >= ps_n || ps_col >= ps_m)
        return;
    PS_T acc = *ps_identity;
    for (uint ps_l = 0; ps_l < ps_k; ++ps_l)
        acc = PS_OP(acc, PS_ZIP(ps_a[ps_row * ps_k + ps_l], ps_b[ps_l * ps_m + ps_col]));
    ps_c[ps_row * ps_m + ps_col] = acc;
}
