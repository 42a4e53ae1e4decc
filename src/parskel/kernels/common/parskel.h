/* Helpers shared by every parskel kernel. Portable OpenCL C: the CUDA backend compiles the
 * same text through its own mapping header, so nothing here may depend on one vendor. */
#ifndef PARSKEL_COMMON_H
#define PARSKEL_COMMON_H

/* Element type of a kernel generated per dtype; the host passes -DT=<C type>. */
#ifndef T
#define T float
#endif

#define PS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define PS_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
