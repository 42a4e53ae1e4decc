"""The primitives (histogram, bincount, searchsorted, unique, runs, segmented scans and
reductions, copy_if, partition_if, partition, top_k) against NumPy, or against a loop on the host
where NumPy has no such function."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import parskel as ps
from parskel.errors import ArgumentError, DTypeError, ShapeError, UserFunctionError
from test_cuda import NVRTC, NVRTC_WHY, nvrtc_build

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
NUMBERS = [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.uint64, np.float16, np.float32, np.float64]
FLOATS = st.floats(-100, 100, width=16) | st.sampled_from([0.0, -0.0, math.nan, math.inf])


def elements(dtype) -> st.SearchStrategy | None:
    """Few distinct values, so that runs and ties are common; NaNs and signed zeros for floats."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return st.sampled_from([0.0, -0.0, 1.5, -2.0, 7.0, math.nan, math.inf]) | FLOATS
    if dtype.kind == "b":
        return None
    info = np.iinfo(dtype)
    return st.sampled_from([0, 1, 5, int(info.max), int(info.min)]) | st.integers(int(info.min), int(info.max))


def vectors(dtypes=NUMBERS, max_size: int = 300) -> st.SearchStrategy:
    return st.sampled_from(dtypes).flatmap(lambda dt: arrays(dt, st.integers(0, max_size), elements=elements(dt)))


def no_kernel_runs(device, call, error, match: str) -> None:
    with device.record() as rec, pytest.raises(error, match=match):
        call()
    assert rec.timing.launches == 0, "the error came after a kernel ran"


# searchsorted, histogram, bincount -------------------------------------------------------


@SETTINGS
@given(a=vectors(), data=st.data())
def test_searchsorted(device, a, data) -> None:
    ordered = np.sort(a)
    v = data.draw(arrays(a.dtype, st.integers(0, 40), elements=elements(a.dtype)))
    for side in ("left", "right"):
        np.testing.assert_array_equal(
            ps.searchsorted(ordered, v, side, device=device), np.searchsorted(ordered, v, side)
        )
    sorter = np.argsort(a, kind="stable")
    np.testing.assert_array_equal(
        ps.searchsorted(a, v, sorter=sorter, device=device), np.searchsorted(a, v, sorter=sorter)
    )


def test_searchsorted_scalars_and_mixed_types(device) -> None:
    a = np.array([1, 3, 3, 8], dtype=np.int8)
    assert ps.searchsorted(a, 3, device=device) == 1 and ps.searchsorted(a, 3, "right", device=device) == 3
    np.testing.assert_array_equal(ps.searchsorted(a, [2.5, 300.0], device=device), np.searchsorted(a, [2.5, 300.0]))


@SETTINGS
@given(
    a=vectors([np.int16, np.uint32, np.int64, np.float16, np.float32, np.float64], 500),
    bins=st.integers(1, 40) | st.lists(st.floats(-50, 50), min_size=2, max_size=12).map(sorted),
    low=st.floats(-20, 0),
    width=st.floats(0.5, 30),
)
def test_histogram(device, a, bins, low, width) -> None:
    finite = a[np.isfinite(a)] if a.dtype.kind == "f" else a
    value_range = (low, low + width)
    for data, given_range in ((finite, None), (a, value_range)):
        if isinstance(bins, list) and len(set(bins)) < len(bins):
            continue
        try:
            want = np.histogram(data, bins, given_range)
        except ValueError:  # NumPy's edges collide (float16 data over a narrow range): so do parskel's
            with pytest.raises(ArgumentError, match="bins"):
                ps.histogram(data, bins, given_range, device=device)
            continue
        got = ps.histogram(data, bins, given_range, device=device)
        np.testing.assert_array_equal(got[1], want[1])
        np.testing.assert_array_equal(got[0], want[0])
        assert got[0].dtype == np.int64
    if finite.size:
        try:
            want_dense = np.histogram(finite, 5, density=True)[0]
        except ValueError:  # one value at the end of int64's range: NumPy's 5 edges collide, parskel's too
            with pytest.raises(ArgumentError, match="bins"):
                ps.histogram(finite, 5, density=True, device=device)
            return
        dense = ps.histogram(finite, 5, density=True, device=device)[0]
        np.testing.assert_allclose(dense, want_dense, rtol=1e-12)


def test_histogram_over_a_subnormal_range_counts_the_elements_at_its_low_edge(device) -> None:
    """10 bins over [0, 1e-308]: bins / span overflows to an infinite scale, and an element at
    the low edge then gives 0 * inf (NaN) in the kernel, which must start it at bin 0 (it once
    read far outside the edges); no overflow warning either."""
    data = np.array([0.0, 5e-309, 1e-308, 3e-309, 0.0, 7.5e-309, -1e-309])
    want = np.histogram(data, 10, (0.0, 1e-308))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = ps.histogram(data, 10, (0.0, 1e-308), device=device)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_histogram_of_many_bins_counts_in_global_memory(device, rng) -> None:
    x = rng.standard_normal(20_000)
    for bins in (4096, 5000):
        np.testing.assert_array_equal(ps.histogram(x, bins, device=device)[0], np.histogram(x, bins)[0])


@SETTINGS
@given(x=arrays(np.int32, st.integers(0, 400), elements=st.integers(0, 5000)), minlength=st.integers(0, 6000))
def test_bincount(device, x, minlength) -> None:
    np.testing.assert_array_equal(
        ps.bincount(x, minlength=minlength, device=device), np.bincount(x, minlength=minlength)
    )


def weights_for(data: st.DataObject, n: int) -> np.ndarray:
    """Weights of every kind NumPy sums: small integers (so that NumPy's float64 sums convert back
    exactly), floats with NaNs and infinities, float16."""
    dtype = data.draw(st.sampled_from([np.int8, np.int32, np.uint16, np.int64, np.float16, np.float32, np.float64]))
    if np.dtype(dtype).kind in "iu":
        low = 0 if np.dtype(dtype).kind == "u" else -1
        return data.draw(arrays(dtype, n, elements=st.integers(low, 1 if dtype == np.int8 else 1000)))
    values = st.floats(-10, 10, width=16) | st.sampled_from([0.5, -0.0, math.nan, math.inf])
    return data.draw(arrays(dtype, n, elements=values))


def assert_sums(got: np.ndarray, want: np.ndarray, weights: np.ndarray) -> None:
    """Integer sums exactly; floating-point ones as float64 sums converted to the weights' dtype,
    which parskel's are."""
    assert got.dtype == want.dtype == weights.dtype
    if weights.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
    else:
        rtol = {2: 2e-3, 4: 1e-6, 8: 1e-12}[weights.dtype.itemsize]
        np.testing.assert_allclose(
            got, want, rtol=rtol, atol=rtol * np.nansum(np.abs(weights), where=np.isfinite(weights))
        )


@SETTINGS
@given(
    a=vectors([np.int16, np.float32, np.float64], 100),
    bins=st.integers(1, 40) | st.sampled_from([4097, [-3.0, -1.0, 0.0, 0.5, 4.0]]),
    data=st.data(),
)
def test_histogram_with_weights(device, a, bins, data) -> None:
    w = weights_for(data, a.size)
    before = w.copy()
    for value_range in (None, (-2.0, 3.0)):
        finite = a if value_range or a.dtype.kind != "f" else a[np.isfinite(a)]
        weights = w if finite is a else w[np.isfinite(a)]
        counts, edges = ps.histogram(finite, bins, value_range, weights=weights, device=device)
        with np.errstate(invalid="ignore"):  # NumPy's uneven bins subtract sums that may be NaN or inf
            want, want_edges = np.histogram(finite, bins, value_range, weights=weights)
        np.testing.assert_array_equal(edges, want_edges)
        if weights.dtype.kind in "iu":  # NumPy's sums are exact here
            assert_sums(counts, want, weights)
        # the sums of the weights by bin, in float64: NumPy sums uneven bins as differences of
        # cumulative sums in the weights' dtype (a NaN weight spoils every later bin there)
        nbins = edges.size - 1
        inside = (finite >= edges[0]) & (finite <= edges[-1])
        number = np.minimum(np.searchsorted(edges, finite[inside], side="right") - 1, nbins - 1)
        wide = weights[inside].astype(np.float64 if weights.dtype.kind == "f" else np.int64)
        by_bin = np.bincount(number, weights=wide, minlength=nbins) if inside.any() else np.zeros(nbins)
        assert_sums(counts, by_bin.astype(want.dtype), weights)
    np.testing.assert_array_equal(w, before)


def test_weighted_density_and_bincount(device, rng) -> None:
    x = rng.standard_normal(1001)
    w = rng.random(1001).astype(np.float32)
    np.testing.assert_allclose(
        ps.histogram(x, 7, weights=w, density=True, device=device)[0],
        np.histogram(x, 7, weights=w, density=True)[0],
        rtol=1e-6,
    )
    ints = rng.integers(0, 50, 1001)
    for weights in (w, rng.integers(-9, 9, 1001), rng.random(1001)):
        got = ps.bincount(ints, weights=weights, minlength=60, device=device)
        want = np.bincount(ints, weights=weights, minlength=60)
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert ps.bincount(np.zeros(0, np.int32), weights=np.zeros(0), device=device).dtype == np.float64


def _bin_of(x):
    return int(x * 3.0) - 4  # translated for the device; NumPy computes the same below


@SETTINGS
@given(
    x=arrays(np.float32, st.integers(0, 600), elements=st.floats(-20, 20, width=32)),
    bins=st.integers(0, 20) | st.just(5000),
    weighted=st.booleans(),
    data=st.data(),
)
def test_histogram_by_a_bin_function(device, x, bins, weighted, data) -> None:
    w = weights_for(data, x.size) if weighted else None
    numbers = (x * np.float32(3)).astype(np.int64) - 4  # C's conversion truncates toward zero
    keep = (numbers >= 0) & (numbers < bins)
    for bin_of in (_bin_of, "int f(float x) { return (int)(x * 3.0f) - 4; }"):
        got = ps.histogram_by(x, bin_of, bins, weights=w, device=device)
        if w is None:
            np.testing.assert_array_equal(got, np.bincount(numbers[keep], minlength=bins)[:bins])
            assert got.dtype == np.int64
        else:
            wide = w.astype(np.float64) if w.dtype.kind == "f" else w
            want = np.bincount(numbers[keep], weights=wide[keep], minlength=bins)[:bins]
            assert_sums(got, want.astype(w.dtype), w)


def test_histogram_by_takes_containers_and_nans(device, rng) -> None:
    def host(counts):  # a container gives back its data's kind: CuPy on a CUDA device
        return counts.get() if device.backend == "cuda" else counts

    values = np.arange(40, dtype=np.int32).reshape(5, 8)
    counts = host(ps.histogram_by(ps.Matrix(values, device=device), "uint bin(int x) { return (x * x) % 8; }", 8))
    np.testing.assert_array_equal(counts, np.bincount(((values * values) % 8).ravel(), minlength=8))
    x = rng.standard_normal(301).astype(np.float32)
    x[::7] = np.nan
    floor = "long f(float x) { return isnan(x) ? -1 : (long)floor(x); }"
    got = ps.histogram_by(x, floor, 4, weights=np.ones(301), device=device)
    finite = x[np.isfinite(x)]
    inside = (finite >= 0) & (finite < 4)
    np.testing.assert_array_equal(got, np.bincount(np.floor(finite[inside]).astype(int), minlength=4).astype(float))
    pixels = ps.Vector(rng.integers(0, 256, (500, 4)).astype(np.uint8), dtype=ps.uchar4, device=device)
    brightness = host(ps.histogram_by(pixels, "uchar f(uchar4 p) { return p.x / 64; }", 4))
    np.testing.assert_array_equal(brightness, np.bincount(pixels.numpy()["x"] // 64, minlength=4))


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_the_bin_functions_build_with_nvrtc(monkeypatch) -> None:
    dev = ps.device("cpu")
    captured: list = []
    build = dev.build

    def capture(source, defines=None):
        captured.append((source, defines))
        return build(source, defines)

    monkeypatch.setattr(dev, "build", capture)
    x = np.arange(9, dtype=np.float32)
    ps.histogram_by(x, "ulong f(float x) { return (ulong)x; }", 4, device=dev)
    ps.histogram_by(x, _bin_of, 4, weights=x, device=dev)
    assert len(captured) >= 2  # the bin functions' Maps (test_cuda compiles histogram.cl's variants)
    for source, defines in captured:
        log, ptx = nvrtc_build(source, defines)
        assert ".entry" in ptx, log


# unique and runs ---------------------------------------------------------------------------------


@SETTINGS
@given(a=vectors(), shape=st.sampled_from([None, (2, -1)]), equal_nan=st.booleans())
def test_unique(device, a, shape, equal_nan) -> None:
    if shape is not None:
        a = a[: a.size // 2 * 2].reshape(shape)
    got = ps.unique(a, True, True, True, equal_nan=equal_nan, device=device)
    want = np.unique(a, True, True, True, equal_nan=equal_nan)
    np.testing.assert_array_equal(got[0], want[0])  # -0.0 == +0.0, NaN == NaN here
    for g, w in zip(got[1:], want[1:]):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(ps.unique(a, equal_nan=equal_nan, device=device), got[0])


def runs_of(keys: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of every run of equal consecutive keys (NaNs equal), by a loop."""
    bounds: list[tuple[int, int]] = []
    for i, key in enumerate(keys.tolist()):
        previous = keys[i - 1].tolist() if i else None
        same = i and (key == previous or (key != key and previous != previous))
        if same:
            bounds[-1] = (bounds[-1][0], i + 1)
        else:
            bounds.append((i, i + 1))
    return bounds


@SETTINGS
@given(keys=vectors(), data=st.data())
def test_runs_of_equal_keys(device, keys, data) -> None:
    values = data.draw(arrays(np.float64, keys.shape, elements=st.floats(-1e3, 1e3)))
    bounds = runs_of(keys)
    starts = [a for a, _ in bounds]
    got_values, lengths = ps.run_length_encode(keys, device=device)
    np.testing.assert_array_equal(got_values, keys[starts])
    np.testing.assert_array_equal(lengths, [b - a for a, b in bounds])
    unique_keys, first_values = ps.unique_by_key(keys, values, device=device)
    np.testing.assert_array_equal(unique_keys, keys[starts])
    np.testing.assert_array_equal(first_values, values[starts])
    for op, reduce in (("add", np.sum), ("max", np.max)):
        reduced_keys, totals = ps.reduce_by_key(keys, values, op, device=device)
        np.testing.assert_array_equal(reduced_keys, keys[starts])
        want = [reduce(values[a:b]) for a, b in bounds]
        np.testing.assert_allclose(totals, want, rtol=1e-12, atol=1e-9)


# segmented scans and reductions ---------------------------------------------------------------------

OPS = {"add": (np.add, 0), "multiply": (np.multiply, 1), "min": (np.minimum, None), "max": (np.maximum, None)}


@SETTINGS
@given(
    x=vectors([np.bool_, np.int8, np.int32, np.uint64, np.float32, np.float64], 200),
    op=st.sampled_from(sorted(OPS)),
    inclusive=st.booleans(),
    data=st.data(),
)
def test_segmented_scan_and_reduce(device, x, op, inclusive, data) -> None:
    if x.dtype.kind == "f":
        x = np.nan_to_num(x, nan=1.0, posinf=3.0)
    cuts = sorted(data.draw(st.lists(st.integers(0, x.size), max_size=6)))
    offsets = np.array([0, *cuts, x.size], np.int64)
    flags = np.zeros(x.size, bool)
    flags[[c for c in cuts if c < x.size]] = True
    ufunc, _ = OPS[op]
    result = ps.segmented_scan(x, offsets=offsets, op=op, inclusive=True, device=device).dtype
    want_scan = np.empty(x.size, result)
    totals = []
    for a, b in zip(offsets[:-1], offsets[1:]):
        with np.errstate(all="ignore"):  # integers wrap, inf * 0 is NaN: as on the device
            part = ufunc.accumulate(x[a:b].astype(result), dtype=result) if b > a else np.empty(0, result)
        want_scan[a:b] = part
        totals.append(part[-1] if b > a else _identity(op, result))
    close = {"rtol": 1e-5} if result.kind == "f" else {}
    for segments in ({"offsets": offsets}, {"flags": flags}):
        got = ps.segmented_scan(x, **segments, op=op, inclusive=inclusive, device=device)
        assert got.dtype == result
        if inclusive:
            np.testing.assert_allclose(got, want_scan, **close)
        else:  # each element's exclusive value is the inclusive value before it in its segment
            heads = np.zeros(x.size, bool)
            heads[offsets[offsets < x.size]] = True
            if x.size:
                heads[0] = True
            shifted = np.where(heads, _identity(op, result), np.roll(want_scan, 1))
            np.testing.assert_allclose(got, shifted, **close)
    np.testing.assert_allclose(ps.segmented_reduce(x, offsets, op=op, device=device), np.array(totals, result), **close)
    nonempty = [t for t, (a, b) in zip(totals, zip(offsets[:-1], offsets[1:])) if b > a]
    by_flags = ps.segmented_reduce(x, flags=flags, op=op, device=device)
    np.testing.assert_allclose(by_flags, np.array(nonempty, result), **close)


def _identity(op: str, dtype: np.dtype):
    if op in ("add", "multiply"):
        return dtype.type(OPS[op][1])
    if dtype.kind == "b":
        return dtype.type(op == "min")
    if dtype.kind == "f":
        return dtype.type(np.inf if op == "min" else -np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.max if op == "min" else info.min)


# selection ---------------------------------------------------------------------------------------


def above_one(x):
    return x > 1


@SETTINGS
@given(x=vectors([np.int16, np.int32, np.float32, np.float64], 400))
def test_copy_if_and_partition_if(device, x) -> None:
    keep = x > 1
    for predicate in (above_one, "bool above(TYPE x) { return x > 1; }".replace("TYPE", _c_name(x.dtype))):
        np.testing.assert_array_equal(ps.copy_if(x, predicate, device=device), x[keep])
        out, count = ps.partition_if(x, predicate, device=device)
        assert count == keep.sum()
        np.testing.assert_array_equal(out, np.concatenate([x[keep], x[~keep]]))


def _c_name(dtype: np.dtype) -> str:
    return {"i2": "short", "i4": "int", "f4": "float", "f8": "double"}[np.dtype(dtype).str[1:]]


def test_select_takes_vectors_and_is_reused(device) -> None:
    odd = ps.Select("int odd(int x) { return x & 1; }")
    v = ps.Vector(np.arange(11, dtype=np.int32), device=device)
    np.testing.assert_array_equal(odd(v), np.arange(1, 11, 2))
    np.testing.assert_array_equal(odd(np.arange(5, dtype=np.int32), device=device), [1, 3])


def reference_top_k(row: np.ndarray, k: int, largest: bool) -> list[int]:
    """Positions of the k largest (smallest), NaNs largest, ties by position, by Python's sort."""

    def key(i: int) -> tuple:
        value = row[i].item()
        nan = value != value
        rank = (not nan, -value if not nan else 0) if largest else (nan, value if not nan else 0)
        return rank

    return sorted(range(row.size), key=key)[:k]


@SETTINGS
@given(a=vectors([np.int8, np.uint32, np.float32, np.float64], 60), largest=st.booleans(), data=st.data())
def test_top_k(device, a, largest, data) -> None:
    k = data.draw(st.integers(0, a.size))
    values, positions = ps.top_k(a, k, largest=largest, device=device)
    want = reference_top_k(a, k, largest)
    np.testing.assert_array_equal(positions, want)
    np.testing.assert_array_equal(values, a[want])


def test_top_k_along_an_axis(device, rng) -> None:
    a = rng.integers(0, 6, (4, 9, 3))
    values, positions = ps.top_k(a, 4, axis=1, device=device)
    assert values.shape == positions.shape == (4, 4, 3)
    for i in range(4):
        for j in range(3):
            want = reference_top_k(a[i, :, j], 4, True)
            np.testing.assert_array_equal(positions[i, :, j], want)


@pytest.mark.parametrize("kth", [0, 3, -1, [1, 4]])
def test_partition_and_argpartition(device, rng, kth) -> None:
    a = rng.integers(0, 10, (3, 7))
    out = ps.partition(a, kth, device=device)
    order = ps.argpartition(a, kth, device=device)
    np.testing.assert_array_equal(np.take_along_axis(a, order, -1), out)
    for k in np.atleast_1d(kth):
        np.testing.assert_array_equal(out[:, k], np.partition(a, kth)[:, k])
        assert (out[:, :k] <= out[:, [k]]).all() and (out[:, k:] >= out[:, [k]]).all()


# errors --------------------------------------------------------------------------------------------


def test_bad_input_raises_before_any_kernel(device) -> None:
    x = np.arange(5, dtype=np.float32)
    cases = [
        (lambda: ps.searchsorted(x, x, side="middle", device=device), ArgumentError, "left"),
        (lambda: ps.searchsorted(x.reshape(1, 5), x, device=device), ShapeError, "1D"),
        (lambda: ps.searchsorted(x.astype(np.complex64), x, device=device), DTypeError, "float16"),
        (lambda: ps.searchsorted(x, x, sorter=np.arange(5) + 1, device=device), ShapeError, "sorter"),
        (lambda: ps.histogram(x, weights=x[:4], device=device), ShapeError, "weights must have the shape"),
        (lambda: ps.histogram(x, weights=x.astype(np.complex64), device=device), DTypeError, "weights"),
        (lambda: ps.histogram(x, weights=x > 1, device=device), DTypeError, "integers or floats"),
        (lambda: ps.bincount(np.arange(5), weights=x[:2], device=device), ShapeError, "weights"),
        (lambda: ps.histogram_by(x, "int f(float x) { return x; }", -1, device=device), ArgumentError, "bins"),
        (lambda: ps.histogram_by(x, "int f(float x) { return x; }", True, device=device), ArgumentError, "bins"),
        (lambda: ps.histogram_by(x, "float f(float x) { return x; }", 4, device=device), UserFunctionError, "integer"),
        (lambda: ps.histogram_by(x, "int f(float x, int k) { return k; }", 4, device=device), UserFunctionError, "one"),
        (lambda: ps.histogram_by(x, "int f(int x) { return x; }", 4, device=device), DTypeError, "'int'.*'float'"),
        (lambda: ps.histogram_by(x, "int f(float x) { return x; }", 4, x[:3], device=device), ShapeError, "weights"),
        (lambda: ps.histogram(x > 1, device=device), DTypeError, "integers and floats"),
        (lambda: ps.histogram(np.array([np.nan]), device=device), ArgumentError, "finite"),
        (lambda: ps.bincount(np.array([1, -1]), device=device), ArgumentError, "negative"),
        (lambda: ps.bincount(x, device=device), ShapeError, "integers"),
        (lambda: ps.unique(x, axis=0, device=device), ArgumentError, "axis"),
        (lambda: ps.unique(x.astype(np.complex64), device=device), DTypeError, "keys"),
        (lambda: ps.run_length_encode(x.reshape(1, 5), device=device), ShapeError, "1D"),
        (lambda: ps.reduce_by_key(x, x[:3], device=device), ShapeError, "shape"),
        (lambda: ps.reduce_by_key(x, x, "xor", device=device), ArgumentError, "op"),
        (lambda: ps.segmented_scan(x, device=device), ArgumentError, "offsets= or by flags="),
        (lambda: ps.segmented_scan(x, flags=x[:2], device=device), ShapeError, "flags"),
        (lambda: ps.segmented_reduce(x, [0, 3, 2], device=device), ShapeError, "ascend"),
        (lambda: ps.segmented_reduce(x.astype(np.complex64), [0, 5], op="min", device=device), DTypeError, "complex"),
        (lambda: ps.copy_if(x.reshape(1, 5), "bool f(float x) { return x > 0; }", device=device), ShapeError, "1D"),
        (lambda: ps.copy_if(x, "bool f(float x, float y) { return x > y; }", device=device), UserFunctionError, "one"),
        (lambda: ps.top_k(x, 6, device=device), ShapeError, "k=6"),
        (lambda: ps.partition(x, 5, device=device), ShapeError, "kth=5"),
        (lambda: ps.argpartition(x, 1.5, device=device), ArgumentError, "kth"),
    ]
    for call, error, match in cases:
        no_kernel_runs(device, call, error, match)
