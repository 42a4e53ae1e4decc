/* Shared by the radix sort kernels (seed 000, sections 5.2.3-5.2.5): 4-bit digits, 16 buckets,
 * 8 passes over 32-bit keys. A pass is histogram -> exclusive scan -> permute. The histograms
 * are stored bucket-major, histograms[bucket * items + item], so that one scan of the whole
 * buffer gives every work-item the first output slot of each of its buckets, counting every
 * key of a smaller digit and every key of the same digit owned by a lower work-item. Each
 * work-item owns a contiguous run of keys and places them in order: the sort is stable
 * without global atomics. */
#ifndef PARSKEL_SORT_RADIX_H
#define PARSKEL_SORT_RADIX_H

#define RADIX_BITS 4
#define BUCKETS (1 << RADIX_BITS)
#define RADIX_MASK (BUCKETS - 1)

#ifndef KEYS_PER_ITEM
#define KEYS_PER_ITEM 32
#endif

/* Key-value sorting moves a 4-byte value along with each key. */
#ifndef WITH_VALUES
#define WITH_VALUES 0
#endif

/* work-items per work-group of the kernels that keep counts in local memory */
#ifndef WG
#define WG 256
#endif

#define DIGIT(key, shift) (((key) >> (shift)) & RADIX_MASK)

#endif
