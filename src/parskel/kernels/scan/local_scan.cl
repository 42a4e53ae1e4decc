/* Work-efficient (Blelloch) exclusive scan of one block of 2 * WG values in local memory,
 * shared by the block-scan kernels (seed 000, sections 4.4 and 4.5). Included, not built alone. */
#ifndef PARSKEL_SCAN_LOCAL_SCAN
#define PARSKEL_SCAN_LOCAL_SCAN

#ifndef WG
#define WG 256
#endif

/* the tree's levels halve the active work-items each step */
#if (WG & (WG - 1)) != 0
#error "WG must be a power of two"
#endif

#define PAIR_BLOCK (2 * WG)

/* Scans s[0 .. 2*WG) in place (exclusive) and returns the block's total to every work-item.
 * Every work-item of the group must call it, with s already written; it ends with a barrier,
 * so the caller may read any element of s afterwards. */
T local_exclusive_scan(PS_LOCAL_PARAM T *s, uint lid)
{
    uint offset = 1;
    for (uint d = WG; d > 0; d >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < d) {
            uint left = offset * (2 * lid + 1) - 1;
            s[left + offset] += s[left];
        }
        offset <<= 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    T total = s[PAIR_BLOCK - 1];
    /* every work-item must have read the root before it is cleared */
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        s[PAIR_BLOCK - 1] = (T)0;
    for (uint d = 1; d < PAIR_BLOCK; d <<= 1) {
        offset >>= 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < d) {
            uint left = offset * (2 * lid + 1) - 1;
            T t = s[left];
            s[left] = s[left + offset];
            s[left + offset] += t;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

#endif
