/* Runs of equal consecutive elements (unique, run-length encoding, reduce_by_key): where each
 * run starts, and from the runs' starts (compacted) their ends and lengths. Defines of
 * values.h: T, KIND, EQUAL_NAN. */
#include "values.h"

/* heads[i] = 1 where a run starts: the first element, and every one unequal to the one before */
__kernel void run_heads(__global const T *x, __global uint *heads, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        heads[i] = i == 0 || !same_at(x, i, i - 1);
}

/* run j covers starts[j] .. ends[j] (inclusive) */
__kernel void run_bounds(__global const uint *starts, uint runs, uint n, __global uint *ends, __global long *lengths)
{
    uint j = get_global_id(0);
    if (j >= runs)
        return;
    uint next = j + 1 < runs ? starts[j + 1] : n;
    ends[j] = next - 1;
    lengths[j] = (long)(next - starts[j]);
}

/* unique's inverse: the run of each element, at its place in the input (order: the sort's
 * positions; ids: the inclusive scan of the heads, so run numbers from 1) */
__kernel void scatter_runs(__global const uint *ids, __global const long *order, __global long *inverse, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        inverse[order[i]] = (long)ids[i] - 1;
}
