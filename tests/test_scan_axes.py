"""Scans along any axis and of every dtype (bool, 8- to 64-bit integers, float16 to float64,
complex), inclusive and exclusive, against ``np.cumsum``; and the segmented scan beneath them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays, from_dtype

import parskel as ps
from parskel.algorithms import segmented
from parskel.algorithms.segmented import INPUT_TYPES

#: Relative error allowed, of the running sum of magnitudes (floats are added in another order)
TOLERANCE = {"e": 2e-3, "f": 1e-4, "d": 1e-12, "F": 1e-4, "D": 1e-12}


def elements(dtype: np.dtype) -> st.SearchStrategy:
    if dtype.kind in "fc":
        bound = 1.0 if dtype == np.float16 else 1000.0
        part = st.floats(-bound, bound, width=16 if dtype == np.float16 else 32)
        return st.complex_numbers(max_magnitude=bound, allow_nan=False) if dtype.kind == "c" else part
    return from_dtype(dtype)


@st.composite
def scans(draw):
    dtype = draw(st.sampled_from(INPUT_TYPES))
    shape = draw(array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=20))
    x = draw(arrays(dtype, shape, elements=elements(dtype)))
    axis = draw(st.sampled_from([None, *range(-x.ndim, x.ndim)]))
    wanted = None
    if draw(st.booleans()):  # a dtype= of NumPy's: the same kind, or wider
        wanted = draw(
            st.sampled_from(
                {"b": ["i1", "u2", "i8"], "i": ["i2", "i8", "f8"], "u": ["u1", "u8", "f4"]}.get(
                    dtype.kind, [dtype.str, "c16"]
                )
            )
        )
    return x, axis, wanted, draw(st.booleans())


def reference(x: np.ndarray, axis: int | None, dtype: np.dtype, inclusive: bool) -> np.ndarray:
    """np.cumsum in the result's dtype (integers wrap alike), exact for floats (in float64 or
    complex128), made exclusive by taking each element back off."""
    exact = np.dtype(np.complex128) if dtype.kind == "c" else np.dtype(np.float64) if dtype.kind == "f" else dtype
    with np.errstate(over="ignore"):
        sums = np.cumsum(x, axis=axis, dtype=exact)
        if not inclusive:
            sums = sums - (x.reshape(-1) if axis is None else x).astype(exact)
    return sums


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=scans())
def test_scan_along_any_axis(device, case) -> None:
    x, axis, wanted, inclusive = case
    original = x.copy()
    out = ps.scan(x, axis=axis, dtype=wanted, inclusive=inclusive, device=device)
    expected_dtype = np.cumsum(x[:0] if x.ndim else x, dtype=wanted).dtype
    if wanted is None and x.dtype.itemsize >= 4:  # parskel keeps int32 and uint32, where NumPy widens
        expected_dtype = x.dtype
    assert out.dtype == expected_dtype
    assert out.shape == ((x.size,) if axis is None else x.shape)
    want = reference(x, axis, out.dtype, inclusive)
    if out.dtype.kind in "fc":
        magnitude = np.cumsum(np.abs(x.astype(want.dtype)), axis=axis)
        assert np.all(np.abs(out - want) <= TOLERANCE[out.dtype.char] * magnitude + 1e-30), (
            "sums differ beyond rounding"
        )
    else:
        np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(x, original)


@pytest.mark.parametrize("long_runs", [True, False], ids=["long_runs", "short_runs"])
@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.complex64, np.bool_], ids=str)
def test_long_rows_cross_work_items(device, rng, monkeypatch, dtype, long_runs) -> None:
    """Rows longer than one work-item's run, and runs that hold several rows' ends, in the
    layouts of CPUs (a few long runs) and GPUs (many short ones, in several levels)."""
    layout = segmented.geometry
    monkeypatch.setattr(segmented, "geometry", lambda device, n: layout(device, n, long_runs))
    for shape, axis in (((3, 50_000), 1), ((20_000, 7), 1), ((5, 40_001), 0)):
        x = (rng.standard_normal(shape) * 3).astype(dtype)
        if dtype == np.float16:
            x = (x / 16).astype(dtype)
        out = ps.scan(x, axis=axis, inclusive=True, device=device)
        want = np.cumsum(x, axis=axis, dtype=np.complex128 if x.dtype.kind == "c" else np.float64)
        magnitude = np.cumsum(np.abs(x).astype(np.float64), axis=axis)
        tolerance = TOLERANCE.get(out.dtype.char, 0)
        assert np.all(np.abs(out - want) <= tolerance * magnitude + 1e-30), (shape, axis)
