"""NumPy's matmul beyond two float matrices: stacks broadcast against each other, 1D operands,
and every numeric dtype, mixed, with NumPy's result types; against ``np.matmul``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays, from_dtype, mutually_broadcastable_shapes

import parskel as ps
from parskel.algorithms import batched
from parskel.algorithms.batched import MATMUL_TYPES


def elements(dtype: np.dtype) -> st.SearchStrategy:
    if dtype.kind == "c":
        return st.complex_numbers(max_magnitude=100, allow_nan=False, allow_infinity=False)
    if dtype.kind == "f":
        bound = 4.0 if dtype == np.float16 else 100.0
        return st.floats(-bound, bound, width=16 if dtype == np.float16 else 32)
    return from_dtype(dtype)


def assert_product(out: np.ndarray, a: np.ndarray, b: np.ndarray, *, flushes: bool = False) -> None:
    want = np.matmul(a, b)
    assert out.dtype == want.dtype and np.shape(out) == np.shape(want)
    if want.dtype.kind not in "fc":
        np.testing.assert_array_equal(out, want)
        return
    # within the rounding of a length-k sum, of the products' magnitudes (the exact product in
    # float64 or complex128: NumPy's float16 rounds every step, parskel's only the result), and
    # where results are subnormal, of the spacing there: a subnormal per step. A device that
    # ``flushes`` float32 subnormals to zero (CUDA: CuPy builds every kernel with -ftz=true, as
    # its own) may lose a subnormal product or sum whole: up to the smallest normal number.
    exact = np.complex128 if want.dtype.kind == "c" else np.float64
    k = max(a.shape[-1], 1)
    info = np.finfo(want.dtype)
    bound = 2 * k * info.eps * np.matmul(np.abs(a.astype(exact)), np.abs(b.astype(exact)))
    single = want.dtype in (np.float32, np.complex64)
    spacing = 2 * k * float(info.tiny if flushes and single else info.smallest_subnormal)
    assert np.all(np.abs(out - np.matmul(a.astype(exact), b.astype(exact))) <= bound + spacing)


@st.composite
def operands(draw):
    shapes = draw(mutually_broadcastable_shapes(signature=np.matmul.signature, max_dims=2, max_side=9))
    # b of a's dtype or of a few others: every pair would be as many kernels to build
    a_type = draw(st.sampled_from(MATMUL_TYPES))
    b_type = draw(st.sampled_from([a_type, np.dtype(np.int8), np.dtype(np.float32), np.dtype(np.complex128)]))
    a = draw(arrays(a_type, shapes.input_shapes[0], elements=elements(a_type)))
    b = draw(arrays(b_type, shapes.input_shapes[1], elements=elements(b_type)))
    return a, b


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ab=operands())
def test_matmul_of_stacks_and_dtypes(device, ab) -> None:
    a, b = ab
    if np.result_type(a, b) in (np.float64, np.complex128) and not device.info.fp64:
        return
    before = (a.copy(), b.copy())
    assert_product(ps.matmul(a, b, device=device), a, b, flushes=device.backend == "cuda")
    np.testing.assert_array_equal(a, before[0])
    np.testing.assert_array_equal(b, before[1])


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [((3, 1, 70, 40), (5, 40, 33)), ((200, 3, 4), (4, 5)), ((2, 66, 65), (2, 65, 67)), ((4, 3), (3,))],
    ids=["broadcast", "many_small", "large_by_variants", "matrix_vector"],
)
def test_float_stacks(device, rng, a_shape, b_shape) -> None:
    """Stacks of float32 products, on the batched kernel and (large ones) through the variants."""
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    assert_product(ps.matmul(a, b, device=device), a, b)
    assert_product(ps.matmul(a, b, variant="naive", device=device), a, b)


def test_integer_products_wrap_around_as_numpy(device, rng) -> None:
    a = rng.integers(-(2**31), 2**31, (3, 17, 19), dtype=np.int64)
    b = rng.integers(0, 2**64, (19, 5), dtype=np.uint64)
    assert_product(ps.matmul(a, b, device=device), a, b)  # int64 @ uint64 is float64 in NumPy
    c = rng.integers(-128, 128, (17, 300), dtype=np.int8)
    assert_product(ps.matmul(c, c.T, device=device), c, c.T)


@pytest.mark.parametrize("tiles", [True, False], ids=["staged", "direct"])
def test_both_kernels_of_every_dtype(device, rng, monkeypatch, tiles) -> None:
    """The batched kernel with tiles staged in local memory (GPUs, large products) and without
    (small products on CPUs), whichever this device would choose."""
    monkeypatch.setattr(batched, "stages_tiles", lambda device, work: tiles)
    for a_type, b_type in (
        (np.int16, np.uint8),
        (np.bool_, np.bool_),
        (np.float16, np.float32),
        (np.complex64, np.int8),
    ):
        a = (rng.standard_normal((2, 19, 37)) * 4).astype(a_type)
        b = (rng.standard_normal((37, 21)) * 4).astype(b_type)
        if np.dtype(a_type).kind == "c":
            a = a + 1j * rng.standard_normal(a.shape).astype(a_type)
        assert_product(ps.matmul(a, b, device=device), a, b)
