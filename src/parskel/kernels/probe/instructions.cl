/* Seed 003's instruction microbenchmark: the throughput of one operation, measured by a chain
 * of STEPS applications per work-item.
 *
 *   OP      what one step does (the OP_* codes below)
 *   T       the element type (float, double; uint for the integer operations, whose
 *           overflow wraps where a signed one would be undefined)
 *   STEPS   the length of each chain
 *   CHAINS  independent chains per work-item, interleaved step by step: 1 is a dependent chain,
 *           whose speed is set by the operation's latency; more expose instruction-level
 *           parallelism until the pipelines are full
 *   UNROLL  0 unrolls the chain fully; U > 0 unrolls U steps inside a loop that is not unrolled
 *
 * The inputs are kernel arguments and every chain starts from a value that depends on the
 * work-item, so nothing can be computed at build time or shared between lanes. The result is
 * stored only when flag * result != 0: the host passes flag = 0, so no memory traffic is timed,
 * yet the compiler must compute the chains to decide the branch.
 *
 * Floating-point chains apply the operation to one value (x = x * a). Integer arithmetic is
 * associative, so a compiler would fold x + a + a + ... into one multiply; integer chains
 * therefore pair two values that feed each other (x = x + y; y = y + x), which no algebra
 * shortens, and one step is two operations. */
#include "common/parskel.h"

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define OP_ADD 0
#define OP_MUL 1
#define OP_FMA 2
#define OP_RSQRT 3
#define OP_IADD 4
#define OP_IMUL 5

#ifndef OP
#define OP OP_FMA
#endif
#ifndef STEPS
#define STEPS 1024
#endif
#ifndef CHAINS
#define CHAINS 1
#endif
#ifndef UNROLL
#define UNROLL 64
#endif

#if OP == OP_ADD
#define STEP(c) x[c] = x[c] + a
#elif OP == OP_MUL
#define STEP(c) x[c] = x[c] * a
#elif OP == OP_FMA
#define STEP(c) x[c] = fma(x[c], a, b)
#elif OP == OP_RSQRT
#define STEP(c) x[c] = native_rsqrt(x[c])
#elif OP == OP_IADD
#define STEP(c) x[c] = x[c] + y[c]; y[c] = y[c] + x[c]
#elif OP == OP_IMUL
#define STEP(c) x[c] = x[c] * y[c]; y[c] = y[c] * x[c]
#else
#error "unknown OP"
#endif

#define PAIRED (OP == OP_IADD || OP == OP_IMUL)

/* one step of every chain: the chains are independent, so their steps may overlap */
#define ALL_CHAINS                                                                             \
    _Pragma("unroll") for (int c = 0; c < CHAINS; ++c)                                          \
    {                                                                                           \
        STEP(c);                                                                                \
    }

__kernel void chain(__global T *out, T start, T a, T b, int flag)
{
    const uint lane = (uint)get_global_id(0);
    T x[CHAINS];
#if PAIRED
    T y[CHAINS];
#endif
    _Pragma("unroll") for (int c = 0; c < CHAINS; ++c)
    {
        x[c] = start + (T)(2 * c) + (T)(2u * (lane & 15u));
#if PAIRED
        y[c] = b + (T)(2 * c);
#endif
    }

#if UNROLL == 0
    _Pragma("unroll") for (int i = 0; i < STEPS; ++i)
    {
        ALL_CHAINS
    }
#else
    _Pragma("unroll 1") for (int i = 0; i < STEPS / UNROLL; ++i)
    {
        _Pragma("unroll") for (int j = 0; j < UNROLL; ++j)
        {
            ALL_CHAINS
        }
    }
    _Pragma("unroll") for (int j = 0; j < STEPS % UNROLL; ++j)
    {
        ALL_CHAINS
    }
#endif

    T result = x[0];
#if PAIRED
    result = result + y[0];
#endif
    _Pragma("unroll") for (int c = 1; c < CHAINS; ++c)
    {
        result = result + x[c];
#if PAIRED
        result = result + y[c];
#endif
    }
    if ((T)flag * result != (T)0)
        out[lane] = result;
}
