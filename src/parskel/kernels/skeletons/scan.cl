/* Scan, inclusive or exclusive, for any associative operator (commutativity not needed), in one
 * pass with decoupled look-back: scan/single_pass.h with the user's operator and type.
 * Glue: PS_T, PS_OP(a, b), PS_EXTRA_PARAMS and PS_EXTRA_ARGS (the operator's extra arguments),
 * PS_WG (the work-group size), ITEMS, VEC (and PS_VT, the VEC-wide vector of PS_T), INCLUSIVE,
 * FALLBACK, SPINS and PACKED. The last tile leaves the total at ps_values[2 * ps_tiles]. */
#include "common/parskel.h"
#include "identity.h"

#define WG PS_WG
#define SP_T PS_T
#define SP_VT PS_VT
#define SP_OP(a, b) PS_OP(a, b)
#define SP_EXTRA_PARAMS PS_EXTRA_PARAMS
#define SP_EXTRA_ARGS PS_EXTRA_ARGS
#define SP_TOTAL 1
#include "scan/single_pass.h"

__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) SP_BOUNDS
void ps_scan(__global const PS_T *ps_in, __global PS_T *ps_out, __global uint *ps_state,
             __global PS_T *ps_values, __global const PS_T *ps_identity, uint ps_n, uint ps_tiles
             PS_EXTRA_PARAMS)
{
    SP_LOCALS
    sp_scan_tile(ps_in, ps_out, ps_state, ps_values, ps_n, ps_tiles, *ps_identity, SP_LOCAL_ARGS PS_EXTRA_ARGS);
}
