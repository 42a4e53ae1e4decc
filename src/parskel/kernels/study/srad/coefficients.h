/* The diffusion coefficient of SRAD (speckle-reducing anisotropic diffusion) at one pixel,
 * from its value jc and the differences to its four neighbours (seed 002 §6.4). */
#ifndef PARSKEL_STUDY_SRAD_H
#define PARSKEL_STUDY_SRAD_H

float srad_coefficient(float jc, float n, float s, float w, float e, float q0sqr)
{
    float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
    float l = (n + s + w + e) / jc;
    float num = 0.5f * g2 - (1.0f / 16.0f) * (l * l);
    float den = 1.0f + 0.25f * l;
    float qsqr = num / (den * den);
    den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
    return 1.0f / (1.0f + den);
}

#endif
