/* Prefix sums of one of the scan dtypes in one pass (see single_pass.h): T is the type the sums
 * are taken in (signed integers as their unsigned twins), WG the work-group size, ITEMS the
 * elements of a work-item, VEC the width of its loads (ITEMS * sizeof(T) a multiple of it),
 * INCLUSIVE the kind of scan, FALLBACK and SPINS the look-back's behaviour. */
#include "common/parskel.h"

#ifndef WG
#define WG 256
#endif
#ifndef INCLUSIVE
#define INCLUSIVE 0
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define SP_T T
#define SP_VT CAT(T, VEC)
#define SP_OP(a, b) ((a) + (b))
#define SP_EXTRA_PARAMS
#define SP_EXTRA_ARGS
#include "single_pass.h"

/* The tile state is one buffer, zeroed before the launch as far as it must be: the counter and
 * the flags (tiles + 1 words), rounded up to whole 16-byte words, then the values (see
 * single_pass.h), so that the host allocates and clears it with one command each. */
#define SP_VALUES_AT(tiles) (((tiles) + 4) & ~3u)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) SP_BOUNDS
void single_pass_scan(__global const T *in, __global T *out, __global uint *state, uint n, uint tiles)
{
    SP_LOCALS
    __global T *values = (__global T *)(state + SP_VALUES_AT(tiles));
    sp_scan_tile(in, out, state, values, n, tiles, (T)0, SP_LOCAL_ARGS);
}
