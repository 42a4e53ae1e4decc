/* OpenCL C on CUDA: the CUDA backend puts this header in front of every kernel source and
 * compiles the result with NVRTC as C++17, treating unannotated functions as device functions.
 *
 * It maps what parskel's kernels use of OpenCL C: address-space qualifiers, work-item
 * functions, barriers, the scalar type names, vector types (2, 3, 4, 8 and 16 lanes, with
 * component access .s0-.sf, .x-.w, .lo and .hi, arithmetic and vloadN/vstoreN), atomics, and
 * (common/cuda_builtins.h) OpenCL C's built-in constants and functions.
 *
 * Two OpenCL forms have no macro equivalent; kernels use the portable spellings from
 * common/parskel.h instead: PS_VEC(type, ...) for a vector literal (type)(...), and
 * PS_LOCAL_PARAM for a helper function's pointer into local memory. Local memory is declared
 * inside kernels with a size fixed at build time; __local pointer kernel arguments are
 * OpenCL-only. */
#ifndef PARSKEL_CUDA_H
#define PARSKEL_CUDA_H

#define PS_CUDA 1

/* address spaces and function qualifiers -------------------------------------------------- */
/* only the __ spellings: CUDA's own qualifiers expand to __location__(global), (shared), ... so
 * the bare words global, local, constant and private cannot be macros here */
#define __kernel extern "C" __global__
#define __global
#define __local __shared__
#define __constant const
#define __private
#define reqd_work_group_size(x, y, z)
#define PS_LOCAL_PARAM

/* scalar types ------------------------------------------------------------------------------ */
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long long ulong;

/* work-item functions ----------------------------------------------------------------------- */
__device__ inline size_t ps_dim_component(dim3 v, uint d) { return d == 0 ? v.x : d == 1 ? v.y : v.z; }
__device__ inline size_t ps_component3(uint3 v, uint d) { return d == 0 ? v.x : d == 1 ? v.y : v.z; }
__device__ inline size_t get_local_id(uint d) { return ps_component3(threadIdx, d); }
__device__ inline size_t get_local_size(uint d) { return ps_dim_component(blockDim, d); }
__device__ inline size_t get_group_id(uint d) { return ps_component3(blockIdx, d); }
__device__ inline size_t get_num_groups(uint d) { return ps_dim_component(gridDim, d); }
__device__ inline size_t get_global_id(uint d) { return get_group_id(d) * get_local_size(d) + get_local_id(d); }
__device__ inline size_t get_global_size(uint d) { return get_num_groups(d) * get_local_size(d); }
__device__ inline size_t get_global_offset(uint d) { return 0; }

/* barriers and fences ------------------------------------------------------------------------ */
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
#define barrier(flags) __syncthreads()
#define mem_fence(flags) __threadfence()
#define read_mem_fence(flags) __threadfence()
#define write_mem_fence(flags) __threadfence()

/* vector types ------------------------------------------------------------------------------ */
template <class PsE, int PsN> struct ps_vec;

#define PS_VEC_COMMON(PsE, PsN)                                                                    \
    typedef PsE element;                                                                        \
    static constexpr int lanes = PsN;                                                           \
    __device__ PsE &operator[](int i) { return v[i]; }                                          \
    __device__ const PsE &operator[](int i) const { return v[i]; }

template <class PsE> struct alignas(2 * sizeof(PsE)) ps_vec<PsE, 2> {
    union {
        PsE v[2];
        struct { PsE s0, s1; };
        struct { PsE x, y; };
        struct { PsE lo, hi; };
    };
    PS_VEC_COMMON(PsE, 2)
};

template <class PsE> struct alignas(4 * sizeof(PsE)) ps_vec<PsE, 4> {
    union {
        PsE v[4];
        struct { PsE s0, s1, s2, s3; };
        struct { PsE x, y, z, w; };
        struct { ps_vec<PsE, 2> lo, hi; };
    };
    PS_VEC_COMMON(PsE, 4)
};

template <class PsE> struct alignas(8 * sizeof(PsE)) ps_vec<PsE, 8> {
    union {
        PsE v[8];
        struct { PsE s0, s1, s2, s3, s4, s5, s6, s7; };
        struct { ps_vec<PsE, 4> lo, hi; };
    };
    PS_VEC_COMMON(PsE, 8)
};

template <class PsE> struct alignas(16 * sizeof(PsE)) ps_vec<PsE, 16> {
    union {
        PsE v[16];
        struct { PsE s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, sa, sb, sc, sd, se, sf; };
        struct { ps_vec<PsE, 8> lo, hi; };
    };
    PS_VEC_COMMON(PsE, 16)
};

/* the OpenCL names, e.g. float4 -> ps_vec<float, 4>; they replace CUDA's own 2- and 4-lane
 * structs inside kernels, which have neither arithmetic nor OpenCL's component names */
#define PS_VEC_NAMES(PsE, NAME)                                                                  \
    typedef ps_vec<PsE, 2> ps_##NAME##2;                                                        \
    typedef ps_vec<PsE, 4> ps_##NAME##4;                                                        \
    typedef ps_vec<PsE, 8> ps_##NAME##8;                                                        \
    typedef ps_vec<PsE, 16> ps_##NAME##16;
PS_VEC_NAMES(char, char)
PS_VEC_NAMES(uchar, uchar)
PS_VEC_NAMES(short, short)
PS_VEC_NAMES(ushort, ushort)
PS_VEC_NAMES(int, int)
PS_VEC_NAMES(uint, uint)
PS_VEC_NAMES(long, long)
PS_VEC_NAMES(ulong, ulong)
PS_VEC_NAMES(float, float)
PS_VEC_NAMES(double, double)
#undef PS_VEC_NAMES
#define char2 ps_char2
#define char4 ps_char4
#define char8 ps_char8
#define char16 ps_char16
#define uchar2 ps_uchar2
#define uchar4 ps_uchar4
#define uchar8 ps_uchar8
#define uchar16 ps_uchar16
#define short2 ps_short2
#define short4 ps_short4
#define short8 ps_short8
#define short16 ps_short16
#define ushort2 ps_ushort2
#define ushort4 ps_ushort4
#define ushort8 ps_ushort8
#define ushort16 ps_ushort16
#define int2 ps_int2
#define int4 ps_int4
#define int8 ps_int8
#define int16 ps_int16
#define uint2 ps_uint2
#define uint4 ps_uint4
#define uint8 ps_uint8
#define uint16 ps_uint16
#define long2 ps_long2
#define long4 ps_long4
#define long8 ps_long8
#define long16 ps_long16
#define ulong2 ps_ulong2
#define ulong4 ps_ulong4
#define ulong8 ps_ulong8
#define ulong16 ps_ulong16
#define float2 ps_float2
#define float4 ps_float4
#define float8 ps_float8
#define float16 ps_float16
#define double2 ps_double2
#define double4 ps_double4
#define double8 ps_double8
#define double16 ps_double16

/* the scalar type of a parameter that takes part in no template deduction */
template <class PsT> struct ps_same { typedef PsT type; };

/* literals: PS_VEC(float4, a, b, c, d), PS_VEC(uint8, lo4, hi4), PS_VEC(float4, 0) ----------- */
template <class PsV> __device__ inline void ps_put(PsV &out, int &k) {}

template <class PsV, class PsE, int PsN, class... PsRest>
__device__ inline void ps_put(PsV &out, int &k, const ps_vec<PsE, PsN> &first, const PsRest &...rest)
{
    for (int i = 0; i < PsN; ++i)
        out.v[k++] = (typename PsV::element)first.v[i];
    ps_put(out, k, rest...);
}

template <class PsV, class PsS, class... PsRest>
__device__ inline void ps_put(PsV &out, int &k, const PsS &first, const PsRest &...rest)
{
    out.v[k++] = (typename PsV::element)first;
    ps_put(out, k, rest...);
}

template <class PsV, class... PsA> __device__ inline PsV ps_make(const PsA &...parts)
{
    PsV out;
    int k = 0;
    ps_put(out, k, parts...);
    for (int i = k; i < PsV::lanes; ++i) /* one scalar: every lane gets it */
        out.v[i] = out.v[0];
    return out;
}

#define PS_VEC(type, ...) ps_make<type>(__VA_ARGS__)

/* arithmetic: lane by lane, vector with vector or with a scalar on either side -------------- */
#define PS_VEC_BINARY(OP)                                                                      \
    template <class PsE, int PsN>                                                                 \
    __device__ inline ps_vec<PsE, PsN> operator OP(const ps_vec<PsE, PsN> &a, const ps_vec<PsE, PsN> &b)  \
    {                                                                                         \
        ps_vec<PsE, PsN> r;                                                                       \
        for (int i = 0; i < PsN; ++i)                                                           \
            r.v[i] = a.v[i] OP b.v[i];                                                        \
        return r;                                                                             \
    }                                                                                         \
    template <class PsE, int PsN>                                                                 \
    __device__ inline ps_vec<PsE, PsN> operator OP(const ps_vec<PsE, PsN> &a,                         \
                                               typename ps_same<PsE>::type b)                   \
    {                                                                                         \
        ps_vec<PsE, PsN> r;                                                                       \
        for (int i = 0; i < PsN; ++i)                                                           \
            r.v[i] = a.v[i] OP b;                                                             \
        return r;                                                                             \
    }                                                                                         \
    template <class PsE, int PsN>                                                                 \
    __device__ inline ps_vec<PsE, PsN> operator OP(typename ps_same<PsE>::type a,                   \
                                               const ps_vec<PsE, PsN> &b)                         \
    {                                                                                         \
        ps_vec<PsE, PsN> r;                                                                       \
        for (int i = 0; i < PsN; ++i)                                                           \
            r.v[i] = a OP b.v[i];                                                             \
        return r;                                                                             \
    }                                                                                         \
    template <class PsE, int PsN, class PsB>                                                        \
    __device__ inline ps_vec<PsE, PsN> &operator OP##=(ps_vec<PsE, PsN> &a, const PsB &b)               \
    {                                                                                         \
        a = a OP b;                                                                           \
        return a;                                                                             \
    }
PS_VEC_BINARY(+)
PS_VEC_BINARY(-)
PS_VEC_BINARY(*)
PS_VEC_BINARY(/)
PS_VEC_BINARY(%)
PS_VEC_BINARY(&)
PS_VEC_BINARY(|)
PS_VEC_BINARY(^)
PS_VEC_BINARY(<<)
PS_VEC_BINARY(>>)
#undef PS_VEC_BINARY

template <class PsE, int PsN> __device__ inline ps_vec<PsE, PsN> operator-(const ps_vec<PsE, PsN> &a)
{
    ps_vec<PsE, PsN> r;
    for (int i = 0; i < PsN; ++i)
        r.v[i] = -a.v[i];
    return r;
}

template <class PsE, int PsN> __device__ inline ps_vec<PsE, PsN> operator~(const ps_vec<PsE, PsN> &a)
{
    ps_vec<PsE, PsN> r;
    for (int i = 0; i < PsN; ++i)
        r.v[i] = ~a.v[i];
    return r;
}

/* vloadN / vstoreN: PsN elements at p + offset * PsN, at the alignment of one element --------- */
#define PS_VLOAD_VSTORE(PsN)                                                                     \
    template <class PsE> __device__ inline ps_vec<PsE, PsN> vload##PsN(size_t offset, const PsE *p)     \
    {                                                                                         \
        ps_vec<PsE, PsN> r;                                                                       \
        for (int i = 0; i < PsN; ++i)                                                           \
            r.v[i] = p[offset * PsN + i];                                                       \
        return r;                                                                             \
    }                                                                                         \
    template <class PsE>                                                                        \
    __device__ inline void vstore##PsN(const ps_vec<PsE, PsN> &x, size_t offset, PsE *p)              \
    {                                                                                         \
        for (int i = 0; i < PsN; ++i)                                                           \
            p[offset * PsN + i] = x.v[i];                                                       \
    }
PS_VLOAD_VSTORE(2)
PS_VLOAD_VSTORE(4)
PS_VLOAD_VSTORE(8)
PS_VLOAD_VSTORE(16)
#undef PS_VLOAD_VSTORE

/* reinterpretation and conversion of scalars ------------------------------------------------ */
template <class PsTo, class PsFrom> __device__ inline PsTo ps_as(PsFrom x)
{
    static_assert(sizeof(PsTo) == sizeof(PsFrom), "as_type needs types of one size");
    union { PsFrom from; PsTo to; } u;
    u.from = x;
    return u.to;
}
#define as_char(x) ps_as<char>(x)
#define as_uchar(x) ps_as<uchar>(x)
#define as_short(x) ps_as<short>(x)
#define as_ushort(x) ps_as<ushort>(x)
#define as_int(x) ps_as<int>(x)
#define as_uint(x) ps_as<uint>(x)
#define as_long(x) ps_as<long>(x)
#define as_ulong(x) ps_as<ulong>(x)
#define as_float(x) ps_as<float>(x)
#define as_double(x) ps_as<double>(x)
#define convert_char(x) ((char)(x))
#define convert_uchar(x) ((uchar)(x))
#define convert_short(x) ((short)(x))
#define convert_ushort(x) ((ushort)(x))
#define convert_int(x) ((int)(x))
#define convert_uint(x) ((uint)(x))
#define convert_long(x) ((long)(x))
#define convert_ulong(x) ((ulong)(x))
#define convert_float(x) ((float)(x))
#define convert_double(x) ((double)(x))

/* atomics on 32-bit (and, where CUDA has them, 64-bit) integers in global or local memory -- */
#define atomic_add(p, v) atomicAdd((p), (v))
#define atomic_sub(p, v) atomicSub((p), (v))
#define atomic_xchg(p, v) atomicExch((p), (v))
#define atomic_min(p, v) atomicMin((p), (v))
#define atomic_max(p, v) atomicMax((p), (v))
#define atomic_and(p, v) atomicAnd((p), (v))
#define atomic_or(p, v) atomicOr((p), (v))
#define atomic_xor(p, v) atomicXor((p), (v))
#define atomic_cmpxchg(p, cmp, v) atomicCAS((p), (cmp), (v))
#define atomic_inc(p) atomicAdd((p), 1)
#define atomic_dec(p) atomicSub((p), 1)
#define atom_add atomic_add
#define atom_sub atomic_sub
#define atom_xchg atomic_xchg
#define atom_min atomic_min
#define atom_max atomic_max
#define atom_and atomic_and
#define atom_or atomic_or
#define atom_xor atomic_xor
#define atom_cmpxchg atomic_cmpxchg
#define atom_inc atomic_inc
#define atom_dec atomic_dec

#include "cuda_builtins.h"

#endif
