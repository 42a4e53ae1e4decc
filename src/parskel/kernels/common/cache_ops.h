/* Cache operators on 16-byte accesses, where PTX can be written: CUDA, and NVIDIA's OpenCL
 * (the host defines PS_PTX). PS_CACHE_OPS is 1 there and 0 elsewhere, where a kernel keeps its
 * plain loads and stores.
 *
 * ps_read16_cs and ps_write16_cs move 16 bytes (aligned) as four words with the operator .cs,
 * "streaming": the lines are marked to be evicted first, for data read or written once. CUDA
 * passes generic addresses, which are converted to global ones first: a generic ld.cs took
 * the scan of 2^28 int32 (scan/single_pass.h) from 0.672 to 0.756 ms on an H200, where the
 * global one took 0.672-0.678. NVIDIA's OpenCL passes global addresses. */
#ifndef PARSKEL_COMMON_CACHE_OPS_H
#define PARSKEL_COMMON_CACHE_OPS_H

#include "common/parskel.h"

#if defined(PS_CUDA) || defined(PS_PTX)
#define PS_CACHE_OPS 1
#if defined(PS_PTX)
#define PS_CS_AT(k) "[%" #k "]"
#define PS_CS_TO_GLOBAL(k) ""
#else
#define PS_CS_AT(k) "[ps_g]"
#define PS_CS_TO_GLOBAL(k) ".reg .u64 ps_g; cvta.to.global.u64 ps_g, %" #k "; "
#endif

PS_INLINE void ps_read16_cs(__global const void *from, uint *w)
{
    asm("{ " PS_CS_TO_GLOBAL(4) "ld.global.cs.v4.u32 {%0, %1, %2, %3}, " PS_CS_AT(4) "; }"
        : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
        : "l"((ulong)from));
}

PS_INLINE void ps_write16_cs(__global void *to, const uint *w)
{
    asm volatile("{ " PS_CS_TO_GLOBAL(0) "st.global.cs.v4.u32 " PS_CS_AT(0) ", {%1, %2, %3, %4}; }"
                 :
                 : "l"((ulong)to), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])
                 : "memory");
}
#else
#define PS_CACHE_OPS 0
#endif

#endif
