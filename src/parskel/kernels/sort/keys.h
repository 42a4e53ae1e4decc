/* Order-preserving maps between 32-bit keys and unsigned integers, so that every sort kernel
 * compares and buckets plain uints. KEY_KIND: 0 uint32 (identity), 1 int32, 2 float32. */
#ifndef PARSKEL_SORT_KEYS_H
#define PARSKEL_SORT_KEYS_H
#include "common/parskel.h"

#ifndef KEY_KIND
#define KEY_KIND 0
#endif

#define SIGN_BIT 0x80000000u
/* NumPy's NaN (np.float32(np.nan)): every NaN becomes this one, so that all NaNs are equal
 * keys, sort after +inf, and keep their input order in a stable sort, as NumPy does. */
#define CANONICAL_NAN 0x7fc00000u

inline uint encode_key(uint x)
{
#if KEY_KIND == 1
    return x ^ SIGN_BIT;
#elif KEY_KIND == 2
    if ((x & ~SIGN_BIT) > 0x7f800000u)
        x = CANONICAL_NAN;
    /* Negative floats order backwards as integers: flip them all; positives only need to rise
     * above every negative. -0.0 becomes 0x7fffffff and +0.0 0x80000000, so -0.0 sorts first. */
    return x ^ ((x & SIGN_BIT) ? 0xffffffffu : SIGN_BIT);
#else
    return x;
#endif
}

inline uint decode_key(uint x)
{
#if KEY_KIND == 1
    return x ^ SIGN_BIT;
#elif KEY_KIND == 2
    return x ^ ((x & SIGN_BIT) ? SIGN_BIT : 0xffffffffu);
#else
    return x;
#endif
}

#endif
