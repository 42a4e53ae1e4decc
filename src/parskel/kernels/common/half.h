/* float16 numbers read as their bits (ushort): no half type or extension is needed. */
#ifndef PARSKEL_HALF_H
#define PARSKEL_HALF_H

/* float16 bits to float: normal numbers, subnormals, zeros, infinities and NaNs, exactly */
inline float half_bits_to_float(ushort h)
{
    uint sign = (uint)(h & 0x8000u) << 16;
    uint exponent = (h >> 10) & 0x1fu;
    uint mantissa = h & 0x3ffu;
    if (exponent == 0x1fu)
        return as_float(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0) /* zero or subnormal: mantissa * 2^-24 is exact in float */
        return as_float(sign) + (sign ? -1.0f : 1.0f) * (float)mantissa * 5.9604644775390625e-8f;
    return as_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

#endif
