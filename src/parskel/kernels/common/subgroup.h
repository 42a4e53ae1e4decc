/* Warp (sub-group) operations where the device has them, for kernels that can also run without.
 *
 * PS_WARP_OPS is defined to 1 where the functions below exist; a kernel keeps a local-memory
 * path for the other devices under #if !PS_WARP_OPS. A warp is PS_WARP consecutive work-items
 * of a one-dimensional work-group whose size is a multiple of PS_WARP; every work-item of the
 * warp must call a warp function together (no divergence around the call).
 *
 * - CUDA (PS_CUDA): the *_sync intrinsics over the full warp.
 * - NVIDIA's OpenCL (the host defines PS_PTX): it reports OpenCL C 1.2 without sub-groups, so
 *   the same operations are written as inline PTX (sm_70 and later).
 * - OpenCL with cl_khr_subgroups has shuffles only from OpenCL 2.0's extended sub-group
 *   extensions, which neither PoCL's CPU device nor NVIDIA's driver reports; such devices take
 *   the local-memory paths, as does every other device.
 *
 *   ps_lane()            the work-item's lane in its warp, 0 .. PS_WARP - 1
 *   ps_warp_sync()       orders the warp's local-memory accesses before and after it
 *   ps_ballot(p)         bit k set when lane k's p is true
 *   ps_match_bits(x, b)  bit k set when lane k holds the same x (below 2^b), from b ballots,
 *                        one per bit (a sort of 2^28 keys ran 1.45x faster on an H100 so than
 *                        with the match.any instruction, whose throughput is low)
 *   ps_shfl(x, k)        lane k's x (uint)
 *   ps_shfl_up(x, d)     lane (lane - d)'s x; a lane below d gets its own x back
 *   ps_shfl_down(x, d)   lane (lane + d)'s x; a lane from 32 - d on gets its own x back
 *   ps_lanes_below()     bits of the lanes below this one
 *   PS_SHFL_ANY(T, out, x, k), PS_SHFL_UP_ANY and PS_SHFL_DOWN_ANY: the same for any type T
 *                        (structs included), moved 32 bits at a time. */
#ifndef PARSKEL_COMMON_SUBGROUP_H
#define PARSKEL_COMMON_SUBGROUP_H

#include "common/parskel.h"

/* 32-bit words that hold a T */
#define PS_WORDS(T) ((sizeof(T) + 3) / 4)

#if defined(PS_CUDA) || defined(PS_PTX)
#define PS_WARP_OPS 1
#define PS_WARP 32
#else
#define PS_WARP_OPS 0
#define PS_WARP 1
#endif

#if defined(PS_PTX)

/* special registers read without `volatile`, so that the compiler may treat them as values (with
 * `volatile`, each key a sort ranked read %laneid again and rebuilt its mask: 87 more PTX
 * instructions in a pass of 24 keys a work-item than through CUDA, 4 more now) */
PS_INLINE uint ps_lane(void)
{
    uint r;
    asm("mov.u32 %0, %%laneid;" : "=r"(r));
    return r;
}
PS_INLINE uint ps_lanes_below(void)
{
    uint r;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
    return r;
}
PS_INLINE void ps_warp_sync(void) { asm volatile("bar.warp.sync -1;" ::: "memory"); }
PS_INLINE uint ps_ballot(int p)
{
    uint r;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.s32 q, %1, 0;\n\tvote.sync.ballot.b32 %0, q, -1;\n\t}"
                 : "=r"(r) : "r"(p));
    return r;
}
PS_INLINE uint ps_shfl(uint x, uint k)
{
    uint r;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 31, -1;" : "=r"(r) : "r"(x), "r"(k));
    return r;
}
PS_INLINE uint ps_shfl_up(uint x, uint d)
{
    uint r;
    asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, -1;" : "=r"(r) : "r"(x), "r"(d));
    return r;
}
PS_INLINE uint ps_shfl_down(uint x, uint d)
{
    uint r;
    asm volatile("shfl.sync.down.b32 %0, %1, %2, 31, -1;" : "=r"(r) : "r"(x), "r"(d));
    return r;
}

#elif defined(PS_CUDA)

PS_INLINE uint ps_lane(void) { return threadIdx.x & 31u; }
#define ps_warp_sync() __syncwarp()
PS_INLINE uint ps_ballot(int p) { return __ballot_sync(0xffffffffu, p); }
PS_INLINE uint ps_shfl(uint x, uint k) { return __shfl_sync(0xffffffffu, x, k); }
PS_INLINE uint ps_shfl_up(uint x, uint d) { return __shfl_up_sync(0xffffffffu, x, d); }
PS_INLINE uint ps_shfl_down(uint x, uint d) { return __shfl_down_sync(0xffffffffu, x, d); }

#endif

#if defined(PS_CUDA) && !defined(PS_PTX)
PS_INLINE uint ps_lanes_below(void) { return (1u << ps_lane()) - 1u; }
#endif

#if PS_WARP_OPS

/* the lanes whose bit `mask` of x is as this lane's: a ballot of the bit, inverted where this
 * lane's bit is clear, as one PTX block of four instructions (written in C, the compiler
 * shifts the bit out, compares it twice and selects) */
PS_INLINE uint ps_same_bit(uint x, uint mask)
{
    uint r;
    asm volatile("{\n\t.reg .pred q;\n\t.reg .b32 t;\n\tand.b32 t, %1, %2;\n\tsetp.ne.u32 q, t, 0;\n\t"
                 "vote.sync.ballot.b32 %0, q, -1;\n\t@!q not.b32 %0, %0;\n\t}"
                 : "=r"(r) : "r"(x), "r"(mask));
    return r;
}

PS_INLINE uint ps_match_bits(uint x, uint bits)
{
    uint peers = 0xffffffffu;
    for (uint b = 0; b < bits; ++b)
        peers &= ps_same_bit(x, 1u << b);
    return peers;
}

/* any type through its 32-bit words: a union both C and C++ accept */
#define PS_SHFL_ANY_BY(FN, T, out, x, k)                                                     \
    do {                                                                                  \
        union { T value; uint word[PS_WORDS(T)]; } ps_a, ps_b;                            \
        ps_a.value = (x);                                                                 \
        for (uint ps_w = 0; ps_w < PS_WORDS(T); ++ps_w)                                   \
            ps_b.word[ps_w] = FN(ps_a.word[ps_w], (k));                                   \
        (out) = ps_b.value;                                                               \
    } while (0)
#define PS_SHFL_ANY(T, out, x, k) PS_SHFL_ANY_BY(ps_shfl, T, out, x, k)
#define PS_SHFL_UP_ANY(T, out, x, d) PS_SHFL_ANY_BY(ps_shfl_up, T, out, x, d)
#define PS_SHFL_DOWN_ANY(T, out, x, d) PS_SHFL_ANY_BY(ps_shfl_down, T, out, x, d)
#endif

#endif
