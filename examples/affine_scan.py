"""A struct element type and a non-commutative scan: composing affine maps f(x) = a*x + b.

Element i of the inclusive scan is f_i o ... o f_0, the map from the start value to step i of
the recurrence x_{i+1} = a_i * x_i + b_i, so a whole linear recurrence runs as one Scan. The
operator is Python: it reads the fields of two structs and returns a tuple, which becomes the
struct.
"""

import numpy as np

import parskel as ps

affine = ps.struct("affine", [("a", np.float32), ("b", np.float32)])


def then(f, g):
    """g after f: earlier maps on the left."""
    return g.a * f.a, g.a * f.b + g.b


compose = ps.Scan(then, identity=np.array((1.0, 0.0), affine)[()], inclusive=True)

n = 5000
rng = np.random.default_rng(3)
maps = np.zeros(n, affine)
maps["a"] = rng.uniform(0.95, 1.05, n)
maps["b"] = rng.uniform(-1, 1, n)

prefix, total = compose(ps.Vector(maps))
x0 = 2.0
trajectory = prefix.numpy()["a"] * x0 + prefix.numpy()["b"]

x, want = np.float32(x0), np.empty(n, np.float32)
for i in range(n):
    x = maps["a"][i] * x + maps["b"][i]
    want[i] = x
print(
    f"recurrence of {n} steps from x0={x0}: x_n = {trajectory[-1]:.4f} (sequential: {want[-1]:.4f}); "
    f"total map a={total['a']:.4f}, b={total['b']:.4f}"
)
assert np.allclose(trajectory, want, rtol=1e-3, atol=1e-3)
