/* Seed 000 section 4.4: each work-group scans a block of 2 * WG elements in local memory and
 * writes the block's total to sums; the host scans sums recursively, then add_sums.cl adds
 * each block's offset back. Elements at or beyond n read as zero and are not written, so
 * buffers need no padding. src may be dst: a group reads its whole block before writing it. */
#include "common/parskel.h"
#include "local_scan.cl"

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan_blocks(__global const T *src, __global T *dst, __global T *sums, uint n,
                 uint inclusive, uint write_sums)
{
    __local T s[PAIR_BLOCK];
    uint lid = get_local_id(0);
    /* the two elements of a work-item are WG apart, so neighbouring work-items touch
     * neighbouring addresses (coalesced on GPUs, vectorisable across work-items on CPUs) */
    uint i0 = get_group_id(0) * PAIR_BLOCK + lid;
    uint i1 = i0 + WG;
    T a = i0 < n ? src[i0] : (T)0;
    T b = i1 < n ? src[i1] : (T)0;
    s[lid] = a;
    s[lid + WG] = b;
    T total = local_exclusive_scan(s, lid);
    if (write_sums && lid == 0)
        sums[get_group_id(0)] = total;
    T ea = s[lid];
    T eb = s[lid + WG];
    if (i0 < n)
        dst[i0] = inclusive ? ea + a : ea;
    if (i1 < n)
        dst[i1] = inclusive ? eb + b : eb;
}
