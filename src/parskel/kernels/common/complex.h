/* Complex numbers for user functions: cfloat and cdouble, laid out as NumPy's complex64 and
 * complex128 (the real part, then the imaginary part), with functions for their arithmetic
 * (C has no operators for them): cfloat_new(re, im), cfloat_real, cfloat_imag, cfloat_add,
 * cfloat_sub, cfloat_mul, cfloat_div, cfloat_neg, cfloat_conj, cfloat_rmul (by a real number),
 * cfloat_abs, cfloat_abs_squared, cfloat_exp, and the same for cdouble. cdouble exists where
 * the device has double precision. */
#ifndef PARSKEL_COMMON_COMPLEX_H
#define PARSKEL_COMMON_COMPLEX_H

#define PS_COMPLEX_FUNCTIONS(C, R)                                                              \
    inline C C##_new(R re, R im)                                                                \
    {                                                                                           \
        C z;                                                                                    \
        z.re = re;                                                                              \
        z.im = im;                                                                              \
        return z;                                                                               \
    }                                                                                           \
    inline R C##_real(C a) { return a.re; }                                                     \
    inline R C##_imag(C a) { return a.im; }                                                     \
    inline C C##_add(C a, C b) { return C##_new(a.re + b.re, a.im + b.im); }                   \
    inline C C##_sub(C a, C b) { return C##_new(a.re - b.re, a.im - b.im); }                   \
    inline C C##_mul(C a, C b) { return C##_new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); } \
    inline C C##_rmul(R r, C a) { return C##_new(r * a.re, r * a.im); }                        \
    inline C C##_neg(C a) { return C##_new(-a.re, -a.im); }                                     \
    inline C C##_conj(C a) { return C##_new(a.re, -a.im); }                                     \
    inline R C##_abs_squared(C a) { return a.re * a.re + a.im * a.im; }                         \
    inline R C##_abs(C a) { return hypot(a.re, a.im); }                                         \
    inline C C##_div(C a, C b)                                                                  \
    {                                                                                           \
        R d = C##_abs_squared(b);                                                               \
        return C##_new((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d);       \
    }                                                                                           \
    inline C C##_exp(C a) { return C##_rmul(exp(a.re), C##_new(cos(a.im), sin(a.im))); }

typedef struct {
    float re;
    float im;
} cfloat;
PS_COMPLEX_FUNCTIONS(cfloat, float)

#if defined(PS_CUDA) || defined(cl_khr_fp64) || defined(__opencl_c_fp64)
typedef struct {
    double re;
    double im;
} cdouble;
PS_COMPLEX_FUNCTIONS(cdouble, double)
#endif

#undef PS_COMPLEX_FUNCTIONS
#endif
