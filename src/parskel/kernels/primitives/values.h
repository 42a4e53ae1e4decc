/* Elements of the primitives' inputs read as values that compare as NumPy compares them.
 *
 * T is the C type an element is stored as; KIND says how to read it: 0 a number or bool
 * (compared as it is), 1 a float, 2 float16 bits (read into float), 3 a complex number of two
 * T (equality only). NumPy's sort order puts NaNs after every number. */
#ifndef PARSKEL_PRIMITIVES_VALUES_H
#define PARSKEL_PRIMITIVES_VALUES_H
#include "common/parskel.h"
#include "common/half.h"

#ifndef KIND
#define KIND 0
#endif
/* unique's equal_nan: whether NaNs are equal to each other */
#ifndef EQUAL_NAN
#define EQUAL_NAN 1
#endif

#if KIND == 2
typedef float value_t;
#define VALUE(p, i) half_bits_to_float((p)[i])
#elif KIND == 3
typedef T value_t;
#define VALUE(p, i) ((p)[2 * (size_t)(i)])
#else
typedef T value_t;
#define VALUE(p, i) ((p)[i])
#endif

/* x before y in NumPy's order: NaNs after every number */
inline bool before(value_t x, value_t y)
{
#if KIND == 0
    return x < y;
#else
    return x < y || (y != y && x == x);
#endif
}

inline bool same_value(value_t x, value_t y)
{
#if KIND == 0
    return x == y;
#else
    return x == y || (EQUAL_NAN && x != x && y != y);
#endif
}

/* elements i and j of p are equal (both parts of complex numbers) */
inline bool same_at(__global const T *p, size_t i, size_t j)
{
#if KIND == 3
    return same_value(p[2 * i], p[2 * j]) && same_value(p[2 * i + 1], p[2 * j + 1]);
#else
    return same_value(VALUE(p, i), VALUE(p, j));
#endif
}

#endif
