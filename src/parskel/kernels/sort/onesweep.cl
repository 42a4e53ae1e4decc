/* Onesweep LSD radix sort (Adinets and Merrill, "Onesweep: A Faster Least Significant Digit
 * Radix Sort for GPUs", 2022): 8-bit digits, four passes over 32-bit keys.
 *
 * onesweep_histogram reads the keys once and counts the digits of all four passes. Each pass is
 * one launch of onesweep_pass: a work-group takes the next tile number from an atomic counter
 * (tiles start in order; with ORDERED, where the look-back polls, its own number, as work-groups
 * start in that order there, see runtime/traits.py), counts its WG * ITEMS keys by digit and
 * publishes the counts, ranks the keys stably by digit into local memory, then looks back over
 * its predecessors' published counts (decoupled look-back, one digit per work-item) for where its
 * keys of each digit go, publishes its inclusive counts, and writes its keys (and values) grouped
 * by digit, so that runs of a digit go out together. Looking back after the ranking, as CUB
 * does, gives the tiles before the ranking's time to publish. The input is read once and written
 * once per pass.
 *
 * Ranking is stable: key positions are ordered (warp, round, lane); with warp operations
 * (common/subgroup.h) each warp first counts its keys of each digit (local atomics), the tile's
 * counts are published and scanned, and only then does each warp rank 32 keys a round, finding the
 * lanes that hold each digit with 8 ballots (one per bit) and moving a per-warp counter per digit,
 * straight to the key's place in the tile (CUB's order of work); elsewhere one work-item per
 * LANES-wide slice walks its keys in order and counts, and the counts are scanned after. Ranked
 * first, a key knew only its rank in its warp, and placing it took two more reads of local memory
 * at its digit (the digit's start and the warp's offset), whose banks conflict: on an H200 a pass
 * over 2^26 pairs took 481 us, 220M instructions and 13.6M conflicts of local loads so, 468 us,
 * 196M and 4.6M now (Nsight Compute), and a sort of 2^28 keys 6.20-6.31 ms against 5.86-5.91.
 *
 * Forward progress: FALLBACK 0 polls a predecessor until it publishes; FALLBACK 1 (devices that
 * do not guarantee it, see runtime/traits.py) is the decoupled fallback: after SPINS
 * polls the group counts the silent predecessor's keys itself, so no group waits on another.
 *
 * Keys are encoded (keys.h) as the first pass reads them and decoded as the last writes them.
 * The status words pack a 2-bit flag with a count: 32 bits below 2^30 keys, 64 (WIDE) above.
 * counters holds the 4 x 256 digit counts, then the 4 tile counters, then the 4 x 256 digit
 * starts (the counts' exclusive scans, which onesweep_starts writes once, so that no tile scans
 * them again). Only the counts must be zero when a sort begins: onesweep_starts zeroes the tile
 * counters before the passes take tiles, and the counts once it has read them, so a GPU's sorts
 * keep one such buffer and never zero it again (algorithms/onesweep.py).
 * status holds two sections of status words, a row of 256 a tile: pass p looks back in section
 * p % 2. Clearing them is folded into kernels whose memory has room to spare:
 * onesweep_histogram clears section 0 for the first pass, and each pass clears its tile's row
 * of the other section, the last pass's, for the next. A separate clear of four sections
 * (150 MB for 2^28 keys) took 42-58 us of an H200's time before the histogram could start. */
#include "common/parskel.h"
#include "common/subgroup.h"
#include "keys.h"

#ifndef WG
#define WG 256
#endif
#ifndef ITEMS
#define ITEMS 15
#endif
#ifndef WITH_VALUES
#define WITH_VALUES 0
#endif
#ifndef WIDE
#define WIDE 0
#endif
#ifndef FALLBACK
#define FALLBACK 1
#endif
#ifndef ORDERED
#define ORDERED 0
#endif
#ifndef SPINS
#define SPINS 64
#endif
/* Pairs on CUDA: the pass reads the values only once the keys are in local memory, so that the
 * ranking does not hold them (they arrive while the tile looks back), and asks for no more
 * registers than let PASS_RESIDENT work-items share an SM (768 up to 28 keys a work-item, at 80
 * registers, as the keys' pass; with values read with the keys the compiler took 128: two
 * groups of 256 an SM). On an H200 a pass over 2^28 pairs
 * took 2.34 ms so, 2.71 before (2.41 with the values read after the keys had gone out); the keys'
 * pass, bounded alike, was slower (1.76 ms against 1.69). */
/* NVIDIA's OpenCL takes no launch bounds: there the pass over keys gets the same bound as
 * .maxnreg in its PTX (PS_MAX_REGISTERS, set by algorithms/onesweep.py; 80 registers, where the
 * driver's compiler took 107: 2^28 keys in 5.94 ms against 7.11). Its pass over pairs keeps its
 * values read with the keys and no bound: bounded it spilled (12.5 ms at 2^28), and bounded with
 * the values read late it took 8.94-8.97 ms against 8.81-8.82. LATE_VALUES may be set to try. */
/* Up to 28 keys a work-item, a pass over pairs fits 80 registers, three groups of 256 an SM;
 * taller tiles get 128, two groups (at 32 keys under 80 the pass spilled: 10.6-11.0 ms for 2^28
 * pairs on an H200; at 36 under 128, 7.36-7.42 ms against 7.94-8.10 for 28 under 80). */
#ifndef PASS_RESIDENT
#define PASS_RESIDENT (ITEMS > 28 ? 512 : 768)
#endif
#if defined(PS_CUDA) && WITH_VALUES
#define PASS_BOUNDS __launch_bounds__(WG, PASS_RESIDENT / WG > 0 ? PASS_RESIDENT / WG : 1)
#ifndef LATE_VALUES
#define LATE_VALUES 1
#endif
#else
#define PASS_BOUNDS
#endif
#ifndef LATE_VALUES
#define LATE_VALUES 0
#endif

/* Pairs through NVIDIA's OpenCL (values read with the keys): each warp first asks L2 for the
 * lines of its values, one line a lane. A sort of 2^28 pairs on an H200 took 9.16-9.17 ms so,
 * 9.27-9.35 without; on CUDA, which reads the values late, it made no difference. */
#if WITH_VALUES && defined(PS_PTX)
#define PREFETCH_VALUES 1
#else
#define PREFETCH_VALUES 0
#endif

#define RADIX 256
#define PASSES 4
#define TILE (WG * ITEMS)
#define DIGIT(key, shift) (((key) >> (shift)) & (RADIX - 1))
#if WG < RADIX
#error "onesweep needs a work-item per digit: WG >= 256"
#endif

#if PS_WARP_OPS
#undef LANES
#define LANES 32
#elif !defined(LANES)
#define LANES WG
#endif
#define WARPS (WG / LANES)

#if WIDE
typedef ulong status_t;
#define ST_SHIFT 62
#else
typedef uint status_t;
#define ST_SHIFT 30
#endif
#define ST_AGGREGATE 1u
#define ST_PREFIX 2u
#define ST_FLAG(s) ((uint)((s) >> ST_SHIFT))
#define ST_COUNT(s) ((uint)((s) & ((((status_t)1) << ST_SHIFT) - 1)))
#define ST_MAKE(flag, count) ((((status_t)(flag)) << ST_SHIFT) | (status_t)(count))

#define PS_GROUP_T uint
#define PS_GROUP_OP(a, b) ((a) + (b))
#define PS_GROUP_EXTRA_PARAMS
#define PS_GROUP_EXTRA_ARGS
#include "common/group_scan.h"

#define TILE_COUNTERS (PASSES * RADIX) /* where the tile counters begin in counters */
#define STARTS (TILE_COUNTERS + PASSES) /* where the digit starts begin */

PS_INLINE void count_digits(PS_LOCAL_PARAM uint *counts, uint key)
{
    atomic_inc(&counts[key & 0xffu]);
    atomic_inc(&counts[RADIX + ((key >> 8) & 0xffu)]);
    atomic_inc(&counts[2 * RADIX + ((key >> 16) & 0xffu)]);
    atomic_inc(&counts[3 * RADIX + (key >> 24)]);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void onesweep_histogram(__global const uint *keys, __global uint *counters, __global status_t *status, uint n,
                        uint chunk)
{
    __local uint counts[PASSES * RADIX];
    uint lid = get_local_id(0);
    for (uint i = lid; i < PASSES * RADIX; i += WG)
        counts[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint begin = get_group_id(0) * chunk;
    uint end = PS_MIN(begin + chunk, n);
    /* four keys loaded before any is counted, so that four loads are in flight at once */
    uint i = begin + lid;
    for (; i + 3 * WG < end; i += 4 * WG) {
        uint four[4];
        for (uint k = 0; k < 4; ++k)
            four[k] = encode_key(keys[i + k * WG]);
        for (uint k = 0; k < 4; ++k)
            count_digits(counts, four[k]);
    }
    for (; i < end; i += WG)
        count_digits(counts, encode_key(keys[i]));
    /* section 0 of the status words, cleared for the first pass */
    uint words = (n + TILE - 1) / TILE * RADIX;
    for (uint w = get_global_id(0); w < words; w += get_global_size(0))
        status[w] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < PASSES * RADIX; i += WG)
        if (counts[i])
            atomic_add(&counters[i], counts[i]);
}

/* one work-group: each pass's digit starts, the exclusive scan of its digit counts; then the
 * counts and the tile counters zeroed, for the passes and for the next sort */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void onesweep_starts(__global uint *counters)
{
    __local uint scratch[PS_GROUP_SCRATCH];
    uint d = get_local_id(0);
    for (uint pass = 0; pass < PASSES; ++pass) {
        uint total;
        uint start = ps_group_exclusive_scan(d < RADIX ? counters[pass * RADIX + d] : 0, 0, scratch, &total);
        if (d < RADIX) {
            counters[STARTS + pass * RADIX + d] = start;
            counters[pass * RADIX + d] = 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (d < PASSES)
        counters[TILE_COUNTERS + d] = 0;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) PASS_BOUNDS
void onesweep_pass(__global const uint *keys, __global uint *keys_out,
#if WITH_VALUES
                   __global const uint *values, __global uint *values_out,
#endif
                   __global uint *counters, __global status_t *status_all, uint n, uint pass)
{
    __local uint warp_counts[WARPS * RADIX];
    PS_TILE_LOCAL(uint, keys_s, TILE);
#if !PS_WARP_OPS
    __local ushort rank_s[TILE];
    __local uint start_s[RADIX];
#endif
    __local uint base_s[RADIX];
    __local uint scratch[PS_GROUP_SCRATCH];
#if !ORDERED || LATE_VALUES
    __local uint tile_s;
#endif
#if FALLBACK
    __local uint fb_counts[RADIX];
    __local uint fb_flags[2];
#endif
    uint lid = get_local_id(0);
    uint shift = 8 * pass;
    uint first = pass == 0, last = pass == PASSES - 1;
    uint tiles = (n + TILE - 1) / TILE;
#if ORDERED
    /* work-groups start in the order of their numbers (runtime/traits.py); tile_s is still
     * where the late values find it */
    uint tile = get_group_id(0);
#if LATE_VALUES
    if (lid == 0)
        tile_s = tile;
#endif
#else
    if (lid == 0)
        tile_s = atomic_inc(&counters[TILE_COUNTERS + pass]);
#endif
    for (uint i = lid; i < WARPS * RADIX; i += WG)
        warp_counts[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
#if !ORDERED
    uint tile = tile_s;
#endif
    uint base = tile * TILE;
    volatile __global status_t *status = status_all + (pass & 1) * tiles * RADIX;
    /* the other section is the last pass's, which has ended: this tile's row of it, cleared
     * for the next pass */
    if (!last && lid < RADIX)
        status_all[((pass + 1) & 1) * tiles * RADIX + tile * RADIX + lid] = 0;

    /* the work-item's keys: position warp * LANES * ITEMS + round * LANES + lane of the tile;
     * past n, the largest key, which ranks after every real key of its digit */
    uint warp = lid / LANES, lane = lid % LANES;
    uint mine = warp * LANES * ITEMS + lane;
#if PREFETCH_VALUES
    {
        uint line = base + warp * LANES * ITEMS + lane * LANES;
        if (lane < ITEMS && line < n)
            asm volatile("prefetch.global.L2 [%0];" ::"l"(values + line));
    }
#endif
    uint key[ITEMS];
#if WITH_VALUES || !PS_WARP_OPS
    uint rank[ITEMS]; /* a key's rank among its warp's keys of its digit, then its place in the tile */
#endif
#if WITH_VALUES
    uint value[ITEMS];
#endif
    uint whole = base + TILE <= n; /* every tile but the last: no position to check */
    if (whole) {
#pragma unroll
        for (uint i = 0; i < ITEMS; ++i) {
            uint p = base + mine + i * LANES;
            uint k = keys[p];
            key[i] = first ? encode_key(k) : k;
#if WITH_VALUES && !LATE_VALUES
            value[i] = values[p];
#endif
        }
    } else {
#pragma unroll
        for (uint i = 0; i < ITEMS; ++i) {
            uint p = base + mine + i * LANES;
            key[i] = 0xffffffffu;
#if WITH_VALUES && !LATE_VALUES
            value[i] = 0;
#endif
            if (p < n) {
                uint k = keys[p];
                key[i] = first ? encode_key(k) : k;
#if WITH_VALUES && !LATE_VALUES
                value[i] = values[p];
#endif
            }
        }
    }

#if PS_WARP_OPS
    /* the keys of each digit in each warp: they are ranked once the tile's counts are scanned */
#pragma unroll
    for (uint i = 0; i < ITEMS; ++i)
        atomic_inc(&warp_counts[warp * RADIX + DIGIT(key[i], shift)]);
#else
    /* rank[i]: keys of the same digit before key i in its slice */
#pragma unroll
    for (uint i = 0; i < ITEMS; ++i)
        keys_s[mine + i * LANES] = key[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0) {
        uint end = (warp + 1) * LANES * ITEMS;
        for (uint p = warp * LANES * ITEMS; p < end; ++p) {
            uint d = DIGIT(keys_s[p], shift);
            rank_s[p] = (ushort)warp_counts[warp * RADIX + d]++;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint i = 0; i < ITEMS; ++i)
        rank[i] = rank_s[mine + i * LANES];
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    /* per digit (work-item d): the tile's count, published at once; the warps' offsets */
    uint d = lid;
    uint count = 0;
    if (d < RADIX) {
        for (uint w = 0; w < WARPS; ++w) {
            uint c = warp_counts[w * RADIX + d];
            warp_counts[w * RADIX + d] = count;
            count += c;
        }
        status[tile * RADIX + d] = ST_MAKE(tile == 0 ? ST_PREFIX : ST_AGGREGATE, count);
    }
    uint total;
    uint start = ps_group_exclusive_scan(count, 0, scratch, &total);
    uint digit_start = d < RADIX ? counters[STARTS + pass * RADIX + d] : 0;
#if PS_WARP_OPS
    /* warp w's keys of digit d take the tile's places from warp_counts[w * RADIX + d] on */
    if (d < RADIX)
        for (uint w = 0; w < WARPS; ++w)
            warp_counts[w * RADIX + d] += start;
#else
    if (d < RADIX)
        start_s[d] = start;
#endif
    barrier(CLK_LOCAL_MEM_FENCE);

    /* the keys in digit order in local memory, then out in runs; then the values the same way,
     * through the same local array, so that a tile of pairs needs no more local memory than a
     * tile of keys */
#if WITH_VALUES
#define KEEP_RANK(i, at) rank[i] = (at) /* where the key's value goes in the tile */
#else
#define KEEP_RANK(i, at)
#endif
#if PS_WARP_OPS
    /* each key ranked among its warp's keys of its digit (8 ballots find the lanes that share
     * it; the lowest of them moves the warp's counter on), straight to its place */
#pragma unroll
    for (uint i = 0; i < ITEMS; ++i) {
        uint dk = DIGIT(key[i], shift);
        uint peers = ps_match_bits(dk, 8);
        uint below = popcount(peers & ps_lanes_below());
        uint leader = 31 - clz(peers & (0u - peers));
        uint first_at = 0;
        if (below == 0) {
            first_at = warp_counts[warp * RADIX + dk];
            warp_counts[warp * RADIX + dk] = first_at + popcount(peers);
        }
        uint at = ps_shfl(first_at, leader) + below;
        ps_warp_sync();
        keys_s[at] = key[i];
        KEEP_RANK(i, at);
    }
#else
#pragma unroll
    for (uint i = 0; i < ITEMS; ++i) {
        uint dk = DIGIT(key[i], shift);
        uint at = start_s[dk] + warp_counts[warp * RADIX + dk] + rank[i];
        keys_s[at] = key[i];
        KEEP_RANK(i, at);
    }
#endif

    /* the look-back's first read of the tile before: where the values are read late, ahead
     * of their loads, so that it does not wait behind them in the memory queues */
#if !FALLBACK
    status_t seen = 0;
#if LATE_VALUES
    if (tile > 0 && d < RADIX)
        seen = status[(tile - 1) * RADIX + d];
#endif
#endif
#if LATE_VALUES
    {
        /* the values are read only now, their loads in flight while the tile looks back and
         * its keys go out: the ranking holds none (no load moves above its warp barriers).
         * Their positions start from tile_s, read from local memory, so that the compiler
         * keeps no address of the keys' loads for them: from base + mine the pass over pairs
         * spilled 220 bytes under its 80 registers (ptxas, sm_90). */
        uint from = tile_s * TILE + mine;
        if (whole) {
#pragma unroll
            for (uint i = 0; i < ITEMS; ++i)
                value[i] = values[from + i * LANES];
        } else {
#pragma unroll
            for (uint i = 0; i < ITEMS; ++i)
                value[i] = from + i * LANES < n ? values[from + i * LANES] : 0;
        }
    }
#endif
    /* look back: the keys of digit d in the tiles before this one. Only now, with the tile's
     * keys in place: the tiles before have had the ranking's time to publish their prefixes.
     * (Looking back before the ranking, a sort of 2^28 keys on an H200 took 5.95-6.05 ms,
     * 0.49-0.53 at 2^24; so, 5.65 and 0.44; pairs at 2^28 8.42 ms, so 8.20-8.39.) */
    uint before = 0;
#if FALLBACK
    uint waiting = tile > 0 && d < RADIX;
    int j = (int)tile - 1;
    for (;;) {
        if (lid == 0) {
            fb_flags[0] = 0;
            fb_flags[1] = 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        status_t s = 0;
        if (waiting) {
            for (uint q = 0; q <= SPINS && !ST_FLAG(s); ++q)
                s = status[j * RADIX + d];
            if (!ST_FLAG(s))
                fb_flags[0] = 1;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* tile j (whole: only the last tile is partial) has not published every digit: count its
         * keys. The barriers stay outside the condition, which every work-item reads alike. */
        uint silent = fb_flags[0];
        if (lid < RADIX)
            fb_counts[lid] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (silent)
            for (uint p = lid; p < TILE; p += WG) {
                uint k = keys[j * TILE + p];
                atomic_inc(&fb_counts[DIGIT(first ? encode_key(k) : k, shift)]);
            }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (waiting && !ST_FLAG(s))
            s = ST_MAKE(j == 0 ? ST_PREFIX : ST_AGGREGATE, fb_counts[d]);
        if (waiting) {
            before += ST_COUNT(s);
            if (ST_FLAG(s) == ST_PREFIX)
                waiting = 0;
            else
                fb_flags[1] = 1;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        uint more = fb_flags[1];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!more)
            break;
        --j;
    }
#else
    if (tile > 0 && d < RADIX) {
        int j = (int)tile - 1;
#if !LATE_VALUES
        seen = status[j * RADIX + d];
#endif
        for (;;) {
            uint flag = ST_FLAG(seen);
            if (flag) {
                before += ST_COUNT(seen);
                if (flag == ST_PREFIX)
                    break;
                --j;
            }
            seen = status[j * RADIX + d];
        }
    }
#endif
    if (d < RADIX) {
        if (tile > 0)
            status[tile * RADIX + d] = ST_MAKE(ST_PREFIX, before + count);
        /* key p of the tile's digit-ordered keys goes to base_s[digit] + p (mod 2^32) */
        base_s[d] = digit_start + before - start;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the keys out from local memory in order, each to its digit's run; with values, the digit
     * of each position a work-item writes is kept, four to a register, for the values' turn */
    uint valid = whole ? TILE : n - base;
#if WITH_VALUES
    uint digits[(ITEMS + 3) / 4];
#pragma unroll
    for (uint i = 0; i < (ITEMS + 3) / 4; ++i)
        digits[i] = 0;
#define KEEP_DIGIT(i, dk) digits[(i) / 4] |= (dk) << (8 * ((i) % 4))
#define KEPT_DIGIT(i) ((digits[(i) / 4] >> (8 * ((i) % 4))) & (RADIX - 1))
#else
#define KEEP_DIGIT(i, dk)
#endif
#pragma unroll
    for (uint i = 0; i < ITEMS; ++i) {
        uint p = lid + i * WG;
        if (whole || p < valid) {
            uint k = keys_s[p];
            uint dk = DIGIT(k, shift);
            keys_out[base_s[dk] + p] = last ? decode_key(k) : k;
            KEEP_DIGIT(i, dk);
        }
    }
#if WITH_VALUES
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint i = 0; i < ITEMS; ++i)
        keys_s[rank[i]] = value[i];
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint i = 0; i < ITEMS; ++i) {
        uint p = lid + i * WG;
        if (whole || p < valid)
            values_out[base_s[KEPT_DIGIT(i)] + p] = keys_s[p];
    }
#endif
}
