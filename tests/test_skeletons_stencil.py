"""MapOverlap (every boundary, 1D and 2D), AllPairs, Scatter and Gather against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parskel as ps
from parskel.errors import ShapeError, UserFunctionError
from test_cuda import NVRTC, NVRTC_WHY, captured_builds, nvrtc_build

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


@pytest.mark.parametrize("radius", [17, 100, 256])
def test_map_overlap_radius_above_16_on_vectors(device, rng, radius):
    box = ps.MapOverlap(
        f"float f(const float *w) {{ float t = 0; for (int k = -{radius}; k <= {radius}; ++k) t += w[k]; return t; }}",
        radius=radius,
        boundary="mirror",
    )
    x = rng.random(3 * radius + 7).astype(np.float32)
    want = np.convolve(_pad(x, radius, "mirror"), np.ones(2 * radius + 1), mode="valid")
    np.testing.assert_allclose(box(ps.Vector(x, device=device)).numpy(), want, rtol=1e-5)


def test_map_overlap_radius_limits(device):
    with pytest.raises(UserFunctionError, match="256"):
        ps.MapOverlap("float f(const float *w) { return w[0]; }", radius=257)
    wide = ps.MapOverlap("float f(const float *w) { return w[0]; }", radius=17)
    with device.record() as rec, pytest.raises(ShapeError, match="up to 16"):
        wide(ps.Matrix(np.zeros((40, 40), np.float32), device=device))
    assert rec.timing.launches == 0


def test_map_overlap_without_edge_handling(device, rng):
    """boundary="none" (SkePU's Edge::None): elements nearer the edge than the radius are not
    computed, zero in a new result, left as they are in out=."""
    x = rng.random(50).astype(np.float32)
    sums = ps.MapOverlap("float f(const float *w) { return w[-3] + w[3]; }", radius=3, boundary="none")
    v = ps.Vector(x, device=device)
    got = sums(v).numpy()
    np.testing.assert_array_equal(got[3:-3], x[:-6] + x[6:])
    assert not got[:3].any() and not got[-3:].any()
    out = ps.Vector(np.full(50, 7, np.float32), device=device)
    sums(v, out=out)
    np.testing.assert_array_equal(out.numpy()[3:-3], x[:-6] + x[6:])
    assert (out.numpy()[:3] == 7).all() and (out.numpy()[-3:] == 7).all()
    m = rng.random((9, 12)).astype(np.float32)
    cross = ps.MapOverlap(lambda w: w[-2, 0] + w[0, 2], radius=2, boundary="none")
    got = cross(ps.Matrix(m, device=device)).numpy()
    np.testing.assert_array_equal(got[2:-2, 2:-2], m[:-4, 2:-2] + m[2:-2, 4:])
    edges = np.ones_like(got, bool)
    edges[2:-2, 2:-2] = False
    assert not got[edges].any()


@pytest.mark.parametrize("mode", [*MODES, "none"])
def test_map_overlap_radius_per_axis_on_matrices_and_vectors(device, rng, mode):
    m = rng.integers(-50, 50, (13, 9)).astype(np.int32)
    tall = ps.MapOverlap(
        "int f(const int *w) { return ps_get(w, -3, 0) - 2 * ps_get(w, 3, 0); }",
        radius=(3, 0),
        boundary=mode,
        neutral=4,
    )
    wide = ps.MapOverlap(lambda w: w[1, -2] + 5 * w[-1, 2] + w[0, 0], radius=(1, 2), boundary=mode, neutral=4)
    pad = {"mode": "constant", "constant_values": 4} if mode in ("neutral", "none") else {"mode": MODES[mode]}
    p = np.pad(m, [(3, 3), (0, 0)], **pad)
    q = np.pad(m, [(1, 1), (2, 2)], **pad)
    want_tall = p[:-6] - 2 * p[6:]
    want_wide = q[2:, :-4] + 5 * q[:-2, 4:] + m
    got_tall, got_wide = tall(ps.Matrix(m, device=device)).numpy(), wide(ps.Matrix(m, device=device)).numpy()
    if mode == "none":  # only the elements at least the radius from each edge are computed
        want_tall[:3] = want_tall[-3:] = 0
        want_wide[:1] = want_wide[-1:] = want_wide[:, :2] = want_wide[:, -2:] = 0
    np.testing.assert_array_equal(got_tall, want_tall)
    np.testing.assert_array_equal(got_wide, want_wide)
    x = rng.integers(-50, 50, 40).astype(np.int32)
    line = ps.MapOverlap("int f(const int *w) { return w[-4] + ps_get(w, 4); }", radius=(4,), boundary=mode, neutral=4)
    r = np.pad(x, 4, **pad)
    want = r[:-8] + r[8:]
    if mode == "none":
        want[:4] = want[-4:] = 0
    np.testing.assert_array_equal(line(ps.Vector(x, device=device)).numpy(), want)
    with pytest.raises(ShapeError, match="gives 1 axis, the input has 2"):
        line(ps.Matrix(m, device=device))


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_wide_and_edgeless_map_overlaps_build_with_nvrtc(monkeypatch):
    dev, captured = captured_builds(monkeypatch)
    ps.MapOverlap("float f(const float *w) { return w[-200] + w[200]; }", radius=200)(
        ps.Vector(np.zeros(5, np.float32), device=dev)
    )
    ps.MapOverlap("float f(const float *w) { return ps_get(w, 1, -1); }", radius=1, boundary="none")(
        ps.Matrix(np.zeros((4, 4), np.float32), device=dev)
    )
    assert len(captured) == 2
    for source in captured:
        log, ptx = nvrtc_build(source)
        assert ".entry" in ptx, log
