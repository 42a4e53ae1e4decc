"""CPU baselines: every entry of the table against NumPy, with the GPU families' signatures."""

from __future__ import annotations

import numpy as np
import pytest

from parskel.bench.baselines import BASELINES
from parskel.errors import DTypeError, ShapeError

SIZES = [0, 1, 2, 17, 1000, 65537]


def _names(family: str) -> list[str]:
    return list(BASELINES[family])


def test_table_holds_the_three_families():
    assert set(BASELINES) == {"matmul", "scan", "sort"}
    assert {"naive_loop", "numpy"} <= set(BASELINES["matmul"])
    assert {"loop", "numpy"} <= set(BASELINES["scan"])
    assert {"radix", "numpy", "numpy_stable"} <= set(BASELINES["sort"])


# matmul -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", _names("matmul"))
@pytest.mark.parametrize("shape", [(0, 0, 0), (1, 1, 1), (3, 0, 2), (17, 33, 5), (64, 64, 64)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul(rng, name, shape, dtype):
    m, k, n = shape
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = BASELINES["matmul"][name](a, b)
    assert c.shape == (m, n) and c.dtype == dtype
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4 * max(k, 1))


@pytest.mark.parametrize("name", _names("matmul"))
def test_matmul_errors(name):
    with pytest.raises(ShapeError):
        BASELINES["matmul"][name](np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(DTypeError):
        BASELINES["matmul"][name](np.ones((2, 2), np.int32), np.ones((2, 2), np.int32))


# scan -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", _names("scan"))
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("inclusive", [False, True])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.float32])
def test_scan(rng, name, n, inclusive, dtype):
    x = rng.integers(-50, 50, n).astype(dtype)
    before = x.copy()
    y = BASELINES["scan"][name](x, inclusive=inclusive)
    expected = np.cumsum(x, dtype=dtype)
    if not inclusive:
        expected = np.concatenate([np.zeros(min(n, 1), dtype), expected[:-1]])
    assert y.dtype == dtype and y.shape == x.shape
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("name", _names("scan"))
def test_scan_wraps_int32_as_c_does(name):
    x = np.full(4, 2**30, np.int32)
    np.testing.assert_array_equal(
        BASELINES["scan"][name](x, inclusive=True), np.array([2**30, -(2**31), -(2**30), 0], np.int32)
    )


@pytest.mark.parametrize("name", _names("scan"))
def test_scan_errors(name):
    with pytest.raises(ShapeError):
        BASELINES["scan"][name](np.ones((2, 2), np.int32))
    with pytest.raises(DTypeError):
        BASELINES["scan"][name](np.array(["a"]))


# sort -------------------------------------------------------------------------------------


def _keys(rng: np.random.Generator, n: int, dtype: type) -> np.ndarray:
    if dtype == np.float32:
        keys = rng.standard_normal(n).astype(np.float32)
        specials = np.array([np.nan, np.inf, -np.inf, 0.0, -np.nan], np.float32)[: n // 4]
        keys[: specials.size] = specials
        return keys
    info = np.iinfo(dtype)
    keys = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    keys[: min(n, 2)] = [info.min, info.max][: min(n, 2)]
    return keys


def _bits(keys: np.ndarray) -> list[int]:
    """Keys as comparable ints; every NaN as one (a sort may drop NaN payloads and signs)."""
    bits = keys.view(np.uint32).copy()
    if keys.dtype == np.float32:
        bits[np.isnan(keys)] = 0x7FC00000
    return bits.tolist()


@pytest.mark.parametrize("name", _names("sort"))
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.float32])
def test_sort_keys(rng, name, n, dtype):
    keys = _keys(rng, n, dtype)
    before = keys.copy()
    out = BASELINES["sort"][name](keys)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, np.sort(keys))
    np.testing.assert_array_equal(keys, before)


@pytest.mark.parametrize("name", _names("sort"))
@pytest.mark.parametrize("n", [0, 1, 1000])
@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.float32])
def test_sort_pairs(rng, name, n, dtype):
    keys = _keys(rng, n, dtype)
    values = rng.standard_normal(n).astype(np.float32)
    out_keys, out_values = BASELINES["sort"][name](keys, values)
    np.testing.assert_array_equal(out_keys, np.sort(keys))
    # every (key, value) pair survives, whatever order equal keys get
    pairs = sorted(zip(_bits(keys), values.tolist()))
    assert sorted(zip(_bits(out_keys), out_values.tolist())) == pairs


@pytest.mark.parametrize("name", ["radix", "numpy_stable"])
def test_stable_sorts_keep_the_order_of_equal_keys(rng, name):
    keys = rng.integers(0, 8, 5000).astype(np.int32) - 4
    values = np.arange(keys.size, dtype=np.uint32)
    out_keys, out_values = BASELINES["sort"][name](keys, values)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(out_keys, keys[order])
    np.testing.assert_array_equal(out_values, values[order])


@pytest.mark.parametrize("name", _names("sort"))
def test_sort_errors(name):
    sort = BASELINES["sort"][name]
    with pytest.raises(DTypeError):
        sort(np.ones(3, np.float64))
    with pytest.raises(ShapeError):
        sort(np.ones((2, 2), np.uint32))
    with pytest.raises(ShapeError):
        sort(np.ones(3, np.uint32), np.ones(2, np.uint32))
