/* OpenCL C's built-in constants and functions on CUDA, so that a user function written for
 * OpenCL builds unchanged on a CUDA device. Included by common/cuda.h after the vector types.
 *
 * What CUDA already has under the OpenCL name (sqrt, exp, atan2, fma, isnan, ... on float and
 * double) is used as it is; this header adds the constants (OpenCL C 1.2, section 6.12.2 and
 * the integer limits), the functions CUDA lacks or spells differently, and every function on the
 * vector types, lane by lane. Relational functions follow OpenCL: 1 or 0 on scalars, -1 (all
 * bits set) or 0 per lane on vectors; select, any and all test the most significant bit of a
 * vector condition. Template parameters are spelled Ps... because kernels define macros such
 * as T. */
#ifndef PARSKEL_CUDA_BUILTINS_H
#define PARSKEL_CUDA_BUILTINS_H

/* constants -------------------------------------------------------------------------------- */
#define MAXFLOAT 0x1.fffffep127f
#define HUGE_VALF __builtin_bit_cast(float, 0x7f800000u)
#define HUGE_VAL __builtin_bit_cast(double, 0x7ff0000000000000ull)
#define INFINITY HUGE_VALF
#define NAN __builtin_bit_cast(float, 0x7fc00000u)

#define FLT_DIG 6
#define FLT_MANT_DIG 24
#define FLT_MAX_10_EXP 38
#define FLT_MAX_EXP 128
#define FLT_MIN_10_EXP (-37)
#define FLT_MIN_EXP (-125)
#define FLT_RADIX 2
#define FLT_MAX 0x1.fffffep127f
#define FLT_MIN 0x1.0p-126f
#define FLT_EPSILON 0x1.0p-23f

#define DBL_DIG 15
#define DBL_MANT_DIG 53
#define DBL_MAX_10_EXP 308
#define DBL_MAX_EXP 1024
#define DBL_MIN_10_EXP (-307)
#define DBL_MIN_EXP (-1021)
#define DBL_MAX 0x1.fffffffffffffp1023
#define DBL_MIN 0x1.0p-1022
#define DBL_EPSILON 0x1.0p-52

#define CHAR_BIT 8
#define SCHAR_MAX 127
#define SCHAR_MIN (-127 - 1)
#define CHAR_MAX SCHAR_MAX
#define CHAR_MIN SCHAR_MIN
#define UCHAR_MAX 255
#define SHRT_MAX 32767
#define SHRT_MIN (-32767 - 1)
#define USHRT_MAX 65535
#define INT_MAX 2147483647
#define INT_MIN (-2147483647 - 1)
#define UINT_MAX 0xffffffffu
#define LONG_MAX 0x7fffffffffffffffll
#define LONG_MIN (-0x7fffffffffffffffll - 1)
#define ULONG_MAX 0xffffffffffffffffull

#define M_E 2.718281828459045090796
#define M_LOG2E 1.442695040888963387005
#define M_LOG10E 0.434294481903251816668
#define M_LN2 0.693147180559945286227
#define M_LN10 2.302585092994045901094
#define M_PI 3.141592653589793115998
#define M_PI_2 1.570796326794896557999
#define M_PI_4 0.785398163397448278999
#define M_1_PI 0.318309886183790691216
#define M_2_PI 0.636619772367581382433
#define M_2_SQRTPI 1.128379167095512558561
#define M_SQRT2 1.414213562373095145475
#define M_SQRT1_2 0.707106781186547572737
#define M_E_F 2.71828174591064f
#define M_LOG2E_F 1.44269502162933f
#define M_LOG10E_F 0.43429449200630f
#define M_LN2_F 0.69314718246460f
#define M_LN10_F 2.30258512496948f
#define M_PI_F 3.14159274101257f
#define M_PI_2_F 1.57079637050629f
#define M_PI_4_F 0.78539818525314f
#define M_1_PI_F 0.31830987334251f
#define M_2_PI_F 0.63661974668503f
#define M_2_SQRTPI_F 1.12837922573090f
#define M_SQRT2_F 1.41421353816986f
#define M_SQRT1_2_F 0.70710676908493f

/* the 3-lane vectors (the size and alignment of 4 lanes, as in OpenCL) --------------------- */
template <class PsE> struct alignas(4 * sizeof(PsE)) ps_vec<PsE, 3> {
    union {
        PsE v[3];
        struct { PsE s0, s1, s2; };
        struct { PsE x, y, z; };
    };
    PS_VEC_COMMON(PsE, 3)
};
typedef ps_vec<char, 3> ps_char3;
typedef ps_vec<uchar, 3> ps_uchar3;
typedef ps_vec<short, 3> ps_short3;
typedef ps_vec<ushort, 3> ps_ushort3;
typedef ps_vec<int, 3> ps_int3;
typedef ps_vec<uint, 3> ps_uint3;
typedef ps_vec<long, 3> ps_long3;
typedef ps_vec<ulong, 3> ps_ulong3;
typedef ps_vec<float, 3> ps_float3;
typedef ps_vec<double, 3> ps_double3;
#define char3 ps_char3
#define uchar3 ps_uchar3
#define short3 ps_short3
#define ushort3 ps_ushort3
#define int3 ps_int3
#define uint3 ps_uint3
#define long3 ps_long3
#define ulong3 ps_ulong3
#define float3 ps_float3
#define double3 ps_double3

/* the signed integer of a type's width: what relational functions return on vectors --------- */
template <int PsBytes> struct ps_int_of_size;
template <> struct ps_int_of_size<1> { typedef char type; };
template <> struct ps_int_of_size<2> { typedef short type; };
template <> struct ps_int_of_size<4> { typedef int type; };
template <> struct ps_int_of_size<8> { typedef long long type; };
template <class PsE, int PsN> using ps_mask = ps_vec<typename ps_int_of_size<sizeof(PsE)>::type, PsN>;

template <class PsT> struct ps_unsigned { typedef PsT type; };
template <> struct ps_unsigned<char> { typedef uchar type; };
template <> struct ps_unsigned<signed char> { typedef uchar type; };
template <> struct ps_unsigned<short> { typedef ushort type; };
template <> struct ps_unsigned<int> { typedef uint type; };
template <> struct ps_unsigned<long> { typedef unsigned long type; };
template <> struct ps_unsigned<long long> { typedef ulong type; };

/* math functions CUDA lacks ------------------------------------------------------------------ */
template <class PsT> __device__ inline PsT acospi(PsT x) { return acos(x) * PsT(M_1_PI); }
template <class PsT> __device__ inline PsT asinpi(PsT x) { return asin(x) * PsT(M_1_PI); }
template <class PsT> __device__ inline PsT atanpi(PsT x) { return atan(x) * PsT(M_1_PI); }
template <class PsT> __device__ inline PsT atan2pi(PsT y, PsT x) { return atan2(y, x) * PsT(M_1_PI); }
template <class PsT> __device__ inline PsT tanpi(PsT x) { return sinpi(x) / cospi(x); }
template <class PsT> __device__ inline PsT maxmag(PsT x, PsT y)
{
    return fabs(x) > fabs(y) ? x : fabs(y) > fabs(x) ? y : fmax(x, y);
}
template <class PsT> __device__ inline PsT minmag(PsT x, PsT y)
{
    return fabs(x) < fabs(y) ? x : fabs(y) < fabs(x) ? y : fmin(x, y);
}
template <class PsT> __device__ inline PsT fract(PsT x, PsT *whole)
{
    PsT f = floor(x);
    *whole = f;
    return fmin(x - f, nextafter(PsT(1), PsT(0)));
}
template <class PsT> __device__ inline PsT pown(PsT x, int n) { return pow(x, PsT(n)); }
template <class PsT> __device__ inline PsT powr(PsT x, PsT y) { return pow(x, y); }
template <class PsT> __device__ inline PsT rootn(PsT x, int n)
{
    /* an odd root of a negative number is negative, as in OpenCL */
    return (x < PsT(0) && (n & 1)) ? -pow(-x, PsT(1) / PsT(n)) : pow(x, PsT(1) / PsT(n));
}
template <class PsT> __device__ inline PsT mad(PsT a, PsT b, PsT c) { return a * b + c; }
template <class PsT> __device__ inline PsT clamp(PsT x, typename ps_same<PsT>::type lo, typename ps_same<PsT>::type hi)
{
    return min(max(x, lo), hi);
}
template <class PsT> __device__ inline PsT mix(PsT a, PsT b, typename ps_same<PsT>::type t) { return a + (b - a) * t; }
template <class PsT> __device__ inline PsT step(typename ps_same<PsT>::type edge, PsT x) { return x < edge ? PsT(0) : PsT(1); }
template <class PsT>
__device__ inline PsT smoothstep(typename ps_same<PsT>::type e0, typename ps_same<PsT>::type e1, PsT x)
{
    PsT t = clamp((x - e0) / (e1 - e0), PsT(0), PsT(1));
    return t * t * (PsT(3) - PsT(2) * t);
}
template <class PsT> __device__ inline PsT sign(PsT x)
{
    return x > PsT(0) ? PsT(1) : x < PsT(0) ? PsT(-1) : isnan(x) ? PsT(0) : x;
}
template <class PsT> __device__ inline PsT degrees(PsT r) { return r * PsT(57.295779513082320876798154814105); }
template <class PsT> __device__ inline PsT radians(PsT d) { return d * PsT(0.017453292519943295769236907684886); }
__device__ inline float nan(uint code) { return __builtin_bit_cast(float, 0x7fc00000u | (code & 0x3fffffu)); }
__device__ inline double nan(ulong code)
{
    return __builtin_bit_cast(double, 0x7ff8000000000000ull | (code & 0x7ffffffffffffull));
}
template <class PsT> __device__ inline int isnormal(PsT x) { return isfinite(x) && fabs(x) >= PsT(FLT_MIN); }
__device__ inline int isnormal(double x) { return isfinite(x) && fabs(x) >= DBL_MIN; }

/* native_ and half_ functions: the full-precision ones (OpenCL allows any precision) */
#define PS_RELAXED(NAME)                                                                          \
    template <class PsT> __device__ inline PsT native_##NAME(PsT x) { return NAME(x); }         \
    template <class PsT> __device__ inline PsT half_##NAME(PsT x) { return NAME(x); }
PS_RELAXED(cos)
PS_RELAXED(exp)
PS_RELAXED(exp2)
PS_RELAXED(exp10)
PS_RELAXED(log)
PS_RELAXED(log2)
PS_RELAXED(log10)
PS_RELAXED(rsqrt)
PS_RELAXED(sin)
PS_RELAXED(sqrt)
PS_RELAXED(tan)
#undef PS_RELAXED
template <class PsT> __device__ inline PsT native_recip(PsT x) { return PsT(1) / x; }
template <class PsT> __device__ inline PsT half_recip(PsT x) { return PsT(1) / x; }
template <class PsT> __device__ inline PsT native_divide(PsT x, PsT y) { return x / y; }
template <class PsT> __device__ inline PsT half_divide(PsT x, PsT y) { return x / y; }
template <class PsT> __device__ inline PsT native_powr(PsT x, PsT y) { return pow(x, y); }
template <class PsT> __device__ inline PsT half_powr(PsT x, PsT y) { return pow(x, y); }

/* integer functions -------------------------------------------------------------------------- */
/* OpenCL's abs returns the unsigned type (abs(INT_MIN) is 2147483648u), CUDA's the signed one */
template <class PsT> __device__ inline typename ps_unsigned<PsT>::type ps_abs(PsT x)
{
    typedef typename ps_unsigned<PsT>::type U;
    if constexpr (PsT(-1) < PsT(0))
        return x < PsT(0) ? (U)(U(0) - (U)x) : (U)x;
    else
        return x;
}
#define abs ps_abs
template <class PsT> __device__ inline typename ps_unsigned<PsT>::type abs_diff(PsT x, PsT y)
{
    typedef typename ps_unsigned<PsT>::type U;
    return x > y ? (U)((U)x - (U)y) : (U)((U)y - (U)x);
}
template <class PsT> __device__ inline PsT hadd(PsT x, PsT y) { return (x >> 1) + (y >> 1) + (x & y & 1); }
template <class PsT> __device__ inline PsT rhadd(PsT x, PsT y) { return (x >> 1) + (y >> 1) + ((x | y) & 1); }
/* the saturating sums: wrap-around arithmetic in the unsigned type, then the overflow test */
template <class PsT> __device__ inline PsT add_sat(PsT x, PsT y)
{
    typedef typename ps_unsigned<PsT>::type U;
    PsT r = (PsT)((U)x + (U)y);
    if (PsT(0) < PsT(-1))  /* unsigned */
        return r < x ? PsT(-1) : r;
    if (((x ^ r) & (y ^ r)) < 0)  /* both operands' sign differs from the result's */
        return y > 0 ? PsT((U)-1 >> 1) : PsT(~((U)-1 >> 1));
    return r;
}
template <class PsT> __device__ inline PsT sub_sat(PsT x, PsT y)
{
    typedef typename ps_unsigned<PsT>::type U;
    PsT r = (PsT)((U)x - (U)y);
    if (PsT(0) < PsT(-1))
        return x < y ? PsT(0) : r;
    if (((x ^ y) & (x ^ r)) < 0)
        return y < 0 ? PsT((U)-1 >> 1) : PsT(~((U)-1 >> 1));
    return r;
}
template <class PsT> __device__ inline PsT mad24(PsT a, PsT b, PsT c) { return a * b + c; }
template <class PsT> __device__ inline PsT mul24(PsT a, PsT b) { return a * b; }
/* the integer built-ins of any width: 8- and 16-bit ones computed in 32 bits */
template <class PsT> __device__ inline PsT mul_hi(PsT a, PsT b)
{
    const bool is_signed = PsT(-1) < PsT(0);
    if (sizeof(PsT) == 8)
        return is_signed ? (PsT)__mul64hi((long long)a, (long long)b) : (PsT)__umul64hi((ulong)a, (ulong)b);
    if (sizeof(PsT) == 4)
        return is_signed ? (PsT)__mulhi((int)a, (int)b) : (PsT)__umulhi((uint)a, (uint)b);
    return (PsT)(((int)a * (int)b) >> (8 * sizeof(PsT)));
}
template <class PsT> __device__ inline PsT mad_hi(PsT a, PsT b, PsT c) { return mul_hi(a, b) + c; }
template <class PsT> __device__ inline PsT rotate(PsT x, PsT n)
{
    typedef typename ps_unsigned<PsT>::type U;
    const int bits = 8 * sizeof(PsT);
    const int k = (int)((U)n & (U)(bits - 1));
    return k == 0 ? x : (PsT)(U)(((U)x << k) | ((U)x >> (bits - k)));
}
template <class PsT> __device__ inline PsT clz(PsT x)
{
    typedef typename ps_unsigned<PsT>::type U;
    if (sizeof(PsT) == 8)
        return (PsT)__clzll((long long)x);
    return (PsT)(__clz((int)(uint)(U)x) - (32 - 8 * (int)sizeof(PsT)));
}
template <class PsT> __device__ inline PsT popcount(PsT x)
{
    typedef typename ps_unsigned<PsT>::type U;
    if (sizeof(PsT) == 8)
        return (PsT)__popcll((ulong)x);
    return (PsT)__popc((uint)(U)x);
}
template <class PsE> __device__ inline ps_vec<PsE, 3> vload3(size_t offset, const PsE *p)
{
    ps_vec<PsE, 3> r;
    for (int i = 0; i < 3; ++i)
        r.v[i] = p[offset * 3 + i];
    return r;
}
template <class PsE> __device__ inline void vstore3(const ps_vec<PsE, 3> &x, size_t offset, PsE *p)
{
    for (int i = 0; i < 3; ++i)
        p[offset * 3 + i] = x.v[i];
}

/* relational functions on scalars (bitselect and select take any scalar type) ---------------- */
template <class PsT> __device__ inline int isequal(PsT x, PsT y) { return x == y; }
template <class PsT> __device__ inline int isnotequal(PsT x, PsT y) { return !(x == y); }
template <class PsT> __device__ inline int isgreater(PsT x, PsT y) { return x > y; }
template <class PsT> __device__ inline int isgreaterequal(PsT x, PsT y) { return x >= y; }
template <class PsT> __device__ inline int isless(PsT x, PsT y) { return x < y; }
template <class PsT> __device__ inline int islessequal(PsT x, PsT y) { return x <= y; }
template <class PsT> __device__ inline int islessgreater(PsT x, PsT y) { return x < y || x > y; }
template <class PsT> __device__ inline int isordered(PsT x, PsT y) { return x == x && y == y; }
template <class PsT> __device__ inline int isunordered(PsT x, PsT y) { return !(x == x && y == y); }
template <class PsT> __device__ inline PsT select(PsT a, PsT b, long long c) { return c ? b : a; }
template <class PsT> __device__ inline PsT bitselect(PsT a, PsT b, PsT c)
{
    typedef typename ps_int_of_size<sizeof(PsT)>::type I;
    I r = (ps_as<I>(a) & ~ps_as<I>(c)) | (ps_as<I>(b) & ps_as<I>(c));
    return ps_as<PsT>(r);
}
template <class PsT> __device__ inline int any(PsT x) { return x < 0; }
template <class PsT> __device__ inline int all(PsT x) { return x < 0; }

/* every function above, and CUDA's own, on vectors: lane by lane ----------------------------- */
#define PS_LANES1(NAME)                                                                           \
    template <class PsE, int PsN> __device__ inline ps_vec<PsE, PsN> NAME(const ps_vec<PsE, PsN> &a) \
    {                                                                                            \
        ps_vec<PsE, PsN> r;                                                                      \
        for (int i = 0; i < PsN; ++i)                                                            \
            r.v[i] = NAME(a.v[i]);                                                               \
        return r;                                                                                \
    }
#define PS_LANES2(NAME)                                                                           \
    template <class PsE, int PsN>                                                                \
    __device__ inline ps_vec<PsE, PsN> NAME(const ps_vec<PsE, PsN> &a, const ps_vec<PsE, PsN> &b) \
    {                                                                                            \
        ps_vec<PsE, PsN> r;                                                                      \
        for (int i = 0; i < PsN; ++i)                                                            \
            r.v[i] = NAME(a.v[i], b.v[i]);                                                       \
        return r;                                                                                \
    }
/* the second operand may be a scalar, as OpenCL allows for these */
#define PS_LANES2S(NAME)                                                                          \
    PS_LANES2(NAME)                                                                              \
    template <class PsE, int PsN>                                                                \
    __device__ inline ps_vec<PsE, PsN> NAME(const ps_vec<PsE, PsN> &a, typename ps_same<PsE>::type b) \
    {                                                                                            \
        ps_vec<PsE, PsN> r;                                                                      \
        for (int i = 0; i < PsN; ++i)                                                            \
            r.v[i] = NAME(a.v[i], b);                                                            \
        return r;                                                                                \
    }
#define PS_LANES3(NAME)                                                                           \
    template <class PsE, int PsN>                                                                \
    __device__ inline ps_vec<PsE, PsN> NAME(const ps_vec<PsE, PsN> &a, const ps_vec<PsE, PsN> &b, \
                                            const ps_vec<PsE, PsN> &c)                           \
    {                                                                                            \
        ps_vec<PsE, PsN> r;                                                                      \
        for (int i = 0; i < PsN; ++i)                                                            \
            r.v[i] = NAME(a.v[i], b.v[i], c.v[i]);                                               \
        return r;                                                                                \
    }

PS_LANES1(acos) PS_LANES1(acosh) PS_LANES1(acospi) PS_LANES1(asin) PS_LANES1(asinh) PS_LANES1(asinpi)
PS_LANES1(atan) PS_LANES1(atanh) PS_LANES1(atanpi) PS_LANES1(cbrt) PS_LANES1(ceil) PS_LANES1(cos)
PS_LANES1(cosh) PS_LANES1(cospi) PS_LANES1(erfc) PS_LANES1(erf) PS_LANES1(exp) PS_LANES1(exp2)
PS_LANES1(exp10) PS_LANES1(expm1) PS_LANES1(fabs) PS_LANES1(floor) PS_LANES1(lgamma) PS_LANES1(log)
PS_LANES1(log2) PS_LANES1(log10) PS_LANES1(log1p) PS_LANES1(logb) PS_LANES1(rint) PS_LANES1(round)
PS_LANES1(rsqrt) PS_LANES1(sin) PS_LANES1(sinh) PS_LANES1(sinpi) PS_LANES1(sqrt) PS_LANES1(tan)
PS_LANES1(tanh) PS_LANES1(tanpi) PS_LANES1(tgamma) PS_LANES1(trunc) PS_LANES1(sign) PS_LANES1(degrees)
PS_LANES1(radians) PS_LANES1(abs) PS_LANES1(clz) PS_LANES1(popcount)
PS_LANES1(native_cos) PS_LANES1(native_exp) PS_LANES1(native_exp2) PS_LANES1(native_exp10)
PS_LANES1(native_log) PS_LANES1(native_log2) PS_LANES1(native_log10) PS_LANES1(native_rsqrt)
PS_LANES1(native_sin) PS_LANES1(native_sqrt) PS_LANES1(native_tan) PS_LANES1(native_recip)
PS_LANES1(half_cos) PS_LANES1(half_exp) PS_LANES1(half_exp2) PS_LANES1(half_exp10) PS_LANES1(half_log)
PS_LANES1(half_log2) PS_LANES1(half_log10) PS_LANES1(half_rsqrt) PS_LANES1(half_sin) PS_LANES1(half_sqrt)
PS_LANES1(half_tan) PS_LANES1(half_recip)
PS_LANES2(atan2) PS_LANES2(atan2pi) PS_LANES2(copysign) PS_LANES2(fdim) PS_LANES2(fmod) PS_LANES2(hypot)
PS_LANES2(nextafter) PS_LANES2(pow) PS_LANES2(powr) PS_LANES2(remainder) PS_LANES2(maxmag) PS_LANES2(minmag)
PS_LANES2(native_divide) PS_LANES2(half_divide) PS_LANES2(native_powr) PS_LANES2(half_powr)
PS_LANES2(abs_diff) PS_LANES2(add_sat) PS_LANES2(sub_sat) PS_LANES2(hadd) PS_LANES2(rhadd)
PS_LANES2(mul24) PS_LANES2(mul_hi) PS_LANES2(rotate)
PS_LANES2S(fmin) PS_LANES2S(fmax) PS_LANES2S(min) PS_LANES2S(max)
PS_LANES3(fma) PS_LANES3(mad) PS_LANES3(mad24) PS_LANES3(mad_hi) PS_LANES3(bitselect)
#undef PS_LANES1
#undef PS_LANES2
#undef PS_LANES2S
#undef PS_LANES3

/* vector forms whose other operands are scalars or integers */
template <class PsE, int PsN>
__device__ inline ps_vec<PsE, PsN> clamp(const ps_vec<PsE, PsN> &x, typename ps_same<PsE>::type lo,
                                         typename ps_same<PsE>::type hi)
{
    return min(max(x, lo), hi);
}
template <class PsE, int PsN>
__device__ inline ps_vec<PsE, PsN> clamp(const ps_vec<PsE, PsN> &x, const ps_vec<PsE, PsN> &lo,
                                         const ps_vec<PsE, PsN> &hi)
{
    return min(max(x, lo), hi);
}
template <class PsE, int PsN, class PsM>
__device__ inline ps_vec<PsE, PsN> mix(const ps_vec<PsE, PsN> &a, const ps_vec<PsE, PsN> &b, const PsM &t)
{
    return a + (b - a) * t;
}
template <class PsE, int PsN> __device__ inline PsE ps_lane(const ps_vec<PsE, PsN> &v, int i) { return v.v[i]; }
template <class PsE> __device__ inline PsE ps_lane(PsE s, int) { return s; }
template <class PsE, int PsN, class PsS>
__device__ inline ps_vec<PsE, PsN> step(const PsS &edge, const ps_vec<PsE, PsN> &x)
{
    ps_vec<PsE, PsN> r;
    for (int i = 0; i < PsN; ++i)
        r.v[i] = x.v[i] < (PsE)ps_lane(edge, i) ? PsE(0) : PsE(1);
    return r;
}
template <class PsE, int PsN, class PsS>
__device__ inline ps_vec<PsE, PsN> smoothstep(const PsS &e0, const PsS &e1, const ps_vec<PsE, PsN> &x)
{
    ps_vec<PsE, PsN> r;
    for (int i = 0; i < PsN; ++i)
        r.v[i] = smoothstep((PsE)ps_lane(e0, i), (PsE)ps_lane(e1, i), x.v[i]);
    return r;
}
template <class PsE, int PsN>
__device__ inline ps_vec<PsE, PsN> pown(const ps_vec<PsE, PsN> &x, const ps_vec<int, PsN> &n)
{
    ps_vec<PsE, PsN> r;
    for (int i = 0; i < PsN; ++i)
        r.v[i] = pown(x.v[i], n.v[i]);
    return r;
}
template <class PsE, int PsN>
__device__ inline ps_vec<PsE, PsN> rootn(const ps_vec<PsE, PsN> &x, const ps_vec<int, PsN> &n)
{
    ps_vec<PsE, PsN> r;
    for (int i = 0; i < PsN; ++i)
        r.v[i] = rootn(x.v[i], n.v[i]);
    return r;
}
template <class PsE, int PsN>
__device__ inline ps_vec<PsE, PsN> ldexp(const ps_vec<PsE, PsN> &x, const ps_vec<int, PsN> &n)
{
    ps_vec<PsE, PsN> r;
    for (int i = 0; i < PsN; ++i)
        r.v[i] = ldexp(x.v[i], n.v[i]);
    return r;
}
template <class PsE, int PsN> __device__ inline ps_vec<PsE, PsN> ldexp(const ps_vec<PsE, PsN> &x, int n)
{
    ps_vec<PsE, PsN> r;
    for (int i = 0; i < PsN; ++i)
        r.v[i] = ldexp(x.v[i], n);
    return r;
}

/* relational functions on vectors: -1 or 0 per lane ------------------------------------------ */
#define PS_TEST1(NAME, TEST)                                                                      \
    template <class PsE, int PsN> __device__ inline ps_mask<PsE, PsN> NAME(const ps_vec<PsE, PsN> &a) \
    {                                                                                            \
        ps_mask<PsE, PsN> r;                                                                     \
        for (int i = 0; i < PsN; ++i)                                                            \
            r.v[i] = (TEST(a.v[i])) ? -1 : 0;                                                    \
        return r;                                                                                \
    }
#define PS_TEST2(NAME)                                                                            \
    template <class PsE, int PsN>                                                                \
    __device__ inline ps_mask<PsE, PsN> NAME(const ps_vec<PsE, PsN> &a, const ps_vec<PsE, PsN> &b) \
    {                                                                                            \
        ps_mask<PsE, PsN> r;                                                                     \
        for (int i = 0; i < PsN; ++i)                                                            \
            r.v[i] = NAME(a.v[i], b.v[i]) ? -1 : 0;                                              \
        return r;                                                                                \
    }
PS_TEST1(isnan, isnan)
PS_TEST1(isinf, isinf)
PS_TEST1(isfinite, isfinite)
PS_TEST1(isnormal, isnormal)
PS_TEST1(signbit, signbit)
PS_TEST2(isequal)
PS_TEST2(isnotequal)
PS_TEST2(isgreater)
PS_TEST2(isgreaterequal)
PS_TEST2(isless)
PS_TEST2(islessequal)
PS_TEST2(islessgreater)
PS_TEST2(isordered)
PS_TEST2(isunordered)
#undef PS_TEST1
#undef PS_TEST2

template <class PsE, int PsN> __device__ inline int any(const ps_vec<PsE, PsN> &x)
{
    for (int i = 0; i < PsN; ++i)
        if (x.v[i] < 0)
            return 1;
    return 0;
}
template <class PsE, int PsN> __device__ inline int all(const ps_vec<PsE, PsN> &x)
{
    for (int i = 0; i < PsN; ++i)
        if (!(x.v[i] < 0))
            return 0;
    return 1;
}
template <class PsE, int PsN, class PsC>
__device__ inline ps_vec<PsE, PsN> select(const ps_vec<PsE, PsN> &a, const ps_vec<PsE, PsN> &b,
                                          const ps_vec<PsC, PsN> &c)
{
    ps_vec<PsE, PsN> r;
    for (int i = 0; i < PsN; ++i)
        r.v[i] = c.v[i] < 0 ? b.v[i] : a.v[i];
    return r;
}

/* geometric functions on 2-, 3- and 4-lane float and double vectors --------------------------- */
template <class PsE, int PsN> __device__ inline PsE dot(const ps_vec<PsE, PsN> &a, const ps_vec<PsE, PsN> &b)
{
    PsE s = 0;
    for (int i = 0; i < PsN; ++i)
        s += a.v[i] * b.v[i];
    return s;
}
template <class PsE> __device__ inline PsE dot(PsE a, PsE b) { return a * b; }
template <class PsE, int PsN> __device__ inline PsE length(const ps_vec<PsE, PsN> &a) { return sqrt(dot(a, a)); }
template <class PsE> __device__ inline PsE length(PsE a) { return fabs(a); }
template <class PsE, int PsN> __device__ inline PsE distance(const ps_vec<PsE, PsN> &a, const ps_vec<PsE, PsN> &b)
{
    return length(a - b);
}
template <class PsE> __device__ inline PsE distance(PsE a, PsE b) { return fabs(a - b); }
template <class PsE, int PsN> __device__ inline ps_vec<PsE, PsN> normalize(const ps_vec<PsE, PsN> &a)
{
    PsE l = length(a);
    return l == PsE(0) ? a : a / l;
}
template <class PsE> __device__ inline PsE normalize(PsE a) { return a == PsE(0) ? a : copysign(PsE(1), a); }
template <class PsE> __device__ inline ps_vec<PsE, 3> cross(const ps_vec<PsE, 3> &a, const ps_vec<PsE, 3> &b)
{
    ps_vec<PsE, 3> r;
    r.x = a.y * b.z - a.z * b.y;
    r.y = a.z * b.x - a.x * b.z;
    r.z = a.x * b.y - a.y * b.x;
    return r;
}
template <class PsE> __device__ inline ps_vec<PsE, 4> cross(const ps_vec<PsE, 4> &a, const ps_vec<PsE, 4> &b)
{
    ps_vec<PsE, 4> r;
    r.x = a.y * b.z - a.z * b.y;
    r.y = a.z * b.x - a.x * b.z;
    r.z = a.x * b.y - a.y * b.x;
    r.w = 0;
    return r;
}
#define fast_length length
#define fast_distance distance
#define fast_normalize normalize

#endif
