/* Single-pass scan with decoupled look-back (Merrill and Garland, "Single-pass Parallel Prefix
 * Scan with Decoupled Look-back", NVIDIA 2016), shared by scan/single_pass.cl (sums of the scan
 * dtypes) and skeletons/scan.cl (any associative operator, structs included).
 *
 * A work-group takes the next tile number from an atomic counter, so tiles start in order: every
 * predecessor of a tile has started before it. With ORDERED 1 (the host sets it where the
 * look-back polls: NVIDIA's GPUs, which start work-groups in the order of their numbers, as CUB's
 * scan also assumes) the tile is the group's number, and the group starts loading without
 * waiting for the counter and a barrier. The group scans its WG * ITEMS elements (each
 * work-item ITEMS consecutive ones, in registers), publishes the tile's aggregate, looks back over
 * its predecessors' published aggregates and inclusive prefixes until it meets a prefix, publishes
 * its own inclusive prefix and writes its elements: 2n elements of traffic, one launch.
 *
 * Forward progress. The look-back waits for predecessors that have not published yet. Where a
 * started work-group is sure to progress however long others wait (CUDA; NVIDIA's OpenCL), the
 * host builds FALLBACK 0, which polls as long as it takes. Elsewhere (PoCL, whose work-groups may
 * run one after another on a thread, and any OpenCL driver that promises nothing) FALLBACK 1 is
 * the "decoupled fallback" of Smith, Levien and Owens (SPAA 2025): after SPINS polls of a tile
 * that has not published, the waiting group reduces that tile's input itself and looks further
 * back, so no group depends on another one being scheduled.
 *
 * The includer defines SP_T, SP_OP(a, b), SP_EXTRA_PARAMS and SP_EXTRA_ARGS (the operator's extra
 * arguments), WG, ITEMS, VEC (1; or 2 or 4 with SP_VT, the VEC-wide vector of SP_T, for loads of
 * whole vectors), FALLBACK and SPINS. The tile status lives in two buffers: state[0] is the tile
 * counter and state[1 + j] tile j's flag (zeroed before the launch); values[j] holds tile j's
 * aggregate and values[tiles + j] its inclusive prefix.
 *
 * PACKED (the host sets it to 1 for 4-byte SP_T, 2 for 8-byte) on devices with warps and forward
 * progress: a tile's status and value share one word of 8 (16) bytes, written and read whole, as
 * CUB's tile state does for types of up to 8 bytes. The reader then needs neither a second load
 * nor a fence between status and value, and the first warp alone looks back, 32 tiles a round,
 * combining them with shuffles. values (2 * tiles elements, zeroed before the launch, 16-byte
 * aligned) then holds tiles such words; state[0] is still the tile counter.
 *
 * SP_TOTAL 1 (the includer's choice): the last tile also writes the whole scan's total to
 * values[2 * tiles], in either layout, so values then holds 2 * tiles + 1 elements. */
#ifndef PARSKEL_SCAN_SINGLE_PASS_H
#define PARSKEL_SCAN_SINGLE_PASS_H

#include "common/parskel.h"
#include "common/subgroup.h"
#include "common/coherent.h"
#include "common/cache_ops.h"

#define PS_GROUP_T SP_T
#define PS_GROUP_OP(a, b) SP_OP(a, b)
#define PS_GROUP_EXTRA_PARAMS SP_EXTRA_PARAMS
#define PS_GROUP_EXTRA_ARGS SP_EXTRA_ARGS
#include "common/group_scan.h"

#ifndef ITEMS
#define ITEMS 16
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef FALLBACK
#define FALLBACK 1
#endif
#ifndef SPINS
#define SPINS 64
#endif
#ifndef STAGE
#define STAGE 0
#endif
#ifndef PACKED
#define PACKED 0
#endif
#ifndef ORDERED
#define ORDERED 0
#endif
/* MIN_GROUPS (CUDA): work-groups an SM must be able to hold at once, which bounds the registers;
 * 0 leaves them to the compiler. The includer's kernel carries SP_BOUNDS. On an H200 a staged
 * tile of 256 x 32 int32 took 64 registers (four groups an SM); bounded to five groups (51
 * registers) its scan of 2^28 went from 0.80 to 0.75 ms. NVIDIA's OpenCL takes no launch
 * bounds: there algorithms/single_pass.py sets the same bound in the PTX (PS_MAX_REGISTERS). */
#ifndef MIN_GROUPS
#define MIN_GROUPS 0
#endif
#if defined(PS_CUDA) && MIN_GROUPS > 0
#define SP_BOUNDS __launch_bounds__(WG, MIN_GROUPS)
#else
#define SP_BOUNDS
#endif
#ifndef SP_TOTAL
#define SP_TOTAL 0
#endif
#if ITEMS % VEC != 0
#error "ITEMS must be a multiple of VEC"
#endif
/* HINTS (where PTX can be written: CUDA, and NVIDIA's OpenCL with PS_PTX): cache operators on
 * the 16-byte vectors a staged tile moves (STAGE 1, VEC > 1). Bit 0 reads them
 * with .cs ("streaming": the lines are evicted first, as each is read once), bit 1 writes them
 * so; elsewhere they are plain loads and stores (common/cache_ops.h). On an H200, both (3) took
 * the scan of 2^28 int32 from 0.696 to 0.685 ms on CUDA and from 0.670 to 0.656 ms on NVIDIA's
 * OpenCL (the tuner, one start), and of 2^27 int64 from 0.656-0.662 to 0.649-0.651 ms a call on
 * CUDA (float64 alike). */
#ifndef HINTS
#define HINTS 0
#endif
#if HINTS && STAGE && VEC > 1 && PS_CACHE_OPS
#define SP_HINTED HINTS
#else
#define SP_HINTED 0
#endif

#if PACKED && PS_WARP_OPS && !FALLBACK && WG >= 32
#define SP_PACKED PACKED
#else
#define SP_PACKED 0
#endif

#define SP_TILE (WG * ITEMS)
#define SP_WINDOW (WG < 32 ? WG : 32)

#define SP_EMPTY 0u
#define SP_AGGREGATE 1u
#define SP_PREFIX 2u

/* what the look-back does next (decided by work-item 0, read by all) */
#define SP_POLL 0
#define SP_DONE 1
#define SP_REDUCE 2

#if VEC == 4
#define SP_SPLIT(v, x, k) x[k] = v.s0; x[k + 1] = v.s1; x[k + 2] = v.s2; x[k + 3] = v.s3;
#define SP_JOIN(x, k) PS_VEC(SP_VT, x[k], x[k + 1], x[k + 2], x[k + 3])
#elif VEC == 2
#define SP_SPLIT(v, x, k) x[k] = v.s0; x[k + 1] = v.s1;
#define SP_JOIN(x, k) PS_VEC(SP_VT, x[k], x[k + 1])
#endif

/* The ITEMS elements from `first`; those at or past n read as the identity. */
PS_INLINE void sp_load(__global const SP_T *in, uint first, uint n, SP_T identity, SP_T *x)
{
    if (first + ITEMS <= n) {
#if VEC > 1
        __global const SP_VT *v = (__global const SP_VT *)(in + first);
#pragma unroll
        for (uint k = 0; k < ITEMS / VEC; ++k) {
            SP_VT t = v[k];
            SP_SPLIT(t, x, k * VEC)
        }
#else
#pragma unroll
        for (uint k = 0; k < ITEMS; ++k)
            x[k] = in[first + k];
#endif
    } else {
#pragma unroll
        for (uint k = 0; k < ITEMS; ++k)
            x[k] = first + k < n ? in[first + k] : identity;
    }
}

PS_INLINE void sp_store(__global SP_T *out, uint first, uint n, SP_T *x)
{
    if (first + ITEMS <= n) {
#if VEC > 1
        __global SP_VT *v = (__global SP_VT *)(out + first);
#pragma unroll
        for (uint k = 0; k < ITEMS / VEC; ++k)
            v[k] = SP_JOIN(x, k * VEC);
#else
#pragma unroll
        for (uint k = 0; k < ITEMS; ++k)
            out[first + k] = x[k];
#endif
    } else {
#pragma unroll
        for (uint k = 0; k < ITEMS; ++k)
            if (first + k < n)
                out[first + k] = x[k];
    }
}

/* STAGE 1: a tile goes through local memory on its way in and out, so that global memory is
 * read and written in whole lines (work-item i takes elements i, i + WG, i + 2 WG, ...) while
 * each work-item still scans ITEMS consecutive elements; one element of padding every SP_ROW
 * (128 bytes' worth, at most 32) keeps a warp's reads of its work-items' k-th elements on
 * distinct banks: for 8-byte elements a row of 32 would put work-items 2m and 2m + 1 on the
 * same ones. SP_ROW divides 32, so a WG that is a multiple of 32 is one of SP_ROW. */
#define SP_ROW ((uint)(sizeof(SP_T) <= 4 ? 32 : sizeof(SP_T) == 8 ? 16 : 8))
#define SP_PAD(i) ((i) + (i) / SP_ROW)
#if STAGE
#define SP_STAGE_SIZE (SP_PAD(SP_TILE) + 1)
#else
#define SP_STAGE_SIZE 1
#endif

#if SP_HINTED
/* The VEC elements (16 bytes, aligned) from `from` into `to`, read with the cache operator .cs. */
PS_INLINE void sp_read_streaming(__global const SP_T *from, PS_LOCAL_PARAM SP_T *to)
{
    union { uint bits[4]; SP_T value[VEC]; } v;
    ps_read16_cs(from, v.bits);
#pragma unroll
    for (uint k = 0; k < VEC; ++k)
        to[k] = v.value[k];
}

/* The VEC elements of `from` to `to` (16 bytes, aligned), written with the cache operator .cs. */
PS_INLINE void sp_write_streaming(__global SP_T *to, PS_LOCAL_PARAM const SP_T *from)
{
    union { uint bits[4]; SP_T value[VEC]; } v;
#pragma unroll
    for (uint k = 0; k < VEC; ++k)
        v.value[k] = from[k];
    ps_write16_cs(to, v.bits);
}
#endif

/* The tile's elements from `base` (those at or past n read as the identity) into x, staged. */
PS_INLINE void sp_load_staged(__global const SP_T *in, uint base, uint n, SP_T identity, SP_T *x,
                              PS_LOCAL_PARAM SP_T *stage)
{
    uint lid = get_local_id(0);
    if (WG % 32 == 0 && base + SP_TILE <= n) { /* a whole tile (all but the last): nothing to check */
#if VEC > 1
        /* in vectors: work-item i takes vector i, i + WG, ...; a vector's elements stay within
         * one row of the stage, so they are consecutive there too */
        __global const SP_VT *from = (__global const SP_VT *)(in + base) + lid;
#pragma unroll
        for (uint k = 0; k < ITEMS / VEC; ++k) {
            PS_LOCAL_PARAM SP_T *to = stage + SP_PAD(VEC * (k * WG + lid));
#if SP_HINTED & 1
            sp_read_streaming((__global const SP_T *)(from + k * WG), to);
#else
            SP_VT t = from[k * WG];
            SP_SPLIT(t, to, 0)
#endif
        }
#else
        __global const SP_T *from = in + base + lid;
        PS_LOCAL_PARAM SP_T *to = stage + SP_PAD(lid);
#pragma unroll
        for (uint k = 0; k < ITEMS; ++k)
            to[k * SP_PAD(WG)] = from[k * WG];
#endif
    } else {
#pragma unroll
        for (uint k = 0; k < ITEMS; ++k) {
            uint i = k * WG + lid;
            stage[SP_PAD(i)] = base + i < n ? in[base + i] : identity;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint k = 0; k < ITEMS; ++k)
        x[k] = stage[SP_PAD(lid * ITEMS + k)];
}

/* x, every work-item's ITEMS elements, to the tile at `base` (those below n), staged. */
PS_INLINE void sp_store_staged(__global SP_T *out, uint base, uint n, SP_T *x, PS_LOCAL_PARAM SP_T *stage)
{
    uint lid = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE); /* every work-item has taken its elements from the stage */
#pragma unroll
    for (uint k = 0; k < ITEMS; ++k)
        stage[SP_PAD(lid * ITEMS + k)] = x[k];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (WG % 32 == 0 && base + SP_TILE <= n) {
#if VEC > 1
        __global SP_VT *to = (__global SP_VT *)(out + base) + lid;
#pragma unroll
        for (uint k = 0; k < ITEMS / VEC; ++k) {
            PS_LOCAL_PARAM const SP_T *from = stage + SP_PAD(VEC * (k * WG + lid));
#if SP_HINTED & 2
            sp_write_streaming((__global SP_T *)(to + k * WG), from);
#else
            to[k * WG] = SP_JOIN(from, 0);
#endif
        }
#else
        __global SP_T *to = out + base + lid;
        PS_LOCAL_PARAM const SP_T *from = stage + SP_PAD(lid);
#pragma unroll
        for (uint k = 0; k < ITEMS; ++k)
            to[k * WG] = from[k * SP_PAD(WG)];
#endif
    } else {
#pragma unroll
        for (uint k = 0; k < ITEMS; ++k) {
            uint i = k * WG + lid;
            if (base + i < n)
                out[base + i] = stage[SP_PAD(i)];
        }
    }
}

/* The combination of a work-item's ITEMS elements from `first`. */
PS_INLINE SP_T sp_fold(__global const SP_T *in, uint first, uint n, SP_T identity SP_EXTRA_PARAMS)
{
    SP_T x[ITEMS];
    sp_load(in, first, n, identity, x);
    SP_T a = x[0];
#pragma unroll
    for (uint k = 1; k < ITEMS; ++k)
        a = SP_OP(a, x[k]);
    return a;
}

/* The combination of every tile before `tile`, returned to every work-item of the group. */
PS_INLINE SP_T sp_look_back(uint tile, __global const SP_T *in, uint n, volatile __global uint *flags,
                            __global const SP_T *values, uint tiles, SP_T identity,
                            PS_LOCAL_PARAM SP_T *scratch, PS_LOCAL_PARAM SP_T *wv,
                            PS_LOCAL_PARAM uint *wf, PS_LOCAL_PARAM int *ctl SP_EXTRA_PARAMS)
{
    uint lid = get_local_id(0);
    int j = (int)tile - 1; /* the nearest tile not yet combined */
    SP_T acc = identity;   /* combination of tiles j+1 .. tile-1 */
#if FALLBACK
    uint polls = 0;
#endif
    for (;;) {
        if (lid < SP_WINDOW) {
            int idx = j - (SP_WINDOW - 1 - (int)lid);
            uint f = SP_PREFIX;
            SP_T v = identity;
            if (idx >= 0) {
                f = flags[idx];
                PS_DEVICE_FENCE();
                if (f == SP_PREFIX)
                    PS_READ_COHERENT(SP_T, v, values + tiles + idx);
                else if (f == SP_AGGREGATE)
                    PS_READ_COHERENT(SP_T, v, values + idx);
            }
            wf[lid] = f;
            wv[lid] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            int k = SP_WINDOW - 1;
            while (k >= 0 && wf[k] == SP_AGGREGATE) {
                acc = SP_OP(wv[k], acc);
                --k;
            }
            int action = SP_POLL;
            if (k < 0) {
                j -= SP_WINDOW;
            } else if (wf[k] == SP_PREFIX) {
                acc = SP_OP(wv[k], acc);
                action = SP_DONE;
            } else {
                j -= SP_WINDOW - 1 - k; /* tile j has not published: poll it again */
#if FALLBACK
                if (++polls > SPINS) {
                    polls = 0;
                    action = SP_REDUCE;
                }
#endif
            }
            ctl[0] = action;
            ctl[1] = j;
            wv[SP_WINDOW] = acc;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        int action = ctl[0];
        j = ctl[1];
        acc = wv[SP_WINDOW];
        if (action == SP_DONE)
            return acc;
#if FALLBACK
        /* Tile j has stayed silent: reduce its input here (it is whole: only the last tile is
         * partial). Every work-item passes the barriers, whatever the action (PoCL needs them
         * outside conditions). An in-place scan overwrites a tile's input once the tile has
         * published: if tile j published meanwhile, what was read may be output, so the
         * published value is used instead. */
        SP_T mine = identity;
        if (action == SP_REDUCE)
            mine = sp_fold(in, (uint)j * SP_TILE + lid * ITEMS, n, identity SP_EXTRA_ARGS);
        SP_T aggregate;
        ps_group_exclusive_scan(mine, identity, scratch, &aggregate SP_EXTRA_ARGS);
        if (lid == 0 && action == SP_REDUCE) {
            PS_DEVICE_FENCE();
            ctl[3] = flags[j] == SP_EMPTY;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (action == SP_REDUCE && ctl[3]) {
            acc = SP_OP(aggregate, acc);
            if (j == 0) /* the first tile's aggregate is its prefix */
                return acc;
            --j;
        }
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

#if SP_PACKED == 1
/* Tile j's status and 4-byte value in words[j], one 64-bit word (the status in its high half). */
PS_INLINE void sp_publish(volatile __global ulong *words, uint tile, uint status, SP_T v)
{
    union { SP_T value; uint bits; } c;
    c.value = v;
    words[tile] = ((ulong)status << 32) | c.bits;
}

PS_INLINE uint sp_status(volatile __global const ulong *words, int j, SP_T *v)
{
    ulong w = words[j];
    union { SP_T value; uint bits; } c;
    c.bits = (uint)w;
    *v = c.value;
    return (uint)(w >> 32);
}
#elif SP_PACKED == 2
/* Tile j's status and 8-byte value in words[2j] and words[2j + 1], one 16-byte word written and
 * read by one vector instruction each. Like CUB's tile state for 8-byte types, this relies on an
 * aligned 16-byte access reaching memory whole on NVIDIA's GPUs (the only devices with PACKED 2:
 * it needs warps, which CUDA and inline PTX give). CUDA passes generic addresses, NVIDIA's
 * OpenCL global ones. */
#if defined(PS_PTX)
#define SP_SPACE ".global"
#else
#define SP_SPACE ""
#endif
PS_INLINE void sp_publish(volatile __global ulong *words, uint tile, uint status, SP_T v)
{
    union { SP_T value; ulong bits; } c;
    c.value = v;
    ulong at = (ulong)(words + 2 * tile), s = status;
    asm volatile("st.volatile" SP_SPACE ".v2.u64 [%0], {%1, %2};" : : "l"(at), "l"(s), "l"(c.bits) : "memory");
}

PS_INLINE uint sp_status(volatile __global const ulong *words, int j, SP_T *v)
{
    ulong at = (ulong)(words + 2 * j), s, bits;
    asm volatile("ld.volatile" SP_SPACE ".v2.u64 {%0, %1}, [%2];" : "=l"(s), "=l"(bits) : "l"(at) : "memory");
    union { SP_T value; ulong bits; } c;
    c.bits = bits;
    *v = c.value;
    return (uint)s;
}
#endif

#if SP_PACKED

/* The index of the lowest set bit of m, 32 when there is none. */
PS_INLINE uint sp_lowest(uint m) { return popcount((m & (0u - m)) - 1u); }

/* The combination of every tile before `tile`, in every lane of the calling warp (the first).
 * Lane l reads tile j - l; the lanes up to the nearest prefix, or before the nearest tile that
 * has not published, are combined farthest first by a tree of shuffles. */
PS_INLINE SP_T sp_look_back_packed(uint tile, volatile __global const ulong *words, SP_T identity SP_EXTRA_PARAMS)
{
    uint lane = ps_lane();
    int j = (int)tile - 1; /* the nearest tile not yet combined */
    SP_T acc = identity;   /* combination of tiles j+1 .. tile-1 */
    for (;;) {
        int idx = j - (int)lane;
        uint status = SP_PREFIX;
        SP_T v = identity;
        if (idx >= 0)
            status = sp_status(words, idx, &v);
        uint silent = sp_lowest(ps_ballot(status == SP_EMPTY));
        uint prefix = sp_lowest(ps_ballot(status == SP_PREFIX));
        if (silent == 0)
            continue; /* the nearest tile has not published: poll again */
        uint count = prefix < silent ? prefix + 1 : silent;
        if (lane >= count)
            v = identity;
        for (uint d = 1; d < 32; d <<= 1) {
            SP_T far;
            PS_SHFL_DOWN_ANY(SP_T, far, v, d);
            if (lane + d < 32)
                v = SP_OP(far, v);
        }
        SP_T found;
        PS_SHFL_ANY(SP_T, found, v, 0);
        acc = SP_OP(found, acc);
        if (prefix < silent)
            return acc;
        j -= (int)count;
    }
}
#endif

/* Scan this group's tile of `in` into `out`; INCLUSIVE selects the kind. Every work-item calls. */
PS_INLINE void sp_scan_tile(__global const SP_T *in, __global SP_T *out, __global uint *state,
                            __global SP_T *values, uint n, uint tiles, SP_T identity,
                            PS_LOCAL_PARAM SP_T *scratch, PS_LOCAL_PARAM SP_T *wv, PS_LOCAL_PARAM uint *wf,
                            PS_LOCAL_PARAM int *ctl, PS_LOCAL_PARAM SP_T *stage SP_EXTRA_PARAMS)
{
    uint lid = get_local_id(0);
#if ORDERED
    /* work-groups start in the order of their numbers (see ORDERED above) */
    uint tile = get_group_id(0);
#else
    if (lid == 0)
        ctl[2] = (int)atomic_inc(state);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint tile = (uint)ctl[2];
#endif
    SP_T x[ITEMS];
#if STAGE
    sp_load_staged(in, tile * SP_TILE, n, identity, x, stage);
#else
    uint first = tile * SP_TILE + lid * ITEMS;
    sp_load(in, first, n, identity, x);
#endif
    SP_T mine = x[0];
#pragma unroll
    for (uint k = 1; k < ITEMS; ++k)
        mine = SP_OP(mine, x[k]);
    SP_T total;
    SP_T run = ps_group_exclusive_scan(mine, identity, scratch, &total SP_EXTRA_ARGS);
#if SP_PACKED
    volatile __global ulong *words = (volatile __global ulong *)values;
    if (tile == 0) {
        if (lid == 0)
            sp_publish(words, 0, SP_PREFIX, total);
    } else {
        if (lid < 32) {
            if (lid == 0)
                sp_publish(words, tile, SP_AGGREGATE, total);
            SP_T prefix = sp_look_back_packed(tile, words, identity SP_EXTRA_ARGS);
            if (lid == 0) {
                sp_publish(words, tile, SP_PREFIX, SP_OP(prefix, total));
                wv[0] = prefix;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        run = SP_OP(wv[0], run);
    }
#else
    volatile __global uint *flags = state + 1;
    if (tile == 0) {
        if (lid == 0) {
            values[tiles] = total;
            PS_DEVICE_FENCE();
            flags[0] = SP_PREFIX;
        }
    } else {
        if (lid == 0) {
            values[tile] = total;
            PS_DEVICE_FENCE();
            flags[tile] = SP_AGGREGATE;
        }
        SP_T prefix = sp_look_back(tile, in, n, flags, values, tiles, identity, scratch, wv, wf, ctl SP_EXTRA_ARGS);
        if (lid == 0) {
            values[tiles + tile] = SP_OP(prefix, total);
            PS_DEVICE_FENCE();
            flags[tile] = SP_PREFIX;
        }
        run = SP_OP(prefix, run);
    }
#endif
#if SP_TOTAL
    if (lid == 0 && tile == tiles - 1) /* work-item 0's run is the tile's exclusive prefix */
        values[2 * tiles] = SP_OP(run, total);
#endif
#pragma unroll
    for (uint k = 0; k < ITEMS; ++k) {
        SP_T v = x[k];
#if INCLUSIVE
        run = SP_OP(run, v);
        x[k] = run;
#else
        x[k] = run;
        run = SP_OP(run, v);
#endif
    }
#if STAGE
    sp_store_staged(out, tile * SP_TILE, n, x, stage);
#else
    sp_store(out, first, n, x);
#endif
}

#define SP_LOCALS                                  \
    __local SP_T sp_scratch[PS_GROUP_SCRATCH];     \
    __local SP_T sp_wv[SP_WINDOW + 1];             \
    __local uint sp_wf[SP_WINDOW];                 \
    __local int sp_ctl[4];                         \
    __local SP_T sp_stage[SP_STAGE_SIZE];
#define SP_LOCAL_ARGS sp_scratch, sp_wv, sp_wf, sp_ctl, sp_stage

#endif
