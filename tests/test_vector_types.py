"""OpenCL vector element types (ps.float4, ps.uchar4, ...) in containers and skeletons: user
functions in C take and return them by their OpenCL names and compute lane by lane, against
NumPy computing on the lanes as an array's last axis."""

from __future__ import annotations

import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.lib.recfunctions import structured_to_unstructured

import parskel as ps
from parskel.containers.structs import element_c_type
from parskel.errors import DTypeError, ShapeError, UserFunctionError
from test_cuda import NVRTC, NVRTC_WHY, captured_builds, nvrtc_build
from test_primitives import no_kernel_runs

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# one of each width class: 2, 3 (stored as 4), 4, 8 and 16 lanes, integers and floats
NAMES = ["float4", "uchar4", "int2", "double3", "float16", "long8", "ushort3"]
SIZES = st.sampled_from([0, 1, 2, 255, 256, 257, 1001]) | st.integers(0, 700)


def lanes_of(name: str) -> tuple[np.dtype, int]:
    dtype = getattr(ps, name)
    return dtype.fields[dtype.names[0]][0], len(dtype.names)


def lanes(records: np.ndarray) -> np.ndarray:
    """The lanes of vector records as the last axis of a plain array."""
    return structured_to_unstructured(np.asarray(records))


def small_lanes(rng, name: str, n: int) -> np.ndarray:
    """(n, lanes) small whole numbers of the lane type: float sums stay exact, integer ones wrap
    as C's do."""
    base, count = lanes_of(name)
    low = 0 if base.kind == "u" else -20
    return rng.integers(low, 20, (n, count)).astype(base)


def skip_without_fp64(device, name: str) -> None:
    if name.startswith("double") and not device.info.fp64:
        pytest.skip(f"{device.id} has no double precision")


_SKELETONS: dict[str, tuple] = {}


def skeletons(name: str) -> tuple:
    """One set of skeletons per type, kept across examples (their kernels are built once)."""
    if name not in _SKELETONS:
        add = f"{name} add({name} a, {name} b) {{ return a + b; }}"
        _SKELETONS[name] = (
            ps.Map(f"{name} f({name} p, {name} s) {{ return p * ({name})(2) + s; }}"),
            ps.Zip(f"{name} f({name} p, {name} q) {{ return p * q - q; }}"),
            ps.Reduce(add, identity=0),
            ps.Scan(add, identity=0, inclusive=False),
        )
    return _SKELETONS[name]


@SETTINGS
@given(name=st.sampled_from(NAMES), n=SIZES, seed=st.integers(0, 2**16))
def test_skeletons_compute_lane_by_lane(device, name, n, seed) -> None:
    skip_without_fp64(device, name)
    rng = np.random.default_rng(seed)
    base, count = lanes_of(name)
    a, b = small_lanes(rng, name, n), small_lanes(rng, name, n)
    before = a.copy()
    v = ps.Vector(a, dtype=getattr(ps, name), device=device)
    u = ps.Vector(b, dtype=getattr(ps, name), device=device)
    assert v.c_type == name and v.shape == (n,)
    scale, zip_, total, scan = skeletons(name)
    shift = np.arange(1, count + 1)
    np.testing.assert_array_equal(
        lanes(scale(v, tuple(shift.tolist())).numpy()), (a * base.type(2) + shift.astype(base))
    )
    np.testing.assert_array_equal(lanes(zip_(v, u).numpy()), a * b - b)
    np.testing.assert_array_equal(lanes(np.array([total(v)])), np.add.reduce(a, axis=0, dtype=base, keepdims=True))
    sums, grand = scan(v)
    want = np.cumsum(a, axis=0, dtype=base)
    np.testing.assert_array_equal(lanes(sums.numpy()), np.concatenate([np.zeros((1, count), base), want[:-1]])[:n])
    np.testing.assert_array_equal(lanes(np.array([grand])), np.add.reduce(a, axis=0, dtype=base, keepdims=True))
    np.testing.assert_array_equal(a, before)


def test_lanes_by_name_literals_and_builtins(device, rng) -> None:
    a = rng.standard_normal((301, 4)).astype(np.float32)
    v = ps.Vector(a, dtype=ps.float4, device=device)
    swapped = ps.Map("float4 f(float4 p) { return (float4)(p.w, p.z, p.s1, p.s0); }")(v)
    np.testing.assert_array_equal(lanes(swapped.numpy()), a[:, ::-1])
    portable = ps.Map("float4 f(float4 p) { return PS_VEC(float4, p.x, 0.0f, 0.0f, 1.0f) * 3.0f; }")(v)
    np.testing.assert_array_equal(
        lanes(portable.numpy()), np.stack([a[:, 0] * 3, 0 * a[:, 0], 0 * a[:, 0], 3 + 0 * a[:, 0]], 1)
    )
    norms = ps.Map("float f(float4 p) { return length(p); }")(v)
    np.testing.assert_allclose(norms.numpy(), np.linalg.norm(a, axis=1), rtol=1e-5)
    largest = ps.Reduce("float4 f(float4 a, float4 b) { return fmax(a, b); }", identity=-np.inf)(v)
    np.testing.assert_array_equal(lanes(np.array([largest]))[0], a.max(axis=0))
    power = ps.MapReduce(
        "float f(float4 p) { return dot(p, p); }", "float add(float a, float b) { return a + b; }", identity=0
    )(v)
    np.testing.assert_allclose(power, (a.astype(np.float64) ** 2).sum(), rtol=1e-5)
    ramp = ps.Generate("float4 f(ps_index i) { return (float4)((float)i, 1.0f, 2.0f, -(float)i); }")(5, device=device)
    k = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(lanes(ramp.numpy()), np.stack([k, k * 0 + 1, k * 0 + 2, -k], 1))
    blurred = ps.MapOverlap("float4 f(const float4 *w) { return w[-1] + w[1]; }", radius=1, boundary="clamp")(v)
    padded = np.concatenate([a[:1], a, a[-1:]])
    np.testing.assert_array_equal(lanes(blurred.numpy()), padded[:-2] + padded[2:])


def test_a_matrix_of_pixels(device, rng) -> None:
    rgba = rng.integers(0, 256, (7, 13, 4)).astype(np.uint8)
    image = ps.Matrix(rgba, dtype=ps.uchar4, device=device)
    assert image.shape == (7, 13) and image.c_type == "uchar4"
    gray = ps.Map("uchar f(uchar4 p) { return (uchar)(((uint)p.x + p.y + p.z) / 3); }")(image)
    np.testing.assert_array_equal(gray.numpy(), (rgba[..., :3].astype(np.uint32).sum(-1) // 3).astype(np.uint8))
    opaque = ps.Map("uchar4 f(uchar4 p, ps_index r, ps_index c) { return (uchar4)(p.x, (uchar)r, (uchar)c, 255); }")
    got = lanes(opaque(image).numpy())
    rows, cols = np.indices((7, 13))
    np.testing.assert_array_equal(got, np.stack([rgba[..., 0], rows, cols, np.full((7, 13), 255)], -1).astype(np.uint8))
    brighter = ps.Map("uchar4 f(uchar4 p) { return add_sat(p, (uchar4)(40)); }")(image)
    np.testing.assert_array_equal(lanes(brighter.numpy()), np.minimum(rgba.astype(int) + 40, 255).astype(np.uint8))


def test_containers_take_records_or_lanes_as_the_last_axis(device) -> None:
    components = np.arange(24, dtype=np.float32).reshape(6, 4)
    records = np.zeros(6, ps.float4)
    for k, lane in enumerate("xyzw"):
        records[lane] = components[:, k]
    for data in (records, components, components.tolist(), components.astype(np.int64)):
        v = ps.Vector(data, dtype=ps.float4, device=device)
        np.testing.assert_array_equal(v.numpy(), records)
        assert v.dtype == ps.float4 and v.numpy().dtype.metadata == ps.float4.metadata
    np.testing.assert_array_equal(ps.Vector(records, device=device).numpy(), records)
    borrowed = ps.Vector(components, dtype=ps.float4, copy=False, device=device)
    assert np.shares_memory(borrowed.numpy(), components)  # the lanes array itself, viewed as records
    three = ps.Vector(components[:, :3], dtype=ps.float3, device=device)
    assert ps.float3.itemsize == 16 and three.nbytes == 6 * 16
    np.testing.assert_array_equal(lanes(three.numpy()), components[:, :3])
    assert ps.Matrix(components.reshape(2, 3, 4), dtype=ps.float4, device=device).shape == (2, 3)
    volume = ps.Tensor3(components.reshape(1, 2, 3, 4), dtype=ps.float4, device=device)
    doubled = ps.Map("float4 f(float4 p) { return p + p; }")(volume)
    assert doubled.shape == (1, 2, 3)
    np.testing.assert_array_equal(lanes(doubled.numpy()), 2 * components.reshape(1, 2, 3, 4))
    with pytest.raises(ShapeError, match="last axis holds the 4 lanes"):
        ps.Vector(np.ones((3, 3), np.float32), dtype=ps.float4, device=device)
    with pytest.raises(ShapeError, match="last axis"):
        ps.Vector(np.float32(1), dtype=ps.float4, device=device)


def test_a_dtype_of_a_vectors_layout_is_that_vector_unless_a_struct_has_it() -> None:
    plain = np.dtype([("x", np.float32), ("y", np.float32)])  # ps.float2's layout, no metadata
    assert plain == ps.float2 and plain.metadata is None
    assert element_c_type(plain) == "float2"
    point = ps.struct("vt_point", [(lane, np.float32) for lane in "xyzw"])
    assert point == ps.float4
    assert element_c_type(point) == "vt_point" and element_c_type(ps.float4) == "float4"
    with pytest.raises(DTypeError, match="cannot be a C struct name"):
        ps.struct("float4", [("a", np.float32)])


def test_double_vectors_need_double_precision() -> None:
    no_fp64 = types.SimpleNamespace(id="fake:0", name="no fp64", info=types.SimpleNamespace(fp64=False))
    with pytest.raises(DTypeError, match=r"fp64.*double4"):
        element_c_type(ps.double4, no_fp64)  # type: ignore[arg-type]
    assert element_c_type(ps.float4, no_fp64) == "float4"  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["double4", "float16", "char16", "long3"])
def test_host_memory_that_is_not_aligned_for_the_vectors(device, name) -> None:
    """A borrowed array need not start at a multiple of its vectors' size (64 bytes for a
    float16), which kernels assume: the device then works on an aligned copy."""
    skip_without_fp64(device, name)
    dtype = getattr(ps, name)
    base, count = lanes_of(name)
    raw = np.zeros(33 * dtype.itemsize + 128, np.uint8)
    for shift in (0, 8, 16, 32):
        start = (-raw.ctypes.data) % 64 + shift
        data = raw[start : start + 33 * dtype.itemsize].view(dtype)
        data[:] = np.zeros(33, dtype)
        for k, lane in enumerate(dtype.names):
            data[lane] = (np.arange(33) * count + k).astype(base)
        before = data.copy()
        v = ps.Vector(data, copy=False, device=device)
        doubled = ps.Map(f"{name} f({name} p) {{ return p + p; }}")(v)
        np.testing.assert_array_equal(lanes(doubled.numpy()), lanes(before) * base.type(2))
        np.testing.assert_array_equal(data, before)


def test_extra_arguments_are_vectors_lanes_or_one_number(device) -> None:
    v = ps.Vector(np.ones((3, 4), np.int32), dtype=ps.int4, device=device)
    scale = ps.Map("int4 f(int4 p, int4 s) { return p * s; }")
    for value, want in (((1, 2, 3, 4), [1, 2, 3, 4]), (np.array([5, 6, 7, 8]), [5, 6, 7, 8]), (3, [3, 3, 3, 3])):
        np.testing.assert_array_equal(lanes(scale(v, value).numpy()), np.tile(want, (3, 1)))
    record = np.array([(9, 8, 7, 6)], ps.int4)[0]
    np.testing.assert_array_equal(lanes(scale(v, record).numpy()), np.tile([9, 8, 7, 6], (3, 1)))
    table = ps.Vector(np.arange(8).reshape(2, 4), dtype=ps.int4, device=device)
    looked_up = ps.Map("int4 f(int4 p, __global const int4 *t) { return p + t[1]; }")(v, table)
    np.testing.assert_array_equal(lanes(looked_up.numpy()), np.tile([5, 6, 7, 8], (3, 1)))
    no_kernel_runs(device, lambda: scale(v, (1, 2, 3)), DTypeError, "give 4 lanes")
    no_kernel_runs(device, lambda: scale(v, (1, 2.5, 3, 4)), DTypeError, "lane y")
    no_kernel_runs(device, lambda: scale(v, 2**40), DTypeError, "does not fit")
    no_kernel_runs(device, lambda: scale(v, np.array([(1, 2)], ps.int2)[0]), DTypeError, "expects a int4")


def test_mismatched_types_and_scalar_operations_are_refused_before_any_kernel(device) -> None:
    v = ps.Vector(np.ones((5, 4), np.float32), dtype=ps.float4, device=device)
    wrong = ps.Map("float3 f(float3 p) { return p; }")
    no_kernel_runs(device, lambda: wrong(v), DTypeError, "declared 'float3'.*'float4'")
    no_kernel_runs(device, lambda: ps.sort(v), DTypeError, "keys must be")
    no_kernel_runs(device, lambda: ps.runtime.c_type(ps.float4), DTypeError, "float4 elements are vectors")
    with pytest.raises(DTypeError, match="copy=False views the lanes"):
        ps.Vector(np.ones((2, 4)), dtype=ps.float4, copy=False, device=device)


def test_python_functions_say_to_write_c(device) -> None:
    v = ps.Vector(np.ones((3, 4), np.float32), dtype=ps.float4, device=device)
    scalars = ps.Vector(np.ones(3, np.float32), device=device)
    for call in (
        lambda: ps.Map(lambda p: p)(v),
        lambda: ps.Reduce(lambda a, b: a + b, identity=0)(v),
        lambda: ps.Map(lambda x, t: x)(scalars, v),
        lambda: ps.Map(lambda x, s: x)(scalars, np.zeros(1, ps.float4)[0]),
        lambda: ps.MapOverlap(lambda w: w[0], radius=1)(v),
    ):
        no_kernel_runs(device, call, UserFunctionError, "write the function in C")


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_vector_skeletons_build_with_nvrtc(monkeypatch) -> None:
    dev, captured = captured_builds(monkeypatch)
    for name in ("float4", "uchar4", "double3", "float16"):
        base, count = lanes_of(name)
        v = ps.Vector(np.ones((5, count), base), dtype=getattr(ps, name), device=dev)
        add = f"{name} add({name} a, {name} b) {{ return a + b; }}"
        ps.Map(f"{name} f({name} p, {name} s) {{ return p * ({name})(2) + s - p.s0; }}")(v, 1)
        ps.Reduce(add, identity=0)(v)
        ps.Scan(add, identity=0)(v)
    v = ps.Vector(np.ones((5, 4), np.float32), dtype=ps.float4, device=dev)
    ps.Map("float4 f(float4 p) { return PS_VEC(float4, p.x, p.y, 0.0f, 1.0f) + (float4)(p.w); }")(v)
    ps.Reduce("float4 f(float4 a, float4 b) { return fmax(a, b); }", identity="(float4)(-INFINITY)")(v)
    ps.MapReduce(
        "float f(float4 p) { return dot(p, p); }", "float add(float a, float b) { return a + b; }", identity=0
    )(v)
    ps.Generate("float4 f(ps_index i) { return (float4)((float)i, 1.0f, 2.0f, 3.0f); }")(4, device=dev)
    ps.Map("uchar f(uchar4 p) { return add_sat(p, (uchar4)(40)).x; }")(
        ps.Vector(np.ones((3, 4)), dtype=ps.uchar4, device=dev)
    )
    assert len(captured) >= 14
    for source in captured:
        log, ptx = nvrtc_build(source)
        assert ".entry" in ptx, log
