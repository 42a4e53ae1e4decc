"""Sorting keys of every dtype along any axis, with values of any dtype, and argsort: against
NumPy's stable sort, with parskel's order of -0.0 before +0.0 and canonical NaNs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

import parskel as ps
from parskel.algorithms.keys import SORTABLE
from parskel.algorithms.sorts import _BUFFER_SORTS
from parskel.errors import ArgumentError, DTypeError, ShapeError, VariantError

VALUE_DTYPES = [np.bool_, np.int8, np.uint16, np.float16, np.int32, np.float32, np.int64, np.float64, np.complex128]
CANONICAL_NAN = {2: 0x7E00, 4: 0x7FC00000, 8: 0x7FF8000000000000}


def reference_order(keys: np.ndarray, axis: int | None) -> np.ndarray:
    """``np.argsort(keys, axis, kind="stable")``, but with -0.0 before +0.0 (NumPy has them
    equal) and every NaN equal to every other."""
    if axis is None:
        return reference_order(keys.reshape(-1), 0)
    moved = np.moveaxis(keys, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(0, moved.shape[-1])
    order = np.empty(flat.shape, np.int64)
    for r, row in enumerate(flat):
        # lexsort is stable; its last key is the primary one
        zeros_last = np.where(row == 0, ~np.signbit(row), False) if row.dtype.kind == "f" else np.zeros(row.size, bool)
        order[r] = np.lexsort((zeros_last, row))
    return np.moveaxis(order.reshape(moved.shape), -1, axis)


def taken(a: np.ndarray, order: np.ndarray, axis: int | None) -> np.ndarray:
    return a.reshape(-1)[order] if axis is None else np.take_along_axis(a, order, axis)


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.itemsize}") if a.dtype.kind == "f" else a


def raw(a: np.ndarray) -> np.ndarray:
    """The bytes of ``a``: values compared bit for bit (NaNs too)."""
    return np.ascontiguousarray(a).view(np.uint8)


def assert_same_keys(out: np.ndarray, want: np.ndarray) -> None:
    """Equal bit for bit, but any NaN as the canonical one (parskel's NaNs come back canonical)."""
    assert out.dtype == want.dtype and out.shape == want.shape
    if want.dtype.kind == "f":
        want = np.where(np.isnan(want), want.dtype.type(np.nan), want)
        nans = np.isnan(out)
        assert (bits(out[nans]) == CANONICAL_NAN[out.itemsize]).all(), "NaNs come back canonical"
    np.testing.assert_array_equal(bits(out), bits(want))


@st.composite
def keys_and_axis(draw, dtypes=SORTABLE, max_side: int = 40):
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=max_side))
    keys = draw(arrays(dtype, shape))
    axis = draw(st.sampled_from([None, *range(-keys.ndim, keys.ndim)]))
    return keys, axis


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(case=keys_and_axis())
def test_sort_and_argsort_along_any_axis(device, case) -> None:
    keys, axis = case
    original = keys.copy()
    order = reference_order(keys, axis)
    assert_same_keys(ps.sort(keys, axis=axis, device=device), taken(keys, order, axis))
    positions = ps.argsort(keys, axis=axis, device=device)
    assert positions.dtype == np.int64
    np.testing.assert_array_equal(positions, order)
    np.testing.assert_array_equal(bits(keys), bits(original))


@SETTINGS
@given(case=keys_and_axis(max_side=25), value_dtype=st.sampled_from(VALUE_DTYPES), data=st.data())
def test_values_move_with_their_keys(device, case, value_dtype, data) -> None:
    keys, axis = case
    values = data.draw(arrays(value_dtype, keys.shape))
    original = values.copy()
    order = reference_order(keys, axis)
    out_keys, out_values = ps.sort(keys, values, axis=axis, device=device)
    assert_same_keys(out_keys, taken(keys, order, axis))
    assert out_values.dtype == values.dtype
    np.testing.assert_array_equal(raw(out_values), raw(taken(values, order, axis)))
    np.testing.assert_array_equal(raw(values), raw(original))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1,), (3, 1)])
def test_a_lone_nan_comes_back_canonical(device, dtype, shape) -> None:
    """Rows of one key move nothing, and still give back their NaNs as the sorting kernels do."""
    word = np.dtype(f"u{np.dtype(dtype).itemsize}")
    negative = np.full(shape, CANONICAL_NAN[word.itemsize] | (1 << (8 * word.itemsize - 1)), word).view(dtype)
    keys_out = ps.sort(negative, axis=-1, device=device)
    pairs_out, values_out = ps.sort(negative, np.arange(negative.size).reshape(shape), axis=-1, device=device)
    for out in (keys_out, pairs_out):
        assert (out.view(word) == CANONICAL_NAN[word.itemsize]).all()
    np.testing.assert_array_equal(values_out, np.arange(negative.size).reshape(shape))
    assert (negative.view(word) >> (8 * word.itemsize - 1) == 1).all()  # the input is untouched


@pytest.mark.parametrize("variant", [v.name for v in ps.algorithms.variants("sort")])
def test_every_variant_gives_a_lone_nan_back_canonical(device, variant) -> None:
    unmet = ps.algorithms.get("sort", variant).unmet(device)
    if unmet:
        pytest.skip(f"sort/{variant} does not run on {device.id}: {', '.join(unmet)}")
    negative = np.array([0xFFC00000], np.uint32).view(np.float32)
    out = ps.sort(negative, variant=variant, device=device)
    assert out.view(np.uint32).tolist() == [CANONICAL_NAN[4]]


def extremes(dtype: np.dtype) -> list:
    if dtype.kind == "b":
        return [True, False]
    if dtype.kind == "f":
        info = np.finfo(dtype)
        return [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, info.max, info.min, info.smallest_subnormal, 1.0, -1.0]
    info = np.iinfo(dtype)
    return [0, 1, info.max, info.min, info.max - 1, info.min + 1, *([-1] if info.min < 0 else [])]


@pytest.mark.parametrize("dtype", SORTABLE, ids=str)
def test_extreme_keys(device, rng, dtype) -> None:
    keys = rng.permutation(np.repeat(np.array(extremes(dtype), dtype=dtype), 29))
    if dtype.kind == "f":  # a NaN with a payload, and one with the sign bit
        raw = keys.view(f"u{dtype.itemsize}")
        raw[:3] = CANONICAL_NAN[dtype.itemsize] | 1
        raw[3] = CANONICAL_NAN[dtype.itemsize] | 1 << (8 * dtype.itemsize - 1)
    order = reference_order(keys, 0)
    assert_same_keys(ps.sort(keys, device=device), keys[order])
    np.testing.assert_array_equal(ps.argsort(keys, device=device), order)


@pytest.mark.parametrize("dtype", [np.int16, np.float32, np.uint64], ids=str)
def test_many_rows(device, rng, dtype) -> None:
    """More rows than fit above a 16-bit key (the row becomes a word of its own), and 32- and
    64-bit keys whose row is a third word."""
    keys = (rng.standard_normal((70_000, 3)) * 1000).astype(dtype)
    np.testing.assert_array_equal(ps.sort(keys, device=device), np.sort(keys, kind="stable"))
    np.testing.assert_array_equal(ps.argsort(keys, axis=1, device=device), np.argsort(keys, axis=1, kind="stable"))


@pytest.mark.parametrize("variant", sorted(_BUFFER_SORTS))
def test_every_variant_that_sorts_words(device, rng, variant) -> None:
    keys = rng.integers(-(2**62), 2**62, (3, 1000), dtype=np.int64)
    keys[:, ::7] = keys[0, 0]  # equal keys, in order by their positions
    values = rng.standard_normal(keys.shape)
    order = np.argsort(keys, axis=1, kind="stable")
    out_keys, out_values = ps.sort(keys, values, variant=variant, device=device)
    np.testing.assert_array_equal(out_keys, np.take_along_axis(keys, order, 1))
    np.testing.assert_array_equal(out_values, np.take_along_axis(values, order, 1))
    small = rng.integers(0, 100, 3000).astype(np.uint8)
    np.testing.assert_array_equal(ps.argsort(small, variant=variant, device=device), np.argsort(small, kind="stable"))


def test_bitonic_sorts_32_bit_keys_only(device) -> None:
    with pytest.raises(VariantError, match="32-bit keys only"):
        ps.sort(np.arange(10, dtype=np.int64), variant="bitonic", device=device)


def test_lists_and_kinds(device) -> None:
    assert ps.sort([3, 1, 2], kind="quicksort", device=device).tolist() == [1, 2, 3]
    assert ps.argsort([2.5, -1.0, 2.5], kind="mergesort", device=device).tolist() == [1, 0, 2]


def test_bad_input_raises_before_any_kernel(device) -> None:
    keys = np.arange(6, dtype=np.int64).reshape(2, 3)
    cases = [
        (DTypeError, "float16", lambda: ps.sort(keys.astype(np.complex64), device=device)),
        (DTypeError, "native byte order", lambda: ps.argsort(keys.astype(">i8"), device=device)),
        (DTypeError, "1, 2, 4, 8 or 16 bytes", lambda: ps.sort(keys, keys.astype("U1"), device=device)),
        (ShapeError, "keys' shape", lambda: ps.sort(keys, keys.T, device=device)),
        (ShapeError, "out of bounds", lambda: ps.sort(keys, axis=2, device=device)),
        (ShapeError, "out of bounds", lambda: ps.argsort(keys, axis=-3, device=device)),
        (ShapeError, "axis=None", lambda: ps.sort(np.int64(3), device=device)),
        (ArgumentError, "axis must be", lambda: ps.sort(keys, axis=1.0, device=device)),
        (ArgumentError, "kind", lambda: ps.argsort(keys, kind="bogo", device=device)),
    ]
    with device.record() as rec:
        for error, text, call in cases:
            with pytest.raises(error, match=text):
                call()
    assert rec.timing.launches == 0


@pytest.mark.parametrize("dtype", [np.int16, np.uint32, np.float64, np.bool_], ids=str)
def test_rows_each_sorted_in_local_memory(device, rng, dtype) -> None:
    """Rows of up to 4096 keys sorted by a work-group each (local_bitonic; the default on GPUs),
    one word after the other for 64-bit keys."""
    keys = (rng.standard_normal((40, 300)) * 50).astype(dtype)
    values = rng.standard_normal(keys.shape).astype(np.float32)
    order = reference_order(keys, 1)
    out_keys, out_values = ps.sort(keys, values, variant="local_bitonic", device=device)
    np.testing.assert_array_equal(out_keys, np.take_along_axis(keys, order, 1))
    np.testing.assert_array_equal(out_values, np.take_along_axis(values, order, 1))
    np.testing.assert_array_equal(ps.argsort(keys, axis=1, variant="local_bitonic", device=device), order)
    np.testing.assert_array_equal(ps.sort(keys, axis=0, variant="local_bitonic", device=device), np.sort(keys, axis=0))
