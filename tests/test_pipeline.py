"""Host arrays through a device in chunks (parskel.pipeline): results equal NumPy's under a
small device-memory cap, the inputs stay as they were, the work really went in several chunks,
and host memory stays bounded. Every test runs twice on each device: as the device is, and
"staged" (a CPU device made to copy like a GPU: pinned slots, a second and third queue)."""

from __future__ import annotations

import dataclasses
import importlib
import tracemalloc

import numpy as np
import pytest

import parskel as ps
from parskel.algorithms import pipelined as algorithms_pipelined
from parskel.errors import ArgumentError, DeviceMemoryError, ShapeError
from parskel.pipeline import Need, Pipeline, budget, chunk_length, parse_bytes, staging, watch
from parskel.pipeline.budget import MIN_CAP
from parskel.runtime import hostpool
from parskel.skeletons.map import Elementwise
from parskel.skeletons.reduce import Reduction
from parskel.skeletons.scan import Scan

CAP = "256KiB"
SQUARE = "float f(float x) { return x * x; }"
FADD = "float add(float a, float b) { return a + b; }"
IADD = "int add(int a, int b) { return a + b; }"


def _copying_like_a_gpu(device, monkeypatch, slot_bytes):
    """``device`` made to copy host arrays over a link as a GPU does (a device that works in
    host memory is told it does not), through pinned slots of ``slot_bytes``."""
    if device.shares_host_memory:
        monkeypatch.setattr(type(device), "shares_host_memory", property(lambda self: False))
    monkeypatch.setattr(staging, "SLOT_BYTES", slot_bytes)


@pytest.fixture(params=["as-is", "staged"])
def dev(request, device, monkeypatch):
    """The device, or (``staged``) the device copying through pinned slots of 64 KiB as a GPU
    does, with its own queues for uploads and downloads."""
    if request.param == "staged":
        _copying_like_a_gpu(device, monkeypatch, 64 << 10)
    with ps.using(device), ps.max_device_memory(CAP):
        yield device


def _one_run(runs, operation):
    """The pipelined run of ``operation``, which must have gone in several chunks."""
    found = [r for r in runs if r.operation == operation]
    assert found, f"{operation} did not go through the pipeline: {runs}"
    assert found[-1].chunks > 1, found[-1]
    return found[-1]


def _frozen(*arrays):
    for a in arrays:
        a.flags.writeable = False  # an input written by parskel would raise
    return arrays


# skeletons ------------------------------------------------------------------------------------


def test_map_and_zip_in_chunks(dev, rng):
    x, y = _frozen(rng.random(100_003, dtype=np.float32), rng.integers(0, 100, 100_003).astype(np.int32))
    with watch() as runs:
        squares = ps.Map(SQUARE)(x)
        differences = ps.Zip("float f(float a, int b) { return a - b; }")(x, y)
    assert np.array_equal(squares, x * x)
    assert np.array_equal(differences, x - y.astype(np.float32))
    _one_run(runs, "Map")
    _one_run(runs, "Zip")


def test_map_of_a_matrix_and_into_out(dev, rng):
    m = _frozen(rng.random((300, 257), dtype=np.float32))[0]
    out = np.full(m.shape, -1, np.float32)
    with watch() as runs:
        result = ps.Map(SQUARE)(m, out=out)
    assert result is out and np.array_equal(out, m * m)
    _one_run(runs, "Map")


@pytest.mark.parametrize("boundary", ["neutral", "clamp", "wrap", "mirror"])
def test_map_overlap_in_chunks_matches_padding(dev, rng, boundary):
    mode = {"neutral": "constant", "clamp": "edge", "wrap": "wrap", "mirror": "reflect"}[boundary]
    x = _frozen(rng.random(70_001, dtype=np.float32))[0]
    m = _frozen(rng.random((400, 190), dtype=np.float32))[0]
    vector = ps.MapOverlap("float f(const float *x) { return x[-2] + 2 * x[0] - x[1]; }", radius=2, boundary=boundary)
    matrix = ps.MapOverlap(
        "float f(const float *x) { return ps_get(x, -1, 0) + ps_get(x, 1, 1) - ps_get(x, 0, -1); }",
        radius=1,
        boundary=boundary,
    )
    with watch() as runs:
        got, got2 = vector(x), matrix(m)
    p = np.pad(x, 2, mode=mode)
    np.testing.assert_allclose(got, p[:-4] + 2 * p[2:-2] - p[3:-1], rtol=1e-6)
    q = np.pad(m, 1, mode=mode)
    np.testing.assert_allclose(got2, q[:-2, 1:-1] + q[2:, 2:] - q[1:-1, :-2], rtol=1e-6)
    assert len([r for r in runs if r.chunks > 1]) == 2, runs


def test_reduce_and_map_reduce_in_chunks(dev, rng):
    x = _frozen(rng.integers(-1000, 1000, 200_001).astype(np.int32))[0]
    f = _frozen(rng.random(200_001, dtype=np.float32))[0]
    with watch() as runs:
        total = ps.Reduce(IADD, identity=0)(x)
        squares = ps.MapReduce("int f(int x) { return x * x; }", IADD, identity=0)(x)
        maximum = ps.Reduce("int f(int a, int b) { return max(a, b); }", identity=-(2**31))(x)
        float_total = ps.Reduce(FADD, identity=0)(f)
    assert total == x.sum() and squares == (x.astype(np.int64) ** 2).sum().astype(np.int32)
    assert maximum == x.max()
    assert abs(float(float_total) - f.sum(dtype=np.float64)) <= 1e-4 * f.size
    _one_run(runs, "Reduce")
    _one_run(runs, "MapReduce")


@pytest.mark.parametrize("inclusive", [False, True])
def test_scan_skeleton_in_chunks_carries_totals(dev, rng, inclusive):
    x = _frozen(rng.integers(-50, 100, 150_007).astype(np.int32))[0]
    with watch() as runs:
        result, total = ps.Scan(IADD, identity=0, inclusive=inclusive)(x)
    running = np.cumsum(x, dtype=np.int32)
    expected = running if inclusive else np.concatenate([[0], running[:-1]]).astype(np.int32)
    assert np.array_equal(result, expected) and total == running[-1]
    _one_run(runs, "Scan")


def test_small_arrays_run_in_one_piece_and_give_numpy(dev):
    x = np.arange(10, dtype=np.float32)
    with watch() as runs:
        squares = ps.Map(SQUARE)(x)
        prefix, total = ps.Scan(IADD, identity=0)(np.arange(5, dtype=np.int32))
    assert isinstance(squares, np.ndarray) and squares.flags.writeable and np.array_equal(squares, x * x)
    assert prefix.tolist() == [0, 0, 1, 3, 6] and total == 10
    assert runs == []


def test_a_function_of_the_index_that_does_not_fit_is_refused(dev):
    x = np.zeros(200_000, np.float32)
    with pytest.raises(DeviceMemoryError, match="index"):
        ps.Map("float f(float x, ps_index i) { return x + i; }")(x)
    small = np.zeros(100, np.float32)
    assert np.array_equal(ps.Map("float f(float x, ps_index i) { return x + i; }")(small), np.arange(100))


def test_numpy_out_is_checked(dev):
    with pytest.raises(ShapeError, match="out"):
        ps.Map(SQUARE)(np.zeros(10, np.float32), out=np.zeros(9, np.float32))
    square = ps.Map(SQUARE)
    square(np.zeros(10, np.float32))  # planned: the next call takes the path without containers
    with pytest.raises(ShapeError, match="out"):
        square(np.zeros(10, np.float32), out=np.zeros(10, np.float64))


def test_repeated_calls_on_host_arrays_match_numpy(device, rng, monkeypatch):
    """After a call of its types, a Map or Zip on host arrays runs without containers; every
    form of call gives what NumPy gives, and no input changes unless it is ``out``."""
    direct = []
    run_host = Elementwise._run_host
    monkeypatch.setattr(Elementwise, "_run_host", lambda self, *args: direct.append(self.name) or run_host(self, *args))
    with ps.using(device):
        scaled = ps.Zip("float f(float a, int b, float s) { return s * a - b; }")
        square = ps.Map(SQUARE)
        for n in (1, 1000, 70_001):
            x, y = _frozen(rng.random(n, dtype=np.float32), rng.integers(-9, 9, n).astype(np.int32))
            for _ in range(3):  # the first call plans; the others go straight to the kernels
                assert np.array_equal(square(x), x * x)
                got = scaled(x, y, 2.5)  # (a device may fuse the multiply and the subtraction)
                assert got.dtype == np.float32
                np.testing.assert_allclose(got, 2.5 * x.astype(np.float64) - y, rtol=0, atol=4e-6)
        m = rng.random((37, 41), dtype=np.float32)
        for _ in range(2):
            assert np.array_equal(square(m), m * m)
        # in place, into a fresh out, and into an out that overlaps the input only in part
        z = rng.random(5000, dtype=np.float32)
        expected = z * z
        for _ in range(2):
            w = z.copy()
            assert square(w, out=w) is w and np.array_equal(w, expected)
            out = np.full_like(z, -1)
            assert square(z, out=out) is out and np.array_equal(out, expected)
            shifted = z.copy()
            square(shifted[:-1], out=shifted[1:])
            assert np.array_equal(shifted[1:], expected[:-1]) and shifted[0] == z[0]
    # every call but the first of each type and rank, and those into an out overlapping in part
    assert direct.count("Map") == 17 - 2 - 2 and direct.count("Zip") == 9 - 1, direct


def test_repeated_calls_with_a_container_extra_write_it(device, rng):
    """A call on host arrays whose extra is a container goes through containers every time: the
    container the user function writes shows the writes (on a GPU its host copy would be stale
    if the kernels ran without the containers' bookkeeping)."""
    with ps.using(device):
        mark = ps.Map("float f(float x, ps_index i, __global float *seen) { seen[i] = x + 1; return 2 * x; }")
        x = rng.random(1000, dtype=np.float32)
        for _ in range(3):
            seen = ps.Vector(np.zeros(1000, np.float32))
            assert np.array_equal(mark(x, seen), 2 * x)
            assert np.array_equal(seen.numpy(), x + 1)


def test_repeated_reductions_of_host_arrays_match_numpy(device, rng, monkeypatch):
    """After a reduction of its types, a Reduce or MapReduce of a host array goes straight to
    its kernel; each result equals NumPy's, and an extra that is a container still works."""
    planned = []
    host_plan = Reduction._host_plan
    monkeypatch.setattr(Reduction, "_host_plan", lambda self, *args: planned.append(p := host_plan(self, *args)) or p)
    with ps.using(device):
        total = ps.Reduce(IADD, identity=0)
        scaled = ps.MapReduce("int f(int x, int s) { return s * x; }", IADD, identity=0)
        for n in (1, 999, 50_000):
            x = _frozen(rng.integers(-1000, 1000, n).astype(np.int32))[0]
            for _ in range(3):
                assert total(x) == x.sum() and scaled(x, 3) == 3 * x.sum()
        m = rng.integers(0, 10, (40, 30)).astype(np.int32)
        for _ in range(2):
            assert total(m) == m.sum()
        empty = np.zeros(0, np.int32)
        assert total(empty) == 0 and total(empty) == 0
    found = [p is not None for p in planned]
    # every call but the first of each type and rank; a skeleton's first call and the empty
    # ones never ask
    assert found.count(True) == 2 * 9 - 2 + 1 and found.count(False) == 1, found


@pytest.mark.parametrize("inclusive", [False, True])
def test_repeated_scans_of_host_arrays_match_numpy(device, rng, monkeypatch, inclusive):
    """After a scan of its types, a Scan of a host array runs on buffers over the arrays; its
    values and total equal NumPy's, into a new array, into ``out=`` and in place."""
    direct = []
    run_host = Scan._run_host
    monkeypatch.setattr(Scan, "_run_host", lambda self, *args: direct.append(t := run_host(self, *args)) or t)
    with ps.using(device):
        scan = ps.Scan(IADD, identity=0, inclusive=inclusive)
        for n in (1, 777, 60_001):
            x = _frozen(rng.integers(-50, 100, n).astype(np.int32))[0]
            running = np.cumsum(x, dtype=np.int32)
            expected = running if inclusive else np.concatenate([[0], running[:-1]]).astype(np.int32)
            for _ in range(3):
                values, total = scan(x)
                assert np.array_equal(values, expected) and total == running[-1]
            out = np.full_like(x, -1)
            assert scan(x, out=out)[0] is out and np.array_equal(out, expected)
            w = x.copy()
            assert scan(w, out=w)[1] == running[-1] and np.array_equal(w, expected)
        m = rng.integers(0, 9, (30, 20)).astype(np.int32)
        for _ in range(2):
            values, total = scan(m)
            flat = np.cumsum(m.reshape(-1), dtype=np.int32)
            want = flat if inclusive else np.concatenate([[0], flat[:-1]])
            assert values.shape == m.shape and np.array_equal(values.reshape(-1), want) and total == flat[-1]
    ran = [t is not None for t in direct]
    # every call but the very first asks; a call whose buffers' alignment was not planned yet
    # (possible on a CPU device, where they are the arrays) goes through containers once
    assert len(ran) == 3 * 5 - 1 + 2 and ran.count(False) <= 1, ran


# algorithms -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("inclusive", [False, True])
def test_scan_in_chunks(dev, rng, dtype, inclusive):
    if np.dtype(dtype).itemsize == 8 and not dev.info.fp64 and dtype is np.float64:
        pytest.skip(f"{dev.id} has no float64")
    x = (rng.integers(-9, 10, 90_001) if np.dtype(dtype).kind == "i" else rng.random(90_001)).astype(dtype)
    _frozen(x)
    with watch() as runs:
        got = ps.scan(x, inclusive=inclusive)
    running = np.cumsum(x, dtype=dtype)
    expected = running if inclusive else np.concatenate([[0], running[:-1]]).astype(dtype)
    if np.dtype(dtype).kind == "i":
        assert np.array_equal(got, expected)
    else:  # a tree order of additions: a few ulps of the running sum of magnitudes (scans.py)
        bound = (1e-4 if dtype is np.float32 else 1e-12) * np.cumsum(np.abs(x), dtype=np.float64)
        assert np.all(np.abs(got - expected) <= bound + 1e-6)
    _one_run(runs, "scan")


def test_sort_in_buckets(dev, rng):
    keys = _frozen(rng.integers(0, 1 << 32, 120_001, dtype=np.uint32))[0]
    with watch() as runs:
        got = ps.sort(keys)
    assert np.array_equal(got, np.sort(keys))
    _one_run(runs, "sort")  # sorted runs
    _one_run(runs, "sort merges")  # then each bucket, which took keys from every run


def test_sort_of_floats_in_buckets_orders_zeros_and_nans(dev, rng):
    keys = rng.standard_normal(120_001).astype(np.float32)
    keys[::97], keys[::101], keys[::103] = np.nan, -0.0, 0.0
    keys[::89] = -np.inf
    _frozen(keys)
    got = ps.sort(keys)
    assert np.array_equal(got, np.sort(keys), equal_nan=True)
    zeros = got[got == 0]
    assert np.array_equal(np.signbit(zeros), np.sort(~np.signbit(zeros)) == 0)  # -0.0 first
    assert np.isnan(got).sum() == np.isnan(keys).sum()


def test_sort_with_values_is_stable_with_crowded_keys(dev, rng):
    """Keys 0..30000 (all in one bin of the top 16 bits, refined by the low 16) and a value
    repeated so often that its bucket is larger than the device may hold: it needs no sort."""
    keys = rng.integers(0, 30_000, 150_000).astype(np.int32)
    keys[rng.random(keys.size) < 0.3] = 77
    values = np.arange(keys.size, dtype=np.float32)
    _frozen(keys, values)
    with watch() as runs:
        got_keys, got_values = ps.sort(keys, values)
    order = np.argsort(keys, kind="stable")
    assert np.array_equal(got_keys, keys[order]) and np.array_equal(got_values, values[order])
    _one_run(runs, "sort")


def test_sort_takes_the_cap_as_an_argument(device, rng):
    keys = rng.integers(0, 1 << 32, 60_000, dtype=np.uint32)
    with watch() as runs:
        got = ps.sort(keys, device=device, max_device_memory="128KiB")
    assert np.array_equal(got, np.sort(keys))
    _one_run(runs, "sort")


@pytest.mark.parametrize("shape", [(200, 300, 150), (1, 5000, 3), (333, 7, 190)])
def test_matmul_in_tiles(dev, rng, shape):
    m, k, n = shape
    a, b = _frozen(rng.random((m, k), dtype=np.float32), rng.random((k, n), dtype=np.float32))
    with watch() as runs:
        got = ps.matmul(a, b)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4)
    assert [r for r in runs if r.operation == "matmul"], runs


def test_matmul_adds_products_of_the_shared_dimension(device, rng):
    """A cap too small for even one panel pair: the products over parts of k add up on the host."""
    a, b = rng.random((40, 20_000), dtype=np.float32), rng.random((20_000, 30), dtype=np.float32)
    with watch() as runs:
        got = ps.matmul(a, b, device=device, max_device_memory="256KiB")
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4)
    assert runs and runs[-1].chunks >= 4


def test_a_products_tiles_take_the_tuning_of_their_own_size(device, rng, dispatched):
    """Each tile's product asks the tuning database for its own size (the edge of the cube of
    its multiply-adds), as a call of that shape does; without one it took whichever entry came
    first (on an H100 a 16 x 16 product's tiles, for 2048 x 2048 panels)."""
    a, b = rng.random((40, 20_000), dtype=np.float32), rng.random((20_000, 30), dtype=np.float32)
    got = ps.matmul(a, b, device=device, max_device_memory="256KiB")
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4)
    assert len(dispatched) >= 4
    for context in dispatched:
        assert context["itemsize"] == 4
        assert 1 <= context["size"] < round((40 * 20_000 * 30) ** (1 / 3))  # a tile's, not the whole product's


# the cap, memory and transfers -----------------------------------------------------------------


def test_the_environment_sets_the_cap(device, monkeypatch, rng):
    monkeypatch.setenv(ps.pipeline.ENV_VAR, CAP)
    x = rng.integers(0, 10, 100_000).astype(np.int32)
    with ps.using(device), watch() as runs:
        total = ps.Reduce(IADD, identity=0)(x)
    assert total == x.sum()
    _one_run(runs, "Reduce")
    with ps.max_device_memory(None), ps.using(device), watch() as runs:  # an inner block lifts it
        assert ps.Reduce(IADD, identity=0)(x) == x.sum()
    assert runs == []  # 400 KB fit any device, and are too few to stage


@pytest.mark.parametrize("text", ["lots", "12 zB", "2^20KiB", "1.5^3", True, -1])
def test_a_cap_that_cannot_be_read_is_refused(text):
    with pytest.raises(ArgumentError):
        parse_bytes(text)


def test_the_smallest_cap():
    assert parse_bytes("64KiB") == MIN_CAP
    with pytest.raises(ArgumentError, match="smallest"):
        parse_bytes("1KiB")


def test_the_budget_follows_the_cap(device):
    with ps.max_device_memory("1MiB"):
        within = budget(device)
    assert within.explicit and within.total == min(1 << 20, int(device.info.global_mem_bytes * 0.75))
    assert not budget(device).explicit
    need = Need(per_element=8, largest_per_element=4)
    assert chunk_length(10**6, need, within, overlap=False) == within.total // 8


def _host_bytes(call) -> int:
    """The most host memory (NumPy's and Python's) ``call`` held at once."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_host_memory_does_not_grow_with_the_input(dev, rng, monkeypatch):
    """Beyond its result, a call holds host memory for a few chunks and fixed tables (the
    sort's histograms, once every bin of the top 16 bits has keys): twice the input costs no
    more host memory than twice the result."""
    monkeypatch.setattr(algorithms_pipelined, "HOST_BLOCK", 1 << 14)
    x = rng.random(1 << 20, dtype=np.float32)
    keys = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint32)
    square = ps.Map(SQUARE)
    with ps.max_device_memory("1MiB"):
        for call, data in ((square, x), (ps.sort, keys)):
            call(data[: 1 << 19])  # builds the kernels outside the measurement
            small, large = (_host_bytes(lambda n=n, c=call, d=data: c(d[:n])) - 4 * n for n in (1 << 19, 1 << 20))
            assert large - small < (1 << 19), (call, small, large)


def test_staged_timing_splits_transfers_and_kernels(dev, rng):
    x = rng.random(100_000, dtype=np.float32)
    square = ps.Map(SQUARE)
    with dev.record() as rec:
        square(x)
    timing = rec.timing
    assert timing.launches > 1
    if not dev.shares_host_memory:  # copies that happened are timed as uploads and downloads
        assert timing.upload > 0 and timing.download > 0


def test_staging_round_trip_of_blocks_and_sums(dev, rng):
    """Pieces of any layout the drivers stage (a block of a matrix, several pieces one after
    another) arrive in order, and come back, copied or added."""
    if dev.shares_host_memory:
        pytest.skip("a device that works in host memory stages nothing")
    stage = staging.staging_for(dev)
    assert stage.host_bytes == 2 * staging.SLOTS * staging.SLOT_BYTES  # the bounded staging area
    m = rng.random((300, 200), dtype=np.float32)
    pieces = [m[10:250, 7:190], m[0, :5], m[299]]
    buffer = dev.alloc(sum(p.nbytes for p in pieces))
    loaded = stage.upload(pieces, buffer)
    dev.wait_for(loaded)
    computed = dev.mark()
    block = np.zeros((240, 183), np.float32)
    tail = np.ones(5 + 200, np.float32)
    stage.download(buffer, 0, [block], computed)
    stage.download(buffer, block.nbytes, [tail], computed, add=True)
    stage.flush()
    assert np.array_equal(block, m[10:250, 7:190])
    assert np.array_equal(tail, np.concatenate([m[0, :5], m[299]]) + 1)


def _copy_through(dev, x, length, fail_at=None, into=None):
    """``x`` copied through the device by a pipeline (into ``into``, or a new array),
    ``length`` elements a chunk (a device-side copy between two buffers each); chunk
    ``fail_at`` raises instead."""
    out = np.zeros_like(x) if into is None else into
    pipe = Pipeline(dev, "copy", staged=not dev.shares_host_memory)

    def chunks():
        for k, lo in enumerate(range(0, x.size, length)):
            hi = min(lo + length, x.size)
            src, dst = dev.alloc((hi - lo) * x.itemsize), dev.alloc((hi - lo) * x.itemsize)
            pipe.load([x[lo:hi]], src, elements=hi - lo)

            def compute(src=src, dst=dst, lo=lo, hi=hi, k=k):
                if k == fail_at:
                    raise RuntimeError("a chunk that fails")
                dev.copy(dst, src)
                pipe.store(dst, 0, [out[lo:hi]])

            yield compute

    pipe.run(chunks())
    return out


def test_the_pipeline_orders_loads_kernels_and_stores_and_survives_a_failure(dev, rng):
    x = rng.random(50_001).astype(np.float32)
    with pytest.raises(RuntimeError, match="fails"):
        _copy_through(dev, x, 3000, fail_at=5)
    with watch() as runs:
        out = _copy_through(dev, x, 3000)
    assert np.array_equal(out, x)
    assert runs[0].chunks == 17 and runs[0].longest == 3000


def test_page_locked_arrays_skip_the_slots(dev, rng):
    """Host arrays in the device's page-locked memory go to and from it where they are (no host
    copy through a slot), in order with pageable ones beside them."""
    if dev.shares_host_memory:
        pytest.skip("a device that works in host memory stages nothing")
    x = dev.empty_pinned(50_001, np.float32)
    x[:] = rng.random(x.size, dtype=np.float32)
    assert dev.is_pinned(x) and dev.is_pinned(x[10:20]) and not dev.is_pinned(np.ones(3))
    stage = staging.staging_for(dev)
    copied = stage.copy_seconds
    out = _copy_through(dev, x, 3000, into=dev.empty_pinned(x.size, np.float32))
    assert np.array_equal(out, x)
    assert stage.copy_seconds == copied  # nothing went through a slot
    pinned, pageable = dev.empty_pinned(700, np.float32), np.zeros(900, np.float32)
    parts = [pinned[:300], pageable[:500], pinned[300:], pageable[500:]]
    pieces = [rng.random(p.size, dtype=np.float32) for p in parts]
    buffer = dev.alloc(sum(p.nbytes for p in pieces))
    dev.wait_for(stage.upload([x[:0], *pieces], buffer))
    stage.download(buffer, 0, parts, dev.mark())
    stage.flush()
    dev.finish()
    for got, want in zip(parts, pieces):
        assert np.array_equal(got, want)


def test_a_staged_result_is_page_locked_where_the_device_offers_it(device, rng):
    """A large result of a staged call comes back in page-locked memory (written by the device
    with no host copy), on both GPU backends, while such results alive stay under their share
    of the host's memory; small results are ordinary arrays. A device that works in host memory
    stages nothing and hands out ordinary arrays."""
    keys = rng.integers(0, 1 << 32, 3 << 20, dtype=np.uint32)
    with ps.using(device), ps.max_device_memory("4MiB"):
        got = ps.sort(keys)
    assert np.array_equal(got, np.sort(keys))
    if device.shares_host_memory:
        assert not device.is_pinned(got)
        pytest.skip(f"{device.id} works in host memory: its results are ordinary arrays")
    assert device.is_pinned(got)
    held = hostpool.pinned_results_live()
    assert held >= got.nbytes
    del got
    assert hostpool.pinned_results_live() == held - keys.nbytes
    with ps.using(device):
        small = ps.sort(keys[: 1 << 10])
    assert not device.is_pinned(small)


def test_an_opencl_device_reuses_the_page_locked_blocks_of_freed_results(device, monkeypatch, rng):
    """On an OpenCL device that copies over a link (here, where the device works in host memory,
    one made to copy like a GPU), a staged call's large result is the device's page-locked
    memory, counted as live until it goes; its block then serves the next result of its size."""
    if device.backend != "opencl":
        pytest.skip(f"{device.id}: CUDA's page-locked results come from CuPy's pool")
    _copying_like_a_gpu(device, monkeypatch, 1 << 20)
    x = rng.random(3 << 20, dtype=np.float32)  # 12 MiB: a page-locked result
    square = ps.Map(SQUARE)
    before = hostpool.pinned_results_live()
    with ps.using(device):
        first = square(x)
        assert device.is_pinned(first) and np.array_equal(first, x * x)
        assert hostpool.pinned_results_live() == before + first.nbytes
        address = first.ctypes.data
        del first
        assert hostpool.pinned_results_live() == before
        second = square(x[::-1].copy())
    assert device.is_pinned(second) and second.ctypes.data == address  # the freed block again
    assert np.array_equal(second, x[::-1] * x[::-1])
    view = second[5:]
    del second
    assert hostpool.pinned_results_live() == before + view.base.nbytes  # a view keeps it live
    del view
    assert hostpool.pinned_results_live() == before


# the e2e benchmark --------------------------------------------------------------------------------


def test_the_e2e_group_times_public_calls_on_numpy_arrays(device, tmp_path):
    from parskel.bench import bench, default_settings, e2e
    from parskel.bench.cases import GROUPS

    sizes = {f: (1 << 12,) for f in GROUPS["e2e"]} | {"e2e.matmul": (48,)}
    settings = default_settings(["e2e"], sizes=sizes, reps=1, warmup=1, peers=frozenset({"numpy"}))
    from rich.console import Console

    with ps.max_device_memory(CAP):
        outcome = bench([device], settings, out=tmp_path, report=False, console=Console(quiet=True))
    locked = {(f, e2e.LOCKED) for f in e2e.STREAMED} if not device.shares_host_memory else set()
    assert {(r.family, r.subject) for r in outcome.results if r.kind == "variant"} == {
        (f, "parskel") for f in GROUPS["e2e"]
    } | locked
    assert all(r.status == "ok" for r in outcome.results), [(r.family, r.message) for r in outcome.results]
    split = [n for n in outcome.notes if n.startswith("e2e.map 2^12")]
    assert split and "end to end (upload" in split[0], outcome.notes


def test_bench_refuses_a_cap_it_cannot_read(tmp_path, capsys):
    from parskel.cli import main

    assert main(["bench", "e2e", "--max-device-memory", "lots", "--out", str(tmp_path), "--no-report"]) == 2
    assert "--max-device-memory" in capsys.readouterr().err


def test_a_staged_chunk_fills_at_least_one_pinned_slot(monkeypatch):
    """Staged work aims at TARGET_CHUNKS chunks, but none smaller than a slot (so the copy
    threads take large parts); unstaged work and small calls are cut as before."""
    from parskel.pipeline.budget import TARGET_CHUNKS, Budget

    monkeypatch.setattr(staging, "SLOT_BYTES", 32 << 20)
    need = Need(per_element=8, largest_per_element=4)
    roomy = Budget(64 << 30, 16 << 30, False)
    slot = (32 << 20) // 4
    n = 4 * slot  # a chunk of an eighth would be half a slot
    assert chunk_length(n, need, roomy, overlap=True) == slot
    assert chunk_length(64 * slot, need, roomy, overlap=True) == 64 * slot // TARGET_CHUNKS
    assert chunk_length(slot // 2, need, roomy, overlap=True) == slot // 2
    assert chunk_length(n, need, roomy, overlap=False) == n


def test_work_on_page_locked_arrays_is_cut_finer(monkeypatch):
    """Work whose host arrays are all page-locked fills no slot, so it is cut into about
    PINNED_CHUNKS chunks (none under PINNED_CHUNK_BYTES of its largest buffer) rather than into
    chunks of a slot or more; unstaged work is cut as before."""
    from parskel.pipeline.budget import PINNED_CHUNK_BYTES, PINNED_CHUNKS, TARGET_CHUNKS, Budget

    monkeypatch.setattr(staging, "SLOT_BYTES", 32 << 20)
    need = Need(per_element=8, largest_per_element=4)
    roomy = Budget(64 << 30, 16 << 30, False)
    n = 1 << 26
    assert chunk_length(n, need, roomy, overlap=True) == n // TARGET_CHUNKS
    assert chunk_length(n, need, roomy, overlap=True, pinned=True) == n // PINNED_CHUNKS
    floor = PINNED_CHUNK_BYTES // 4
    assert chunk_length(4 * floor, need, roomy, overlap=True, pinned=True) == floor
    assert chunk_length(floor // 2, need, roomy, overlap=True, pinned=True) == floor // 2
    assert chunk_length(n, need, roomy, overlap=False, pinned=True) == n


def test_map_of_page_locked_arrays_in_finer_chunks(device, monkeypatch, rng):
    """A staged `Map` whose input and `out=` are the device's page-locked memory runs in about
    PINNED_CHUNKS chunks, each copied by the device where it lies, with the result of the same
    call on an ordinary array, which takes chunks of a slot; a `Reduce` of the page-locked input
    (nothing to download, so nothing to gain) keeps the chunks of a slot too."""
    budget_module = importlib.import_module("parskel.pipeline.budget")  # (parskel.pipeline.budget is a function)

    _copying_like_a_gpu(device, monkeypatch, 1 << 20)
    monkeypatch.setattr(budget_module, "PINNED_CHUNK_BYTES", 16 << 10)
    n = 400_003  # 1.6 MB: over STAGING_MIN, so that the calls are staged
    x = device.empty_pinned(n, np.float32)
    x[:] = rng.integers(-50, 50, n)
    out = device.empty_pinned(n, np.float32)
    plain = np.array(x)
    with ps.using(device), watch() as runs:
        ps.Map(SQUARE)(x, out=out)
        ordinary = ps.Map(SQUARE)(plain)
        total = ps.Reduce(FADD, identity=0)(x)
    assert np.array_equal(out, plain * plain) and np.array_equal(ordinary, plain * plain)
    assert float(total) == float(plain.astype(np.float64).sum())  # integers: exact in any order
    finer, slots, reduced = runs
    assert (finer.operation, slots.operation, reduced.operation) == ("Map", "Map", "Reduce")
    assert finer.chunks == budget_module.PINNED_CHUNKS
    assert finer.host_copies == 0.0  # nothing went through the slots
    assert slots.chunks == reduced.chunks == -(-n * 4 // staging.SLOT_BYTES)


def test_the_e2e_group_also_times_map_and_reduce_from_page_locked_memory(device, monkeypatch, tmp_path):
    """On a device that copies host arrays over a link (here a CPU device made to copy like a
    GPU), `Map` and `Reduce` are also timed on a page-locked copy of their input, checked like
    the others, and their conclusion says so; the copy is made once per input."""
    from rich.console import Console

    from parskel.bench import bench, default_settings, e2e

    _copying_like_a_gpu(device, monkeypatch, 1 << 20)
    made = []
    real = type(device).empty_pinned
    monkeypatch.setattr(type(device), "empty_pinned", lambda self, *a: made.append(a) or real(self, *a))
    sizes = {"e2e.map": (1 << 19,), "e2e.reduce": (1 << 19,)}
    settings = dataclasses.replace(
        default_settings(["e2e"], sizes=sizes, reps=2, warmup=1, peers=frozenset()), families=tuple(sizes)
    )
    outcome = bench([device], settings, out=tmp_path, report=False, console=Console(quiet=True))
    locked = [r for r in outcome.results if r.subject == e2e.LOCKED]
    assert sorted(r.family for r in locked) == ["e2e.map", "e2e.reduce"]
    assert all(r.status == "ok" for r in outcome.results), [(r.family, r.subject, r.message) for r in outcome.results]
    assert any("e2e.map 2^19" in n and "from page-locked memory" in n for n in outcome.notes), outcome.notes
    inputs = [a for a in made if a == ((1 << 19,), np.dtype(np.float32))]
    assert len(inputs) == 2  # one copy of each family's input, however many calls
