"""Tensor3 and Tensor4 (3D and 4D containers): every element type round trips, and Map, Zip,
Generate (one index per axis) and MapOverlap (every boundary, a radius per axis) match NumPy, in
C and in Python; bad input is refused before any kernel runs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parskel as ps
from parskel.errors import DTypeError, ShapeError, UserFunctionError
from parskel.pipeline import watch
from test_cuda import NVRTC, NVRTC_WHY, captured_builds, nvrtc_build

FEW = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
TENSORS = {3: ps.Tensor3, 4: ps.Tensor4}
EXTENTS = st.one_of(st.sampled_from([1, 2, 3, 5, 7]), st.integers(1, 11))
MODES = {"neutral": "constant", "clamp": "edge", "wrap": "wrap", "mirror": "reflect"}
NEUTRAL = 7
CELL = ps.struct("cell", [("mass", np.float32), ("count", np.int32)])


# containers -----------------------------------------------------------------------------------


def _values(dtype: np.dtype, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random elements of ``dtype``: numbers, bools, complex numbers or ``cell`` records."""
    n = int(np.prod(shape))
    if dtype == CELL:
        x = np.zeros(n, CELL)
        x["mass"], x["count"] = rng.random(n), rng.integers(-50, 50, n)
    elif dtype.kind == "b":
        x = rng.random(n) > 0.5
    elif dtype.kind == "c":
        x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    elif dtype.kind == "f":
        x = rng.standard_normal(n).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = rng.integers(max(info.min, -1000), min(info.max, 1000), n, endpoint=True).astype(dtype)
    return x.reshape(shape)


ELEMENT_TYPES = [
    *(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)),
    *(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128, np.bool_)),
    CELL,
]


@pytest.mark.parametrize("dtype", ELEMENT_TYPES, ids=str)
def test_every_element_type_round_trips_and_copies_on_the_device(device, rng, dtype):
    if dtype in (np.float64, np.complex128) and not device.info.fp64:
        pytest.skip(f"{device.id} has no double precision")
    for shape in ((3, 1, 5), (2, 3, 1, 7)):
        x = _values(dtype, shape, rng)
        t = TENSORS[len(shape)](x, device=device)
        assert t.shape == shape and t.dtype == dtype and t.size == x.size and len(t) == shape[0]
        copy = ps.Map(f"{t.c_type} f({t.c_type} x) {{ return x; }}")(t)  # through a kernel
        assert type(copy) is type(t) and copy.shape == shape
        np.testing.assert_array_equal(copy.numpy(), x)
        t.to_device()
        t.mark_device_modified()  # the host copy is stale: read back from the device
        np.testing.assert_array_equal(t.numpy(), x)


def test_creation_from_a_shape_another_tensor_and_borrowed_memory(device):
    z = ps.Tensor4(shape=(2, 1, 3, 5), dtype=np.int16, device=device)
    assert z.shape == (2, 1, 3, 5) and not z.numpy().any()
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    t = ps.Tensor3(x, device=device)
    np.testing.assert_array_equal(ps.Tensor3(t, device=device).numpy(), x)
    assert ps.Tensor3([[[1, 2]], [[3, 4]]], dtype=np.int32, device=device).shape == (2, 1, 2)
    before = x.copy()
    borrowed = ps.Tensor3(x, copy=False, device=device)
    ps.Map("float f(float x) { return 2 * x; }")(borrowed, out=borrowed)  # never into x itself
    np.testing.assert_array_equal(borrowed.numpy(), 2 * before)
    np.testing.assert_array_equal(x, before)
    for shape in ((0, 3, 4), (3, 0, 4, 2), (1, 1, 1)):
        empty = TENSORS[len(shape)](shape=shape, dtype=np.float32, device=device)
        assert empty.shape == shape and empty.numpy().shape == shape


def test_host_and_device_writes_move_lazily(device):
    t = ps.Tensor4(np.zeros((2, 2, 3, 3), np.int32), device=device)
    add = ps.Map("int f(int x) { return x + 1; }")
    add(t, out=t)
    assert "valid on device" in repr(t)  # the result stays on the device until read
    assert (t.numpy() == 1).all()
    t[1, 0, 2, 2] = 10  # a host write: the device copy is stale and uploaded for the next kernel
    got = add(t).numpy()
    assert got[1, 0, 2, 2] == 11 and got.sum() == 2 * 36 + 9


def test_bad_shapes_and_types_are_refused(device):
    with pytest.raises(ShapeError, match="3D"):
        ps.Tensor3(np.zeros((2, 2)), device=device)
    with pytest.raises(ShapeError, match="4D"):
        ps.Tensor4(shape=(2, 2, 2), dtype=np.float32, device=device)
    with pytest.raises(ShapeError, match="negative"):
        ps.Tensor3(shape=(2, -1, 2), dtype=np.float32, device=device)
    with pytest.raises(ShapeError, match="shape and a dtype"):
        ps.Tensor4(shape=(1, 2, 3, 4), device=device)
    with pytest.raises(DTypeError, match="no kernel type"):
        ps.Tensor3(np.zeros((2, 2, 2), dtype=object), device=device)
    with pytest.raises(DTypeError, match=r"ps\.struct"):
        ps.Tensor4(np.zeros((1, 1, 1, 2), [("a", np.float32), ("b", np.int32)]), device=device)
    with pytest.raises(ShapeError, match="cannot be distributed"):
        ps.Tensor3(np.zeros((2, 2, 2), np.float32), distribution=ps.dist.single([device]))


# Map, Zip and Generate --------------------------------------------------------------------------

INDEXED_C = {
    3: ps.Map("float f(float x, ps_index i, ps_index j, ps_index k, float s) { return s * x + 100 * i + 10 * j + k; }"),
    4: ps.Map(
        "float f(float x, ps_index i, ps_index j, ps_index k, ps_index l, float s)"
        " { return s * x + 1000 * i + 100 * j + 10 * k + l; }"
    ),
}
INDEXED_PY = {
    3: ps.Map(lambda x, s, *, i, j, k: s * x + np.float32(100 * i + 10 * j + k)),
    4: ps.Map(lambda x, s, *, i0, i1, i2, i3: s * x + np.float32(1000 * i0 + 100 * i1 + 10 * i2 + i3)),
}
FLAT = ps.Map("int f(int x, ps_index n) { return x - (int)n; }")
ZIP = ps.Zip(
    "double f(float a, int b, ps_index i, ps_index j, ps_index k) { return (double)a * b + i - (double)j + k; }"
)


def _axis_sum(shape: tuple[int, ...]) -> np.ndarray:
    """NumPy's 100*i + 10*j + k (and 1000*i + ... + l in 4D) over ``shape``."""
    weights = [10 ** (len(shape) - 1 - a) for a in range(len(shape))]
    return sum(w * idx for w, idx in zip(weights, np.indices(shape))).astype(np.float32)


@FEW
@given(shape=st.one_of(st.tuples(EXTENTS, EXTENTS, EXTENTS), st.tuples(EXTENTS, EXTENTS, EXTENTS, EXTENTS)))
def test_map_gives_one_index_per_axis(device, shape):
    rng = np.random.default_rng(sum(shape))
    x = rng.random(shape).astype(np.float32)
    t = TENSORS[len(shape)](x, device=device)
    want = 2.5 * x + _axis_sum(shape)
    np.testing.assert_allclose(INDEXED_C[len(shape)](t, 2.5).numpy(), want, rtol=1e-6)
    got = INDEXED_PY[len(shape)](t, 2.5)
    assert isinstance(got, TENSORS[len(shape)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    ints = rng.integers(-1000, 1000, shape).astype(np.int32)
    np.testing.assert_array_equal(
        FLAT(TENSORS[len(shape)](ints, device=device)).numpy(), ints - np.arange(ints.size).reshape(shape)
    )


@FEW
@given(shape=st.tuples(EXTENTS, EXTENTS, EXTENTS))
def test_zip_of_tensors_of_one_shape(device, shape):
    if not device.info.fp64:
        pytest.skip(f"{device.id} has no double precision for the result")
    rng = np.random.default_rng(sum(shape))
    a, b = rng.random(shape).astype(np.float32), rng.integers(-9, 9, shape).astype(np.int32)
    got = ZIP(ps.Tensor3(a, device=device), ps.Tensor3(b, device=device))
    i, j, k = np.indices(shape)
    np.testing.assert_allclose(got.numpy(), a.astype(np.float64) * b + i - j + k, rtol=1e-12)
    summed = ps.Zip(lambda p, q: p + q)(ps.Tensor3(a, device=device), ps.Tensor3(b, device=device))
    np.testing.assert_allclose(summed.numpy(), a + b, rtol=1e-6)  # int32 + float32: float64, as NumPy


def test_generate_tensors_by_axis_and_flat_index(device):
    cube = ps.Generate("float f(ps_index i, ps_index j, ps_index k, float s) { return s * (100 * i + 10 * j + k); }")
    got = cube((3, 5, 7), 0.5, device=device)
    assert isinstance(got, ps.Tensor3)
    np.testing.assert_allclose(got.numpy(), 0.5 * _axis_sum((3, 5, 7)))
    hyper = ps.Generate(lambda *, i0, i1, i2, i3: 1000 * i0 + 100 * i1 + 10 * i2 + i3)
    got4 = hyper((2, 3, 1, 6), device=device)
    assert isinstance(got4, ps.Tensor4)
    np.testing.assert_array_equal(got4.numpy(), _axis_sum((2, 3, 1, 6)))
    large = (3, 7, 29, 31)  # more elements than a CPU runs in one checked launch: the whole groups and the tail
    np.testing.assert_array_equal(hyper(large, device=device).numpy(), _axis_sum(large))
    flat = ps.Generate("uint f(ps_index n) { return n; }")((3, 1, 2, 5), device=device)
    np.testing.assert_array_equal(flat.numpy(), np.arange(30).reshape(3, 1, 2, 5))
    out = ps.Tensor3(np.full((2, 2, 2), -1, np.float32), device=device)
    assert cube(None, 1.0, out=out) is out
    np.testing.assert_array_equal(out.numpy(), _axis_sum((2, 2, 2)))
    assert cube((0, 4, 2), 1.0, device=device).shape == (0, 4, 2)
    even = ps.Generate(lambda *, i, j, k: (i + j + k) % 2 == 0)((2, 3, 4), device=device)  # bool elements
    assert even.dtype == np.bool_
    np.testing.assert_array_equal(even.numpy(), np.indices((2, 3, 4)).sum(axis=0) % 2 == 0)


def test_complex_and_struct_tensors_in_skeletons(device, rng):
    z = _values(np.dtype(np.complex64), (3, 4, 5), rng)
    square = ps.Map("cfloat f(cfloat x, ps_index i, ps_index j, ps_index k) { return cfloat_mul(x, x); }")
    np.testing.assert_allclose(square(ps.Tensor3(z, device=device)).numpy(), z * z, rtol=1e-5)
    cells = _values(CELL, (2, 3, 2, 3), rng)
    weigh = ps.Map(lambda c: c.mass * np.float32(c.count))
    np.testing.assert_allclose(
        weigh(ps.Tensor4(cells, device=device)).numpy(), cells["mass"] * cells["count"], rtol=1e-6
    )


def test_reduce_scan_and_map_reduce_take_tensors_flat(device, rng):
    x = rng.integers(-100, 100, (3, 5, 7)).astype(np.int32)
    t = ps.Tensor3(x, device=device)
    add = "int add(int a, int b) { return a + b; }"
    assert ps.Reduce(add, identity=0)(t) == x.sum()
    sums, total = ps.Scan(add, identity=0, inclusive=True)(t)
    assert isinstance(sums, ps.Tensor3) and total == x.sum()
    np.testing.assert_array_equal(sums.numpy(), np.cumsum(x).reshape(x.shape))
    flat = ps.MapReduce("int f(int x, ps_index n) { return x * (int)n; }", add, identity=0)(t)
    assert flat == (x.ravel() * np.arange(x.size)).sum()


def test_numpy_arrays_of_three_and_four_axes(device, rng):
    x = rng.random((40, 30, 20), dtype=np.float32)
    y = rng.random((6, 5, 4, 3), dtype=np.float32)
    blur = ps.MapOverlap(lambda w: w[-1, 0, 0] + w[1, 0, 0] - w[0, 0, 1], radius=(1, 0, 1), boundary="wrap")
    with ps.using(device), ps.max_device_memory("128KiB"), watch() as runs:
        squares = ps.Map("float f(float x) { return x * x; }")(y)
        blurred = blur(x)
    np.testing.assert_array_equal(squares, y * y)
    p = np.pad(x, [(1, 1), (0, 0), (1, 1)], mode="wrap")
    np.testing.assert_allclose(blurred, p[:-2, :, 1:-1] + p[2:, :, 1:-1] - p[1:-1, :, 2:], rtol=1e-6)
    assert any(r.operation == "MapOverlap" and r.chunks > 1 for r in runs), runs


def test_elementwise_refusals_come_before_any_kernel(device):
    a = ps.Tensor3(np.zeros((2, 3, 4), np.float32), device=device)
    with device.record() as rec:
        with pytest.raises(ShapeError, match=r"shape \(2, 4, 3\)"):
            ZIP(a, ps.Tensor3(np.zeros((2, 4, 3), np.int32), device=device))
        with pytest.raises(ShapeError, match="Tensor4"):
            ps.Zip("float f(float a, float b) { return a + b; }")(
                a, ps.Tensor4(np.zeros((2, 3, 4, 1), np.float32), device=device)
            )
        with pytest.raises(ShapeError, match="Matrix"):
            ps.Zip("float f(float a, float b) { return a + b; }")(
                a, ps.Matrix(np.zeros((6, 4), np.float32), device=device)
            )
        with pytest.raises(UserFunctionError, match=r"1 \(the flat index\) or 3 \(i, j, k\)"):
            ps.Map("float f(float x, ps_index i, ps_index j) { return x; }")(a)
        with pytest.raises(UserFunctionError, match=r"1 \(the flat index\) or 4 \(i, j, k, l\)"):
            ps.Generate(lambda *, i, j, k: np.float32(i))((1, 2, 3, 4), device=device)
        with pytest.raises(ShapeError, match="1 to 4 axes"):
            ps.Generate("float f(ps_index n) { return n; }")((1, 2, 3, 4, 5), device=device)
        with pytest.raises(ShapeError, match="1 to 4 axes"):
            ps.Map("float f(float x) { return x; }")(np.zeros((1, 1, 1, 1, 2), np.float32))
        with pytest.raises(UserFunctionError, match=r"1 \(the flat index\)$"):
            ps.MapReduce(
                "float f(float x, ps_index i, ps_index j, ps_index k) { return x; }",
                "float g(float a, float b) { return a + b; }",
                identity=0,
            )(a)
        with pytest.raises(ShapeError, match="out has shape"):
            INDEXED_C[3](a, 1.0, out=ps.Tensor3(shape=(2, 3, 5), dtype=np.float32, device=device))
    assert rec.timing.launches == 0


# MapOverlap -------------------------------------------------------------------------------------


def _window_offsets(radii: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every offset of a window, in the order the window stores them (row-major)."""
    return list(itertools.product(*[range(-r, r + 1) for r in radii]))


def _weighted_source(radii: tuple[int, ...]) -> str:
    """C: the sum of every window element times its 1-based position in the window, with loops
    over the window, plus the first index."""
    names = [f"d{a}" for a in range(len(radii))]
    loops = "".join(f"for (int {d} = -{r}; {d} <= {r}; ++{d}) " for d, r in zip(names, radii))
    return (
        f"int f(const int *w, ps_index n) {{ int t = 0, k = 0; {loops}"
        f"t += ps_get(w, {', '.join(names)}) * ++k; return t + (int)n % 3; }}"
    )


_OVERLAPS: dict[tuple, ps.MapOverlap] = {}


def _overlap(radii: tuple[int, ...], mode: str) -> ps.MapOverlap:
    key = (radii, mode)
    if key not in _OVERLAPS:
        _OVERLAPS[key] = ps.MapOverlap(_weighted_source(radii), radius=radii, boundary=mode, neutral=NEUTRAL)
    return _OVERLAPS[key]


def _reference(x: np.ndarray, radii: tuple[int, ...], mode: str) -> np.ndarray:
    """NumPy's result: the window from np.pad in the matching mode, each element weighted by its
    position; ``none`` is computed as ``neutral`` would be, the caller keeping the inside only."""
    pads = [(r, r) for r in radii]
    padded = (
        np.pad(x, pads, mode="constant", constant_values=NEUTRAL)
        if mode in ("neutral", "none")
        else np.pad(x, pads, mode=MODES[mode])
    )
    total = np.zeros(x.shape, np.int64)
    for k, offset in enumerate(_window_offsets(radii), start=1):
        total += k * padded[tuple(slice(r + d, r + d + n) for r, d, n in zip(radii, offset, x.shape))]
    return (total + np.arange(x.size).reshape(x.shape) % 3).astype(np.int32)


def _inside(shape: tuple[int, ...], radii: tuple[int, ...]) -> tuple[slice, ...]:
    return tuple(slice(r, max(n - r, r)) for n, r in zip(shape, radii))


@FEW
@given(
    shape=st.tuples(EXTENTS, EXTENTS, EXTENTS),
    radii=st.sampled_from([(1, 1, 1), (0, 2, 1), (2, 0, 0), (1, 0, 3)]),
    mode=st.sampled_from([*MODES, "none"]),
)
def test_map_overlap_3d_matches_padding(device, shape, radii, mode):
    _check_overlap(device, shape, radii, mode)


@FEW
@given(
    shape=st.tuples(EXTENTS, EXTENTS, EXTENTS, EXTENTS),
    radii=st.sampled_from([(1, 1, 1, 1), (0, 1, 0, 2), (2, 0, 1, 0)]),
    mode=st.sampled_from([*MODES, "none"]),
)
def test_map_overlap_4d_matches_padding(device, shape, radii, mode):
    _check_overlap(device, shape, radii, mode)


@pytest.mark.parametrize("mode", [*MODES, "none"])
def test_map_overlap_every_boundary_on_small_and_flat_tensors(device, mode):
    """Each mode on extents of 1 and 2 (the window reaches past both edges at once, several
    times for wrap and mirror), and a radius larger than the extent."""
    for shape, radii in (
        ((1, 1, 1), (1, 1, 1)),
        ((2, 1, 3), (2, 1, 1)),
        ((1, 2, 1, 5), (1, 1, 1, 1)),
        ((3, 3, 3), (0, 0, 0)),
    ):
        _check_overlap(device, shape, radii, mode)


def _check_overlap(device, shape, radii, mode):
    x = np.random.default_rng(sum(shape)).integers(-100, 100, shape).astype(np.int32)
    t = TENSORS[len(shape)](x, device=device)
    want = _reference(x, radii, mode)
    got = _overlap(radii, mode)(t).numpy()
    if mode != "none":
        np.testing.assert_array_equal(got, want)
        return
    inside = _inside(shape, radii)
    np.testing.assert_array_equal(got[inside], want[inside])
    edges = np.ones(shape, bool)
    edges[inside] = False
    assert not got[edges].any()  # not computed: zero in a new result
    out = TENSORS[len(shape)](np.full(shape, -5, np.int32), device=device)
    _overlap(radii, mode)(t, out=out)
    np.testing.assert_array_equal(out.numpy()[inside], want[inside])
    assert (out.numpy()[edges] == -5).all()  # kept as they were in out=


@pytest.mark.parametrize("mode", list(MODES))
def test_map_overlap_in_python_with_indices(device, rng, mode):
    x = rng.random((4, 5, 6, 3)).astype(np.float32)
    f = ps.MapOverlap(
        lambda w, s, *, i0, i1, i2, i3: (
            w[-1, 0, 1, 0] + s * w[0, 1, 0, -1] - w[1, -1, -1, 1] + np.float32(i0 + i1 + i2 + i3)
        ),
        radius=1,
        boundary=mode,
        neutral=0.5,
    )
    got = f(ps.Tensor4(x, device=device), 2.0).numpy()
    p = np.pad(x, 1, mode="constant", constant_values=0.5) if mode == "neutral" else np.pad(x, 1, mode=MODES[mode])
    n0, n1, n2, n3 = x.shape

    def at(d0, d1, d2, d3):
        return p[1 + d0 : 1 + d0 + n0, 1 + d1 : 1 + d1 + n1, 1 + d2 : 1 + d2 + n2, 1 + d3 : 1 + d3 + n3]

    want = at(-1, 0, 1, 0) + 2 * at(0, 1, 0, -1) - at(1, -1, -1, 1) + np.indices(x.shape).sum(axis=0)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    depth = ps.MapOverlap(lambda w: w[-2, 0, 0] - w[2, 0, 0], radius=(2, 0, 0), boundary=mode, neutral=0.5)
    y = x[:, :, :, 0].copy()
    q = (
        np.pad(y, [(2, 2), (0, 0), (0, 0)], mode="constant", constant_values=0.5)
        if mode == "neutral"
        else np.pad(y, [(2, 2), (0, 0), (0, 0)], mode=MODES[mode])
    )
    np.testing.assert_allclose(depth(ps.Tensor3(y, device=device)).numpy(), q[:-4] - q[4:], rtol=1e-6)


def test_map_overlap_of_structs_and_empty_tensors(device, rng):
    cells = _values(CELL, (3, 4, 5), rng)
    spread = ps.MapOverlap(
        "float f(const cell *w) { return ps_get(w, 1, 0, 0).mass * ps_get(w, 0, 0, -1).count; }",
        radius=1,
        boundary="clamp",
    )
    p = np.pad(cells, 1, mode="edge")
    want = p[2:, 1:-1, 1:-1]["mass"] * p[1:-1, 1:-1, :-2]["count"]
    np.testing.assert_allclose(spread(ps.Tensor3(cells, device=device)).numpy(), want, rtol=1e-6)
    empty = ps.Tensor4(shape=(2, 0, 3, 3), dtype=np.int32, device=device)
    assert _overlap((1, 1, 1, 1), "wrap")(empty).shape == (2, 0, 3, 3)


def test_map_overlap_refusals_come_before_any_kernel(device):
    t3 = ps.Tensor3(np.zeros((4, 4, 4), np.float32), device=device)
    t4 = ps.Tensor4(np.zeros((3, 3, 3, 3), np.float32), device=device)
    get3 = "float f(const float *w) { return ps_get(w, 0, 0, 0); }"
    with device.record() as rec:
        with pytest.raises(ShapeError, match="gives 2 axes, the input has 3"):
            ps.MapOverlap(get3, radius=(1, 1))(t3)
        with pytest.raises(ShapeError, match="1331 elements, more than the 1089"):
            ps.MapOverlap(get3, radius=5)(t3)
        with pytest.raises(ShapeError, match="2401 elements"):
            ps.MapOverlap("float f(const float *w) { return w[0]; }", radius=3)(t4)
        with pytest.raises(ShapeError, match="must not be one of the inputs"):
            ps.MapOverlap(get3)(t3, out=t3)
        with pytest.raises(ShapeError, match="window is declared 'int'"):
            ps.MapOverlap("int f(const int *w) { return w[0]; }")(t3)
        with pytest.raises(DTypeError, match="bools"):
            ps.MapOverlap("bool f(const bool *w) { return w[0]; }")(ps.Tensor3(np.ones((2, 2, 2), bool), device=device))
        with pytest.raises(UserFunctionError, match="3D window takes 3 indexes"):
            ps.MapOverlap(lambda w: w[0, 1])(t3)
        with pytest.raises(UserFunctionError, match="radius"):
            ps.MapOverlap(get3, radius=(1, 1, 1, 1, 1))
        with pytest.raises(UserFunctionError, match="radius"):
            ps.MapOverlap(get3, radius=(1, -1, 1))
    assert rec.timing.launches == 0
    # larger along fewer axes is fine: (0, 4, 16) holds 9 * 33 = 297 elements
    line = ps.MapOverlap(
        "float f(const float *w) { return ps_get(w, 0, 4, -16); }", radius=(0, 4, 16), boundary="clamp"
    )
    x = np.arange(2 * 9 * 40, dtype=np.float32).reshape(2, 9, 40)
    p = np.pad(x, [(0, 0), (4, 4), (16, 16)], mode="edge")
    np.testing.assert_array_equal(line(ps.Tensor3(x, device=device)).numpy(), p[:, 8:, :-32])


# CUDA -------------------------------------------------------------------------------------------


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_tensor_skeletons_build_with_nvrtc(monkeypatch):
    """The programs of the 3D and 4D forms (Map, Generate, every MapOverlap boundary, radius 0
    along an axis) compile for CUDA without a warning."""
    dev, captured = captured_builds(monkeypatch)
    t3 = ps.Tensor3(np.zeros((2, 3, 4), np.int32), device=dev)
    t4 = ps.Tensor4(np.zeros((2, 3, 4, 5), np.int32), device=dev)
    ps.Map("float f(float x, ps_index i, ps_index j, ps_index k, ps_index l) { return x + i - j + k - l; }")(
        ps.Tensor4(np.zeros((1, 2, 3, 4), np.float32), device=dev)
    )
    ps.Generate(lambda *, i, j, k: (i + j + k) % 2 == 0)((2, 2, 2), device=dev)
    for mode in [*MODES, "none"]:
        ps.MapOverlap(_weighted_source((0, 1, 2)), radius=(0, 1, 2), boundary=mode)(t3)
        ps.MapOverlap(_weighted_source((1, 0, 1, 0)), radius=(1, 0, 1, 0), boundary=mode)(t4)
    assert len(captured) == 12
    for source in captured:
        log, ptx = nvrtc_build(source)
        assert ".entry" in ptx and log.strip() == "", log
