"""Map, Zip, Generate, MapArray, Reduce, Scan and MapReduce against NumPy, on every device.

Property-based over sizes (0, 1, primes, non-powers of two, more than a work-group) and types.
Skeleton objects are module-level so each user function is built once per device.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parskel as ps
from parskel.errors import BuildError, DTypeError, ShapeError, UserFunctionError
from parskel.skeletons.map import vector_lanes
from test_cuda import NVRTC, NVRTC_WHY, captured_builds, nvrtc_build

FEW = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SIZES = st.one_of(st.sampled_from([0, 1, 2, 3, 7, 31, 255, 256, 257, 1021, 1024, 1031, 4099]), st.integers(0, 20000))
INT_TYPES = {np.int32: "int", np.uint32: "uint", np.int64: "long", np.int16: "short"}

AFFINE = ps.struct("affine", [("a", np.float32), ("b", np.float32)])
COMPOSE = "affine compose(affine f, affine g) { affine r; r.a = g.a * f.a; r.b = g.a * f.b + g.b; return r; }"

SQUARE = ps.Map("float f(float x) { return x * x; }")
INDEXED = ps.Map("float f(float x, ps_index i, float s) { return s * x + (float)i; }")
ZIPS = {
    t: ps.Zip(f"double g(float x, {c} y, ps_index i) {{ return (double)x * y + i; }}") for t, c in INT_TYPES.items()
}
ADDS = {t: ps.Reduce(f"{c} add({c} a, {c} b) {{ return a + b; }}", identity=0) for t, c in INT_TYPES.items()}
SCANS = {
    (t, inc): ps.Scan(f"{c} add({c} a, {c} b) {{ return a + b; }}", identity=0, inclusive=inc)
    for t, c in INT_TYPES.items()
    for inc in (False, True)
}
COMPOSE_SCAN = ps.Scan(COMPOSE, identity="(affine){1.0f, 0.0f}", inclusive=True)
COMPOSE_REDUCE = ps.Reduce(COMPOSE, identity=np.array((1.0, 0.0), AFFINE)[()])
SUM_SQUARES = ps.MapReduce(
    "long f(int x, ps_index i) { return (long)x * x + i; }", "long add(long a, long b) { return a + b; }", identity=0
)


@FEW
@given(n=SIZES)
def test_map_with_index_and_scalar(device, n):
    x = np.random.default_rng(n).random(n).astype(np.float32)
    v = ps.Vector(x, device=device)
    np.testing.assert_allclose(SQUARE(v).numpy(), x * x, rtol=1e-6)
    np.testing.assert_allclose(INDEXED(v, 2.5).numpy(), 2.5 * x + np.arange(n, dtype=np.float32), rtol=1e-5)


@pytest.mark.parametrize("n", [1, 3, 4, 5, 8, 1021, 4099, 20000])
def test_map_and_zip_in_16_byte_vectors(device, monkeypatch, n):
    """The vector kernel (GPUs: scalars of one size in 16-byte vectors; forced here on every
    device, CPUs included) against NumPy: the elements after the last whole vector, per-element
    indices of one and two axes, 8-byte elements, a result written over its input, and an input
    that does not start on 16 bytes (the scalar kernel then runs)."""
    from parskel.skeletons import map as map_module

    monkeypatch.setattr(map_module, "vector_lanes", _lanes_everywhere)
    rng = np.random.default_rng(n)
    x = rng.random(n).astype(np.float32)
    y = rng.integers(-1000, 1000, n).astype(np.int32)
    square = ps.Map("float f(float x) { return x * x; }")
    indexed = ps.Zip("float g(float x, int y, ps_index i) { return x * y + (float)i; }")
    v = ps.Vector(x, device=device)
    np.testing.assert_allclose(square(v).numpy(), x * x, rtol=1e-6)
    got = indexed(v, ps.Vector(y, device=device)).numpy()
    np.testing.assert_allclose(got, x * y + np.arange(n, dtype=np.float32), rtol=1e-5, atol=1e-3)
    plan = next(iter(square._plans.values()))
    assert plan.lanes == 4 and plan.vec is not None
    square(v, out=v)  # in place
    np.testing.assert_allclose(v.numpy(), x * x, rtol=1e-6)
    wide = rng.integers(-(2**40), 2**40, n).astype(np.int64)
    shifted = ps.Map("long h(long a) { return a * 3 - 7; }")
    np.testing.assert_array_equal(shifted(ps.Vector(wide, device=device)).numpy(), wide * 3 - 7)
    assert next(iter(shifted._plans.values())).lanes == 2
    rows = ps.Map("float r(float x, ps_index i, ps_index j) { return x + (float)(100 * i + j); }")
    m = rng.random((3, n)).astype(np.float32)
    expected = m + 100 * np.arange(3, dtype=np.float32)[:, None] + np.arange(n, dtype=np.float32)
    np.testing.assert_allclose(rows(ps.Matrix(m, device=device)).numpy(), expected, rtol=1e-6)
    if device.shares_host_memory:  # a borrowed host array 4 bytes past a 16-byte boundary
        raw = np.zeros(n + 8, np.float32)
        start = (-raw.ctypes.data % 16) // 4 + 1
        odd = raw[start : start + n]
        odd[:] = x
        assert odd.ctypes.data % 16 == 4
        np.testing.assert_allclose(square(ps.Vector(odd, copy=False, device=device)).numpy(), x * x, rtol=1e-6)


class _Gpu:
    type = "gpu"


def _lanes_everywhere(device, inputs, out):
    """vector_lanes as on a GPU, whatever the device."""
    return vector_lanes(_Gpu(), inputs, out)


@FEW
@given(n=SIZES, t=st.sampled_from(list(INT_TYPES)))
def test_zip_of_different_types(device, n, t):
    rng = np.random.default_rng(n)
    x = rng.random(n).astype(np.float32)
    y = rng.integers(-100 if np.dtype(t).kind == "i" else 0, 100, n).astype(t)
    if not device.info.fp64:
        pytest.skip("double result needs fp64")
    got = ZIPS[t](ps.Vector(x, device=device), ps.Vector(y, device=device))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), x.astype(np.float64) * y + np.arange(n), rtol=1e-12)


@FEW
@given(n=SIZES, t=st.sampled_from(list(INT_TYPES)))
def test_reduce_sum(device, n, t):
    x = np.random.default_rng(n).integers(0, 50, n).astype(t)
    got = ADDS[t](ps.Vector(x, device=device))
    assert got.dtype == np.dtype(t)
    assert got == x.sum(dtype=t)


UAFFINE = ps.struct("uaffine", [("a", np.uint32), ("b", np.uint32)])
UCOMPOSE_SOURCE = (
    "uaffine compose(uaffine f, uaffine g) { uaffine r; r.a = g.a * f.a; r.b = g.a * f.b + g.b; return r; }"
)
UCOMPOSE = ps.Reduce(UCOMPOSE_SOURCE, identity=np.array((1, 0), UAFFINE)[()])


@pytest.mark.parametrize("n", [1, 4099, (1 << 19) + 7])
def test_non_commutative_reduce_over_long_chunks_keeps_the_order(device, n):
    # x -> a*x + b modulo 2^32 composed in order: exact and order-sensitive, over inputs long
    # enough that each work-item folds its chunk in several parts (CPUs)
    rng = np.random.default_rng(n)
    a = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32) | 1
    b = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    f = np.empty(n, UAFFINE)
    f["a"], f["b"] = a, b
    got = UCOMPOSE(ps.Vector(f, device=device))
    while a.size > 1:  # the reference: neighbours composed pairwise, in order
        if a.size % 2:
            a, b = np.append(a, np.uint32(1)), np.append(b, np.uint32(0))
        fa, fb, ga, gb = a[0::2], b[0::2], a[1::2], b[1::2]
        a, b = ga * fa, ga * fb + gb
    assert (int(got["a"]), int(got["b"])) == (int(a[0]), int(b[0]))


@pytest.mark.parametrize("inclusive", [False, True])
def test_non_commutative_scan_over_many_runs_keeps_the_order(device, inclusive):
    # the same exact, order-sensitive composition as a scan: long enough for several runs per
    # CPU core and several parts per run
    n = 200_003
    rng = np.random.default_rng(n)
    f = np.empty(n, UAFFINE)
    f["a"] = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32) | 1
    f["b"] = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    scan = ps.Scan(UCOMPOSE_SOURCE, identity=np.array((1, 0), UAFFINE)[()], inclusive=inclusive)
    got, total = scan(ps.Vector(f, device=device))
    want = np.empty(n, UAFFINE)
    a, b, mask = 1, 0, (1 << 32) - 1
    for i, (fa, fb) in enumerate(zip(f["a"].tolist(), f["b"].tolist(), strict=True)):
        if not inclusive:
            want[i] = (a, b)
        a, b = (fa * a) & mask, (fa * b + fb) & mask
        if inclusive:
            want[i] = (a, b)
    np.testing.assert_array_equal(got.numpy(), want)
    assert (int(total["a"]), int(total["b"])) == (a, b)


@pytest.mark.parametrize("shape", ["runs", "chained"])
def test_cpu_scan_shapes_keep_the_order(device, monkeypatch, shape):
    """On a CPU, the Scan runs over long runs (two launches), or takes tiles in order, each
    taking the prefix the tile before published and scanning in one pass, or finding the
    combination of the tiles before it by a look-back. Tiles of 64 records here, many per
    work-item; each shape in place and not, against a loop."""
    if device.type != "cpu":
        pytest.skip(f"{device.id} is not a CPU: its Scan is the single-pass one")
    from parskel.skeletons import scan as scan_module

    monkeypatch.setattr(scan_module, "CPU_TILE_BYTES", 512)
    monkeypatch.setattr(scan_module, "one_pass", lambda dev: shape != "runs")
    n = 20_011
    rng = np.random.default_rng(n)
    f = np.empty(n, UAFFINE)
    f["a"] = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32) | 1
    f["b"] = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    want = np.empty(n, UAFFINE)
    a, b, mask = 1, 0, (1 << 32) - 1
    for i, (fa, fb) in enumerate(zip(f["a"].tolist(), f["b"].tolist(), strict=True)):
        want[i] = (a, b)
        a, b = (fa * a) & mask, (fa * b + fb) & mask
    scan = ps.Scan(UCOMPOSE_SOURCE, identity=np.array((1, 0), UAFFINE)[()])  # built with the patches
    got, total = scan(ps.Vector(f, device=device))
    np.testing.assert_array_equal(got.numpy(), want)
    assert (int(total["a"]), int(total["b"])) == (a, b)
    v = ps.Vector(f, device=device)
    same, _ = scan(v, out=v)
    assert same is v
    np.testing.assert_array_equal(v.numpy(), want)


def test_cpu_chained_scan_looks_back_over_totals_in_order(device, monkeypatch):
    """The chained CPU scan's look-back where it meets totals, which a run rarely shows: the
    launch starts at ticket k, tiles 1 to k - 1 have published only their totals and tile 0 its
    prefix, so the first tile taken combines k values, in order, before it scans."""
    if device.type != "cpu" or not device.shares_host_memory:
        pytest.skip(f"{device.id}: the chained scan is the CPU's, and this test reads host memory")
    from parskel.skeletons import scan as scan_module

    monkeypatch.setattr(scan_module, "CPU_TILE_BYTES", 512)  # 64 records a tile
    monkeypatch.setattr(scan_module, "one_pass", lambda dev: True)
    tile, tiles, k = 64, 13, 7
    n = tile * (tiles - 1) + 5
    rng = np.random.default_rng(k)
    f = np.empty(n, UAFFINE)
    f["a"] = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32) | 1
    f["b"] = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    want = np.empty(n, UAFFINE)
    totals = np.empty(tiles, UAFFINE)
    a, b, mask = 1, 0, (1 << 32) - 1
    ta, tb = 1, 0
    for i, (fa, fb) in enumerate(zip(f["a"].tolist(), f["b"].tolist(), strict=True)):
        want[i] = (a, b)
        a, b = (fa * a) & mask, (fa * b + fb) & mask
        ta, tb = (fa * ta) & mask, (fa * tb + fb) & mask
        if i % tile == tile - 1 or i == n - 1:
            totals[i // tile] = (ta, tb)
            ta, tb = 1, 0
    scan = ps.Scan(UCOMPOSE_SOURCE, identity=np.array((1, 0), UAFFINE)[()])  # built with the patches
    scan(ps.Vector(f[:10], device=device))
    plan = next(iter(scan._plans.values()))
    assert plan.chained
    state = np.zeros(tiles + 1, np.uint32)
    state[0] = k  # the next ticket
    state[1] = 2  # tile 0: its prefix (its total)
    state[2 : k + 1] = 1  # tiles 1 to k - 1: their totals only
    values = np.zeros(2 * tiles + 1, UAFFINE)
    values[1] = totals[0]
    values[2 : 2 * k : 2] = totals[1:k]
    out = np.zeros(n, UAFFINE)
    src, dst = device.host_buffer(f), device.host_buffer(out, upload=False)
    held = device.host_buffer(state), device.host_buffer(values)
    sizes = (np.uint32(n), np.uint32(tile), np.uint32(tiles))
    device.launch(plan.kernel, 1, 1, src, dst, *held, plan.identity, *sizes)
    device.finish()
    np.testing.assert_array_equal(out[k * tile :], want[k * tile :])
    assert tuple(values[-1]) == (a, b)


@pytest.mark.parametrize("shape", ["runs", "chained"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64], ids=lambda d: np.dtype(d).name)
def test_cpu_scan_of_an_integer_sum_in_vectors(device, monkeypatch, shape, dtype):
    """A sum of 4- or 8-byte integers from 0 is scanned in vectors on CPUs: in both shapes,
    inclusive and exclusive, in place and not, over tiles and runs that end inside a vector,
    with sums that wrap around, against NumPy."""
    if device.type != "cpu":
        pytest.skip(f"{device.id} is not a CPU: its Scan is the single-pass one")
    from parskel.skeletons import scan as scan_module

    monkeypatch.setattr(scan_module, "CPU_TILE_BYTES", 8 * 61)  # tiles of 61 or 122 elements
    monkeypatch.setattr(scan_module, "one_pass", lambda dev: shape != "runs")
    t = np.dtype(dtype)
    info = np.iinfo(t)
    c = {np.int32: "int", np.uint32: "uint", np.int64: "long", np.uint64: "ulong"}[dtype]
    n = 20_011
    x = np.random.default_rng(n).integers(info.max // 4, info.max // 2, n, dtype=t, endpoint=True)
    for inclusive in (False, True):
        scan = ps.Scan(f"{c} add({c} a, {c} b) {{ return a + b; }}", identity=0, inclusive=inclusive)
        assert scan.lanes() == 64 // t.itemsize
        with np.errstate(over="ignore"):
            want = np.cumsum(x, dtype=t)
            if not inclusive:
                want = np.concatenate([np.zeros(1, t), want[:-1]])
            total = x.sum(dtype=t)
        got, got_total = scan(ps.Vector(x, device=device))
        np.testing.assert_array_equal(got.numpy(), want)
        assert got_total == total
        v = ps.Vector(x, device=device)
        same, got_total = scan(v, out=v)
        assert same is v and got_total == total
        np.testing.assert_array_equal(v.numpy(), want)


def test_cpu_scan_of_an_integer_sum_in_vectors_looks_back_over_totals(device, monkeypatch):
    """The vectorised sum's look-back where it meets totals: tiles 1 to k - 1 have published
    only their totals and tile 0 its prefix when the launch takes ticket k (as in
    test_cpu_chained_scan_looks_back_over_totals_in_order)."""
    if device.type != "cpu" or not device.shares_host_memory:
        pytest.skip(f"{device.id}: the chained scan is the CPU's, and this test reads host memory")
    from parskel.skeletons import scan as scan_module

    monkeypatch.setattr(scan_module, "CPU_TILE_BYTES", 4 * 61)  # 61 int32 a tile
    monkeypatch.setattr(scan_module, "one_pass", lambda dev: True)
    tile, tiles, k = 61, 13, 7
    n = tile * (tiles - 1) + 5
    x = np.random.default_rng(k).integers(-1000, 1000, n, dtype=np.int32)
    want = np.concatenate([np.zeros(1, np.int32), np.cumsum(x, dtype=np.int32)[:-1]])
    scan = ps.Scan("int add(int a, int b) { return a + b; }", identity=0)
    scan(ps.Vector(x[:10], device=device))
    plan = next(iter(scan._plans.values()))
    assert plan.chained and scan.lanes() == 16
    totals = np.add.reduceat(x, np.arange(0, n, tile))
    state = np.zeros(tiles + 1, np.uint32)
    state[0], state[1], state[2 : k + 1] = k, 2, 1  # the next ticket; tile 0's prefix; totals
    values = np.zeros(2 * tiles + 1, np.int32)
    values[1] = totals[0]
    values[2 : 2 * k : 2] = totals[1:k]
    out = np.zeros(n, np.int32)
    src, dst = device.host_buffer(x), device.host_buffer(out, upload=False)
    held = device.host_buffer(state), device.host_buffer(values)
    device.launch(plan.kernel, 1, 1, src, dst, *held, plan.identity, np.uint32(n), np.uint32(tile), np.uint32(tiles))
    device.finish()
    np.testing.assert_array_equal(out[k * tile :], want[k * tile :])
    assert values[-1] == x.sum(dtype=np.int32)


@FEW
@given(n=SIZES, t=st.sampled_from(list(INT_TYPES)), inclusive=st.booleans())
def test_scan_sum(device, n, t, inclusive):
    x = np.random.default_rng(n).integers(0, 50, n).astype(t)
    result, total = SCANS[(t, inclusive)](ps.Vector(x, device=device))
    want = np.cumsum(x, dtype=t)
    if not inclusive:
        want = np.concatenate([np.zeros(1, t), want[:-1]]) if n else want
    np.testing.assert_array_equal(result.numpy(), want)
    assert total == x.sum(dtype=t)


def _affine_reference(f: np.ndarray) -> np.ndarray:
    out = np.zeros(len(f), AFFINE)
    a, b = np.float32(1), np.float32(0)
    for i, e in enumerate(f):
        a, b = e["a"] * a, e["a"] * b + e["b"]
        out[i] = (a, b)
    return out


def test_a_reduction_result_outlives_the_next_call(device):
    """The value a Reduce returns is the caller's: the next call of the same skeleton (whose
    result memory is reused) leaves it as it was, for numbers and for records."""
    ones, twos = np.zeros(3, AFFINE), np.zeros(3, AFFINE)
    ones["a"], twos["a"], twos["b"] = 1, 2, 1
    first = COMPOSE_REDUCE(ps.Vector(ones, device=device))
    second = COMPOSE_REDUCE(ps.Vector(twos, device=device))
    assert (first["a"], first["b"]) == (1, 0) and (second["a"], second["b"]) == (8, 7)
    add = ADDS[np.int32]
    a = add(ps.Vector(np.arange(10, dtype=np.int32), device=device))
    b = add(ps.Vector(np.ones(10, dtype=np.int32), device=device))
    assert (a, b) == (45, 10)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.one_of(st.sampled_from([0, 1, 2, 1024, 1025]), st.integers(0, 5000)))
def test_non_commutative_struct_scan_matches_a_sequential_loop(device, n):
    rng = np.random.default_rng(n)
    f = np.zeros(n, AFFINE)
    f["a"], f["b"] = rng.uniform(0.95, 1.05, n), rng.uniform(-1, 1, n)
    want = _affine_reference(f)
    result, total = COMPOSE_SCAN(ps.Vector(f, device=device))
    got = result.numpy()
    np.testing.assert_allclose(got["a"], want["a"], rtol=2e-3)
    np.testing.assert_allclose(got["b"], want["b"], rtol=2e-3, atol=2e-3)
    reduced = COMPOSE_REDUCE(ps.Vector(f, device=device))
    last = want[-1] if n else np.array((1.0, 0.0), AFFINE)[()]
    for value in (total, reduced):
        assert isinstance(value, np.void)
        np.testing.assert_allclose([value["a"], value["b"]], [last["a"], last["b"]], rtol=2e-3, atol=2e-3)


@FEW
@given(n=SIZES)
def test_map_reduce_fused(device, n):
    x = np.random.default_rng(n).integers(-1000, 1000, n).astype(np.int32)
    want = (x.astype(np.int64) ** 2).sum() + np.arange(n, dtype=np.int64).sum()
    assert SUM_SQUARES(ps.Vector(x, device=device)) == want


def test_results_compose_and_stay_on_the_device(device):
    v = ps.Vector(np.arange(100, dtype=np.float32), device=device)
    total = ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)
    assert total(SQUARE(v)) == np.sum(np.arange(100.0) ** 2)
    keep = ps.Vector(size=1, dtype=np.float32, device=device)
    assert total(v, out=keep) is keep
    assert keep.numpy()[0] == 4950
    with device.record() as rec:
        SQUARE(SQUARE(v))
    assert rec.timing.launches == 2


def test_generate_vector_and_matrix(device):
    ramp = ps.Generate("float f(ps_index i, float step) { return step * i; }")
    np.testing.assert_allclose(ramp(7, 0.5, device=device).numpy(), 0.5 * np.arange(7))
    grid = ps.Generate("int f(ps_index r, ps_index c) { return 100 * r + c; }")
    m = grid((3, 4), device=device)
    assert isinstance(m, ps.Matrix)
    np.testing.assert_array_equal(m.numpy(), 100 * np.arange(3)[:, None] + np.arange(4))


def test_map_on_matrix_gets_row_and_column(device):
    m = ps.Matrix(np.ones((3, 5), dtype=np.int32), device=device)
    f = ps.Map("int f(int x, ps_index r, ps_index c) { return x + 10 * r + c; }")
    np.testing.assert_array_equal(f(m).numpy(), 1 + 10 * np.arange(3)[:, None] + np.arange(5))


def test_large_matrix_and_void_map_cover_whole_groups_and_the_tail(device):
    # more elements than several work-groups and not a multiple of one, and enough that on CPUs
    # the whole groups run unchecked and the rest in a second launch
    rows, cols = 71, 301
    m = ps.Matrix(np.arange(rows * cols, dtype=np.int32).reshape(rows, cols), device=device)
    f = ps.Map("int f(int x, ps_index r, ps_index c) { return x - 1000 * r - c; }")
    want = np.arange(rows * cols).reshape(rows, cols) - 1000 * np.arange(rows)[:, None] - np.arange(cols)
    np.testing.assert_array_equal(f(m).numpy(), want)
    n = rows * cols
    order = np.random.default_rng(n).permutation(n).astype(np.uint32)
    target = ps.Vector(size=n, dtype=np.uint32, device=device)
    scatter = ps.Map("void f(uint p, ps_index i, __global uint *out) { out[p] = (uint)i; }")
    assert scatter(ps.Vector(order, device=device), target) is None
    inverse = np.empty(n, np.uint32)
    inverse[order] = np.arange(n, dtype=np.uint32)
    np.testing.assert_array_equal(target.numpy(), inverse)


def test_a_small_map_is_one_launch(device):
    # below map.py's _FLAT_MIN a CPU runs the checked kernel alone: a second launch would cost
    # more than the unchecked one saves
    v = ps.Vector(np.arange(1000, dtype=np.float32), device=device)
    square = ps.Map("float f(float x) { return x * x; }")
    square(v)  # built
    with device.record() as rec:
        out = square(v)
    np.testing.assert_array_equal(out.numpy(), np.arange(1000, dtype=np.float32) ** 2)
    assert rec.timing.launches == 1


def test_extra_containers_read_and_write(device):
    # the permute of seed 004's radix sort, in one step: write element i to position p[i]
    values = ps.Vector(np.array([10, 20, 30, 40], dtype=np.int32), device=device)
    positions = ps.Vector(np.array([2, 0, 3, 1], dtype=np.uint32), device=device)
    target = ps.Vector(size=4, dtype=np.int32, device=device)
    permute = ps.Zip("void f(int x, uint p, __global int *out) { out[p] = x; }")
    assert permute(values, positions, target) is None
    assert target.numpy().tolist() == [20, 40, 10, 30]
    lookup = ps.MapArray("int f(uint p, __global const int *table, int add) { return table[p] + add; }")
    assert lookup(positions, values, 1).numpy().tolist() == [31, 11, 41, 21]


def test_bare_opencl_qualifiers_in_user_functions(device):
    # OpenCL C also spells the qualifiers without underscores; the CUDA backend respells them
    lookup = ps.MapArray("int f(uint p, global const int *table) { return table[p]; }")
    table = ps.Vector(np.array([5, 6, 7], dtype=np.int32), device=device)
    positions = ps.Vector(np.array([2, 2, 0], dtype=np.uint32), device=device)
    assert lookup(positions, table).numpy().tolist() == [7, 7, 5]


def test_compound_literal_identity_becomes_a_brace_list():
    from parskel.skeletons.identity import identity_glue

    assert identity_glue("(affine){1.0f, 0.0f}") == "#define PS_IDENTITY_EXPR {1.0f, 0.0f}\n"
    assert identity_glue("-INFINITY") == "#define PS_IDENTITY_EXPR (-INFINITY)\n"
    assert identity_glue(0) == ""


def test_struct_scalar_extra_argument(device):
    apply = ps.Map("float f(float x, affine m) { return m.a * x + m.b; }")
    v = ps.Vector(np.arange(4, dtype=np.float32), device=device)
    assert apply(v, np.array((2.0, 1.0), AFFINE)[()]).numpy().tolist() == [1, 3, 5, 7]
    assert apply(v, (3.0, 0.5)).numpy().tolist() == [0.5, 3.5, 6.5, 9.5]


def test_errors_name_the_problem_before_running(device):
    v = ps.Vector(np.arange(4, dtype=np.float32), device=device)
    with pytest.raises(BuildError) as info:
        ps.Map("float f(float x) { return x * yy; }")(v)
    text = str(info.value)
    assert "Map" in text and "yy" in text and "return x * yy" in text
    with pytest.raises(DTypeError, match="int"):
        ps.Map("int f(int x) { return x; }")(v)
    with pytest.raises(UserFunctionError, match="extra"):
        SQUARE(v, 3.0)
    with pytest.raises(UserFunctionError):
        INDEXED(v)
    with pytest.raises(DTypeError):
        INDEXED(v, np.float64(2.0))
    with pytest.raises(ShapeError):
        ZIPS[np.int32](v, ps.Vector(np.zeros(5, np.int32), device=device))
    with pytest.raises(ShapeError):
        SQUARE(v, out=ps.Vector(size=3, dtype=np.float32, device=device))
    with pytest.raises(UserFunctionError):
        ps.Reduce("float add(float a, int b) { return a + b; }")
    with pytest.raises(TypeError, match=r"ps\.Vector"):  # NumPy arrays are taken (test_pipeline.py), lists not
        SQUARE([0.0, 1.0, 2.0])


def test_a_local_pointer_extra_is_refused_before_building(device):
    with pytest.raises(UserFunctionError, match="__global float"):
        ps.Map("float f(float x, __local float *t) { return x; }")


def test_builds_are_quiet_unless_verbose():
    """A user function's compiler warnings stay out of the terminal; PARSKEL_VERBOSE shows them.
    Building a skeleton with extra arguments warns about nothing."""
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, parskel as ps\n"
        "v = ps.Vector(np.arange(8, dtype=np.float32), device='cpu')\n"
        "ps.Map('float f(float x, float s, __global const float *t) { return x * s + t[0]; }')(v, np.float32(2), v)\n"
        "ps.Map('#define HALF, 0.5f\\nfloat g(float x) { return x; }')(v)\n"
        "print('done')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PARSKEL_VERBOSE"}
    quiet = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert quiet.stdout.strip() == "done" and quiet.stderr == ""
    loud = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**env, "PARSKEL_VERBOSE": "1"}, check=True
    )
    assert "whitespace after the macro name" in loud.stderr
    assert loud.stderr.count("parskel: building") == 1  # only the function with the bad macro warns


def test_skeleton_overhead_tool_measures_every_call(device):
    from parskel.skeletons.overhead import measure

    found = measure(device, size=16, repeats=3)
    assert set(found) == {"bare kernel launch", "Map(v, out=w)", "Map(v) (new Vector)", "Reduce(v) to a host scalar"}
    assert all(us > 0 for us in found.values())


BINS = ps.struct("bins16", [(f"b{k}", np.uint32) for k in range(16)])


def test_a_scan_of_large_records_takes_groups_its_local_memory_holds(device, monkeypatch):
    """Each work-item's slot of the group's local arrays holds a record of 16 words: where the
    device's local memory cannot hold them for the largest group, the group is halved. (A CPU
    device is described as a GPU here, so that the scan takes its GPU form, the one with local
    arrays.)"""
    import dataclasses

    small = dataclasses.replace(device.info, local_mem_bytes=16 << 10, type="gpu")
    monkeypatch.setattr(device, "info", small)
    sums = " ".join(f"a.b{k} += b.b{k};" for k in range(16))
    add = ps.Scan(f"bins16 add(bins16 a, bins16 b) {{ {sums} return a; }}", identity=np.zeros((), BINS))
    x = np.zeros(3000, BINS)
    for k in range(16):
        x[f"b{k}"] = np.arange(3000, dtype=np.uint32) * (k + 1) % 7
    result, total = add(ps.Vector(x, device=device))
    got = result.numpy()
    for k in range(16):
        want = np.concatenate([[0], np.cumsum(x[f"b{k}"], dtype=np.uint32)[:-1]])
        np.testing.assert_array_equal(got[f"b{k}"], want)
        assert total[f"b{k}"] == x[f"b{k}"].sum(dtype=np.uint32)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.int64])
def test_the_single_pass_scan_skeleton_leaves_its_total_after_the_tiles(device, monkeypatch, dtype):
    """The GPU form of Scan (single pass, decoupled look-back; on CUDA with 4-byte elements the
    look-back's one-word tile states) returns every prefix and the total, which its last tile
    writes after the tiles' state, at sizes around one and many tiles. (A CPU device is described
    as a GPU here, so that the scan takes that form.)"""
    import dataclasses

    if device.type == "cpu":
        monkeypatch.setattr(device, "info", dataclasses.replace(device.info, type="gpu"))
    c = {np.int32: "int", np.float32: "float", np.int64: "long"}[dtype]
    rng = np.random.default_rng(3)
    for inclusive in (False, True):
        add = ps.Scan(f"{c} add({c} a, {c} b) {{ return a + b; }}", identity=0, inclusive=inclusive)
        for n in (1, 255, 4096, 4097, 100_003):
            x = rng.integers(-50, 50, n).astype(dtype)
            result, total = add(ps.Vector(x, device=device))
            want = np.cumsum(x, dtype=dtype)
            np.testing.assert_array_equal(result.numpy(), want if inclusive else np.concatenate([[0], want[:-1]]))
            assert total == want[-1]


@pytest.mark.parametrize("n", [3, 1029, 4 * 1024 + 5, 9 * 1024 + 7, 300_007])
def test_map_and_zip_in_vectors_take_a_tile_per_work_group_then_the_rest(device, monkeypatch, n):
    """GPUs map in 16-byte vectors (ps_map_vec): a work-group per tile of rows (one vector a
    work-item), the last tile partly filled, then the elements past the last whole vector. A
    CPU device is described as a GPU here, so that it takes that form; the sizes give a tile
    partly filled in its first row, in a later row and whole, and loose elements. Elements of
    two sizes take the scalar kernel."""
    import dataclasses

    if device.type == "cpu":
        monkeypatch.setattr(device, "info", dataclasses.replace(device.info, type="gpu"))
    assert vector_lanes(device, [np.dtype(np.float32)], np.dtype(np.float32)) == 4
    rng = np.random.default_rng(11)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    square = ps.Map("float f(float x) { return x * x; }")
    launched, sizes = [], []

    def spy(kernel, global_size, local_size, *args):
        launched.append(kernel.name)
        sizes.append((global_size, local_size))
        return launch(kernel, global_size, local_size, *args)

    launch = device.launch
    monkeypatch.setattr(device, "launch", spy)
    np.testing.assert_array_equal(square(ps.Vector(x, device=device)).numpy(), x * x)
    assert launched == ["ps_map_vec"]
    (global_size, group), tile = sizes[0], sizes[0][1] * 4 * 4  # a work-group per tile of floats
    assert global_size == -(-n // tile) * group
    product = ps.Zip("float f(float x, float y) { return x * y; }")
    np.testing.assert_array_equal(product(ps.Vector(x, device=device), ps.Vector(y, device=device)).numpy(), x * y)
    indexed = ps.Map("float f(float x, ps_index i) { return x + (float)(i % 1000); }")
    got = indexed(ps.Vector(x, device=device)).numpy()
    np.testing.assert_array_equal(got, x + (np.arange(n) % 1000).astype(np.float32))
    if n > 4096:  # 2D: the row and column of each lane
        m = ps.Map("float f(float x, ps_index r, ps_index c) { return x + (float)(7 * r + c); }")
        a = x[: (n // 64) * 64].reshape(-1, 64)
        want = a + (7 * np.arange(a.shape[0])[:, None] + np.arange(64)[None, :]).astype(np.float32)
        np.testing.assert_array_equal(m(ps.Matrix(a, device=device)).numpy(), want)
    twice = ps.Map("double f(double x) { return 2 * x; }")  # two lanes a vector
    if device.info.fp64:
        z = x.astype(np.float64)
        np.testing.assert_array_equal(twice(ps.Vector(z, device=device)).numpy(), 2 * z)
    launched.clear()  # elements of two sizes: the scalar kernel
    widened = ps.Map("long f(int a) { return (long)a * a - 3; }")
    ints = rng.integers(-(2**31), 2**31 - 1, n).astype(np.int32)
    np.testing.assert_array_equal(widened(ps.Vector(ints, device=device)).numpy(), ints.astype(np.int64) ** 2 - 3)
    assert launched == ["ps_map"]


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_map_and_zip_in_vectors_build_with_nvrtc(monkeypatch):
    """The GPU form of Map and Zip (ps_map_vec), built as CUDA builds it, with no warning."""
    import dataclasses

    dev, captured = captured_builds(monkeypatch)
    monkeypatch.setattr(dev, "info", dataclasses.replace(dev.info, type="gpu"))
    x = np.arange(4099, dtype=np.float32)
    ps.Map("float f(float x) { return x * x; }")(ps.Vector(x, device=dev))
    ps.Zip("int f(int a, float b) { return a + (int)b; }")(
        ps.Vector(x.astype(np.int32), device=dev), ps.Vector(x, device=dev)
    )
    assert len(captured) == 2
    for source in captured:
        log, ptx = nvrtc_build(source)
        assert ".entry ps_map_vec" in ptx and log.strip() == "", log


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_the_scan_skeleton_builds_with_nvrtc_and_streams_its_tiles(monkeypatch):
    """The GPU form of Scan, built as CUDA builds it, with no warning: the 16-byte vectors of
    its staged tiles (4- and 8-byte elements) are read and written with the streaming cache
    operator (.cs); a record's tile, held in registers, is not."""
    import dataclasses

    dev, captured = captured_builds(monkeypatch)
    monkeypatch.setattr(dev, "info", dataclasses.replace(dev.info, type="gpu"))
    x = np.arange(5000, dtype=np.int32)
    for c, dt in (("int", np.int32), ("long", np.int64)):
        scan = ps.Scan(f"{c} add({c} a, {c} b) {{ return a + b; }}", identity=0, inclusive=True)
        result, total = scan(ps.Vector(x.astype(dt), device=dev))
        np.testing.assert_array_equal(result.numpy(), np.cumsum(x, dtype=dt))
        assert total == x.sum()
    compose = ps.Scan(UCOMPOSE_SOURCE, identity=np.array((1, 0), UAFFINE)[()], inclusive=True)
    f = np.zeros(300, UAFFINE)
    f["a"], f["b"] = 1, np.arange(300)  # x -> x + b: the composition adds the b's
    result, _ = compose(ps.Vector(f, device=dev))
    np.testing.assert_array_equal(result.numpy()["b"], np.cumsum(f["b"], dtype=np.uint32))
    assert {"int", "long", "uaffine"} <= {
        t for source in captured for t in ("int", "long", "uaffine") if f"PS_T {t}" in source.text
    }
    for source in (s for s in captured if '"skeletons/scan.cl"' in s.text):  # not the identities' programs
        log, ptx = nvrtc_build(source)
        assert ".entry ps_scan" in ptx and log.strip() == "", log
        streams = "ld.global.cs.v4.u32" in ptx and "st.global.cs.v4.u32" in ptx
        assert streams == ("PS_T uaffine" not in source.text)


def test_the_scan_skeleton_reaches_nvidia_opencl_with_the_register_bound_of_its_groups(device):
    """On NVIDIA's OpenCL, a Scan of 4-byte elements (staged tiles) is built with `.maxnreg` in
    its PTX, as CUDA bounds it by launch bounds; one of 8-byte elements without."""
    from parskel.runtime import traits

    if not (device.backend == "opencl" and traits.is_nvidia_gpu(device)):
        pytest.skip(f"{device.id}: only NVIDIA's OpenCL takes a register bound through its PTX")
    import pyopencl as cl

    rng = np.random.default_rng(5)
    bounds = {}
    for c, dtype in (("int", np.int32), ("long", np.int64)):
        name = f"{c}_sum_under_a_bound"  # a name of this test's own, to find its program by
        x = rng.integers(-50, 50, 300_001).astype(dtype)
        result, total = ps.Scan(f"{c} {name}({c} a, {c} b) {{ return a + b; }}", identity=0, inclusive=True)(
            ps.Vector(x, device=device)
        )
        np.testing.assert_array_equal(result.numpy(), np.cumsum(x, dtype=dtype))
        assert total == x.sum(dtype=dtype)
        built = [p for p in device._programs.values() if name in p.source.text and "ps_scan" in p.source.text]
        ptx = [p._handle.get_info(cl.program_info.BINARIES)[0].decode(errors="replace") for p in built]
        bounds[c] = {line.split()[-1] for text in ptx for line in text.splitlines() if ".maxnreg" in line}
    assert bounds == {"int": {"48"}, "long": set()}


@pytest.mark.parametrize("commutative", [None, False])
@pytest.mark.parametrize("n", [1, 31, 32, 33, 1000, 65537, (1 << 20) + 5])
def test_reduce_of_an_operator_that_commutes(device, n, commutative):
    """A sum seen to commute folds elements in turn on CPUs (32 folds of consecutive elements)
    and per lane across a warp's whole chunk on GPUs (the lanes combined once, at the end);
    ``commutative=False`` keeps the ordered parts. Whole numbers in float64 sum exactly in any
    order, so both must give the exact total; fmax must give the largest element."""
    if not device.info.fp64:
        pytest.skip("needs fp64")
    rng = np.random.default_rng(n)
    x = rng.integers(-1000, 1000, n).astype(np.float64)
    add = ps.Reduce("double add(double a, double b) { return a + b; }", identity=0, commutative=commutative)
    assert add.commutative is (commutative is None)
    assert add(ps.Vector(x, device=device)) == x.sum()
    biggest = ps.Reduce("double m(double a, double b) { return fmax(b, a); }", identity=-np.inf)
    assert biggest.commutative
    assert biggest(ps.Vector(x, device=device)) == x.max()
    squares = ps.MapReduce("double sq(double v) { return v * v; }", "double add(double a, double b) { return a + b; }")
    assert squares.commutative and squares(ps.Vector(x, device=device)) == (x * x).sum()


def _python_add(a, b):
    return a + b


def _python_max(a, b):
    return max(a, b)


@pytest.mark.parametrize(
    "source, dtype, commutes",
    [
        ("float f(float a, float b) { return (b + a); }", None, True),
        ("float f(float a, float b) { /* sum */ return a * b; }", None, True),
        ("float f(float a, float b) { return a - b; }", None, False),
        ("float f(float a, float b) { return a + a; }", None, False),
        ("float f(float a, float b) { return max(a, b); }", None, False),  # a NaN makes the order matter
        ("int f(int a, int b) { return max(a, b); }", None, True),
        ("uint f(uint a, uint b) { return a ^ b; }", None, True),
        ("float f(float a, float b) { float c = a + b; return c; }", None, False),  # not seen: safe
        (_python_add, np.float32, True),
        (_python_max, np.int32, True),
        (_python_max, np.float32, False),
    ],
)
def test_which_operators_are_seen_to_commute(source, dtype, commutes):
    from parskel.skeletons.reduce import commutes as seen
    from parskel.skeletons.reduce import operator

    if dtype is not None:
        source = ps.function(source).source(dtype, dtype)
    assert seen(operator(source, "Reduce")[0]) is commutes
