"""The first kernels: seed 000's vector_add, seed 003's SAXPY and its work-item mappings."""

from __future__ import annotations

import numpy as np
import pytest

import parskel as ps
from parskel.errors import ShapeError


def test_chapter2_sample(device):
    n = 1024
    a = np.arange(n, dtype=np.float32)
    b = (n - np.arange(n)).astype(np.float32)
    c = ps.vector_add(a, b, device=device)
    np.testing.assert_array_equal(c, np.full(n, n, dtype=np.float32))


@pytest.mark.parametrize("n", [0, 1, 255, 257, 4097])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.int64])
def test_vector_add_any_size(device, rng, n, dtype):
    a = rng.integers(0, 100, n).astype(dtype)
    b = rng.integers(0, 100, n).astype(dtype)
    np.testing.assert_array_equal(ps.vector_add(a, b, device=device), a + b)


@pytest.mark.parametrize("n", [0, 1, 17, 1000, 70001])
def test_saxpy(device, rng, n):
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    y_before = y.copy()
    out = ps.saxpy(2.5, x, y, device=device)
    np.testing.assert_allclose(out, np.float32(2.5) * x + y, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(y, y_before)


def test_mismatched_inputs_are_refused(device):
    with pytest.raises(ShapeError):
        ps.vector_add(np.zeros(3, np.float32), np.zeros(4, np.float32), device=device)
    with pytest.raises(ShapeError):
        ps.saxpy(1.0, np.zeros(3, np.float32), np.zeros(3, np.float64), device=device)


# seed 003's figures, W = 24 ------------------------------------------------------------------


def test_one_to_one(device):
    np.testing.assert_array_equal(ps.work_item_mapping("one_to_one", 24, device=device), np.arange(24))


def test_contiguous_two_per_item(device):
    want = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11]
    np.testing.assert_array_equal(ps.work_item_mapping("contiguous", 24, 2, device=device), want)


def test_strided_two_per_item(device):
    want = list(range(12)) * 2
    np.testing.assert_array_equal(ps.work_item_mapping("strided", 24, 2, device=device), want)


def test_locally_spaced_groups_of_four(device):
    # work-groups of 4 items, 2 elements each: group g owns 8 elements, item l owns l and l + 4
    want = [0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7, 8, 9, 10, 11, 8, 9, 10, 11]
    np.testing.assert_array_equal(ps.work_item_mapping("locally_spaced", 24, 2, 4, device=device), want)


@pytest.mark.parametrize("per_item", [1, 3, 8])
def test_mappings_against_their_formulas(device, per_item):
    size, local = 96 * per_item, 8
    items = size // per_item
    index = np.arange(size)
    want = {
        "contiguous": index // per_item,
        "strided": index % items,
        "locally_spaced": (index // (per_item * local)) * local + index % local,
    }
    for kind, expected in want.items():
        got = ps.work_item_mapping(kind, size, per_item, local if kind == "locally_spaced" else None, device=device)
        np.testing.assert_array_equal(got, expected, err_msg=kind)


def test_mapping_arguments_are_checked(device):
    with pytest.raises(ShapeError):
        ps.work_item_mapping("contiguous", 25, 2, device=device)
    with pytest.raises(ShapeError):
        ps.work_item_mapping("locally_spaced", 24, 2, 5, device=device)
    with pytest.raises(ShapeError):
        ps.work_item_mapping("diagonal", 24, device=device)  # type: ignore[arg-type]
