"""Bad and unusual input at the public API: every case gives a correct result or a clear parskel
error (these came from an audit of 245 such calls)."""

from __future__ import annotations

import numpy as np
import pytest

import parskel as ps
from parskel.algorithms import registry
from parskel.errors import (
    ArgumentError,
    DeviceMemoryError,
    DeviceNotFoundError,
    DTypeError,
    ParskelError,
    ShapeError,
    VariantError,
)


def test_a_list_of_ints_sorts_like_numpy(device):
    got = ps.sort([3, -1, 2], device=device)
    np.testing.assert_array_equal(got, np.sort([3, -1, 2]))
    assert got.dtype == np.sort([3, -1, 2]).dtype
    keys, values = ps.sort([3, 1, 2, 1], [10, 20, 30, 40], device=device)
    np.testing.assert_array_equal(keys, [1, 1, 2, 3])
    np.testing.assert_array_equal(values, [20, 40, 30, 10])


def test_a_list_beyond_int32_sorts_as_int64(device):
    got = ps.sort([2**40, -1, 1], device=device)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [-1, 1, 2**40])


@pytest.mark.parametrize("flag", ["no", 1, None])
def test_scan_flags_must_be_booleans(device, flag):
    with pytest.raises(ArgumentError, match="inclusive"):
        ps.scan(np.ones(4, np.int32), inclusive=flag, device=device)
    with pytest.raises(ArgumentError, match="inclusive"):
        ps.Scan("int add(int a, int b) { return a + b; }", inclusive=flag)


@pytest.mark.parametrize("spec", [0, 1.5, ["cpu"]])
def test_a_device_named_by_a_non_string_lists_the_devices(spec):
    with pytest.raises(DeviceNotFoundError, match=r"opencl:0:0|cuda:0"):
        ps.device(spec)


@pytest.mark.parametrize("shape", ["10", 2.5, -3, True, (2, "x")])
def test_generate_refuses_shapes_that_are_not_whole_numbers(device, shape):
    g = ps.Generate("float f(ps_index i) { return i; }")
    with pytest.raises(ShapeError, match="sizes"):
        g(shape, device=device)


def test_generate_takes_numpy_integers(device):
    g = ps.Generate("float f(ps_index i) { return 2 * i; }")
    np.testing.assert_array_equal(g(np.int64(4), device=device).numpy(), [0, 2, 4, 6])
    assert g((np.int32(2), np.uint8(3)), device=device).shape == (2, 3)


@pytest.mark.parametrize("size", [2.5, "3", -1])
def test_vector_sizes_are_whole_numbers(device, size):
    with pytest.raises(ShapeError):
        ps.Vector(size=size, dtype=np.float32, device=device)


@pytest.mark.parametrize("size", [2.5, "3", -1])
def test_scatter_sizes_are_whole_numbers(device, size):
    v = ps.Vector(np.arange(4, dtype=np.int32), device=device)
    p = ps.Vector(np.arange(4, dtype=np.uint32), device=device)
    with pytest.raises(ShapeError, match="Scatter: size"):
        ps.Scatter()(v, p, size=size)


def test_scatter_needs_one_position_per_value(device):
    v = ps.Vector(np.arange(4, dtype=np.int32), device=device)
    p = ps.Vector(np.arange(6, dtype=np.uint32), device=device)
    with pytest.raises(ShapeError, match="4 values and 6 positions"):
        ps.Scatter()(v, p, size=8)


def test_running_out_of_memory_everywhere_is_a_memory_error(device):
    def exhausted(variant, params):
        raise DeviceMemoryError(f"{variant.name} needs more than there is")

    with pytest.raises(DeviceMemoryError, match="no sort variant"):
        registry.dispatch("sort", device, None, {}, exhausted)


def test_mixed_failures_stay_a_variant_error(device):
    calls = []

    def fails(variant, params):
        calls.append(variant.name)
        raise (DeviceMemoryError if len(calls) == 1 else VariantError)("no")

    with pytest.raises(VariantError) as caught:
        registry.dispatch("sort", device, None, {}, fails)
    assert not isinstance(caught.value, DeviceMemoryError)


def test_every_error_is_a_parskel_error():
    for error in (ArgumentError, DeviceMemoryError, DeviceNotFoundError, DTypeError, ShapeError, VariantError):
        assert issubclass(error, ParskelError)
