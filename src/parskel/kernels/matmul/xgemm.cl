/* Register-tiled matrix multiplication in the manner of CLBlast's xgemm: C = A B, row-major,
 * every dimension a multiple of its tile (the host pads where needed).
 *
 * A work-group of MDIMC x NDIMC work-items computes an MWG x NWG tile of C, walking K in
 * steps of KWG. Each step's tiles of A (MWG x KWG, stored transposed so that a column of A is
 * a row of local memory) and of B (KWG x NWG) are loaded with VW-wide vector reads by the whole
 * group. Each work-item keeps an MWI x NWI block of C in registers (MWI = MWG / MDIMC,
 * NWI = NWG / NDIMC), in VW-wide vectors spread over the tile with strides of MDIMC * VW rows
 * and NDIMC * VW columns, so that neighbouring work-items read neighbouring local words and
 * write neighbouring vectors of C. Two local buffers and a register prefetch of the next step's
 * tiles leave one barrier per step, with the next tiles' global loads in flight during the
 * current step's arithmetic.
 *
 * Tunables: T, MWG, NWG, KWG, MDIMC, NDIMC, VW (1, 2, 4 or 8), on CUDA MIN_GROUPS, the
 * work-groups a compute unit should hold at once (it caps the registers per work-item), and
 * ORDER, the order of a step's multiply-adds: 0 row by row of the block, 1 column vector by
 * column vector, 2 row by row with the columns walked forth on even rows and back on odd ones.
 * The sums are the same in every order; what changes is how the compiler assigns registers
 * and which operands it can keep in its reuse caches, which moves the time by several percent
 * on NVIDIA GPUs. */
#include "common/parskel.h"

#ifndef MWG
#define MWG 128
#endif
#ifndef NWG
#define NWG 128
#endif
#ifndef KWG
#define KWG 16
#endif
#ifndef MDIMC
#define MDIMC 16
#endif
#ifndef NDIMC
#define NDIMC 16
#endif
#ifndef VW
#define VW 4
#endif

#ifndef MIN_GROUPS
#define MIN_GROUPS 1
#endif
#ifndef ORDER
#define ORDER 0
#endif
#ifdef PS_CUDA
#define BOUNDS __launch_bounds__(MDIMC * NDIMC, MIN_GROUPS)
#else
#define BOUNDS
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#if VW == 1
#define VT T
#define VZERO ((T)0)
#else
#define VT CAT(T, VW)
#define VZERO PS_VEC(VT, (T)0)
#endif

#define THREADS (MDIMC * NDIMC)
#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define MVI (MWI / VW) /* vectors of rows per work-item */
#define NVI (NWI / VW) /* vectors of columns per work-item */
/* a row of the transposed A tile, padded by a vector against bank conflicts of its stores */
#define ALD (MWG + VW)
#define A_LOADS (MWG * KWG / VW / THREADS)
#define B_LOADS (KWG * NWG / VW / THREADS)

#if MWG % (MDIMC * VW) || NWG % (NDIMC * VW) || KWG % VW
#error "MWG, NWG and KWG must be multiples of MDIMC * VW, NDIMC * VW and VW"
#endif
#if (MWG * KWG / VW) % THREADS || (KWG * NWG / VW) % THREADS
#error "the tiles must hold a whole number of vectors per work-item"
#endif

#if VW == 1
#define SPLIT(v, x) x[0] = v;
#elif VW == 2
#define SPLIT(v, x) x[0] = v.s0; x[1] = v.s1;
#elif VW == 4
#define SPLIT(v, x) x[0] = v.s0; x[1] = v.s1; x[2] = v.s2; x[3] = v.s3;
#elif VW == 8
#define SPLIT(v, x) x[0] = v.s0; x[1] = v.s1; x[2] = v.s2; x[3] = v.s3; \
                    x[4] = v.s4; x[5] = v.s5; x[6] = v.s6; x[7] = v.s7;
#endif

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1))) BOUNDS
void xgemm(__global const T *a, __global const T *b, __global T *c, uint m, uint n, uint k)
{
    /* aligned to a vector, which the tiles are read and written in: a compiler that knows only
     * T's alignment (NVIDIA's OpenCL) splits each vector access into VW scalar ones */
    __local T als[2][KWG * ALD] __attribute__((aligned(VW * sizeof(T))));
    __local T bls[2][KWG * NWG] __attribute__((aligned(VW * sizeof(T))));
    uint tx = get_local_id(0), ty = get_local_id(1);
    uint t = ty * NDIMC + tx;
    uint m0 = get_group_id(1) * MWG, n0 = get_group_id(0) * NWG;
    __global const VT *av = (__global const VT *)a;
    __global const VT *bv = (__global const VT *)b;
    uint kv = k / VW, nv = n / VW;

    VT acc[MWI][NVI];
#pragma unroll
    for (uint i = 0; i < MWI; ++i)
#pragma unroll
        for (uint j = 0; j < NVI; ++j)
            acc[i][j] = VZERO;

    /* the next step's tiles, in registers between their global loads and local stores */
    VT pa[A_LOADS], pb[B_LOADS];
#define LOAD_TILES(k0)                                                                     \
    for (uint r = 0; r < A_LOADS; ++r) {                                                  \
        uint e = t + r * THREADS;                                                         \
        pa[r] = av[(size_t)(m0 + e / (KWG / VW)) * kv + (k0) / VW + e % (KWG / VW)];      \
    }                                                                                     \
    for (uint r = 0; r < B_LOADS; ++r) {                                                  \
        uint e = t + r * THREADS;                                                         \
        pb[r] = bv[(size_t)((k0) + e / (NWG / VW)) * nv + n0 / VW + e % (NWG / VW)];      \
    }
#define STORE_TILES(buf)                                                                   \
    for (uint r = 0; r < A_LOADS; ++r) {                                                  \
        uint e = t + r * THREADS;                                                         \
        uint row = e / (KWG / VW), col = e % (KWG / VW) * VW;                             \
        T x[VW];                                                                          \
        SPLIT(pa[r], x)                                                                   \
        for (uint v = 0; v < VW; ++v)                                                     \
            als[buf][(col + v) * ALD + row] = x[v];                                       \
    }                                                                                     \
    for (uint r = 0; r < B_LOADS; ++r) {                                                  \
        uint e = t + r * THREADS;                                                         \
        *(PS_LOCAL_PARAM VT *)&bls[buf][e / (NWG / VW) * NWG + e % (NWG / VW) * VW] = pb[r];      \
    }

    LOAD_TILES(0)
    STORE_TILES(0)
    barrier(CLK_LOCAL_MEM_FENCE);
    uint steps = k / KWG;
    for (uint s = 0; s < steps; ++s) {
        uint buf = s & 1;
        if (s + 1 < steps) {
            LOAD_TILES((s + 1) * KWG)
        }
#pragma unroll
        for (uint kk = 0; kk < KWG; ++kk) {
            T ar[MWI];
            VT br[NVI];
#pragma unroll
            for (uint i = 0; i < MVI; ++i) {
                VT x = *(PS_LOCAL_PARAM VT *)&als[buf][kk * ALD + (i * MDIMC + ty) * VW];
                SPLIT(x, (ar + i * VW))
            }
#pragma unroll
            for (uint j = 0; j < NVI; ++j)
                br[j] = *(PS_LOCAL_PARAM VT *)&bls[buf][kk * NWG + (j * NDIMC + tx) * VW];
#if ORDER == 1
#pragma unroll
            for (uint j = 0; j < NVI; ++j)
#pragma unroll
                for (uint i = 0; i < MWI; ++i)
                    acc[i][j] += ar[i] * br[j];
#elif ORDER == 2
#pragma unroll
            for (uint i = 0; i < MWI; ++i)
#pragma unroll
                for (uint q = 0; q < NWI; ++q) {
                    uint j = i & 1 ? NWI - 1 - q : q;
                    T *c = (T *)&acc[i][j / VW] + j % VW;
                    *c = fma(ar[i], ((T *)&br[j / VW])[j % VW], *c);
                }
#else
#pragma unroll
            for (uint i = 0; i < MWI; ++i)
#pragma unroll
                for (uint j = 0; j < NVI; ++j)
                    acc[i][j] += ar[i] * br[j];
#endif
        }
        if (s + 1 < steps) {
            STORE_TILES(buf ^ 1)
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    __global VT *cv = (__global VT *)c;
#pragma unroll
    for (uint i = 0; i < MVI; ++i)
#pragma unroll
        for (uint v = 0; v < VW; ++v) {
            uint row = m0 + (i * MDIMC + ty) * VW + v;
#pragma unroll
            for (uint j = 0; j < NVI; ++j)
                cv[(size_t)row * nv + n0 / VW + j * NDIMC + tx] = acc[i * VW + v][j];
        }
}
