/* Unrolling by the preprocessor, so that an unrolled variant of seed 002 is the same code on
 * every compiler rather than a hint some compilers ignore.
 *
 *   PS_REPEAT(N, M, c, b)        expands to M(c, b) M(c, (b) + 1) ... M(c, (b) + N - 1)
 *   PS_REPEAT_OUTER(N, M, c, b)  the same, for the outer loop of a nest: a macro cannot
 *                                expand inside its own expansion, so a nest needs two copies
 *
 * for N = 1, 2, 4, 8, 16 or 32; c is passed through unchanged (a row index, a pointer). */
#ifndef PARSKEL_STUDY_REPEAT_H
#define PARSKEL_STUDY_REPEAT_H

#define PS_JOIN_(a, b) a##b
#define PS_JOIN(a, b) PS_JOIN_(a, b)

#define PS_REP1(M, c, b) M(c, b)
#define PS_REP2(M, c, b) PS_REP1(M, c, b) PS_REP1(M, c, (b) + 1)
#define PS_REP4(M, c, b) PS_REP2(M, c, b) PS_REP2(M, c, (b) + 2)
#define PS_REP8(M, c, b) PS_REP4(M, c, b) PS_REP4(M, c, (b) + 4)
#define PS_REP16(M, c, b) PS_REP8(M, c, b) PS_REP8(M, c, (b) + 8)
#define PS_REP32(M, c, b) PS_REP16(M, c, b) PS_REP16(M, c, (b) + 16)
#define PS_REPEAT(N, M, c, b) PS_JOIN(PS_REP, N)(M, c, b)

#define PS_OREP1(M, c, b) M(c, b)
#define PS_OREP2(M, c, b) PS_OREP1(M, c, b) PS_OREP1(M, c, (b) + 1)
#define PS_OREP4(M, c, b) PS_OREP2(M, c, b) PS_OREP2(M, c, (b) + 2)
#define PS_OREP8(M, c, b) PS_OREP4(M, c, b) PS_OREP4(M, c, (b) + 4)
#define PS_OREP16(M, c, b) PS_OREP8(M, c, b) PS_OREP8(M, c, (b) + 8)
#define PS_OREP32(M, c, b) PS_OREP16(M, c, b) PS_OREP16(M, c, (b) + 16)
#define PS_REPEAT_OUTER(N, M, c, b) PS_JOIN(PS_OREP, N)(M, c, b)

#endif
