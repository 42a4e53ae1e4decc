/* Two-level scan shaped for CPUs (beyond seed 000 chapter 4): a few work-groups of one
 * work-item each, every one owning a long contiguous run of the input (chunk elements, a
 * multiple of VW; the last run is shorter). run_sums adds up each run; run_scan then scans
 * each run from its carry, the sum of the runs before it. Both read their run front to back
 * in VW-wide vectors, so the input is read twice and the output written once, all streaming.
 * src may be dst: every element is read before it is written, by the same work-item. */
#include "common/parskel.h"

#include "scan/lanes_cpu.h"

inline uint run_start(uint n, uint chunk) { return PS_MIN(n, (uint)get_group_id(0) * chunk); }
inline uint run_end(uint n, uint chunk) { return PS_MIN(n, run_start(n, chunk) + chunk); }

/* sums[g]: the total of run g */
__kernel void run_sums(__global const T *src, __global T *sums, uint n, uint chunk)
{
    sums[get_group_id(0)] = sum_range(src, run_start(n, chunk), run_end(n, chunk));
}

__kernel void run_scan(__global const T *src, __global T *dst, __global const T *sums, uint n, uint chunk,
                       uint inclusive)
{
    T carry = (T)0;
    for (uint g = 0; g < get_group_id(0); ++g)
        carry += sums[g];
    if (inclusive)
        scan_run(src, dst, run_start(n, chunk), run_end(n, chunk), carry, true);
    else
        scan_run(src, dst, run_start(n, chunk), run_end(n, chunk), carry, false);
}
