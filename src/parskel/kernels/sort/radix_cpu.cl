/* LSD radix sort shaped for CPUs (beyond seed 000 §5.2): a few work-groups of one work-item
 * each, every one owning a long contiguous run of the keys (chunk keys; the last run is
 * shorter). A pass over one digit of RADIX_BITS bits is two launches:
 *
 *   radix_cpu_histogram  each group counts the digits of its run in a private array;
 *   radix_cpu_scatter    each group finds the first output slot of each of its buckets from
 *                        every group's counts (all keys of a smaller digit, then the keys of
 *                        this digit in lower groups) and writes its keys there in order,
 *
 * so the sort is stable without atomics. The key transforms of keys.h are folded into the
 * passes: the first pass encodes the keys it reads (the input is only read), the last one
 * decodes the keys it writes. Values (4 bytes each) move with their keys when WITH_VALUES. */
#include "common/parskel.h"
#include "keys.h"

#ifndef RADIX_BITS
#define RADIX_BITS 8
#endif
#define BUCKETS (1 << RADIX_BITS)
#define DIGIT(key, shift) (((key) >> (shift)) & (BUCKETS - 1))

#ifndef WITH_VALUES
#define WITH_VALUES 0
#endif

/* The scatter writes each bucket's keys one after another to its own place: every store
 * would wait for its cache line to come from memory. Asking for the line AHEAD keys further
 * on in the same bucket (the next line) has it in the cache by the time the bucket gets there.
 * On a 2-core EPYC the scatter took 0.89-0.95x the time of two lines ahead (2^20 to 2^24 keys);
 * half a line ahead was no better. */
#ifndef AHEAD
#define AHEAD 16
#endif

inline uint run_start(uint n, uint chunk) { return PS_MIN(n, (uint)get_group_id(0) * chunk); }
inline uint run_end(uint n, uint chunk) { return PS_MIN(n, run_start(n, chunk) + chunk); }

/* Eight keys loaded as one vector, then counted: the counts' loads and stores no longer wait
 * on each key's load in turn. */
#define AS_IS(x) (x)
#define COUNT_EIGHT(count, v, f)                                                              \
    do {                                                                                      \
        uint8 ps_k = (v);                                                                     \
        (count)[DIGIT(f(ps_k.s0), shift)]++;                                                  \
        (count)[DIGIT(f(ps_k.s1), shift)]++;                                                  \
        (count)[DIGIT(f(ps_k.s2), shift)]++;                                                  \
        (count)[DIGIT(f(ps_k.s3), shift)]++;                                                  \
        (count)[DIGIT(f(ps_k.s4), shift)]++;                                                  \
        (count)[DIGIT(f(ps_k.s5), shift)]++;                                                  \
        (count)[DIGIT(f(ps_k.s6), shift)]++;                                                  \
        (count)[DIGIT(f(ps_k.s7), shift)]++;                                                  \
    } while (0)

/* count[d] += the keys of digit d among keys[i, end), encoded first where encode is set */
inline void count_digits(uint *count, __global const uint *keys, uint i, uint end, uint shift, bool encode)
{
    if (encode) {
        for (; i + 8 <= end; i += 8)
            COUNT_EIGHT(count, vload8(0, keys + i), encode_key);
        for (; i < end; ++i)
            count[DIGIT(encode_key(keys[i]), shift)]++;
    } else {
        for (; i + 8 <= end; i += 8)
            COUNT_EIGHT(count, vload8(0, keys + i), AS_IS);
        for (; i < end; ++i)
            count[DIGIT(keys[i], shift)]++;
    }
}

/* counts[b * groups + g]: the keys of digit b in the run of group g (bucket-major, so that the
 * slots of a bucket's keys follow the order of the groups) */
__kernel void radix_cpu_histogram(__global const uint *keys, __global uint *counts, uint n, uint chunk,
                                  uint shift, uint encode)
{
    uint groups = get_num_groups(0);
    uint end = run_end(n, chunk);
    uint count[BUCKETS];
    for (uint b = 0; b < BUCKETS; ++b)
        count[b] = 0;
    count_digits(count, keys, run_start(n, chunk), end, shift, encode);
    for (uint b = 0; b < BUCKETS; ++b)
        counts[b * groups + get_group_id(0)] = count[b];
}

/* The run's keys to their slots; next[b] is the slot of the next key of digit b. encode and
 * decode are constants after inlining: each call below becomes its own loop without tests. */
inline void scatter_run(__global const uint *keys, __global uint *keys_out,
#if WITH_VALUES
                        __global const uint *values, __global uint *values_out,
#endif
                        uint *next, uint start, uint end, uint shift, bool encode, bool decode)
{
    for (uint i = start; i < end; ++i) {
        uint key = keys[i];
        if (encode)
            key = encode_key(key);
        uint to = next[DIGIT(key, shift)]++;
        PS_PREFETCH_WRITE(keys_out + to + AHEAD);
        keys_out[to] = decode ? decode_key(key) : key;
#if WITH_VALUES
        PS_PREFETCH_WRITE(values_out + to + AHEAD);
        values_out[to] = values[i];
#endif
    }
}

#if WITH_VALUES
#define SCATTER(encode, decode) \
    scatter_run(keys, keys_out, values, values_out, next, start, end, shift, encode, decode)
#else
#define SCATTER(encode, decode) scatter_run(keys, keys_out, next, start, end, shift, encode, decode)
#endif

/* counts as radix_cpu_histogram wrote them, or already scanned (exclusive) when scanned: with
 * many groups the host scans them in parallel rather than have every group add them all up. */
__kernel void radix_cpu_scatter(__global const uint *keys, __global uint *keys_out,
                                __global const uint *counts, uint scanned, uint n, uint chunk, uint shift,
                                uint encode, uint decode
#if WITH_VALUES
                                , __global const uint *values, __global uint *values_out
#endif
                                )
{
    uint groups = get_num_groups(0);
    uint group = get_group_id(0);
    uint next[BUCKETS];
    if (scanned) {
        for (uint b = 0; b < BUCKETS; ++b)
            next[b] = counts[b * groups + group];
    } else {
        uint slot = 0;
        for (uint b = 0; b < BUCKETS; ++b) {
            for (uint h = 0; h < groups; ++h) {
                if (h == group)
                    next[b] = slot;
                slot += counts[b * groups + h];
            }
        }
    }
    uint start = run_start(n, chunk);
    uint end = run_end(n, chunk);
    if (encode && decode)
        SCATTER(true, true);
    else if (encode)
        SCATTER(true, false);
    else if (decode)
        SCATTER(false, true);
    else
        SCATTER(false, false);
}

/* The whole sort in one launch, where one work-group owns every key (a sort of a few thousand
 * keys): pass p counts the digits, turns the counts into first slots and scatters, with no
 * launch between passes. Pass p writes to result when passes - p is odd, else to spare, so the
 * last pass lands in result; the first reads keys (and values), which are only read. */
__kernel void radix_cpu_one(__global const uint *keys, __global uint *spare, __global uint *result, uint n,
                            uint passes
#if WITH_VALUES
                            , __global const uint *values, __global uint *values_spare, __global uint *values_result
#endif
                            )
{
    uint next[BUCKETS];
    __global const uint *src = keys;
#if WITH_VALUES
    __global const uint *values_src = values;
#endif
    for (uint p = 0; p < passes; ++p) {
        uint shift = p * RADIX_BITS;
        bool encode = p == 0, decode = p == passes - 1;
        for (uint b = 0; b < BUCKETS; ++b)
            next[b] = 0;
        count_digits(next, src, 0, n, shift, encode);
        uint slot = 0;
        for (uint b = 0; b < BUCKETS; ++b) {
            uint count = next[b];
            next[b] = slot;
            slot += count;
        }
        __global uint *dst = (passes - p) % 2 ? result : spare;
#if WITH_VALUES
        __global uint *values_dst = (passes - p) % 2 ? values_result : values_spare;
        scatter_run(src, dst, values_src, values_dst, next, 0, n, shift, encode, decode);
        values_src = values_dst;
#else
        scatter_run(src, dst, next, 0, n, shift, encode, decode);
#endif
        src = dst;
    }
}
