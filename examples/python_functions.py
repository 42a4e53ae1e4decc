"""A tour of user functions written in Python: a Mandelbrot set from Generate (loops, index
parameters, a helper, module constants), a clipped and shifted signal from Map (NumPy functions,
extra arguments, type promotion), and the C each becomes. Each result is checked against the
same Python function run by Python on NumPy numbers."""

import numpy as np

import parskel as ps

ROWS, COLS, STEPS = 48, 72, 60


@ps.function
def escaped(x, y):
    return x * x + y * y > 4


def mandelbrot(*, row, col):
    """Iterations until z = z**2 + c leaves the disk of radius 2 (index parameters: keyword-only)."""
    cx = -2.2 + 3.2 * col / COLS
    cy = -1.2 + 2.4 * row / ROWS
    x, y = 0.0, 0.0
    steps = 0
    while steps < STEPS and not escaped(x, y):
        x, y = x * x - y * y + cx, 2 * x * y + cy
        steps += 1
    return np.int32(steps)


image = ps.Generate(mandelbrot)((ROWS, COLS)).numpy()
want = np.array([[mandelbrot(row=r, col=c) for c in range(COLS)] for r in range(ROWS)])
for r in range(0, ROWS, 6):
    print("".join(" .:-=+*#%@"[min(int(s) * 10 // STEPS, 9)] for s in image[r]))
# a device may fuse x * x - y * y + cx into one rounding, which can move the count at a few
# points on the set's edge, where the orbit is chaotic
assert image.dtype == np.int32 and np.mean(image == want) > 0.99


def shaped(x, low, shift):
    """NumPy's rules: a float32 element and Python numbers stay float32."""
    return np.clip(x, low, 1.0) * 2 + shift if x > 0 else np.float32(0)


signal = np.random.default_rng(5).standard_normal(1000).astype(np.float32)
got = ps.Map(shaped)(ps.Vector(signal), -0.5, 0.25)
assert got.dtype == np.float32
assert np.allclose(got.numpy(), [shaped(s, -0.5, 0.25) for s in signal], rtol=1e-6)

print(ps.function(shaped).source(np.float32, float, float))
