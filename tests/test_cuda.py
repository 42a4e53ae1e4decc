"""The CUDA backend: NVRTC builds of every kernel file, device arrays in and out without host
copies, and device selection. The kernels and skeletons themselves are tested on every device,
cuda:N included, by the other test files.

Where CUDA is absent the tests that need a GPU are skipped with the reason; the NVRTC build
test only needs the NVRTC library (``pip install cupy-cuda12x nvidia-cuda-nvrtc-cu12``).
"""

from __future__ import annotations

import functools
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import parskel as ps
from parskel.algorithms import registry, scans, sorts
from parskel.errors import DeviceMemoryError, DTypeError, LaunchError, ShapeError, VariantError
from parskel.runtime.arrays import is_device_array
from parskel.runtime.cuda import _OPTIONS, cuda_source
from parskel.runtime.sources import Source
from test_sort import random_keys

CUDA = [d for d in ps.devices() if d.backend == "cuda"]
WHY_NOT = dict(ps.runtime.unavailable()).get("cuda", "no CUDA device")
needs_cuda = pytest.mark.skipif(not CUDA, reason=f"cuda unavailable: {WHY_NOT}")


def _nvrtc():
    try:
        import cupy_backends.cuda.libs.nvrtc as nvrtc

        nvrtc.getVersion()
    except Exception as exc:  # no CuPy, or no libnvrtc
        return None, f"NVRTC unavailable: {type(exc).__name__}: {exc}"
    return nvrtc, ""


NVRTC, NVRTC_WHY = _nvrtc()

# every kernel file with the defines its callers build it with
KERNELS: list[tuple[str, dict]] = []
for _t in ("float", "double"):
    KERNELS += [("matmul/naive.cl", {"T": _t}), ("matmul/tiles.cl", {"T": _t, "TILE": 16})]
    for _w in (2, 4, 8, 16):
        KERNELS += [
            ("matmul/blocks.cl", {"T": _t, "WIDTH": _w}),
            ("matmul/blocks_tiles.cl", {"T": _t, "WIDTH": _w, "TILE": 8}),
        ]
for _t in ("int", "uint", "long", "ulong", "float", "double"):
    for _f in ("add_sums", "blelloch", "convert", "hillis_steele", "recursive_blocks", "vector_blocks"):
        KERNELS.append((f"scan/{_f}.cl", {"T": _t, "WG": 256}))
KERNELS += [("sort/keys.cl", {"KEY_KIND": k}) for k in (0, 1, 2)]
KERNELS += [("sort/bitonic.cl", {}), ("sort/bitonic_fused.cl", {})]
KERNELS += [
    ("sort/words.cl", {"KEY_BITS": b, "KEY_CLASS": c, "ROWS": r})
    for b, c, r in ((8, 0, 1), (8, 1, 0), (16, 2, 1), (32, 2, 0), (32, 1, 0), (64, 0, 0), (64, 2, 0))
]
_SEGMENTED = [
    {"T": "uchar", "TIN": "char", "OP": 0, "IDENTITY": "0"},
    {"T": "ulong", "TIN": "uchar", "IN_KIND": 1, "HEADS": 1, "INCLUSIVE": 0},
    {"T": "float", "TIN": "ushort", "IN_KIND": 2, "OP": 3, "IDENTITY": "(-INFINITY)"},
    {"T": "double", "TIN": "double", "COMPONENTS": 2, "HEADS": 1},
    {"T": "long", "TIN": "long", "OP": 2, "IDENTITY": "(9223372036854775807L)"},
    {"T": "int", "TIN": "int", "OP": 1, "IDENTITY": "1"},
    {"T": "ulong", "TIN": "long", "OP": 2, "IDENTITY": "(18446744073709551615UL)", "HEAD_T": "uint"},
]
KERNELS += [("scan/segmented.cl", defines) for defines in _SEGMENTED]
_BATCHED = [
    {"T": "float", "TA": "float", "TB": "float", "TILE": 16},
    {"T": "uchar", "TA": "char", "TB": "uchar", "TC": "uchar", "TILE": 8},
    {"T": "uint", "TA": "uchar", "TB": "uchar", "TC": "uchar", "A_KIND": 1, "B_KIND": 1, "BOOLEAN": 1},
    {"T": "float", "TA": "ushort", "TB": "int", "A_KIND": 2},
    {"T": "double", "TA": "double", "TB": "float", "A_KIND": 3, "COMPLEX": 1},
    {"T": "ulong", "TA": "long", "TB": "ulong", "TC": "ulong"},
    {"T": "double", "TA": "double", "TB": "double", "A_KIND": 3, "B_KIND": 3, "COMPLEX": 1, "STAGED": 0},
    {"T": "float", "TA": "ushort", "TB": "float", "A_KIND": 2, "STAGED": 0},
]
KERNELS += [("matmul/batched.cl", defines) for defines in _BATCHED]
_VALUES = [{"T": "float", "KIND": 1}, {"T": "ushort", "KIND": 2}, {"T": "ulong", "KIND": 0}, {"T": "uchar", "KIND": 0}]
KERNELS += [("primitives/search.cl", {**v, "RIGHT": r}) for v in _VALUES for r in (0, 1)]
KERNELS += [("primitives/runs.cl", v) for v in [*_VALUES, {"T": "double", "KIND": 3, "EQUAL_NAN": 0}]]
KERNELS += [
    ("primitives/histogram.cl", {**v, "MODE": m, "EVEN": e, "LOCAL_BINS": b, "E": t, "WG": 256})
    for v, m, e, b, t in (
        (_VALUES[0], 1, 1, 4096, "double"),
        (_VALUES[1], 1, 0, 0, "float"),
        ({"T": "long", "KIND": 0}, 0, 0, 4096, "double"),
        (_VALUES[2], 1, 1, 0, "double"),
    )
]
KERNELS += [  # weighted: integer sums, double and float sums by compare-and-swap, float16 weights
    ("primitives/histogram.cl", {**v, "MODE": m, "LOCAL_BINS": b, "E": "double", "WG": 256, "WEIGHTS": 1, **w})
    for v, m, b, w in (
        (_VALUES[0], 1, 4096, {"W": "int", "ACC_KIND": 0}),
        ({"T": "int", "KIND": 0}, 0, 0, {"W": "ulong", "ACC_KIND": 0}),
        (_VALUES[0], 1, 0, {"W": "double", "ACC_KIND": 1}),
        (_VALUES[1], 1, 4096, {"W": "ushort", "W_HALF": 1, "ACC_KIND": 1}),
        (_VALUES[3], 0, 4096, {"W": "float", "ACC_KIND": 2}),
    )
]
KERNELS += [
    ("primitives/compact.cl", {"E": e, "WORDS": w, "PARTITION": p}) for e, w, p in (("uint", 1, 0), ("ulong", 2, 1))
]
KERNELS += [("primitives/gather.cl", {"E": e, "WORDS": w}) for e, w in (("uchar", 1), ("ushort", 1), ("ulong", 2))]
KERNELS += [("sort/local_bitonic.cl", {"KEY_KIND": k, "WITH_VALUES": v}) for k in (0, 2) for v in (0, 1)]
for _f in ("radix", "radix_local", "radix_local_vec"):
    KERNELS += [(f"sort/{_f}.cl", {"KEYS_PER_ITEM": 32, "WITH_VALUES": v, "WG": 256}) for v in (0, 1)]
for _t, _items, _vec in (("uint", 16, 4), ("ulong", 8, 2), ("float", 3, 1), ("double", 8, 2)):
    for _fallback in (0, 1):
        _defines = {"T": _t, "WG": 256, "ITEMS": _items, "VEC": _vec, "INCLUSIVE": 1, "FALLBACK": _fallback}
        # where the look-back polls: tiles by group number, staged in vectors, registers bounded
        _polled = {"ORDERED": 1, "STAGE": 1, "MIN_GROUPS": 5, "PACKED": int(_t in ("uint", "float")), "HINTS": 3}
        KERNELS.append(("scan/single_pass.cl", {**_defines, **(_polled if not _fallback else {})}))
for _v, _wide, _fallback in ((0, 0, 0), (1, 0, 1), (1, 1, 0)):
    _defines = {"WG": 256, "ITEMS": 15, "KEY_KIND": 2, "WITH_VALUES": _v, "WIDE": _wide, "FALLBACK": _fallback}
    KERNELS.append(("sort/onesweep.cl", {**_defines, "ORDERED": int(not _fallback)}))
# the tiles the tuning database gives NVIDIA GPUs, keys and pairs, as the sort builds them there:
# 48 keys a work-item, the tile in dynamic shared memory
KERNELS += [
    (
        "sort/onesweep.cl",
        {"WG": 256, "ITEMS": 48, "KEY_KIND": 0, "WITH_VALUES": _v, "FALLBACK": 0, "ORDERED": 1, "PS_DYNAMIC_LOCAL": 1},
    )
    for _v in (0, 1)
]
for _t, _vw in (("float", 1), ("float", 4), ("float", 8), ("double", 2)):
    for _order in (0, 1, 2):
        _tiles = {"MWG": 128, "NWG": 128, "KWG": 16, "VW": _vw}
        KERNELS.append(("matmul/xgemm.cl", {"T": _t, **_tiles, "MIN_GROUPS": 2, "ORDER": _order}))
# the CPU-shaped variants' kernels build for CUDA too (and run there, slowly)
KERNELS += [("matmul/packed_cpu.cl", {"T": t, "MR": 6, "NV": 4, "VW": w}) for t, w in (("float", 16), ("double", 8))]
for _t, _w in (("uint", 16), ("ulong", 8), ("float", 16), ("double", 8)):
    KERNELS.append(("scan/two_level_cpu.cl", {"T": _t, "VW": _w}))
    KERNELS.append(("scan/chained_cpu.cl", {"T": _t, "VW": _w}))
KERNELS += [
    ("sort/radix_cpu.cl", {"KEY_KIND": k, "WITH_VALUES": v, "RADIX_BITS": b})
    for k in (0, 2)
    for v, b in ((0, 8), (1, 11))
]
KERNELS += [("basics/mappings.cl", {}), ("basics/saxpy.cl", {"T": "float"}), ("basics/vector_add.cl", {"T": "double"})]
for _real, _fp64 in (("float", 0), ("double", 1)):
    for _f in ("grid", "single", "test_casters", "packet"):
        KERNELS.append((f"enlight/{_f}.cl", {"REAL": _real, "PS_FP64": _fp64, "MAX_HITS": 32}))


class _Builds:
    """Stands in for a device to learn which programs, with which defines, a host function
    builds: every call but ``program`` does nothing."""

    id = "builds"
    info = SimpleNamespace(max_work_group_size=1024, compute_units=4)

    def __init__(self) -> None:
        self.built: list[tuple[str, dict]] = []

    def program(self, path: str, defines: dict | None = None) -> _Builds:
        self.built.append((path, dict(defines or {})))
        return self

    def kernel(self, name: str) -> SimpleNamespace:
        return SimpleNamespace(name=name, max_work_group_size=1024)

    def to_device(self, host: np.ndarray) -> None:
        return None

    def alloc(self, nbytes: int) -> None:
        return None

    def launch(self, *args: object) -> None:
        return None

    def fill(self, *args: object) -> None:
        return None

    def download(self, buffer: object, out: np.ndarray) -> None:
        return None

    def download_trimmed(self, buffer: object, shape: object, out: np.ndarray) -> None:
        return None


def _study_kernels() -> list[tuple[str, dict]]:
    """Every program the variants of seed 002's study build (all of them, by running each once)."""
    from parskel.study import STUDIES

    stand_in = _Builds()
    for study in STUDIES.values():
        inputs = study.case.make(70, np.random.default_rng(0))
        for point in study.grid():
            point.variant.run(stand_in, *inputs, **point.values)
    return [entry for i, entry in enumerate(stand_in.built) if entry not in stand_in.built[:i]]


KERNELS += _study_kernels()


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
@pytest.mark.parametrize("path, defines", KERNELS, ids=[f"{p}-{'-'.join(map(str, d.values()))}" for p, d in KERNELS])
def test_kernel_builds_with_nvrtc(path: str, defines: dict) -> None:
    """Each .cl file compiles through common/cuda.h without a warning (no GPU needed)."""
    assert ".entry" in nvrtc_ptx(path, defines)


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_onesweep_takes_its_tile_from_dynamic_shared_memory_where_built_so() -> None:
    """PS_TILE_LOCAL: with PS_DYNAMIC_LOCAL the pass's tile of keys is the dynamic shared memory
    (sized at launch); without it, a fixed array of the tile's size."""
    defines = {"WG": 256, "KEY_KIND": 0, "WITH_VALUES": 1, "FALLBACK": 0, "ORDERED": 1}
    dynamic = nvrtc_ptx("sort/onesweep.cl", {**defines, "ITEMS": 48, "PS_DYNAMIC_LOCAL": 1})
    fixed = nvrtc_ptx("sort/onesweep.cl", {**defines, "ITEMS": 36})
    assert ".extern .shared .align 16 .b8 ps_dynamic_local[];" in dynamic
    assert "keys_s[" not in dynamic
    assert "ps_dynamic_local" not in fixed
    assert f"keys_s[{4 * 256 * 36}];" in fixed


def nvrtc_ptx(path: str, defines: dict) -> str:
    """The PTX that NVRTC makes of a kernel file through common/cuda.h; the test fails with the
    compiler's message if it cannot build, or if it warns."""
    log, ptx = nvrtc_build(Source.load(path), defines)
    assert log.strip() == ""
    return ptx


def captured_builds(monkeypatch: pytest.MonkeyPatch) -> tuple[ps.Device, list[Source]]:
    """The CPU device, and the list every source it builds from now on is added to (for NVRTC
    builds of whole skeleton programs, as the CUDA backend would compile them)."""
    dev = ps.device("cpu")
    captured: list[Source] = []
    build = dev.build

    def capture(source, *args, **kwargs):
        captured.append(source)
        return build(source, *args, **kwargs)

    monkeypatch.setattr(dev, "build", capture)
    return dev, captured


def nvrtc_build(source: Source, defines: dict | None = None) -> tuple[str, str]:
    """The compiler's log and the PTX of ``source`` built as the CUDA backend builds it; the test
    fails with the compiler's message, quoting the source lines, if it cannot build."""
    full = cuda_source(source, defines)
    program = NVRTC.createProgram(full.text, "kernel.cu", [], [])
    try:
        NVRTC.compileProgram(program, [*_OPTIONS, "-arch=compute_90"])
    except NVRTC.NVRTCError:
        pytest.fail(str(full.build_error(NVRTC.getProgramLog(program))))
    return str(NVRTC.getProgramLog(program)), str(NVRTC.getPTX(program).decode())


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_bare_qualifiers_are_respelled_for_nvrtc() -> None:
    text = "__kernel void k(global float *x, constant float *c) { local float s[4]; s[0] = c[0]; x[0] = s[0]; }\n"
    _, ptx = nvrtc_build(Source.compose([("bare.cl", text)]))
    assert ".entry k" in ptx


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_ptx_state_spaces_in_inline_assembly_are_not_respelled() -> None:
    """``.global`` in a PTX instruction is not OpenCL's qualifier: respelled, ptxas refuses it
    when the module loads (NVRTC passes inline assembly through unread)."""
    text = (
        "__kernel void k(global const uint *x, global uint *y) {\n"
        '    asm volatile("prefetch.global.L2 [%0];" ::"l"(x));\n'
        "    y[0] = x[0];\n}\n"
    )
    _, ptx = nvrtc_build(Source.compose([("prefetch.cl", text)]))
    assert "prefetch.global.L2" in ptx


def test_build_errors_point_at_the_file_as_written_with_nvrtc_logs() -> None:
    source = Source.compose([("user.cl", "int f(int x)\n{\n    return x +;\n}\n")])
    log = "user.cl(3): error: expected an expression\n      return x +;\n"
    excerpt = source.excerpt_for(log)
    assert "user.cl, line 3:" in excerpt and "return x +;" in excerpt


def test_devices_lists_the_cuda_backend() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "parskel", "devices"], capture_output=True, text=True, check=True
    ).stdout
    assert "cuda:0" in out if CUDA else f"cuda: not available ({WHY_NOT})" in out


# device arrays ---------------------------------------------------------------------------------


@pytest.fixture
def cuda() -> ps.Device:
    if not CUDA:
        pytest.skip(f"cuda unavailable: {WHY_NOT}")
    return CUDA[0]


@pytest.fixture
def no_host_copies(monkeypatch: pytest.MonkeyPatch):
    """PyTorch's paths to the host fail while the test runs (CuPy refuses implicit ones itself)."""
    try:
        import torch
    except ImportError:
        return

    def refuse(*args, **kwargs):
        raise AssertionError("a device array was copied to the host")

    monkeypatch.setattr(torch.Tensor, "cpu", refuse)
    monkeypatch.setattr(torch.Tensor, "numpy", refuse)


def _device_only(device: ps.Device, work):
    """Run ``work()`` and check that it moved nothing between host and device."""
    with device.record() as rec:
        result = work()
    moved = [e.label for e in rec.events if e.kind in ("upload", "download")]
    assert moved == [], f"host transfers: {moved}"
    assert rec.timing.launches > 0
    return result


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed")


def test_cupy_array_sorts_on_its_gpu_without_host_copies(cuda, rng) -> None:
    import cupy

    keys = rng.standard_normal(100_003).astype(np.float32)
    x = cupy.asarray(keys)
    result = _device_only(cuda, lambda: ps.sort(x))
    assert isinstance(result, cupy.ndarray) and result.device.id == cuda.index
    np.testing.assert_array_equal(result.get(), np.sort(keys))
    np.testing.assert_array_equal(x.get(), keys)  # the input is untouched


def test_repeated_calls_on_cupy_arrays_run_what_the_first_call_chose(cuda, rng, dispatched_families) -> None:
    """A call of a signature seen before (parskel.algorithms.recall) skips the dispatch and
    still sorts and scans each new array right, leaving it as it was."""
    cupy = _cupy()
    made = dispatched_families
    n = 70_001
    for _ in range(3):
        keys = random_keys(rng, np.uint32, n)
        payload = rng.permutation(n).astype(np.int32)
        numbers = rng.integers(-1000, 1000, n).astype(np.int32)
        k, v, x = cupy.asarray(keys), cupy.asarray(payload), cupy.asarray(numbers)
        np.testing.assert_array_equal(ps.sort(k).get(), np.sort(keys))
        got_keys, got_values = ps.sort(k, v)
        order = np.argsort(keys, kind="stable")
        np.testing.assert_array_equal(got_keys.get(), keys[order])
        np.testing.assert_array_equal(got_values.get(), payload[order])
        np.testing.assert_array_equal(ps.scan(x, inclusive=True).get(), np.cumsum(numbers, dtype=np.int32))
        np.testing.assert_array_equal(ps.scan(x).get(), np.cumsum(numbers, dtype=np.int32) - numbers)
        np.testing.assert_array_equal(k.get(), keys)
        np.testing.assert_array_equal(v.get(), payload)
        np.testing.assert_array_equal(x.get(), numbers)
    assert made == ["sort", "sort", "scan", "scan"]  # keys, pairs; inclusive, exclusive: once each
    # another length, dtype or argument is another signature
    floats = rng.standard_normal(n + 1).astype(np.float32)
    np.testing.assert_array_equal(ps.sort(cupy.asarray(floats)).get(), np.sort(floats))
    bits = floats.view(np.uint32)
    np.testing.assert_array_equal(ps.sort(cupy.asarray(bits)).get(), np.sort(bits))
    np.testing.assert_allclose(
        ps.scan(cupy.asarray(floats), inclusive=True).get(), np.cumsum(floats), rtol=1e-4, atol=1e-3
    )
    assert made[4:] == ["sort", "sort", "scan"]
    # a strided view is copied to be read: the whole way each time
    strided = cupy.asarray(numbers)[::2]
    for _ in range(2):
        np.testing.assert_array_equal(ps.scan(strided, inclusive=True).get(), np.cumsum(numbers[::2], dtype=np.int32))
    assert made[7:] == ["scan", "scan"]
    # new preferences may choose another variant: the whole way again
    registry.reload_preferences()
    np.testing.assert_array_equal(ps.scan(x).get(), np.cumsum(numbers, dtype=np.int32) - numbers)
    assert made[9:] == ["scan"]
    # matrices: flattened by a scan and by a sort along no axis, multiplied
    for _ in range(2):
        grid = rng.integers(-9, 9, (300, 70)).astype(np.int32)
        a, b = rng.standard_normal((70, 45), np.float32), rng.standard_normal((45, 33), np.float32)
        np.testing.assert_array_equal(ps.scan(cupy.asarray(grid)).get(), np.cumsum(grid) - grid.reshape(-1))
        np.testing.assert_array_equal(ps.sort(cupy.asarray(grid), axis=None).get(), np.sort(grid, axis=None))
        np.testing.assert_allclose(ps.matmul(cupy.asarray(a), cupy.asarray(b)).get(), a @ b, rtol=1e-4, atol=1e-4)
    assert made[10:] == ["scan", "sort", "matmul", "sort"]  # a sort along no axis always goes the whole way
    # a tunable of another type is another call, refused as the whole way refuses it
    ps.scan(x, WG=256)
    with pytest.raises(VariantError):
        ps.scan(x, WG=256.0)


def test_a_remembered_call_that_fails_goes_the_whole_way(cuda, rng, monkeypatch, dispatched_families) -> None:
    """Where what a call remembered fails as a variant may (out of memory, here), the call
    forgets it and dispatches again, which tries the variants."""
    cupy = _cupy()
    keys = random_keys(rng, np.uint32, 5_003)
    numbers = rng.integers(-9, 9, 5_003).astype(np.int32)
    k, x = cupy.asarray(keys), cupy.asarray(numbers)
    for module in (sorts, scans):
        monkeypatch.setattr(module._RECALL, "_plans", {})
    ps.sort(k), ps.scan(x)

    def failing(*args):
        raise DeviceMemoryError("out of device memory (a test)")

    for module in (sorts, scans):
        ((key, (stamp, _)),) = module._RECALL._plans.items()
        module._RECALL._plans[key] = (stamp, failing)
    dispatched_families.clear()  # (counted from here)
    made = dispatched_families
    np.testing.assert_array_equal(ps.sort(k).get(), np.sort(keys))
    np.testing.assert_array_equal(ps.scan(x).get(), np.cumsum(numbers) - numbers)
    np.testing.assert_array_equal(ps.sort(k).get(), np.sort(keys))
    assert made == ["sort", "scan"]


def test_torch_tensor_sorts_and_scans_into_tensors(cuda, rng, no_host_copies) -> None:
    torch = _torch()
    keys = rng.integers(-(2**31), 2**31, 50_001, dtype=np.int64).astype(np.int32)
    tensor = torch.tensor(keys, device="cuda")
    result = _device_only(cuda, lambda: ps.sort(tensor))
    assert isinstance(result, torch.Tensor) and result.is_cuda
    x = torch.arange(1000, dtype=torch.float32, device="cuda")
    scanned = _device_only(cuda, lambda: ps.scan(x, inclusive=True))
    assert isinstance(scanned, torch.Tensor) and scanned.is_cuda
    got = [_cupy().from_dlpack(result).get(), _cupy().from_dlpack(scanned).get()]
    np.testing.assert_array_equal(got[0], np.sort(keys))
    np.testing.assert_allclose(got[1], np.cumsum(np.arange(1000, dtype=np.float32)), rtol=1e-6)


def _cupy():
    import cupy

    return cupy


def test_sort_with_values_and_matmul_take_cupy_arrays(cuda, rng) -> None:
    cupy = _cupy()
    keys = rng.integers(0, 50, 10_000, dtype=np.uint32)
    values = np.arange(10_000, dtype=np.uint32)
    kd, vd = cupy.asarray(keys), cupy.asarray(values)
    k, v = _device_only(cuda, lambda: ps.sort(kd, vd, variant="radix_local"))
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(k.get(), keys[order])
    np.testing.assert_array_equal(v.get(), values[order])
    a = rng.standard_normal((70, 33)).astype(np.float32)
    b = rng.standard_normal((33, 45)).astype(np.float32)
    ad, bd = cupy.asarray(a), cupy.asarray(b)
    c = _device_only(cuda, lambda: ps.matmul(ad, bd))
    assert isinstance(c, cupy.ndarray) and c.shape == (70, 45)
    np.testing.assert_allclose(c.get(), a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.uint64, np.int64, np.float64, np.int16, np.uint8, np.float16, np.bool_])
def test_cupy_arrays_of_other_types_and_axes_sort_and_scan_on_their_gpu(cuda, rng, dtype) -> None:
    # keys other than the kernels' 32-bit ones, and axes other than the last, go through rows
    # (the ordering words, the segmented scan): a CuPy array stays one, with no host copies
    cupy = _cupy()
    for shape, axis in (((4001,), -1), ((23, 171), 0), ((3, 5, 7), 1)):
        host = random_keys(rng, dtype, int(np.prod(shape))).reshape(shape)
        if host.dtype.kind == "f":
            host.flat[::97] = np.nan
        device = cupy.asarray(host)
        values = np.arange(host.size, dtype=np.float64).reshape(shape)
        got = _device_only(cuda, functools.partial(ps.sort, device, axis=axis))
        assert isinstance(got, cupy.ndarray) and got.dtype == host.dtype
        want = np.sort(host, axis=axis, kind="stable")
        np.testing.assert_array_equal(got.get(), want)  # the keys hold no zeros of either sign
        pair = _device_only(cuda, functools.partial(ps.sort, device, cupy.asarray(values), axis=axis))
        order = np.argsort(host, axis=axis, kind="stable")
        np.testing.assert_array_equal(pair[0].get(), want)
        np.testing.assert_array_equal(pair[1].get(), np.take_along_axis(values, order, axis=axis))
        scanned = _device_only(cuda, functools.partial(ps.scan, device, axis=axis, inclusive=True))
        assert isinstance(scanned, cupy.ndarray)
        if host.dtype == np.float16:  # summed in float32, rounded once
            want_sums = np.cumsum(host.astype(np.float32), axis=axis).astype(np.float16)
            np.testing.assert_allclose(scanned.get(), want_sums, rtol=1e-3)
        elif host.dtype.kind == "f":
            np.testing.assert_allclose(scanned.get(), np.cumsum(host, axis=axis), rtol=1e-9)
        else:
            np.testing.assert_array_equal(scanned.get(), np.cumsum(host, axis=axis))
        np.testing.assert_array_equal(device.get(), host)  # the input is untouched


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, np.uint8, np.complex64])
def test_cupy_matmul_of_stacks_vectors_and_other_types_stays_on_the_gpu(cuda, rng, dtype) -> None:
    # products other than two float32 matrices go through the batched kernel, whose operands
    # were made contiguous by NumPy, which refused CuPy's arrays
    cupy = _cupy()
    for sa, sb in (((37, 45), (45, 29)), ((3, 20, 30), (30, 7)), ((2, 1, 8, 9), (4, 9, 5)), ((45,), (45, 6))):
        if np.dtype(dtype).kind in "fc":
            a, b = (rng.standard_normal(s) * 4 for s in (sa, sb))
            a, b = a.astype(dtype), b.astype(dtype)
        else:
            a, b = (rng.integers(0, 9, s).astype(dtype) for s in (sa, sb))
        got = ps.matmul(cupy.asarray(a), cupy.asarray(b))
        assert isinstance(got, cupy.ndarray)
        want = np.matmul(a, b)
        assert got.dtype == want.dtype
        if want.dtype.kind in "fc":
            tolerance = 1e-2 if dtype == np.float16 else 1e-4
            np.testing.assert_allclose(got.get(), want, rtol=tolerance, atol=tolerance * 10)
        else:
            np.testing.assert_array_equal(got.get(), want)


def _host_form(result):
    """A primitive's result with each CuPy array brought to the host, and whether any array in it
    was a NumPy array (a device array's result must stay on its device)."""
    cupy = _cupy()
    if isinstance(result, tuple):
        parts = [_host_form(r) for r in result]
        return tuple(p[0] for p in parts), any(p[1] for p in parts)
    if isinstance(result, cupy.ndarray):
        return result.get(), False
    return result, isinstance(result, np.ndarray)


def test_primitives_of_cupy_arrays_give_cupy_arrays_equal_to_the_host_calls(cuda, rng) -> None:
    # histogram's edges, copy_if and partition_if came back as NumPy arrays, top_k raised
    cupy = _cupy()
    floats = (rng.standard_normal(3001) * 10).astype(np.float32)
    ints = rng.integers(0, 20, 3001).astype(np.int32)
    table = (rng.standard_normal((17, 33)) * 5).astype(np.float64)
    positive = "int keep(float v) { return v > 0; }"
    calls = {
        "histogram": lambda x: ps.histogram(x(floats), bins=16),
        "histogram density": lambda x: ps.histogram(x(floats), bins=7, range=(-5, 5), density=True),
        "copy_if": lambda x: ps.copy_if(x(floats), positive),
        "partition_if": lambda x: ps.partition_if(x(floats), positive),
        "top_k": lambda x: ps.top_k(x(table), 5, axis=0),
        "unique": lambda x: ps.unique(x(ints), return_index=True, return_inverse=True, return_counts=True),
        "argsort": lambda x: ps.argsort(x(table), axis=0),
        "searchsorted": lambda x: ps.searchsorted(x(np.sort(ints)), x(ints)),
        "bincount": lambda x: ps.bincount(x(ints), weights=x(floats)),
    }
    for name, call in calls.items():
        want, _ = _host_form(call(lambda a: a))
        got, on_host = _host_form(call(cupy.asarray))
        assert not on_host, f"{name}: a NumPy array came back for a CuPy input"
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert np.asarray(g).dtype == np.asarray(w).dtype, name
            np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=name)


def test_vector_shares_a_cupy_array_and_exports_its_result(cuda) -> None:
    cupy = _cupy()
    x = cupy.arange(10_000, dtype=cupy.float32)
    v = ps.Vector(x, copy=False)
    assert v.device is cuda and v.shape == (10_000,)
    twice = ps.Map("float twice(float a) { return 2 * a; }")
    doubled = _device_only(cuda, lambda: twice(v))
    out = cupy.asarray(doubled)  # through __cuda_array_interface__, no copy
    assert out.data.ptr == cupy.asarray(doubled).data.ptr
    np.testing.assert_array_equal(out.get(), 2 * np.arange(10_000, dtype=np.float32))
    # copy=False shares memory: writing the container through out= writes the array
    ps.Map("float inc(float a) { return a + 1; }")(v, out=v)
    np.testing.assert_array_equal(x[:3].get(), [1.0, 2.0, 3.0])


def test_vector_copies_a_cupy_array_on_the_device_by_default(cuda) -> None:
    import cupy

    x = cupy.arange(5, dtype=cupy.int32)
    v = ps.Vector(x)
    x[:] = 0
    np.testing.assert_array_equal(v.numpy(), np.arange(5, dtype=np.int32))


def test_vector_converts_a_cupy_array_on_the_device_or_refuses_to_share(cuda) -> None:
    cupy = _cupy()
    x = cupy.arange(6, dtype=cupy.int32)
    v = _device_only(cuda, lambda: ps.Map("float half(float a) { return a / 2; }")(ps.Vector(x, dtype=np.float32)))
    np.testing.assert_array_equal(v.numpy(), np.arange(6, dtype=np.float32) / 2)
    with pytest.raises(DTypeError, match="copy=False cannot convert"):
        ps.Vector(x, dtype=np.float32, copy=False)


def test_torch_tensor_goes_through_a_map_and_back(cuda, no_host_copies) -> None:
    torch = _torch()
    t = torch.linspace(0, 1, 4097, device="cuda")
    v = ps.Vector(t, copy=False)
    square = ps.Map("float sq(float a) { return a * a; }")
    squared = _device_only(cuda, lambda: square(v))
    back = torch.from_dlpack(squared)
    assert back.is_cuda and back.shape == (4097,)
    assert back.data_ptr() == torch.from_dlpack(squared).data_ptr()
    assert torch.allclose(back, t * t)


def test_matrix_exports_through_dlpack_and_sees_device_writes(cuda) -> None:
    import cupy

    m = ps.Matrix(np.arange(12, dtype=np.float64).reshape(3, 4), device=cuda)
    view = cupy.from_dlpack(m)
    assert view.shape == (3, 4)
    view *= 2
    m.mark_device_modified()
    np.testing.assert_array_equal(m.numpy(), 2 * np.arange(12).reshape(3, 4))


def test_cuda_kernels_take_no_local_pointer_arguments(cuda) -> None:
    kernel = cuda.program("basics/mappings.cl").kernel("one_to_one")
    with pytest.raises(LaunchError, match="local array inside the kernel"):
        cuda.launch(kernel, 32, 32, ps.runtime.Local(64))


def test_copy_false_refuses_to_share_with_an_opencl_device(cuda) -> None:
    import cupy

    others = [d for d in ps.devices() if d.backend == "opencl"]
    if not others:
        pytest.skip("no OpenCL device here to refuse")
    with pytest.raises(ShapeError, match="not a CUDA device"):
        ps.Vector(cupy.zeros(4, dtype=cupy.float32), copy=False, device=others[0])
    v = ps.Vector(cupy.arange(4, dtype=cupy.float32), device=others[0])  # copied through the host
    np.testing.assert_array_equal(v.numpy(), np.arange(4, dtype=np.float32))


def test_parskel_device_environment_selects_cuda(cuda, monkeypatch) -> None:
    monkeypatch.setenv("PARSKEL_DEVICE", cuda.id)
    assert ps.device() is cuda
    assert ps.runtime.default_device().backend == "cuda"


def test_host_arrays_are_not_device_arrays() -> None:
    assert not is_device_array(np.zeros(3))
    assert not is_device_array([1, 2, 3])


def test_single_pass_variants_read_device_arrays_in_place(cuda, rng) -> None:
    """onesweep, single_pass and xgemm read CuPy arrays where they are (sliced ones too, which
    are not aligned for vector loads) and write new arrays, leaving the inputs untouched."""
    cupy = _cupy()
    keys = rng.standard_normal(70_001).astype(np.float32)
    values = np.arange(keys.size, dtype=np.int32)
    kd, vd = cupy.asarray(keys), cupy.asarray(values)
    k, v = _device_only(cuda, lambda: ps.sort(kd, vd, variant="onesweep"))
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(k.get(), keys[order])
    np.testing.assert_array_equal(v.get(), values[order])
    np.testing.assert_array_equal(kd.get(), keys)
    whole = rng.integers(-100, 100, 100_001).astype(np.int32)
    sliced = cupy.asarray(whole)[1:]  # 4 bytes past an aligned start
    for x, host in ((cupy.asarray(whole), whole), (sliced, whole[1:])):
        got = _device_only(cuda, lambda x=x: ps.scan(x, inclusive=True, variant="single_pass"))
        np.testing.assert_array_equal(got.get(), np.cumsum(host, dtype=np.int32))
        np.testing.assert_array_equal(x.get(), host)
    a = rng.standard_normal((256, 128)).astype(np.float32)
    b = rng.standard_normal((128, 384)).astype(np.float32)
    c = _device_only(cuda, lambda: ps.matmul(cupy.asarray(a), cupy.asarray(b), variant="xgemm"))
    np.testing.assert_allclose(c.get(), a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(len(CUDA) < 2, reason=f"needs two CUDA devices; this machine has {len(CUDA)}")
def test_every_gpu_runs_kernels_built_for_it_from_any_thread(rng) -> None:
    # each GPU loads its own copy of a kernel; a handle read while another GPU was current
    # is refused at launch, on the thread that built it and on any other
    import threading

    square = ps.Map("float f(float x) { return x * x; }")
    x = rng.standard_normal(10_001).astype(np.float32)
    results: dict[str, np.ndarray] = {}

    def run(dev: ps.Device) -> None:
        results[dev.id] = square(ps.Vector(x, device=dev)).numpy()

    for dev in reversed(CUDA[:2]):  # the second GPU first, from the main thread
        run(dev)
        np.testing.assert_array_equal(results.pop(dev.id), x * x)
    threads = [threading.Thread(target=run, args=(dev,)) for dev in CUDA[:2]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == sorted(d.id for d in CUDA[:2])
    for got in results.values():
        np.testing.assert_array_equal(got, x * x)
    halves = ps.Vector(x, distribution=ps.dist.block(CUDA[:2]))
    np.testing.assert_array_equal(square(halves).numpy(), x * x)
    # a sort over both GPUs: each part's worker thread makes new device arrays on its own GPU
    np.testing.assert_array_equal(ps.sort(halves).numpy(), np.sort(x))


@pytest.mark.skipif(len(CUDA) < 2, reason=f"needs two CUDA devices; this machine has {len(CUDA)}")
def test_an_array_of_the_second_gpu_is_sorted_and_scanned_there(rng) -> None:
    import cupy

    keys = rng.integers(0, 2**32, 300_007, dtype=np.uint32)
    with cupy.cuda.Device(CUDA[1].index):
        x = cupy.asarray(keys)
    for result, want in ((ps.sort(x), np.sort(keys)), (ps.scan(x, inclusive=True), np.cumsum(keys, dtype=np.uint32))):
        assert result.device.id == CUDA[1].index
        np.testing.assert_array_equal(result.get(), want)


def test_kernel_parameters_are_each_argument_s_bytes():
    """A launch's parameter array points at every argument's bytes: buffers' addresses and
    scalars of every kind (records, complex and half floats included), 8-byte aligned."""
    import ctypes
    import types

    from parskel.runtime import cuda
    from parskel.runtime.base import Buffer

    fake = types.SimpleNamespace(id="fake:0")
    buffer = Buffer(fake, 16, types.SimpleNamespace(ptr=0xDEADBEEF00))  # type: ignore[arg-type]
    record = np.zeros(1, [("a", "f4"), ("b", "i2")])[0]
    record["a"], record["b"] = 2.5, -7
    args = [
        buffer,
        np.uint32(7),
        np.float32(1.5),
        np.int64(-3),
        np.complex64(1 + 2j),
        np.float16(2),
        np.bool_(1),
        record,
    ]
    for _ in range(2):  # the second call takes the layout made by the first
        address, _kept = cuda._parameters(fake, "k", args)  # type: ignore[arg-type]
        pointers = (ctypes.c_uint64 * len(args)).from_address(address)
        assert all(p % 8 == pointers[0] % 8 for p in pointers)
        for pointer, arg in zip(pointers, args):
            want = (0xDEADBEEF00).to_bytes(8, "little") if isinstance(arg, Buffer) else arg.tobytes()
            assert ctypes.string_at(pointer, len(want)) == want, arg
    other = Buffer(types.SimpleNamespace(id="fake:1"), 16, types.SimpleNamespace(ptr=1))  # type: ignore[arg-type]
    with pytest.raises(LaunchError, match="fake:1"):
        cuda._parameters(fake, "k", [other])  # type: ignore[arg-type]


def test_small_downloads_through_the_staging_buffer(cuda, rng, monkeypatch):
    """Downloads that wait, up to STAGED_DOWNLOAD_BYTES, go through a page-locked buffer: every
    size around that limit, from an offset, and from two threads at once, arrive whole."""
    import threading

    from parskel.runtime.cuda import STAGED_DOWNLOAD_BYTES

    staged: list[int] = []
    real = type(cuda)._download_staged
    monkeypatch.setattr(type(cuda), "_download_staged", lambda self, d, s, n: (staged.append(n), real(self, d, s, n)))
    words = STAGED_DOWNLOAD_BYTES // 4
    data = rng.integers(0, 2**32, words + 64, dtype=np.uint64).astype(np.uint32)
    buffer = cuda.to_device(data)
    for count, start in [(1, 0), (3, 5), (words - 1, 1), (words, 0), (words + 1, 0), (words, 64)]:
        out = np.empty(count, np.uint32)
        cuda.download(buffer, out, offset=start * 4)
        np.testing.assert_array_equal(out, data[start : start + count])
    assert staged == [4, 12, STAGED_DOWNLOAD_BYTES - 4, STAGED_DOWNLOAD_BYTES, STAGED_DOWNLOAD_BYTES]
    failures = []

    def read(start: int) -> None:
        for _ in range(50):
            out = np.empty(1000, np.uint32)
            cuda.download(buffer, out, offset=start * 4)
            if not np.array_equal(out, data[start : start + 1000]):
                failures.append(start)

    threads = [threading.Thread(target=read, args=(s,)) for s in (0, 7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_to_device_records_no_event_unless_timed(cuda, monkeypatch):
    """A NumPy array copied by ``to_device`` arrives whole; untimed, the copy makes no CUDA
    event (the caller has none to wait for); recorded, it is timed as an upload."""
    import cupy as cp

    made: list[int] = []
    event = cp.cuda.Event
    monkeypatch.setattr(cp.cuda, "Event", lambda *a, **k: made.append(1) or event(*a, **k))
    host = np.arange(1 << 16, dtype=np.float32)[::2]  # a strided view: copied contiguous first
    buffer = cuda.to_device(host)
    assert made == []
    back = np.empty(host.size, np.float32)
    cuda.download(buffer, back)
    np.testing.assert_array_equal(back, host)
    with cuda.record() as rec:
        cuda.to_device(host)
    assert [e.kind for e in rec.events] == ["upload"]
    assert made
