/* Products of stacks of matrices, C[b] = A[b] @ B[b], for every numeric dtype (NumPy's matmul of
 * arrays with more than two dimensions, broadcast over the stack).
 *
 * A work-group computes a TILE x TILE tile of one product, with STAGED (GPUs) from TILE x TILE
 * tiles of A and B staged in local memory (as seed 000's tiles variant does), without (CPUs,
 * whose work-groups pay for every barrier) each work-item reading its row and column where they
 * are; bounds checks instead of padding. The third dimension of the range runs over the
 * products, each work-group taking
 * products get_group_id(2), + get_num_groups(2), ... (CUDA caps that dimension). The product
 * b reads A from element a_offsets[b] and B from b_offsets[b], so a broadcast operand is read
 * where it is, never copied.
 *
 * TA and TB are the C types the operands are read as, T the type the products are added in
 * (NumPy's result type, or for integers the unsigned type of its width, which wraps around as
 * NumPy's integers do; float for float16), TC the type C is written as. A_KIND and B_KIND say
 * how an element is read: 0 a number (cast to T), 1 bool (nonzero is 1), 2 float16 bits, 3 a
 * complex number (two T). COMPLEX: the products are complex. BOOLEAN: C is bool, true where
 * some product of the sum is (NumPy's matmul of bools). */
#include "common/parskel.h"
#include "common/half.h"

#ifndef TILE
#define TILE 16
#endif
#ifndef TA
#define TA float
#endif
#ifndef TB
#define TB TA
#endif
#ifndef TC
#define TC T
#endif
#ifndef A_KIND
#define A_KIND 0
#endif
#ifndef B_KIND
#define B_KIND 0
#endif
#ifndef COMPLEX
#define COMPLEX 0
#endif
#ifndef BOOLEAN
#define BOOLEAN 0
#endif
#ifndef STAGED
#define STAGED 1
#endif

/* the real and imaginary parts of element i of A (at ap) and of B (at bp), as T */
#if A_KIND == 3
#define A_RE(i) ((T)ap[2 * (i)])
#define A_IM(i) ((T)ap[2 * (i) + 1])
#elif A_KIND == 2
#define A_RE(i) ((T)half_bits_to_float(ap[i]))
#elif A_KIND == 1
#define A_RE(i) ((T)(ap[i] != 0))
#else
#define A_RE(i) ((T)ap[i])
#endif
#if B_KIND == 3
#define B_RE(i) ((T)bp[2 * (i)])
#define B_IM(i) ((T)bp[2 * (i) + 1])
#elif B_KIND == 2
#define B_RE(i) ((T)half_bits_to_float(bp[i]))
#elif B_KIND == 1
#define B_RE(i) ((T)(bp[i] != 0))
#else
#define B_RE(i) ((T)bp[i])
#endif
#ifndef A_IM
#define A_IM(i) ((T)0)
#endif
#ifndef B_IM
#define B_IM(i) ((T)0)
#endif

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1))) void matmul_batched(
    __global const TA *a, __global const TB *b, __global TC *c, __global const ulong *a_offsets,
    __global const ulong *b_offsets, uint m, uint k, uint n, uint products)
{
#if STAGED
    __local T a_re[TILE][TILE];
    __local T b_re[TILE][TILE];
#if COMPLEX
    __local T a_im[TILE][TILE];
    __local T b_im[TILE][TILE];
#endif
#endif
    uint lc = get_local_id(0), lr = get_local_id(1);
    uint col = get_global_id(0), row = get_global_id(1);
    for (uint p = get_group_id(2); p < products; p += get_num_groups(2)) {
        __global const TA *ap = a + (A_KIND == 3 ? 2 : 1) * a_offsets[p];
        __global const TB *bp = b + (B_KIND == 3 ? 2 : 1) * b_offsets[p];
        T re = 0;
#if COMPLEX
        T im = 0;
#endif
#if !STAGED
        for (uint j = 0; row < m && col < n && j < k; ++j) {
            size_t at = (size_t)row * k + j, bt = (size_t)j * n + col;
#if COMPLEX
            re += A_RE(at) * B_RE(bt) - A_IM(at) * B_IM(bt);
            im += A_RE(at) * B_IM(bt) + A_IM(at) * B_RE(bt);
#else
            re += (T)(A_RE(at) * B_RE(bt));
#endif
        }
#else
        for (uint t = 0; t < k; t += TILE) {
            bool in_a = row < m && t + lc < k, in_b = t + lr < k && col < n;
            size_t at = (size_t)row * k + t + lc, bt = (size_t)(t + lr) * n + col;
            a_re[lr][lc] = in_a ? A_RE(at) : (T)0;
            b_re[lr][lc] = in_b ? B_RE(bt) : (T)0;
#if COMPLEX
            a_im[lr][lc] = in_a ? A_IM(at) : (T)0;
            b_im[lr][lc] = in_b ? B_IM(bt) : (T)0;
#endif
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint j = 0; j < TILE; ++j) {
#if COMPLEX
                re += a_re[lr][j] * b_re[j][lc] - a_im[lr][j] * b_im[j][lc];
                im += a_re[lr][j] * b_im[j][lc] + a_im[lr][j] * b_re[j][lc];
#else
                re += (T)(a_re[lr][j] * b_re[j][lc]);
#endif
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
#endif
        if (row < m && col < n) {
            size_t to = ((size_t)p * m + row) * n + col;
#if COMPLEX
            c[2 * to] = re;
            c[2 * to + 1] = im;
#elif BOOLEAN
            c[to] = (TC)(re != 0);
#else
            c[to] = (TC)re;
#endif
        }
    }
}
