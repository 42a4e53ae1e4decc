"""MapOverlap (every boundary, 1D and 2D), AllPairs, Scatter and Gather against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parskel as ps
from parskel.errors import ShapeError, UserFunctionError

FEW = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
MODES = {"neutral": "constant", "clamp": "edge", "wrap": "wrap", "mirror": "reflect"}
WEIGHTED = (
    "float f(const float *x, ps_index i, float s) {"
    " float t = 0; for (int k = -2; k <= 2; ++k) t += x[k] * (k + 3); return t * s + i; }"
)
OVERLAP_1D = {m: ps.MapOverlap(WEIGHTED, radius=2, boundary=m, neutral=0.5) for m in MODES}
OVERLAP_2D = {
    m: ps.MapOverlap(
        "float f(const float *x) { return ps_get(x, -1, 0) + 2 * ps_get(x, 0, 1)"
        " + 3 * ps_get(x, 1, -1) + ps_get(x, 0, 0); }",
        radius=1,
        boundary=m,
    )
    for m in MODES
}
MATMUL = ps.AllPairs(
    "float mul(float a, float b) { return a * b; }", "float add(float x, float y) { return x + y; }", identity=0
)


def _pad(x: np.ndarray, d: int, mode: str) -> np.ndarray:
    if mode == "neutral":
        return np.pad(x, d, mode="constant", constant_values=0.5 if x.ndim == 1 else 0)
    if mode == "mirror":
        # NumPy's reflect folds only once; fold the indices like the kernel does
        idx = [np.arange(-d, n + d) for n in x.shape]
        folded = []
        for n, i in zip(x.shape, idx):
            p = max(2 * (n - 1), 1)
            j = np.mod(i, p)
            folded.append(np.where(j < n, j, p - j) if n > 1 else np.zeros_like(i))
        return x[np.ix_(*folded)]
    if mode == "wrap":
        return x[np.ix_(*[np.mod(np.arange(-d, n + d), n) for n in x.shape])]
    return np.pad(x, d, mode=MODES[mode])


@FEW
@given(n=st.one_of(st.sampled_from([1, 2, 3, 5, 257, 1031]), st.integers(1, 3000)), mode=st.sampled_from(list(MODES)))
def test_map_overlap_1d(device, n, mode):
    x = np.random.default_rng(n).random(n).astype(np.float32)
    p = _pad(x, 2, mode)
    want = sum(p[2 + k : 2 + k + n] * (k + 3) for k in range(-2, 3)) * 2 + np.arange(n)
    got = OVERLAP_1D[mode](ps.Vector(x, device=device), 2.0).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5)


@FEW
@given(rows=st.integers(1, 40), cols=st.integers(1, 40), mode=st.sampled_from(list(MODES)))
def test_map_overlap_2d(device, rows, cols, mode):
    x = np.random.default_rng(rows * 41 + cols).random((rows, cols)).astype(np.float32)
    p = _pad(x, 1, mode)
    want = p[0:rows, 1 : cols + 1] + 2 * p[1 : rows + 1, 2 : cols + 2] + 3 * p[2 : rows + 2, 0:cols] + x
    np.testing.assert_allclose(OVERLAP_2D[mode](ps.Matrix(x, device=device)).numpy(), want, rtol=1e-5)


def test_map_overlap_empty_and_refusals(device):
    assert len(OVERLAP_1D["clamp"](ps.Vector(np.zeros(0, np.float32), device=device), 1.0)) == 0
    v = ps.Vector(np.zeros(3, np.float32), device=device)
    with pytest.raises(ShapeError):
        OVERLAP_1D["clamp"](v, 1.0, out=v)
    with pytest.raises(UserFunctionError):
        ps.MapOverlap("float f(float x) { return x; }")


@pytest.mark.parametrize("shape", [(1, 1, 1), (5, 3, 7), (33, 17, 19), (0, 4, 3)])
def test_all_pairs_is_matrix_multiplication(device, shape, rng):
    n, k, m = shape
    a, b = rng.random((n, k)).astype(np.float32), rng.random((k, m)).astype(np.float32)
    got = MATMUL(ps.Matrix(a, device=device), ps.Matrix(b, device=device))
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-5, atol=1e-6)
    with pytest.raises(ShapeError):
        MATMUL(ps.Matrix(a, device=device), ps.Matrix(a.T.copy()[:0], device=device))


def test_all_pairs_with_index_and_other_operators(device):
    # max-plus product, with the zip seeing (row, column, l)
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.arange(12, dtype=np.int32).reshape(3, 4)
    mp = ps.AllPairs(
        "int z(int x, int y, ps_index r, ps_index c, ps_index l) { return x + y + (int)l; }",
        "int mx(int p, int q) { return max(p, q); }",
        identity=-(2**31),
    )
    want = (a[:, :, None] + b[None, :, :] + np.arange(3)[None, :, None]).max(axis=1)
    np.testing.assert_array_equal(mp(ps.Matrix(a, device=device), ps.Matrix(b, device=device)).numpy(), want)


def test_scatter_and_gather_are_inverse(device, rng):
    n = 1000
    values = rng.integers(0, 1000, n).astype(np.int32)
    perm = rng.permutation(n).astype(np.uint32)
    v, p = ps.Vector(values, device=device), ps.Vector(perm, device=device)
    scattered = ps.Scatter()(v, p)
    want = np.empty_like(values)
    want[perm] = values
    np.testing.assert_array_equal(scattered.numpy(), want)
    np.testing.assert_array_equal(ps.Gather()(scattered, p).numpy(), values)
    shifted = ps.Gather("float f(int x, ps_index i, float s) { return x * s + i; }")(v, p, 0.5)
    np.testing.assert_allclose(shifted.numpy(), values[perm] * 0.5 + np.arange(n))
    with pytest.raises(ShapeError, match="outside"):
        ps.Scatter()(v, p, size=10)


def test_map_overlap_2d_with_row_and_column_indices(device):
    """A 2D user function that names both indices builds (only the 2D kernel is compiled)."""
    x = np.arange(35, dtype=np.float32).reshape(5, 7)
    f = ps.MapOverlap(
        "float f(const float *w, ps_index r, ps_index c) { return ps_get(w, 0, 1) + 100 * r + c; }",
        radius=1,
        boundary="clamp",
    )
    right = np.concatenate([x[:, 1:], x[:, -1:]], axis=1)
    rows, cols = np.indices(x.shape)
    np.testing.assert_array_equal(f(ps.Matrix(x, device=device)).numpy(), right + 100 * rows + cols)
