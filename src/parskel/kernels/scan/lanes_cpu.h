/* Pieces of the scans shaped for CPUs (two_level_cpu.cl, chained_cpu.cl): a vector's lanes
 * scanned in a few whole-vector additions, and a stretch of the input scanned from a carry.
 * T is the element type, VW (8 or 16) the lanes of a vector. */
#ifndef PARSKEL_SCAN_LANES_CPU_H
#define PARSKEL_SCAN_LANES_CPU_H

#ifndef VW
#define VW 16
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define TV CAT(T, VW)
#define T8 CAT(T, 8)
#define T16 CAT(T, 16)
#define VLOAD CAT(vload, VW)
#define VSTORE CAT(vstore, VW)

/* A whole vector v stored at p. With STREAM 1 (a CPU device whose cache the input and output
 * outgrow; p is then aligned to the vector: scan_run stores single elements up to there) the
 * store bypasses the cache (a non-temporal store, where the compiler is clang, as PoCL's is):
 * the output's lines are not read in before they are written, and do not evict the input. */
#ifndef STREAM
#define STREAM 0
#endif
#if STREAM && defined(__clang__)
#define STORE_TV(v, p) __builtin_nontemporal_store((v), (__global TV *)(p))
#else
#define STORE_TV(v, p) VSTORE((v), 0, (p))
#endif

/* Inclusive scan of the lanes of a vector in log2(VW) steps, each adding a copy of the vector
 * with some lanes moved up and the others zero: first within each 16-byte quarter (a shift of
 * bytes, one cheap instruction on a CPU), then the running total of each quarter spread over
 * the quarters above it. SHIFT_UP(v) moves every lane up by one, a zero into the first: the
 * exclusive scan from the inclusive one. */
#define Z (T)0
#if VW == 8
#define LANES_SCAN(v)                                                                         \
    v += PS_VEC(T8, Z, v.s0, Z, v.s2, Z, v.s4, Z, v.s6);                                      \
    v += PS_VEC(T8, Z, Z, v.s1, v.s1, Z, Z, v.s5, v.s5);                                      \
    v += PS_VEC(T8, Z, Z, Z, Z, v.s3, v.s3, v.s3, v.s3)
#define LAST(v) (v).s7
#define SHIFT_UP(v) PS_VEC(T8, Z, (v).s0, (v).s1, (v).s2, (v).s3, (v).s4, (v).s5, (v).s6)
#elif VW == 16
#define LANES_SCAN(v)                                                                         \
    v += PS_VEC(T16, Z, v.s0, v.s1, v.s2, Z, v.s4, v.s5, v.s6, Z, v.s8, v.s9, v.sa, Z, v.sc,  \
                v.sd, v.se);                                                                  \
    v += PS_VEC(T16, Z, Z, v.s0, v.s1, Z, Z, v.s4, v.s5, Z, Z, v.s8, v.s9, Z, Z, v.sc, v.sd); \
    v += PS_VEC(T16, Z, Z, Z, Z, v.s3, v.s3, v.s3, v.s3, Z, Z, Z, Z, v.sb, v.sb, v.sb, v.sb); \
    v += PS_VEC(T16, Z, Z, Z, Z, Z, Z, Z, Z, v.s7, v.s7, v.s7, v.s7, v.s7, v.s7, v.s7, v.s7)
#define LAST(v) (v).sf
#define SHIFT_UP(v)                                                                           \
    PS_VEC(T16, Z, (v).s0, (v).s1, (v).s2, (v).s3, (v).s4, (v).s5, (v).s6, (v).s7, (v).s8,   \
           (v).s9, (v).sa, (v).sb, (v).sc, (v).sd, (v).se)
#else
#error "VW must be 8 or 16"
#endif

/* src[i, end) scanned into dst from carry, returning carry plus their total; inclusive is a
 * constant after inlining. The carry is kept in every lane of a vector, so that the only chain
 * from one vector to the next is one addition (the scan of a vector and the broadcast of its
 * total do not wait for the carry). */
inline T scan_run(__global const T *src, __global T *dst, uint i, uint end, T carry, bool inclusive)
{
#if STREAM
    for (; i < end && ((size_t)(dst + i) & (sizeof(TV) - 1)); ++i) { /* up to a whole vector of dst */
        T x = src[i];
        dst[i] = inclusive ? carry + x : carry;
        carry += x;
    }
#endif
    TV carries = PS_VEC(TV, carry);
    for (; i + VW <= end; i += VW) {
        TV v = VLOAD(0, src + i);
        LANES_SCAN(v);
        STORE_TV((inclusive ? v : SHIFT_UP(v)) + carries, dst + i);
        carries += PS_VEC(TV, LAST(v));
    }
    carry = LAST(carries);
    for (; i < end; ++i) {
        T x = src[i];
        dst[i] = inclusive ? carry + x : carry;
        carry += x;
    }
    return carry;
}

/* The total of src[i, end), read front to back in vectors */
inline T sum_range(__global const T *src, uint i, uint end)
{
    TV acc = PS_VEC(TV, Z);
    for (; i + VW <= end; i += VW)
        acc += VLOAD(0, src + i);
    LANES_SCAN(acc);
    T total = LAST(acc);
    for (; i < end; ++i)
        total += src[i];
    return total;
}

#endif
