/* Python's and NumPy's semantics where C's differ, for user functions translated from Python.
 *
 * Each PS_PY_* macro defines the helpers of one family for one type; a translated function
 * instantiates those it calls, each behind a PS_PY_HAVE_<name> guard so that the user functions
 * of one program share them. The names carry the C type: ps_floordiv_int, ps_mod_float, ... */
#ifndef PARSKEL_PYTHON_H
#define PARSKEL_PYTHON_H

/* infinities and NaN: NVRTC has no INFINITY or NAN */
#define PS_INFINITY_F as_float(0x7f800000u)
#define PS_NAN_F as_float(0x7fc00000u)
#define PS_INFINITY as_double(0x7ff0000000000000UL)
#define PS_NAN as_double(0x7ff8000000000000UL)

/* a // b and a % b of signed integers round the quotient down (the remainder takes b's sign);
 * division by zero gives 0 and the smallest value // -1 wraps, as in NumPy, instead of trapping */
#define PS_PY_DIVMOD_SIGNED(T, U)                                                              \
    inline T ps_floordiv_##T(T a, T b)                                                         \
    {                                                                                          \
        if (b == 0)                                                                            \
            return 0;                                                                          \
        if (b == -1)                                                                           \
            return (T)(0 - (U)a);                                                              \
        T q = a / b;                                                                           \
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;                                 \
    }                                                                                          \
    inline T ps_mod_##T(T a, T b)                                                              \
    {                                                                                          \
        if (b == 0 || b == -1)                                                                 \
            return 0;                                                                          \
        T r = a % b;                                                                           \
        return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;                                     \
    }

#define PS_PY_DIVMOD_UNSIGNED(T)                                                               \
    inline T ps_floordiv_##T(T a, T b) { return b == 0 ? 0 : a / b; }                          \
    inline T ps_mod_##T(T a, T b) { return b == 0 ? 0 : a % b; }

/* NumPy's float // and %: the remainder from fmod moved to b's sign, the quotient snapped to
 * the nearest whole number; a zero remainder takes b's sign, a zero quotient that of a / b */
#define PS_PY_DIVMOD_FLOAT(T)                                                                  \
    inline T ps_mod_##T(T a, T b)                                                              \
    {                                                                                          \
        T m = fmod(a, b);                                                                      \
        if (b == 0)                                                                            \
            return m;                                                                          \
        if (m != 0)                                                                            \
            return ((b < 0) != (m < 0)) ? m + b : m;                                           \
        return copysign((T)0, b);                                                              \
    }                                                                                          \
    inline T ps_floordiv_##T(T a, T b)                                                         \
    {                                                                                          \
        if (b == 0)                                                                            \
            return a / b;                                                                      \
        T m = fmod(a, b);                                                                      \
        T d = (a - m) / b;                                                                     \
        if (m != 0 && (b < 0) != (m < 0))                                                      \
            d -= 1;                                                                            \
        if (d == 0)                                                                            \
            return copysign((T)0, a / b);                                                      \
        T f = floor(d);                                                                        \
        return (d - f > (T)0.5) ? f + 1 : f;                                                   \
    }

/* integer ** integer by squaring (a negative exponent gives 1; NumPy refuses it) */
#define PS_PY_IPOW(T)                                                                          \
    inline T ps_ipow_##T(T base, T e)                                                          \
    {                                                                                          \
        T r = 1;                                                                               \
        while (e > 0) {                                                                        \
            if (e & 1)                                                                         \
                r *= base;                                                                     \
            base *= base;                                                                      \
            e >>= 1;                                                                           \
        }                                                                                      \
        return r;                                                                              \
    }

/* x * x, for an operand that is not a plain name */
#define PS_PY_SQUARE(T)                                                                        \
    inline T ps_square_##T(T a) { return a * a; }

/* abs of a signed integer keeps its type (OpenCL's abs returns an unsigned one) */
#define PS_PY_ABS(T)                                                                           \
    inline T ps_abs_##T(T a) { return a < 0 ? (T)-a : a; }

/* Python's max(a, b) and min(a, b): the first argument unless the second is larger (smaller) */
#define PS_PY_MINMAX(T)                                                                        \
    inline T ps_max_##T(T a, T b) { return b > a ? b : a; }                                    \
    inline T ps_min_##T(T a, T b) { return b < a ? b : a; }

/* NumPy's maximum and minimum, which propagate NaN */
#define PS_PY_MAXIMUM_INT(T)                                                                   \
    inline T ps_maximum_##T(T a, T b) { return a >= b ? a : b; }                               \
    inline T ps_minimum_##T(T a, T b) { return a <= b ? a : b; }
#define PS_PY_MAXIMUM_FLOAT(T)                                                                 \
    inline T ps_maximum_##T(T a, T b) { return (a >= b || isnan(a)) ? a : b; }                \
    inline T ps_minimum_##T(T a, T b) { return (a <= b || isnan(a)) ? a : b; }

#endif
