/* Keys of any dtype as 32-bit words whose unsigned order is the keys' order, so that the sorts
 * of 32-bit keys sort them: a key of up to 32 bits is one word, a 64-bit key two (hi, lo),
 * sorted least significant word first (an LSD radix sort over words, each sort stable).
 *
 * KEY_BITS (8, 16, 32, 64) and KEY_CLASS (0 unsigned or bool, 1 signed, 2 float) give the
 * key's layout; the transforms are those of keys.h at every width: a signed key has its sign
 * bit flipped; every float NaN first becomes the quiet NaN with a clear sign bit, then a
 * negative float has all its bits flipped and any other its sign bit. So -0.0 sorts before
 * +0.0 and NaNs after +inf.
 *
 * With ROWS (a batched sort along an axis), element i belongs to row i / row; a key of 8 or 16
 * bits has its row number packed above its bits (ROWS == 1), so that one word sorts by (row,
 * key); wider keys get the row as a word of its own (segment_words). */
#include "common/parskel.h"

#ifndef KEY_BITS
#define KEY_BITS 32
#endif
#ifndef KEY_CLASS
#define KEY_CLASS 0
#endif
#ifndef ROWS
#define ROWS 0
#endif

#if KEY_BITS == 8
typedef uchar key_bits;
#define FLOAT_EXPONENT 0
#elif KEY_BITS == 16
typedef ushort key_bits;
#define FLOAT_EXPONENT 0x7c00u
#define FLOAT_NAN 0x7e00u
#elif KEY_BITS == 32
typedef uint key_bits;
#define FLOAT_EXPONENT 0x7f800000u
#define FLOAT_NAN 0x7fc00000u
#else
typedef ulong key_bits;
#define FLOAT_EXPONENT 0x7ff0000000000000ul
#define FLOAT_NAN 0x7ff8000000000000ul
#endif

#define SIGN ((key_bits)1 << (KEY_BITS - 1))
#define ALL_ONES ((key_bits) ~(key_bits)0)

inline key_bits canonical(key_bits x)
{
#if KEY_CLASS == 2
    if ((key_bits)(x & (key_bits)~SIGN) > (key_bits)FLOAT_EXPONENT)
        return (key_bits)FLOAT_NAN;
#endif
    return x;
}

inline key_bits encode_bits(key_bits x)
{
#if KEY_CLASS == 1
    return (key_bits)(x ^ SIGN);
#elif KEY_CLASS == 2
    x = canonical(x);
    return (key_bits)(x ^ ((x & SIGN) ? ALL_ONES : SIGN));
#else
    return x;
#endif
}

inline key_bits decode_bits(key_bits x)
{
#if KEY_CLASS == 1
    return (key_bits)(x ^ SIGN);
#elif KEY_CLASS == 2
    return (key_bits)(x ^ ((x & SIGN) ? SIGN : ALL_ONES));
#else
    return x;
#endif
}

/* lo[i] (and, for 64-bit keys, hi[i]) of keys[i]; with ROWS, the row above a narrow key */
__kernel void encode_words(__global const key_bits *keys, __global uint *lo, __global uint *hi, uint n, uint row)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    key_bits e = encode_bits(keys[i]);
#if KEY_BITS == 64
    lo[i] = (uint)e;
    hi[i] = (uint)(e >> 32);
#elif ROWS && KEY_BITS < 32
    lo[i] = (uint)e | ((i / row) << KEY_BITS);
#else
    lo[i] = (uint)e;
#endif
}

/* the keys back from their sorted words (narrow keys only: one word each) */
__kernel void decode_words(__global const uint *lo, __global key_bits *keys, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        keys[i] = decode_bits((key_bits)lo[i]);
}

/* out[i] = keys[order[i]], NaNs made canonical as the decoded keys are */
__kernel void gather_keys(__global const key_bits *keys, __global const uint *order, __global key_bits *out,
                          uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        out[i] = canonical(keys[order[i]]);
}

/* the row of each element of a batched sort, by its position in the input */
__kernel void segment_words(__global const uint *order, __global uint *rows, uint n, uint row)
{
    uint i = get_global_id(0);
    if (i < n)
        rows[i] = order[i] / row;
}

__kernel void iota(__global uint *out, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        out[i] = i;
}

/* argsort's result: positions within each row, as NumPy's int64 */
__kernel void positions(__global const uint *order, __global long *out, uint n, uint row)
{
    uint i = get_global_id(0);
    if (i < n)
        out[i] = (long)(order[i] % row);
}
