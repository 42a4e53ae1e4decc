/* Blocked LU, step 3, with the row strip's block transposed as it is loaded (seed 002 §6.1.2.3,
 * 2): the inner product then reads both operands along rows of local memory, which is what
 * vector types need. WIDTH 1 is the transposed load alone; WIDTH 2, 4 or 8 reads WIDTH terms
 * at a time as floatWIDTH vectors and adds the lanes at the end. */
#include "common/parskel.h"
#include "study/repeat.h"

#ifndef BS
#define BS 16
#endif
#ifndef WIDTH
#define WIDTH 1
#endif

#if WIDTH == 1
#define HSUM(v) (v)
#elif WIDTH == 2
#define HSUM(v) ((v).x + (v).y)
#elif WIDTH == 4
#define HSUM(v) ((v).lo.x + (v).lo.y + (v).hi.x + (v).hi.y)
#elif WIDTH == 8
#define HSUM(v) ((v).lo.lo.x + (v).lo.lo.y + (v).lo.hi.x + (v).lo.hi.y + (v).hi.lo.x + (v).hi.lo.y + (v).hi.hi.x + (v).hi.hi.y)
#else
#error "WIDTH must be 1, 2, 4 or 8"
#endif

__kernel void lud_internal(__global float *m, uint n, uint offset)
{
    __local float rowT[BS][BS];
    __local float col[BS][BS];
    uint tx = get_local_id(0), ty = get_local_id(1);
    size_t top = offset + (get_group_id(1) + 1) * BS;
    size_t left = offset + (get_group_id(0) + 1) * BS;

    rowT[tx][ty] = m[(offset + ty) * n + left + tx];
    col[ty][tx] = m[(top + ty) * n + offset + tx];
    barrier(CLK_LOCAL_MEM_FENCE);

#if WIDTH == 1
    float acc = 0.0f;
    for (uint k = 0; k < BS; ++k)
        acc += col[ty][k] * rowT[tx][k];
#else
    PS_JOIN(float, WIDTH) acc = PS_VEC(PS_JOIN(float, WIDTH), 0.0f);
    for (uint k = 0; k < BS / WIDTH; ++k)
        acc += PS_JOIN(vload, WIDTH)(k, &col[ty][0]) * PS_JOIN(vload, WIDTH)(k, &rowT[tx][0]);
#endif
    m[(top + ty) * n + left + tx] -= HSUM(acc);
}
