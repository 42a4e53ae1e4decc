/* Reading what another work-group published during the same launch.
 *
 * The writer stores the value, then PS_DEVICE_FENCE(), then its flag (or counter). The reader,
 * having seen the flag, fences (PS_DEVICE_FENCE) and reads the value with PS_READ_COHERENT: through
 * volatile words, so that the read goes around caches that are not coherent between
 * work-groups (CUDA's L1: a line read earlier for a neighbouring value may be stale), for any
 * type T, structs included. */
#ifndef PARSKEL_COMMON_COHERENT_H
#define PARSKEL_COMMON_COHERENT_H

/* A fence that orders a work-item's global memory accesses for every work-group of the device.
 * OpenCL 1.2's mem_fence promises order only as seen from the work-item's own group, and
 * NVIDIA's driver compiles it so (membar.cta): another group could see a flag before the value
 * it publishes. CUDA and NVIDIA's OpenCL (PTX) get the device-wide fence; other devices keep
 * mem_fence (on CPUs memory is coherent, and they take the look-back's fallback). */
#if defined(PS_CUDA)
#define PS_DEVICE_FENCE() __threadfence()
#elif defined(PS_PTX)
#define PS_DEVICE_FENCE() asm volatile("membar.gl;" ::: "memory")
#else
#define PS_DEVICE_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif

#define PS_READ_COHERENT(T, out, p)                                                          \
    do {                                                                                  \
        union { T value; uint word[(sizeof(T) + 3) / 4]; uchar byte[sizeof(T)]; } ps_u;     \
        if (sizeof(T) % 4 == 0)                                                           \
            for (uint ps_k = 0; ps_k < sizeof(T) / 4; ++ps_k)                             \
                ps_u.word[ps_k] = ((volatile __global const uint *)(p))[ps_k];            \
        else                                                                              \
            for (uint ps_k = 0; ps_k < sizeof(T); ++ps_k)                                 \
                ps_u.byte[ps_k] = ((volatile __global const uchar *)(p))[ps_k];           \
        (out) = ps_u.value;                                                               \
    } while (0)

#endif
