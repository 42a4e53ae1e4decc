/* Chained scan shaped for CPUs (beyond seed 000 chapter 4): the input in tiles small enough
 * for a core's cache, taken in order by a few work-groups of one work-item, as many as there
 * are cores. A work-group takes the next tile (a ticket counter), adds it up, publishes the
 * total, looks back over the tiles before it for the sum of all of them (decoupled look-back:
 * a tile's inclusive prefix where it is published, else its total and on to the one before),
 * publishes its own inclusive prefix and then scans the tile from the cache. Where the prefix
 * is known when the tile is taken (the first tile, or the one before has published its
 * inclusive prefix, as it has whenever one work-item takes the tiles in turn), the tile is
 * scanned at once in one pass and its inclusive prefix published after it. The input is read
 * from memory once and the output written once, where the two-level scan reads it twice.
 *
 * Waiting on another work-group is safe: tickets are taken in order by running work-groups, so
 * the tile waited for belongs to one that runs (on another core) or has finished (on this one,
 * where PoCL runs work-groups one after another). state[0] is the ticket counter, state[1 + t]
 * tile t's flag (0 nothing yet, 1 its total, 2 its inclusive prefix), in totals[2 t] and
 * totals[2 t + 1]; the totals follow the flags in the same buffer (from the first word past
 * them at a multiple of 8 bytes), and the counter and flags are zero before the launch. src
 * may be dst. */
#include "common/parskel.h"
#include "common/coherent.h"

#include "scan/lanes_cpu.h"

#define TOTAL 1
#ifndef ONE_PASS
#define ONE_PASS 1
#endif
#define PREFIX 2

inline void publish(__global T *totals, __global uint *state, uint t, uint kind, T value)
{
    totals[2 * t + kind - 1] = value;
    PS_DEVICE_FENCE();
    atomic_xchg(&state[1 + t], kind);
}

/* the sum of the tiles before tile t */
inline T look_back(__global const T *totals, __global uint *state, uint t)
{
    T before = (T)0;
    uint j = t;
    while (j > 0) {
        uint flag = atomic_or(&state[j], 0u); /* tile j - 1's */
        if (flag == 0)
            continue; /* not yet: its work-group is adding it up */
        PS_DEVICE_FENCE();
        T value;
        PS_READ_COHERENT(T, value, totals + 2 * (j - 1) + flag - 1);
        before += value;
        if (flag == PREFIX)
            break;
        --j;
    }
    return before;
}

/* Whether the sum of the tiles before tile t is known already (t is the first, or tile t - 1
 * has published its inclusive prefix), and if so that sum in *before. */
inline bool known_prefix(__global const T *totals, __global uint *state, uint t, T *before)
{
    if (t == 0) {
        *before = (T)0;
        return true;
    }
    if (atomic_or(&state[t], 0u) != PREFIX)
        return false;
    PS_DEVICE_FENCE();
    PS_READ_COHERENT(T, *before, totals + 2 * (t - 1) + PREFIX - 1);
    return true;
}

__kernel void chained_scan(__global const T *src, __global T *dst, __global uint *state, uint n, uint tile,
                           uint tiles, uint inclusive)
{
    __global T *totals = (__global T *)(state + ((tiles + 4) & ~3u));
    for (;;) {
        uint t = atomic_inc(&state[0]);
        if (t >= tiles)
            break;
        uint begin = t * tile, end = PS_MIN(n, begin + tile);
        T before;
        if (ONE_PASS && known_prefix(totals, state, t, &before)) { /* one pass over the tile */
            T through = inclusive ? scan_run(src, dst, begin, end, before, true)
                                  : scan_run(src, dst, begin, end, before, false);
            publish(totals, state, t, PREFIX, through);
            continue;
        }
        T total = sum_range(src, begin, end);
        if (t > 0)
            publish(totals, state, t, TOTAL, total);
        before = look_back(totals, state, t);
        publish(totals, state, t, PREFIX, before + total);
        if (inclusive)
            scan_run(src, dst, begin, end, before, true);
        else
            scan_run(src, dst, begin, end, before, false);
    }
#if STREAM
    PS_DEVICE_FENCE(); /* the non-temporal stores drained before the kernel ends */
#endif
}
