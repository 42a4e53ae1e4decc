"""Distributions over several devices (seed 004): every skeleton on distributed containers
against the same call on one device (exact for integers), ps.sort and ps.scan across parts,
redistribution, and mixed or bad placements.

The devices are two sub-devices of each OpenCL CPU device (``Device.partition``), so the tests
run on any machine; where several devices exist, a GPU and a CPU together too.
"""

from __future__ import annotations

import numpy as np
import pytest

import parskel as ps
from parskel.errors import BackendUnavailableError, ShapeError
from parskel.runtime.opencl import apart_builds
from test_cuda import NVRTC, NVRTC_WHY, nvrtc_build


def _split(device: ps.Device) -> list[ps.Device]:
    try:
        return device.partition(2)
    except BackendUnavailableError as exc:
        pytest.skip(f"{device.id} cannot be split into two sub-devices: {exc}")


@pytest.fixture
def pair(device) -> list[ps.Device]:
    return _split(device)


def _kinds(devs: list[ps.Device]) -> dict[str, ps.dist.Distribution]:
    return {
        "block": ps.dist.block(devs),
        "weighted": ps.dist.block(devs, weights=[1, 3]),
        "overlap": ps.dist.overlap(devs, 2),
        "copy": ps.dist.copy(devs),
        "single": ps.dist.single(devs[1]),
    }


KINDS = ["block", "weighted", "overlap", "copy", "single"]
SIZES = [0, 1, 2, 7, 1000]


def test_layouts() -> None:
    devs = [ps.device(), ps.device()]  # layouts are arithmetic: the same device twice is fine here
    assert ps.dist.block(devs[:1]).ranges(5) == [(0, 5)]
    dist = ps.dist.Distribution("block", (devs[0], None), (0, 1), weights=(1.0, 3.0))
    assert dist.ranges(8) == [(0, 2), (2, 8)] and dist.ranges(0) == [(0, 0), (0, 0)]
    halo = ps.dist.Distribution("overlap", (devs[0], None, None), (0, 1, 2), weights=(1.0, 1.0, 1.0), halo=2)
    assert halo.ranges(9) == [(0, 3), (3, 6), (6, 9)]
    assert halo.stored(9) == [(0, 5), (1, 8), (4, 9)]
    with pytest.raises(ShapeError, match="once"):
        ps.dist.block(devs)
    with pytest.raises(ShapeError, match="weight"):
        ps.dist.block([ps.device()], weights=[0])
    with pytest.raises(ShapeError, match="halo"):
        ps.dist.overlap([ps.device()], -1)


@pytest.mark.parametrize("kind", KINDS)
def test_elementwise_reductions_and_scans(pair, rng, kind) -> None:
    dist = _kinds(pair)[kind]
    later = "int later(int a, int b) { return b != 0 ? b : a; }"  # associative, not commutative
    for n in SIZES:
        x = rng.integers(-3, 4, n).astype(np.int32)
        v, plain = ps.Vector(x, distribution=dist), ps.Vector(x)
        assert isinstance(v, ps.Vector) and v.distribution is dist
        np.testing.assert_array_equal(v.numpy(), x)
        indexed = ps.Map("int f(int a, ps_index i) { return a * 1000 + (int)i; }")
        np.testing.assert_array_equal(indexed(v).numpy(), indexed(plain).numpy())
        zipped = ps.Zip(lambda a, b, s: a * s - b)(v, plain, 3)  # a plain input is distributed like v
        np.testing.assert_array_equal(zipped.numpy(), x * 3 - x)
        assert ps.Reduce(lambda a, b: a + b, identity=0)(v) == x.sum()
        assert ps.Reduce(later, identity=0)(v) == ps.Reduce(later, identity=0)(plain)
        assert ps.MapReduce(lambda a: a * a, lambda a, b: max(a, b), identity=-1)(v) == max(-1, (x * x).max(initial=-1))
        for inclusive in (False, True):
            for op in (later, "int add(int a, int b) { return a + b; }"):
                got, total = ps.Scan(op, identity=0, inclusive=inclusive)(v)
                want, want_total = ps.Scan(op, identity=0, inclusive=inclusive)(plain)
                np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=f"n={n} {op}")
                assert total == want_total


@pytest.mark.parametrize("kind", KINDS)
def test_map_overlap_every_boundary(pair, rng, kind) -> None:
    dist = _kinds(pair)[kind]
    for boundary in ("neutral", "clamp", "wrap", "mirror"):
        for radius in (1, 3):
            stencil = ps.MapOverlap(
                "int f(const int *w, ps_index i) { return w[-1] * 100 + w[0] * 10 + w[1] + (int)i * 7; }"
                if radius == 1
                else "int f(const int *w) { return w[-3] - 2 * w[2] + w[3]; }",
                radius=radius,
                boundary=boundary,
                neutral=5,
            )
            for n in (4, 9, 300):
                x = rng.integers(0, 9, n).astype(np.int32)
                got = stencil(ps.Vector(x, distribution=dist))
                np.testing.assert_array_equal(got.numpy(), stencil(ps.Vector(x)).numpy(), err_msg=f"{boundary} {n}")
                again = stencil(got)  # a result's halos are refreshed before they are read
                np.testing.assert_array_equal(again.numpy(), stencil(stencil(ps.Vector(x))).numpy())
        m = rng.integers(0, 9, (11, 6)).astype(np.int32)
        laplace = ps.MapOverlap(lambda w: w[-1, 0] + w[1, 0] + w[0, -1] - 2 * w[0, 1], radius=1, boundary=boundary)
        got = laplace(ps.Matrix(m, distribution=dist))
        np.testing.assert_array_equal(got.numpy(), laplace(ps.Matrix(m)).numpy())
        tall = ps.MapOverlap(lambda w: w[-2, 1] - 3 * w[2, -1], radius=(2, 1), boundary=boundary)  # rows: radius 2
        np.testing.assert_array_equal(tall(ps.Matrix(m, distribution=dist)).numpy(), tall(ps.Matrix(m)).numpy())


@pytest.mark.parametrize("kind", KINDS)
def test_matrices_all_pairs_generate_and_gathers(pair, rng, kind) -> None:
    dist = _kinds(pair)[kind]
    a = rng.integers(0, 9, (9, 4)).astype(np.int32)
    b = rng.integers(0, 9, (4, 5)).astype(np.int32)
    pairs = ps.AllPairs(lambda x, y, *, r: x * y + r, lambda s, t: s + t, identity=0)
    got = pairs(ps.Matrix(a, distribution=dist), ps.Matrix(b))
    np.testing.assert_array_equal(got.numpy(), pairs(ps.Matrix(a), ps.Matrix(b)).numpy())
    cells = ps.Generate("int f(ps_index r, ps_index c) { return (int)(r * 10 + c); }")
    out = ps.Matrix(shape=(9, 4), dtype=np.int32, distribution=dist)
    np.testing.assert_array_equal(cells((9, 4), out=out).numpy(), cells((9, 4)).numpy())
    flat = ps.Generate(lambda *, i: np.int32(i))
    out = ps.Vector(size=13, dtype=np.int32, distribution=dist)
    np.testing.assert_array_equal(flat(13, out=out).numpy(), np.arange(13))
    positions = rng.integers(0, 20, 31).astype(np.uint32)
    values = rng.integers(0, 100, 20).astype(np.int32)
    placed = ps.Vector(positions, distribution=dist)
    np.testing.assert_array_equal(ps.Gather()(ps.Vector(values), placed).numpy(), values[positions])
    looked_up = ps.MapArray(lambda p, table: table[p])(placed, ps.Vector(values))
    np.testing.assert_array_equal(looked_up.numpy(), values[positions])
    targets = rng.permutation(40)[:31].astype(np.uint32)  # distinct: no write races
    moved = ps.Vector(positions.astype(np.int32), distribution=dist)
    scatter = ps.Scatter("int f(int x, ps_index i, int s) { return x * s + (int)i; }")
    got = scatter(moved, ps.Vector(targets, distribution=dist), 3, size=40)
    np.testing.assert_array_equal(
        got.numpy(), scatter(ps.Vector(positions.astype(np.int32)), ps.Vector(targets), 3, size=40).numpy()
    )
    into = ps.Vector(np.full(40, -1, np.int32), distribution=ps.dist.block(pair, weights=[3, 1]))
    ps.Scatter()(moved, ps.Vector(targets), out=into)
    want = np.full(40, -1, np.int32)
    want[targets] = positions
    np.testing.assert_array_equal(into.numpy(), want)


@pytest.mark.parametrize("kind", KINDS)
def test_sort_and_scan_across_parts(pair, rng, kind) -> None:
    dist = _kinds(pair)[kind]
    for dtype in (np.uint32, np.int32, np.float32):
        for n in (0, 1, 5, 3001):
            if dtype == np.float32:
                keys = (rng.standard_normal(n) * 100).astype(dtype)
                keys[: n // 10] = np.nan
                keys[n // 10 : n // 5] = -0.0
            else:
                keys = rng.integers(0, 40, n).astype(dtype)  # many equal keys
            values = rng.permutation(n).astype(np.int32)
            k, v = ps.sort(ps.Vector(keys, distribution=dist), ps.Vector(values, distribution=dist))
            order = np.argsort(keys, kind="stable")
            np.testing.assert_array_equal(k.numpy(), ps.sort(keys))
            np.testing.assert_array_equal(v.numpy(), values[order])
            assert k.size == n and k.distribution.devices == dist.devices
            if dtype != np.float32:
                wrap = (keys * np.array(2**29, dtype)).astype(dtype)  # sums overflow and wrap
                for inclusive in (False, True):
                    got = ps.scan(ps.Vector(wrap, distribution=dist), inclusive=inclusive)
                    np.testing.assert_array_equal(got.numpy(), ps.scan(wrap, inclusive=inclusive))


def test_copies_written_differently_are_combined(pair, rng) -> None:
    x = rng.integers(0, 4, 101).astype(np.int32)
    items = ps.Vector(x, distribution=ps.dist.block(pair))
    count = "void f(int x, __global int *h) { atomic_inc(&h[x]); }"
    counts = ps.Vector(np.zeros(4, np.int32), distribution=ps.dist.copy(pair, combine=lambda a, b: a + b))
    ps.Map(count)(items, counts)
    np.testing.assert_array_equal(counts.numpy(), np.bincount(x, minlength=4))
    np.testing.assert_array_equal(counts.parts[1].numpy(), np.bincount(x, minlength=4))  # every copy merged
    with pytest.raises(ShapeError, match="combine"):
        ps.Map(count)(items, ps.Vector(np.zeros(4, np.int32), distribution=ps.dist.copy(pair)))
    with pytest.raises(ShapeError, match="copy"):
        ps.Map(count)(items, ps.Vector(np.zeros(4, np.int32)))
    alike = ps.Vector(x, distribution=ps.dist.copy(pair))
    counts = ps.Vector(np.zeros(4, np.int32), distribution=ps.dist.copy(pair))
    ps.Map(count)(alike, counts)  # every copy does the same work: nothing to combine
    np.testing.assert_array_equal(counts.numpy(), np.bincount(x, minlength=4))


def test_redistribution_moves_only_what_must_move(pair, monkeypatch) -> None:
    x = np.arange(100, dtype=np.int32)
    v = ps.Vector(x, distribution=ps.dist.block(pair))
    for part in v.parts.values():
        part.to_device()  # the parts are on their devices, as after a skeleton
    uploaded: list[int] = []
    for dev in pair:
        real = dev.upload

        def counting(buffer, host, *args, real=real, **kwargs):
            uploaded.append(host.nbytes)
            return real(buffer, host, *args, **kwargs)

        monkeypatch.setattr(dev, "upload", counting)
    v.redistribute(ps.dist.block(pair, weights=[60, 40]))
    assert [p.size for p in v.parts.values()] == [60, 40]
    assert sum(uploaded) == 10 * 4  # rows 50..59 change device; the others stay where they are
    uploaded.clear()
    v.redistribute(ps.dist.overlap(pair, 3, weights=[60, 40]))
    assert sum(uploaded) == 6 * 4  # the halos only
    np.testing.assert_array_equal(v.numpy(), x)
    uploaded.clear()
    v.redistribute(ps.dist.overlap(pair, 3, weights=[60, 40]))
    assert uploaded == []
    v.redistribute(ps.dist.single(pair[0]))
    np.testing.assert_array_equal(v.parts[0].numpy(), x)
    v[3] = -1
    assert v.numpy()[3] == -1 and x[3] == 3


def test_mixed_and_bad_placements(pair, rng) -> None:
    x = rng.integers(0, 9, 50).astype(np.int32)
    a = ps.Vector(x, distribution=ps.dist.block(pair))
    b = ps.Vector(x, distribution=ps.dist.block(pair, weights=[1, 4]))
    np.testing.assert_array_equal(ps.Zip(lambda p, q: p + q)(a, b).numpy(), 2 * x)  # b redistributed for the call
    assert b.distribution.weights == (1.0, 4.0)
    elsewhere = ps.Vector(x, distribution=ps.dist.block([pair[1], pair[0]]))
    with pytest.raises(ShapeError, match="redistribute"):
        ps.Zip(lambda p, q: p + q)(a, elsewhere)
    with pytest.raises(ShapeError, match="shape"):
        ps.Zip(lambda p, q: p + q)(a, ps.Vector(x[:10]))
    with pytest.raises(ShapeError, match="outside"):
        ps.Scatter()(a, ps.Vector(np.arange(50, dtype=np.uint32) + 1, distribution=ps.dist.block(pair)))
    with pytest.raises(ShapeError, match="distributed over 2 parts"):
        a.to_device()
    with pytest.raises(ShapeError, match="no device"):
        ps.Vector(x, device=pair[0], distribution=ps.dist.block(pair))
    with pytest.raises(ShapeError, match="out"):
        ps.Map(lambda p: p)(a, out=ps.Vector(x))


def test_a_gpu_and_a_cpu_together(rng) -> None:
    devices = ps.devices()
    kinds = {d.type for d in devices}
    if not {"gpu", "cpu"} <= kinds:
        pytest.skip(f"needs a GPU and a CPU device; here: {[d.id for d in devices]}")
    gpu = next(d for d in devices if d.type == "gpu")
    cpu = next(d for d in devices if d.type == "cpu")
    x = rng.integers(0, 1000, 100_001).astype(np.int32)
    v = ps.Vector(x, distribution=ps.dist.block([gpu, cpu], weights="speed"))
    assert ps.Reduce(lambda a, b: a + b, identity=0)(ps.Map(lambda a: a % 7)(v)) == (x % 7).sum()
    np.testing.assert_array_equal(ps.sort(v).numpy(), np.sort(x))


def test_blocks_sized_by_speed_and_rows_read_alone(pair) -> None:
    dist = ps.dist.block(pair, weights="speed")
    assert len(dist.weights) == 2 and all(w > 0 for w in dist.weights)
    v = ps.Vector(np.arange(1000, dtype=np.int32), distribution=dist)
    assert sum(p.size for p in v.parts.values()) == 1000
    np.testing.assert_array_equal(v.numpy(), np.arange(1000))
    part = ps.Map(lambda a: a + 1)(v.parts[0])  # valid on the device only
    np.testing.assert_array_equal(part.read_rows(2, 5), [3, 4, 5])
    np.testing.assert_array_equal(ps.Vector(np.arange(9, dtype=np.int16)).read_rows(7, 9), [7, 8])


def test_gathering_reads_each_row_once(pair, rng) -> None:
    """``numpy()`` of a container held whole by one part is that part's host copy (on a CPU
    device, the device's memory itself); of several parts, one new array their rows are read
    into; a part's rows go into a given array with ``read_rows(..., out=)``."""
    x = rng.integers(-50, 50, 5001).astype(np.int32)
    before = x.copy()
    square = ps.Map(lambda a: a * a)
    for dist in (ps.dist.single(pair[0]), ps.dist.copy(pair)):
        y = square(ps.Vector(x, copy=False, distribution=dist))
        got = y.numpy()
        np.testing.assert_array_equal(got, x * x)
        assert not got.flags.writeable
        assert np.shares_memory(got, y.parts[dist.local()[0]].numpy())
        np.testing.assert_array_equal(y.numpy(writable=True), x * x)
    for kind in ("block", "weighted", "overlap"):
        y = square(ps.Vector(x, copy=False, distribution=_kinds(pair)[kind]))
        got = y.numpy()
        np.testing.assert_array_equal(got, x * x, err_msg=kind)
        assert not any(np.shares_memory(got, p.numpy()) for p in y.parts.values()), kind
    into = np.full(4, -1, np.int32)
    part = square(ps.Vector(x[:10], device=pair[0]))  # valid on the device only
    assert part.read_rows(3, 7, out=into) is into
    np.testing.assert_array_equal(into, x[3:7] ** 2)
    np.testing.assert_array_equal(x, before)  # the input, shared by the parts, is left as it was
    whole = ps.Vector(x, distribution=_kinds(pair)["block"])
    for container in (part, whole, ps.Vector(x[:10])):  # on the device only, distributed, on the host
        for bad in (np.zeros(3, np.int32), np.zeros(4, np.int64), np.zeros(8, np.int32)[::2], [0, 0, 0, 0]):
            with pytest.raises(ShapeError, match="read_rows: out must be"):
                container.read_rows(3, 7, out=bad)
        frozen = np.zeros(4, np.int32)
        frozen.flags.writeable = False
        with pytest.raises(ShapeError, match="read-only"):
            container.read_rows(3, 7, out=frozen)


def test_sub_devices_build_apart_where_their_pocl_needs_it(pair) -> None:
    """From PoCL 5 on each sub-device builds its programs with a define of its own, so that no
    two share a compiled kernel (two finishing the same kernel at once abort PoCL 5.0);
    elsewhere their builds are alike. Either way each runs what it built."""
    apart = apart_builds(pair[0]._cl.platform.version)
    x = np.arange(1000, dtype=np.float32)
    for k, dev in enumerate(pair):
        program = dev.program("basics/vector_add.cl", {"T": "float"})
        a, c = dev.to_device(x), dev.alloc(x.nbytes)
        dev.launch(program.kernel("vector_add"), x.size, None, a, a, c, np.uint32(x.size))
        out = np.empty_like(x)
        dev.download(c, out)
        np.testing.assert_array_equal(out, 2 * x)
        built = [options for _, options in dev._programs]  # every program this sub-device built
        tags = {o for options in built for o in options if o.startswith("-DPS_SUB_DEVICE=")}
        assert tags == ({f"-DPS_SUB_DEVICE={k}"} if apart else set()), tags
        assert not apart or all(f"-DPS_SUB_DEVICE={k}" in options for options in built)


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_the_wrapped_user_functions_compile_with_nvrtc(monkeypatch) -> None:
    """The functions made for parts (the first index added, a scan's carry) compile as CUDA."""
    pair = _split(ps.device("cpu"))
    captured = []
    for dev in pair:
        build = dev.build

        def capture(source, *args, build=build, **kwargs):
            captured.append(source)
            return build(source, *args, **kwargs)

        monkeypatch.setattr(dev, "build", capture)
    v = ps.Vector(np.arange(10, dtype=np.int32), distribution=ps.dist.block(pair))
    m = ps.Matrix(np.ones((6, 3), np.float32), distribution=ps.dist.block(pair))
    ps.Map("int f(int x, ps_index i, int s) { return x * s + (int)i; }")(v, 2)
    ps.MapOverlap("float f(const float *w, ps_index r, ps_index c) { return ps_get(w, 1, 0) + r + c; }")(m)
    ps.Scan("int mul3(int a, int b, int m) { return (a + b) % m; }", identity=0)(v, 7)
    ps.AllPairs(
        "float z(float a, float b, ps_index r) { return a * b + r; }", "float add(float x, float y) { return x + y; }"
    )(m, ps.Matrix(np.ones((3, 2), np.float32)))
    wrapped = [s for s in captured if "parskel_" in s.text]
    assert len(wrapped) >= 4
    for source in wrapped:
        log, ptx = nvrtc_build(source)
        assert ".entry" in ptx, log
