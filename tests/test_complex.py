"""Complex element types in containers and skeletons: user functions in C name them cfloat and
cdouble and compute with the cfloat_* and cdouble_* functions of kernels/common/complex.h."""

from __future__ import annotations

import numpy as np
import pytest

import parskel as ps
from parskel.errors import UserFunctionError
from test_cuda import NVRTC, NVRTC_WHY, captured_builds, nvrtc_build

TYPES = [(np.complex64, "cfloat", 1e-5), (np.complex128, "cdouble", 1e-12)]


def numbers(rng, n: int, dtype) -> np.ndarray:
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)


@pytest.mark.parametrize("dtype, c, rtol", TYPES, ids=["complex64", "complex128"])
def test_skeletons_compute_with_complex_numbers(device, rng, dtype, c, rtol) -> None:
    if dtype == np.complex128 and not device.info.fp64:
        pytest.skip(f"{device.id} has no double precision")
    z, w = numbers(rng, 1001, dtype), numbers(rng, 1001, dtype)
    v, u = ps.Vector(z, device=device), ps.Vector(w, device=device)
    assert v.c_type == c
    square = ps.Map(f"{c} f({c} x) {{ return {c}_mul(x, x); }}")(v)
    np.testing.assert_allclose(square.numpy(), z * z, rtol=rtol)
    quotient = ps.Zip(f"{c} f({c} a, {c} b) {{ return {c}_div({c}_conj(a), b); }}")(v, u)
    np.testing.assert_allclose(quotient.numpy(), np.conj(z) / w, rtol=rtol)
    scaled = ps.Map(f"{c} f({c} x, {c} s) {{ return {c}_mul(x, s); }}")(v, 2 - 1j)
    np.testing.assert_allclose(scaled.numpy(), z * (2 - 1j), rtol=rtol)
    real = "float" if c == "cfloat" else "double"
    magnitude = ps.Map(f"{real} f({c} x) {{ return {c}_abs(x); }}")(v)
    np.testing.assert_allclose(magnitude.numpy(), np.abs(z), rtol=rtol)
    add = f"{c} add({c} a, {c} b) {{ return {c}_add(a, b); }}"
    total = ps.Reduce(add, identity=0)(v)
    np.testing.assert_allclose(total, z.sum(), rtol=rtol * 100)
    sums, grand = ps.Scan(add, identity=0, inclusive=True)(v)
    np.testing.assert_allclose(sums.numpy(), np.cumsum(z), rtol=rtol * 100, atol=rtol * 100)
    np.testing.assert_allclose(grand, z.sum(), rtol=rtol * 100)
    blurred = ps.MapOverlap(f"{c} f(const {c} *w) {{ return {c}_add(w[-1], w[1]); }}", radius=1, boundary="clamp")(v)
    padded = np.concatenate([z[:1], z, z[-1:]])
    np.testing.assert_allclose(blurred.numpy(), padded[:-2] + padded[2:], rtol=rtol)
    product = ps.MapReduce(f"{c} f({c} x) {{ return {c}_exp({c}_rmul(0.001, x)); }}", add, identity=0)(v)
    np.testing.assert_allclose(product, np.exp(0.001 * z.astype(np.complex128)).sum(), rtol=rtol * 100)


def test_a_python_function_of_complex_numbers_says_to_write_c(device) -> None:
    v = ps.Vector(np.ones(3, np.complex64), device=device)
    with pytest.raises(UserFunctionError, match="cfloat"):
        ps.Map(lambda x: x * x)(v)


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_complex_skeletons_build_with_nvrtc(monkeypatch) -> None:
    dev, captured = captured_builds(monkeypatch)
    for dtype, c in (("complex64", "cfloat"), ("complex128", "cdouble")):
        v = ps.Vector(np.ones(5, dtype), device=dev)
        ps.Map(f"{c} f({c} x) {{ return {c}_exp({c}_mul(x, x)); }}")(v)
        ps.Reduce(f"{c} add({c} a, {c} b) {{ return {c}_add(a, b); }}", identity=0)(v)
    assert len(captured) >= 4
    for source in captured:
        log, ptx = nvrtc_build(source)
        assert ".entry" in ptx, log
