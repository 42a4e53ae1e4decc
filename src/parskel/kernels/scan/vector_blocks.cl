/* Seed 000 section 4.5: each work-item scans two 8-wide vectors (16 consecutive elements) in
 * registers, puts the two vector totals into local memory, and the work-group scans those
 * 2 * WG totals as in section 4.4; a block therefore holds 16 * WG elements. Elements at or
 * beyond n read as zero and are not written. src may be dst. */
#include "common/parskel.h"
#include "local_scan.cl"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define T8 CAT(T, 8)

#define VEC_BLOCK (16 * WG)

/* inclusive scan of the components of an 8-wide vector, in place */
#define SCAN8(v)  \
    v.s1 += v.s0; \
    v.s2 += v.s1; \
    v.s3 += v.s2; \
    v.s4 += v.s3; \
    v.s5 += v.s4; \
    v.s6 += v.s5; \
    v.s7 += v.s6

/* the exclusive scan from the inclusive one: components shifted up by one */
#define SHIFT8(v) PS_VEC(T8, (T)0, v.s0, v.s1, v.s2, v.s3, v.s4, v.s5, v.s6)

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void scan_blocks_vec(__global const T *src, __global T *dst, __global T *sums, uint n,
                     uint inclusive, uint write_sums)
{
    __local T s[PAIR_BLOCK];
    uint lid = get_local_id(0);
    uint first = get_global_id(0) * 16;
    T8 a, b;
    if (first + 16 <= n) {
        a = vload8(0, src + first);
        b = vload8(1, src + first);
    } else {
        /* the last, partial piece of the input: pad with zeros in private memory */
        T part[16];
        for (uint k = 0; k < 16; ++k)
            part[k] = first + k < n ? src[first + k] : (T)0;
        a = vload8(0, part);
        b = vload8(1, part);
    }
    SCAN8(a);
    SCAN8(b);
    s[2 * lid] = a.s7;
    s[2 * lid + 1] = b.s7;
    T total = local_exclusive_scan(s, lid);
    if (write_sums && lid == 0)
        sums[get_group_id(0)] = total;
    T8 pa = PS_VEC(T8, s[2 * lid]);
    T8 pb = PS_VEC(T8, s[2 * lid + 1]);
    if (inclusive) {
        a += pa;
        b += pb;
    } else {
        a = SHIFT8(a) + pa;
        b = SHIFT8(b) + pb;
    }
    if (first + 16 <= n) {
        vstore8(a, 0, dst + first);
        vstore8(b, 1, dst + first);
    } else if (first < n) {
        T part[16];
        vstore8(a, 0, part);
        vstore8(b, 1, part);
        for (uint k = 0; first + k < n; ++k)
            dst[first + k] = part[k];
    }
}
