"""A 1D blur with MapOverlap: each element becomes the mean of its neighbours within a radius,
with the nearest element repeated beyond the ends (boundary "clamp")."""

import numpy as np

import parskel as ps

radius = 3
blur = ps.MapOverlap(
    """float blur(const float *x, int radius) {
           float sum = 0.0f;
           for (int k = -radius; k <= radius; ++k)
               sum += x[k];
           return sum / (2 * radius + 1);
       }""",
    radius=radius,
    boundary="clamp",
)

signal = np.sin(np.linspace(0, 8 * np.pi, 10_000, dtype=np.float32))
signal += np.random.default_rng(1).normal(0, 0.3, signal.size).astype(np.float32)
smooth = blur(ps.Vector(signal), np.int32(radius)).numpy()

padded = np.pad(signal, radius, mode="edge")
want = np.convolve(padded, np.full(2 * radius + 1, 1 / (2 * radius + 1)), mode="valid")
print(
    f"blurred {signal.size} samples: noise std {np.std(signal - np.sin(np.linspace(0, 8 * np.pi, signal.size))):.3f}"
    f" -> {np.std(smooth - np.sin(np.linspace(0, 8 * np.pi, signal.size))):.3f}"
)
assert np.allclose(smooth, want, atol=1e-5)
