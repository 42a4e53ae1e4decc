"""Vector and Matrix: creation, lazy host/device coherence, host views, struct element types."""

from __future__ import annotations

import numpy as np
import pytest

import parskel as ps
from parskel.errors import DTypeError, ShapeError

POINT = ps.struct("point", [("x", np.float32), ("y", np.float32), ("id", np.int32)])


def test_vector_from_numpy_copies_and_reads_back(device, rng):
    x = rng.random(37).astype(np.float32)
    v = ps.Vector(x, device=device)
    x[0] = -1
    assert v.numpy()[0] != -1
    assert len(v) == 37 and v.shape == (37,) and v.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(v)[1:], x[1:])
    np.testing.assert_array_equal(v[3:7], x[3:7])


def test_creation_from_sequence_and_shape(device):
    assert ps.Vector([1, 2, 3], dtype=np.int16, device=device).numpy().tolist() == [1, 2, 3]
    z = ps.Vector(size=4, dtype=np.uint8, device=device)
    assert z.numpy().tolist() == [0, 0, 0, 0]
    m = ps.Matrix(shape=(2, 3), dtype=np.float32, device=device)
    assert m.shape == (2, 3) and len(m) == 2 and m.rows == 2 and m.cols == 3
    with pytest.raises(ShapeError):
        ps.Vector(np.zeros((2, 2)), device=device)
    with pytest.raises(ShapeError):
        ps.Matrix(np.zeros(3), device=device)


def test_numpy_view_is_read_only_and_writes_mark_the_device_stale(device):
    v = ps.Vector(np.arange(4, dtype=np.int32), device=device)
    with pytest.raises(ValueError):
        v.numpy()[0] = 5
    v.to_device()
    v[1] = 10
    double = ps.Map("int f(int x) { return 2 * x; }")
    assert double(v).numpy().tolist() == [0, 20, 4, 6]
    v.numpy(writable=True)[0] = 7
    assert double(v).numpy().tolist() == [14, 20, 4, 6]


def test_device_writes_make_the_host_stale(device):
    v = ps.Vector(np.zeros(5, dtype=np.float32), device=device)
    ps.Map("float f(float x) { return x + 1; }")(v, out=v)
    assert v.numpy().tolist() == [1] * 5
    buf = v.to_device()
    device.upload(buf, np.full(5, 3, dtype=np.float32), wait=True)
    v.mark_device_modified()
    assert v.numpy().tolist() == [3] * 5


@pytest.mark.parametrize(
    "dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]
)
def test_every_scalar_type_round_trips(device, dtype):
    if dtype == np.float64 and not device.info.fp64:
        pytest.skip("no fp64 on this device")
    x = np.arange(11).astype(dtype)
    v = ps.Vector(x, device=device)
    v.to_device()
    v.mark_device_modified()
    np.testing.assert_array_equal(v.numpy(), x)


def test_struct_layout_and_round_trip(device):
    x = np.zeros(6, POINT)
    x["x"], x["y"], x["id"] = np.arange(6), -np.arange(6), np.arange(6) * 10
    v = ps.Vector(x, device=device)
    assert v.c_type == "point"
    moved = ps.Map("point f(point p) { p.x += 1.0f; p.id += 1; return p; }")(v)
    got = moved.numpy()
    np.testing.assert_array_equal(got["x"], x["x"] + 1)
    np.testing.assert_array_equal(got["id"], x["id"] + 1)
    np.testing.assert_array_equal(got["y"], x["y"])


def test_structs_are_refused_when_unregistered_or_misaligned(device):
    with pytest.raises(DTypeError, match=r"ps\.struct"):
        ps.Vector(np.zeros(2, [("a", np.float32), ("b", np.int8)]), device=device)
    with pytest.raises(DTypeError, match="align=True"):
        ps.struct("packed", np.dtype([("a", np.int8), ("b", np.float32)]))
    with pytest.raises(DTypeError):
        ps.struct("float", [("a", np.float32)])


def test_nested_struct_and_array_fields(device):
    mat2 = ps.struct("mat2", [("m", np.float32, (2, 2))])
    pair = ps.struct("mpair", [("first", mat2), ("k", np.int32)])
    x = np.zeros(3, pair)
    x["first"]["m"] = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    x["k"] = [1, 2, 3]
    f = ps.Map("float f(mpair p) { return p.first.m[1][0] * p.k; }")
    np.testing.assert_array_equal(f(ps.Vector(x, device=device)).numpy(), x["first"]["m"][:, 1, 0] * x["k"])


def test_borrowing_shares_the_array_and_never_writes_it(device):
    data = np.arange(10, dtype=np.float32)
    before = data.copy()
    v = ps.Vector(data, copy=False, device=device)
    assert np.shares_memory(np.asarray(v), data)
    assert not np.asarray(v).flags.writeable
    doubled = ps.Map("float f(float x) { return 2 * x; }")
    doubled(v, out=v)  # the result lands on the device, not in the borrowed array
    np.testing.assert_array_equal(v.numpy(), 2 * before)
    np.testing.assert_array_equal(data, before)
    w = ps.Vector(data, copy=False, device=device)
    w[3] = -1  # a host write copies first
    np.testing.assert_array_equal(data, before)
    assert w[3] == -1


def test_borrowing_refuses_what_it_would_have_to_convert(device):
    with pytest.raises(ps.errors.DTypeError):
        ps.Vector(np.arange(4, dtype=np.int64), dtype=np.int32, copy=False, device=device)
    with pytest.raises(ps.errors.ShapeError):
        ps.Vector(np.arange(8, dtype=np.float32)[::2], copy=False, device=device)
    with pytest.raises(ps.errors.ShapeError):
        ps.Vector([1.0, 2.0], copy=False, device=device)


def test_containers_off_cuda_export_no_device_memory(device):
    if device.backend == "cuda":
        pytest.skip("a CUDA container exports its buffer (tests/test_cuda.py)")
    v = ps.Vector(np.arange(3, dtype=np.float32), device=device)
    assert not hasattr(v, "__cuda_array_interface__")
    assert v.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError, match="needs a CUDA device"):
        v.__dlpack__()


# devices that share host memory (CPU devices): zero copies, inputs untouched -------------------

SQUARE = "float f(float x) { return x * x; }"


def _shared(device):
    if not device.shares_host_memory:
        pytest.skip(f"{device.id} keeps its own memory; the shared-memory path does not apply")


def test_a_cpu_device_works_in_the_host_arrays_memory(device):
    _shared(device)
    x = np.arange(1000, dtype=np.float32)
    v = ps.Vector(x, copy=False, device=device)
    assert np.shares_memory(v.to_device().host, x)  # the input is read where it is
    with device.record() as rec:
        w = ps.Map(SQUARE)(v)
        result = w.numpy()
    assert np.shares_memory(result, w.to_device().host)  # the result is written where it is read
    assert rec.timing.upload == 0 and {e.kind for e in rec.events if e.kind in ("upload", "download")} <= {"download"}
    np.testing.assert_array_equal(result, x * x)


def test_a_borrowed_array_is_never_written(device):
    x = np.arange(64, dtype=np.float32)
    before = x.copy()
    v = ps.Vector(x, copy=False, device=device)
    ps.Map(SQUARE)(v, out=v)  # into the container, not into the caller's array
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(v.numpy(), before * before)
    table = ps.Vector(np.zeros(4, np.float32), copy=False, device=device)
    ps.Map("void f(float x, ps_index i, __global float *t) { if (i < 4) t[i] = x + 1; }")(v, table)
    np.testing.assert_array_equal(table.numpy(), before[:4] ** 2 + 1)
    np.testing.assert_array_equal(x, before)


def test_host_writes_reach_the_device_and_back(device):
    v = ps.Vector(np.arange(8, dtype=np.float32), device=device)
    square = ps.Map(SQUARE)
    square(v)
    v[3] = 10
    np.testing.assert_array_equal(square(v).numpy()[:4], [0, 1, 4, 100])
    view = v.numpy(writable=True)
    view[0] = -2
    np.testing.assert_array_equal(square(v).numpy()[:2], [4, 1])


def test_containers_dropped_right_after_enqueueing(device):
    """The host memory a kernel reads stays alive until the kernel is done, even when the
    caller's last reference to its container is gone."""
    import gc

    square = ps.Map(SQUARE)
    results = []
    for k in range(20):
        results.append(square(ps.Vector(np.full(50_000, k, np.float32), device=device)))
        gc.collect()
    for k, w in enumerate(results):
        assert (w.numpy() == k * k).all()
