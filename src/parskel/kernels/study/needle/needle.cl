/* needle, the Needleman-Wunsch kernel of seed 002 §6.3: global alignment scores of two sequences,
 * one BS x BS block of the score matrix per work-group, one launch per anti-diagonal of blocks.
 *
 * score is (rows + 1) x cols, cols = rows + 1; row 0 and column 0 hold the gap penalties of the
 * borders, and cell (i, j) becomes max(diagonal + similarity, left - penalty, up - penalty).
 * similarity is laid out like score (its row 0 and column 0 unused). The blocks of a launch are
 * (first + g, diagonal - first - g) for work-group g. Inside a block the BS work-items sweep its
 * 2 BS - 1 anti-diagonals, work-item x taking column x, with a barrier between them. */
#include "common/parskel.h"

#ifndef BS
#define BS 16
#endif

__kernel void needle_blocks(__global int *score, __global const int *similarity, uint cols, int penalty,
                            uint diagonal, uint first)
{
    __local int s[BS + 1][BS + 1];
    __local int sim[BS][BS];
    uint x = get_local_id(0);
    uint block_row = first + get_group_id(0);
    uint block_col = diagonal - block_row;
    size_t corner = (size_t)block_row * BS * cols + (size_t)block_col * BS; /* the cell up and left */

    for (uint r = 0; r < BS; ++r)
        sim[r][x] = similarity[corner + (size_t)(r + 1) * cols + 1 + x];
    s[0][x + 1] = score[corner + 1 + x];
    s[x + 1][0] = score[corner + (size_t)(x + 1) * cols];
    if (x == 0)
        s[0][0] = score[corner];
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint m = 0; m < 2 * BS - 1; ++m) {
        int r = (int)m - (int)x; /* the row of column x on anti-diagonal m */
        if (r >= 0 && r < BS) {
            int diag = s[r][x] + sim[r][x];
            int left = s[r + 1][x] - penalty;
            int up = s[r][x + 1] - penalty;
            s[r + 1][x + 1] = PS_MAX(diag, PS_MAX(left, up));
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    for (uint r = 0; r < BS; ++r)
        score[corner + (size_t)(r + 1) * cols + 1 + x] = s[r + 1][x + 1];
}
