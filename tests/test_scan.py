"""Prefix sums: every variant, both kinds, every dtype, against NumPy's cumsum."""

from __future__ import annotations

import numpy as np
import pytest

import parskel as ps
from parskel.algorithms import registry
from parskel.algorithms.scans import scan_buffer
from parskel.errors import ArgumentError, DTypeError, LaunchError, ShapeError, VariantError

VARIANTS = [v.name for v in registry.variants("scan")]
SEED = ["hillis_steele", "blelloch", "recursive_blocks", "vector_blocks"]
CPU = [name for name in VARIANTS if name.endswith("_cpu")]
DTYPES = [np.int32, np.uint32, np.float32, np.int64, np.uint64, np.float64]
SIZES = [0, 1, 2, 3, 5, 16, 17, 255, 256, 257, 1000, 4097, 6133, 70001]


def reference(x: np.ndarray, inclusive: bool) -> np.ndarray:
    """NumPy's scan in x's own dtype (integers wrap around), exclusive by a shift."""
    inc = np.cumsum(x, dtype=x.dtype)
    if inclusive:
        return inc
    return np.concatenate([np.zeros(1, x.dtype), inc[:-1]])[: x.size]


def sample(rng: np.random.Generator, dtype: type, n: int) -> np.ndarray:
    """Integers over the whole range (so sums wrap), floats of both signs."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.standard_normal(n).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)


def assert_scan(got: np.ndarray, x: np.ndarray, inclusive: bool) -> None:
    """Exact for integers; floats within a tolerance of the running sum of magnitudes.

    The kernels add in tree order, NumPy left to right: each partial sum may differ by a few
    rounding errors of the largest magnitude summed so far, not of the (possibly cancelled) result.
    """
    want = reference(x, inclusive)
    assert got.dtype == x.dtype and got.shape == x.shape
    if x.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    rtol = 1e-4 if x.dtype == np.float32 else 1e-12
    scale = reference(np.abs(x).astype(np.float64), inclusive) + 1
    assert np.all(np.abs(got.astype(np.float64) - want) <= rtol * scale)


def skip_without_fp64(device: ps.Device, dtype: type) -> None:
    if np.dtype(dtype) == np.float64 and not device.info.fp64:
        pytest.skip(f"{device.id} has no fp64")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("inclusive", [False, True], ids=["exclusive", "inclusive"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_variant_matches_numpy(device, rng, variant, inclusive, dtype):
    skip_without_fp64(device, dtype)
    for n in [*SIZES, int(rng.integers(2, 20000))]:
        x = sample(rng, dtype, n)
        before = x.copy()
        got = ps.scan(x, inclusive=inclusive, variant=variant, device=device)
        assert_scan(got, x, inclusive)
        np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("variant", ["recursive_blocks", "vector_blocks"])
@pytest.mark.parametrize("wg", [64, 1024])
def test_block_variants_at_other_work_group_sizes(device, rng, variant, wg):
    if wg > device.info.max_work_group_size:
        pytest.skip(f"{device.id} runs at most {device.info.max_work_group_size} work-items a group")
    # one block, just over one (two levels), several, and where small enough three levels
    block = (16 if variant == "vector_blocks" else 2) * wg
    sizes = [block - 1, block + 1, 3 * block + 5]
    if block * block <= 1 << 21:
        sizes.append(block * block + 7)
    for n in sizes:
        x = sample(rng, np.int32, n)
        try:
            got = ps.scan(x, inclusive=True, variant=variant, device=device, WG=wg)
        except LaunchError as exc:
            # a kernel's own limit (registers) can be below the device's; the refusal names it
            if "for this kernel" not in str(exc):
                raise
            pytest.skip(f"{device.id} refuses WG={wg} for this kernel: {exc}")
        assert_scan(got, x, True)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("variant", CPU)
def test_cpu_runs(device, rng, variant, dtype):
    """One run, a few, and many short ones (runs are whole vectors of 64 bytes: 16 or 8
    elements, or of 32 bytes where tuned so; chained_cpu's tiles of 4096 and more, scanned in one
    pass where their prefix is known or not), around those sizes, inclusive and exclusive, in
    place and not."""
    skip_without_fp64(device, dtype)
    lanes = 64 // np.dtype(dtype).itemsize
    shapes = {
        "chained_cpu": (
            {"groups_per_cu": 1},
            {"groups_per_cu": 4, "tile": 4096, "one_pass": 1},
            {"groups_per_cu": 2, "tile": 4096, "vector_bytes": 32},
            {"groups_per_cu": 4, "tile": 4096, "one_pass": 0},  # every tile added up first
            {"groups_per_cu": 4, "tile": 4096, "stream": 1},  # non-temporal stores (on CPUs)
            {"groups_per_cu": 2, "tile": 4096, "vector_bytes": 32, "one_pass": 0, "stream": 1},
        ),
    }.get(
        variant,
        (
            {"groups_per_cu": 1},
            {"groups_per_cu": 2, "min_run": 256},
            {"groups_per_cu": 32, "min_run": 1},
            {"groups_per_cu": 2, "min_run": 16, "vector_bytes": 32},
        ),
    )
    for params in shapes:
        for n in [lanes - 1, lanes, lanes + 1, 5 * lanes + 3, 1000, 2049, 4096 * 3 + 5]:
            x = sample(rng, dtype, n)
            for inclusive in (False, True):
                got = ps.scan(x, inclusive=inclusive, variant=variant, device=device, **params)
                assert_scan(got, x, inclusive)
        src = device.to_device(x)
        dst = device.alloc(x.nbytes)
        scan_buffer(device, src, dst, n, dtype, inclusive=True, variant=variant, **params)
        out = np.empty_like(x)
        device.download(dst, out)
        assert_scan(out, x, True)
        scan_buffer(device, src, src, n, dtype, inclusive=False, variant=variant, **params)  # in place
        device.download(src, out)
        assert_scan(out, x, False)


@pytest.mark.parametrize("inclusive", [False, True], ids=["exclusive", "inclusive"])
def test_default_million(device, rng, inclusive):
    x = sample(rng, np.int32, 1_000_003)
    assert_scan(ps.scan(x, inclusive=inclusive, device=device), x, inclusive)


def test_default_ten_million(device, rng):
    x = rng.integers(-1000, 1000, size=10_000_000, dtype=np.int32)
    assert_scan(ps.scan(x, device=device), x, False)


def test_float32_large_tolerance(device, rng):
    x = rng.random(1 << 20, dtype=np.float32)
    assert_scan(ps.scan(x, inclusive=True, device=device), x, True)


def test_accepts_lists_and_strided_views(device):
    np.testing.assert_array_equal(ps.scan([3, 1, 4, 1, 5], device=device), [0, 3, 4, 8, 9])
    x = np.arange(20, dtype=np.int32)[::3]
    assert_scan(ps.scan(x, inclusive=True, device=device), x, True)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("in_place", [False, True], ids=["copy", "in_place"])
def test_scan_buffer(device, rng, variant, in_place):
    n = 5000
    x = sample(rng, np.uint32, n)
    src = device.to_device(x)
    # dst longer than n: the elements past n must stay as they were
    tail = np.full(7, 12345, dtype=np.uint32)
    dst = src if in_place else device.to_device(np.concatenate([np.zeros(n, np.uint32), tail]))
    scan_buffer(device, src, dst, n, np.uint32, inclusive=False, variant=variant)
    out = np.empty(dst.nbytes // 4, dtype=np.uint32)
    device.download(dst, out)
    assert_scan(out[:n], x, False)
    if not in_place:
        np.testing.assert_array_equal(out[n:], tail)
        back = np.empty_like(x)
        device.download(src, back)
        np.testing.assert_array_equal(back, x)


def test_scan_buffer_takes_the_tuning_of_its_size(device, rng, dispatched):
    """A scan of device buffers asks the tuning database for its own element count, as
    ``parskel.scan`` does (without one it took whichever entry came first)."""
    x = rng.integers(-100, 100, 5000).astype(np.int32)
    src = device.to_device(x)
    scan_buffer(device, src, src, 3000, np.int32, inclusive=True)
    out = np.empty_like(x)
    device.download(src, out)
    np.testing.assert_array_equal(out[:3000], np.cumsum(x[:3000], dtype=np.int32))
    np.testing.assert_array_equal(out[3000:], x[3000:])
    assert dispatched and dispatched[0].get("n") == 3000


def test_scan_buffer_refuses_bad_arguments(device):
    small = device.alloc(40)
    with pytest.raises(ShapeError):
        scan_buffer(device, small, small, 11, np.int32)
    with pytest.raises(DTypeError):
        scan_buffer(device, small, small, 5, np.int16)
    with pytest.raises(VariantError):
        scan_buffer(device, small, small, 5, np.int32, variant="quick")
    with pytest.raises(VariantError):
        scan_buffer(device, small, small, 5, np.int32, WG=100)


@pytest.mark.parametrize(
    "bad, kwargs, error",
    [
        (np.zeros((2, 3), np.int32), {"axis": 2}, ShapeError),
        (np.int32(5), {"axis": 0}, ShapeError),
        (np.zeros(4, np.int32), {"axis": 0.5}, ArgumentError),
        (np.zeros(4, "U1"), {}, DTypeError),
        (np.zeros(4, ">i4"), {}, DTypeError),
        (np.zeros(4, np.complex64), {"dtype": np.float32}, DTypeError),
        (np.zeros(4, np.int32), {"dtype": bool}, DTypeError),
    ],
    ids=["axis", "scalar_axis", "float_axis", "str", "big_endian", "complex_to_real", "to_bool"],
)
def test_rejects_bad_input(device, bad, kwargs, error):
    with device.record() as rec, pytest.raises(error):
        ps.scan(bad, device=device, **kwargs)
    assert rec.timing.launches == 0


def test_rejects_unknown_variant_and_parameters(device):
    x = np.arange(5, dtype=np.int32)
    with pytest.raises(VariantError):
        ps.scan(x, variant="quick", device=device)
    with pytest.raises(VariantError):
        ps.scan(x, variant="blelloch", device=device, WG=100)
    with pytest.raises(VariantError):
        ps.scan(x, device=device, TILE=4)


def test_variants_are_registered():
    seeds = [v for v in registry.variants("scan") if v.seed.startswith("000")]
    assert [v.name for v in seeds] == SEED == VARIANTS[:4]
    assert "single_pass" in VARIANTS
    for v in seeds:
        assert v.seed.startswith("000 §4.") and [p.name for p in v.params] == ["WG"]
    assert "two_level_cpu" in CPU
    for name in CPU:
        assert registry.get("scan", name).seed.startswith("beyond 000 §4")


def test_record_splits_upload_kernel_download(device, rng):
    x = sample(rng, np.int32, 100_000)
    with device.record() as rec:
        ps.scan(x, variant="vector_blocks", device=device)
    kinds = [event.kind for event in rec.events]
    assert kinds[0] == "upload" and kinds[-1] == "download" and kinds.count("kernel") >= 2


@pytest.fixture
def array_only_variant(monkeypatch):
    """A scan variant registered with only a ``run`` (as a user registers one): it scans
    arrays, on the host here, so that only the dispatch around it is under test."""

    def run(device, x, *, inclusive, **params):
        return np.cumsum(x, dtype=x.dtype) - (0 if inclusive else x)

    variant = registry.Variant(family="scan", name="users_own", seed="-", summary="a user's scan", run=run)
    monkeypatch.setitem(registry._REGISTRY["scan"], "users_own", variant)
    return variant


def test_a_users_array_only_variant_scans_arrays_and_refuses_buffers(device, rng, array_only_variant):
    x = rng.integers(-50, 50, 100_003).astype(np.int32)
    np.testing.assert_array_equal(ps.scan(x, variant="users_own", device=device, inclusive=True), np.cumsum(x))
    buffer = device.alloc(x.nbytes)
    with pytest.raises(VariantError, match="arrays only"):
        scan_buffer(device, buffer, buffer, x.size, np.int32, variant="users_own")
    # too large for the device's share given: only a variant that scans buffers goes in chunks
    with pytest.raises(VariantError, match="do not fit"):
        ps.scan(x, variant="users_own", device=device, max_device_memory="64KiB")
    np.testing.assert_array_equal(ps.scan(x, device=device, max_device_memory="64KiB"), np.cumsum(x) - x)


@pytest.mark.parametrize("variant", SEED)
def test_the_seed_scans_fit_a_tuned_work_group_to_their_kernels(device, rng, monkeypatch, variant):
    """A work-group tuned elsewhere (1024 through CUDA) that the built kernels cannot run (256
    on NVIDIA's OpenCL) is narrowed, or the blocks built again smaller: here every kernel is
    made to report 64."""
    kernel = device.program("scan/convert.cl", {"T": "int"}).kernel("shift_right")
    monkeypatch.setattr(type(kernel), "max_work_group_size", property(lambda self: 64))
    x = sample(rng, np.int32, 5000)
    for inclusive in (False, True):
        assert_scan(ps.scan(x, inclusive=inclusive, variant=variant, WG=256, device=device), x, inclusive)


@pytest.mark.parametrize("offset", [1, 3, 15])
def test_chained_cpu_streams_into_memory_off_a_vector_boundary(device, rng, offset):
    """Non-temporal stores take whole aligned vectors: a result that starts ``offset`` elements
    past a 64-byte boundary is scanned element by element up to the first one, then in vectors."""
    if not device.shares_host_memory:
        pytest.skip(f"{device.id} does not work in host memory; non-temporal stores are for CPU devices")
    n = 4096 * 3 + 5
    x = sample(rng, np.int32, n)
    backing = np.empty(n + 32, np.int32)
    start = (-backing.ctypes.data % 64) // 4 + offset
    out = backing[start : start + n]
    assert out.ctypes.data % 64 == 4 * offset
    src, dst = device.host_buffer(x), device.host_buffer(out, upload=False)
    params = {"groups_per_cu": 2, "tile": 4096, "stream": 1}
    scan_buffer(device, src, dst, n, np.int32, inclusive=True, variant="chained_cpu", **params)
    device.download(dst, out)
    assert_scan(out, x, True)
