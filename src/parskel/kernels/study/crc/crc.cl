/* crc, the compute kernel of seed 002 §6.2: each byte's share of the message's CRC-8.
 *
 * The CRC of a message is the XOR, over its bytes, of each byte pushed through the CRC's
 * "one zero byte" map T as many times as bytes follow it, itself included: T^d(b) for a byte
 * at distance d from the end. tables[i * 256 + v] holds T^(2^i)(v), so T^d is at most 32
 * lookups, one per set bit of d, each behind a data-dependent branch.
 *
 *   crc_bytes    COARSEN adjacent bytes per work-item (1: the baseline, one per byte),
 *                the 32-step loop unrolled by UNROLL (1, 2, 4, 8, 16 or 32)
 *   crc_strided  a fixed number of work-items, each taking every global-size-th byte */
#include "common/parskel.h"
#include "study/repeat.h"

#ifndef COARSEN
#define COARSEN 1
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

#define STEP(ctx, i) if (((d >> (i)) & 1u) == 1u) v = tables[(i) * 256 + v];

uint share(uint v, uint d, __global const uchar *tables)
{
#if UNROLL == 1
    for (uint i = 0; i < 32; ++i)
        STEP(_, i)
#else
    for (uint i = 0; i < 32; i += UNROLL) {
        PS_REPEAT(UNROLL, STEP, _, i)
    }
#endif
    return v;
}

__kernel void crc_bytes(__global const uchar *data, __global const uchar *tables, __global uchar *out, uint n)
{
    uint first = get_global_id(0) * COARSEN;
    for (uint k = 0; k < COARSEN; ++k) {
        uint t = first + k;
        if (t < n)
            out[t] = (uchar)share(data[t], n - t, tables);
    }
}

__kernel void crc_strided(__global const uchar *data, __global const uchar *tables, __global uchar *out, uint n)
{
    for (uint t = get_global_id(0); t < n; t += get_global_size(0))
        out[t] = (uchar)share(data[t], n - t, tables);
}
