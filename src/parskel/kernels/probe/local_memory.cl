/* Local-memory bandwidth, with and without bank conflicts.
 *
 * Each work-group fills a local array of WORDS floats, then every item reads REPEATS words and
 * adds them up; in round r item l reads word (l * STRIDE + r) mod WORDS. With STRIDE 1 the
 * items of a warp read consecutive words, one per bank; with STRIDE 32 they all read different
 * words of one bank (on GPUs with 32 banks of 4 bytes), and the reads are served one by one.
 * An odd STRIDE spreads the items over every bank again.
 *
 *   WORDS    local array length, a power of two
 *   STRIDE   words between neighbouring items
 *   REPEATS  reads per item, a multiple of 4 */
#include "common/parskel.h"

#ifndef WORDS
#define WORDS 4096
#endif
#ifndef STRIDE
#define STRIDE 1
#endif
#ifndef REPEATS
#define REPEATS 1024
#endif

__kernel void local_reads(__global float *out, int flag)
{
    __local float words[WORDS];
    const uint l = (uint)get_local_id(0);
    for (uint w = l; w < WORDS; w += (uint)get_local_size(0))
        words[w] = (float)(w & 7u);
    barrier(CLK_LOCAL_MEM_FENCE);

    /* four sums so that the adds after each load do not form one dependent chain */
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    const uint base = l * STRIDE;
    _Pragma("unroll 4") for (uint r = 0; r < REPEATS; r += 4)
    {
        s0 += words[(base + r) & (WORDS - 1)];
        s1 += words[(base + r + 1) & (WORDS - 1)];
        s2 += words[(base + r + 2) & (WORDS - 1)];
        s3 += words[(base + r + 3) & (WORDS - 1)];
    }
    float sum = (s0 + s1) + (s2 + s3);
    if ((float)flag * sum != 0.0f)
        out[get_global_id(0)] = sum;
}
