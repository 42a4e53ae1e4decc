/* Seed 000 section 4.2: the naive inclusive scan of Hillis and Steele, one launch per pass,
 * double-buffered so that a pass reads only values of the previous one. */
#include "common/parskel.h"

/* Elements below `offset` are final after this pass. Those below `copy_from` are already final
 * in dst (it was written two passes ago), so only [copy_from, offset) needs copying; a buffer
 * written for the first time passes copy_from = 0. */
__kernel void hillis_steele_pass(__global const T *src, __global T *dst, uint offset,
                                 uint copy_from, uint n)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    if (i >= offset)
        dst[i] = src[i] + src[i - offset];
    else if (i >= copy_from)
        dst[i] = src[i];
}
