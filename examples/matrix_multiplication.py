"""Matrix multiplication through AllPairs: every row of A with every column of B, combined by a
user zip (multiply) and reduce (add), as in SkelCL."""

import numpy as np

import parskel as ps

rng = np.random.default_rng(7)
a = rng.random((200, 150), dtype=np.float32)
b = rng.random((150, 120), dtype=np.float32)

matmul = ps.AllPairs(lambda x, y: x * y, lambda s, t: s + t, identity=0)
c = matmul(ps.Matrix(a), ps.Matrix(b)).numpy()

print(f"{a.shape} x {b.shape} -> {c.shape}, max difference to NumPy {np.abs(c - a @ b).max():.2e}")
assert np.allclose(c, a @ b, rtol=1e-4)
