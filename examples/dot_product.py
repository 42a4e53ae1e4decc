"""Dot product with skeletons: Zip multiplies, Reduce adds (seed 004, Listing 1), and the same
in one fused pass with MapReduce over an index and an extra container argument. The user
functions are Python; the last lines give the same as OpenCL C source, which computes the same."""

import numpy as np

import parskel as ps

n = 1_000_003
rng = np.random.default_rng(4)
x = rng.random(n, dtype=np.float32)
y = rng.random(n, dtype=np.float32)
a, b = ps.Vector(x), ps.Vector(y)

mult = ps.Zip(lambda x, y: x * y)
add = ps.Reduce(lambda x, y: x + y, identity=0)
dot = add(mult(a, b))  # the product stays on the device between the two skeletons

# element i of a times element i of the extra container y (i: the index, a keyword-only parameter)
fused = ps.MapReduce(lambda x, y, *, i: x * y[i], lambda s, t: s + t, identity=0)
dot_fused = fused(a, b)

want = np.dot(x.astype(np.float64), y.astype(np.float64))
print(f"dot product of {n} elements on {ps.device().name}: {dot:.3f} (fused: {dot_fused:.3f}, NumPy: {want:.3f})")
assert abs(dot - want) <= 1e-4 * want and abs(dot_fused - want) <= 1e-4 * want

in_c = ps.MapReduce(
    "float f(float x, ps_index i, __global const float *y) { return x * y[i]; }",
    "float add(float x, float y) { return x + y; }",
    identity=0,
)
assert in_c(a, b) == dot_fused  # the same computation, so the same float32 result
