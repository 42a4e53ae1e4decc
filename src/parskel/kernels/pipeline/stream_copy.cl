/* A host copy made by a CPU device (parskel.pipeline.copies): bytes [0, n) of src to dst, each
 * work-item a piece of `piece` bytes. Within a piece, dst is written in whole aligned 64-byte
 * lines with non-temporal stores, so that no line of the destination is read before it is
 * written (what a plain copy does below glibc's non-temporal threshold), and the piece's ends
 * byte by byte. src may start anywhere: it is read in vectors of bytes. */
#include "common/parskel.h"

__kernel void stream_copy(__global const uchar *src, __global uchar *dst, ulong n, ulong piece)
{
    ulong lo = get_global_id(0) * piece;
    ulong hi = lo + piece < n ? lo + piece : n;
    ulong i = lo;
    ulong head = lo + ((64 - ((ulong)(dst + lo) & 63)) & 63); /* the first line boundary */
    for (; i < hi && i < head; ++i)
        dst[i] = src[i];
    for (; i + 64 <= hi; i += 64) {
        uint16 line = (uint16)(as_uint4(vload16(0, src + i)), as_uint4(vload16(1, src + i)),
                               as_uint4(vload16(2, src + i)), as_uint4(vload16(3, src + i)));
#if defined(__clang__)
        __builtin_nontemporal_store(line, (__global uint16 *)(dst + i));
#else
        *(__global uint16 *)(dst + i) = line;
#endif
    }
    for (; i < hi; ++i)
        dst[i] = src[i];
    mem_fence(CLK_GLOBAL_MEM_FENCE); /* the non-temporal stores drained before the kernel ends */
}
