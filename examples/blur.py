"""A 1D blur with MapOverlap: each element becomes the mean of its neighbours within a radius,
with the nearest element repeated beyond the ends (boundary "clamp"). The user function is
Python: a loop over the window, with the radius a constant of the module."""

import numpy as np

import parskel as ps

RADIUS = 3


def mean_of_window(x):
    total = 0
    for k in range(-RADIUS, RADIUS + 1):
        total += x[k]
    return total / (2 * RADIUS + 1)


blur = ps.MapOverlap(mean_of_window, radius=RADIUS, boundary="clamp")

signal = np.sin(np.linspace(0, 8 * np.pi, 10_000, dtype=np.float32))
signal += np.random.default_rng(1).normal(0, 0.3, signal.size).astype(np.float32)
smooth = blur(ps.Vector(signal)).numpy()

padded = np.pad(signal, RADIUS, mode="edge")
want = np.convolve(padded, np.full(2 * RADIUS + 1, 1 / (2 * RADIUS + 1)), mode="valid")
clean = np.sin(np.linspace(0, 8 * np.pi, signal.size))
print(f"blurred {signal.size} samples: noise std {np.std(signal - clean):.3f} -> {np.std(smooth - clean):.3f}")
assert smooth.dtype == np.float32 and np.allclose(smooth, want, atol=1e-5)
