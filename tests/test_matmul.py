"""Matrix multiplication: every variant against NumPy, on every device."""

from __future__ import annotations

import numpy as np
import pytest

import parskel as ps
from parskel.algorithms import variants
from parskel.errors import DTypeError, ShapeError, VariantError

VARIANTS = [v.name for v in variants("matmul")]
SQUARE = [0, 1, 2, 3, 5, 16, 17, 255, 256, 257]
RECTANGULAR = [(17, 33, 5), (1, 40, 1), (40, 1, 3), (3, 0, 4), (0, 5, 2), (2, 5, 0), (70, 9, 130)]


def _operands(rng: np.random.Generator, m: int, k: int, n: int, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    return (rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype))


def _assert_product(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """``c`` is ``a @ b`` within the rounding bound of a length-k dot product, k * eps * |a||b|."""
    assert c.shape == (a.shape[0], b.shape[1])
    assert c.dtype == a.dtype
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    bound = max(a.shape[1], 1) * np.finfo(a.dtype).eps * (np.abs(wide_a) @ np.abs(wide_b))
    assert np.all(np.abs(c - wide_a @ wide_b) <= bound + np.finfo(a.dtype).tiny)


def _run(
    device: ps.Device, rng: np.random.Generator, variant: str, shape: tuple[int, int, int], dtype: type, **params: int
) -> None:
    a, b = _operands(rng, *shape, dtype)
    a_before, b_before = a.copy(), b.copy()
    c = ps.matmul(a, b, variant=variant, device=device, **params)
    _assert_product(c, a, b)
    np.testing.assert_array_equal(a, a_before)
    np.testing.assert_array_equal(b, b_before)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("n", SQUARE)
def test_square_float32(device, rng, variant, n):
    _run(device, rng, variant, (n, n, n), np.float32)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("shape", RECTANGULAR, ids=lambda s: "x".join(map(str, s)))
def test_rectangular(device, rng, variant, shape):
    _run(device, rng, variant, shape, np.float32)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("n", [1, 17, 65])
def test_float64(device, rng, variant, n):
    if not device.info.fp64:
        with pytest.raises(DTypeError):
            ps.matmul(*_operands(rng, n, n, n, np.float64), variant=variant, device=device)
        return
    # where the default tiles of doubles do not fit (48 KiB on NVIDIA), smaller ones are chosen
    _run(device, rng, variant, (n, n + 2, n - 1), np.float64)
    _run(device, rng, None, (n, n + 2, n - 1), np.float64)


class _SmallLocal:
    """A stand-in for a device with NVIDIA's 48 KiB of local memory per work-group."""

    class info:
        local_mem_bytes = 48 * 1024
        max_work_group_size = 1024
        max_work_item_sizes = (1024, 1024, 64)


def test_unset_parameters_are_fitted_to_the_device(device, rng):
    variant = ps.algorithms.get("matmul", "blocks_tiles")
    doubles = {"itemsize": 8}
    assert variant.unmet(_SmallLocal, None, doubles)  # TILE=16, WIDTH=4: 64 KiB of doubles
    fitted = variant.fitted(_SmallLocal, None, doubles)
    assert not variant.unmet(_SmallLocal, fitted, doubles) and fitted["TILE"] == 16
    assert variant.fitted(_SmallLocal, None, {"itemsize": 4}) == variant.resolve()  # floats fit as they are
    pinned = variant.fitted(_SmallLocal, {"WIDTH": 4}, doubles)  # the caller's choice stays
    assert pinned["WIDTH"] == 4 and not variant.unmet(_SmallLocal, pinned, doubles)
    assert variant.unmet(_SmallLocal, variant.fitted(_SmallLocal, {"TILE": 16, "WIDTH": 8}, doubles), doubles)
    if device.info.fp64:
        _run(device, rng, "blocks_tiles", (33, 20, 17), np.float64, **fitted)


def test_parameters_set_too_large_are_refused_before_running(device, rng):
    variant = ps.algorithms.get("matmul", "tiles")
    side = next((t for t in sorted(variant.params[0].choices) if 2 * t * t * 8 > device.info.local_mem_bytes), None)
    if side is None:
        pytest.skip(f"{device.id}'s {device.info.local_mem_bytes} bytes of local memory hold every tile size")
    with pytest.raises(VariantError, match="local memory"):
        ps.matmul(*_operands(rng, 4, 4, 4, np.float64), variant="tiles", TILE=side, device=device)


@pytest.mark.parametrize("width", [2, 4, 8, 16])
def test_blocks_every_width(device, rng, width):
    _run(device, rng, "blocks", (37, 45, 29), np.float32, WIDTH=width)


@pytest.mark.parametrize("params", [{"TILE": 4, "WIDTH": 2}, {"TILE": 8, "WIDTH": 8}], ids=str)
def test_blocks_tiles_other_shapes(device, rng, params):
    variant = ps.algorithms.get("matmul", "blocks_tiles")
    if variant.unmet(device, params):
        pytest.skip(f"{device.id} cannot run blocks_tiles with {params}")
    _run(device, rng, "blocks_tiles", (37, 45, 29), np.float32, **params)


XGEMM_CONFIGS = [
    {"MWG": 32, "NWG": 64, "KWG": 8, "MDIMC": 8, "NDIMC": 16, "VW": 1},
    {"MWG": 64, "NWG": 64, "KWG": 4, "MDIMC": 16, "NDIMC": 8, "VW": 2},
    {"MWG": 128, "NWG": 128, "KWG": 16, "MDIMC": 16, "NDIMC": 16, "VW": 8},
    {"MWG": 64, "NWG": 128, "KWG": 32, "MDIMC": 8, "NDIMC": 16, "VW": 4},
]


@pytest.mark.parametrize("order", [0, 1, 2], ids=lambda o: f"order{o}")
@pytest.mark.parametrize("params", XGEMM_CONFIGS, ids=lambda p: "-".join(map(str, p.values())))
def test_xgemm_configurations(device, rng, params, order):
    """Every tile shape, in each order of a step's multiply-adds, against NumPy: one product
    that needs padding and one whose sides are whole tiles."""
    params = {**params, "ORDER": order}
    variant = ps.algorithms.get("matmul", "xgemm")
    if variant.unmet(device, params):
        pytest.skip(f"{device.id} cannot run xgemm with {params}: {variant.unmet(device, params)}")
    for shape in [(37, 45, 29), (params["MWG"] * 2, params["KWG"] * 3, params["NWG"])]:
        _run(device, rng, "xgemm", shape, np.float32, **params)


def test_xgemm_builds_the_order_it_is_given_or_tuned(device, rng, monkeypatch):
    """ORDER reaches the kernel's build, named by the caller or read from the tuning database."""
    from parskel.tune import database

    built = []
    program = type(device).program

    def noted(dev, path, defines=None):
        if path == "matmul/xgemm.cl":
            built.append(dict(defines or {}))
        return program(dev, path, defines)

    monkeypatch.setattr(type(device), "program", noted)
    params = {**XGEMM_CONFIGS[0], "MIN_GROUPS": 1}
    _run(device, rng, "xgemm", (37, 45, 29), np.float32, **params, ORDER=2)
    assert built[-1]["ORDER"] == 2
    tuned = database.for_device(
        device, "matmul", 64, order=("xgemm",), params={"xgemm": {**params, "ORDER": 1}}, seconds={}, measured={}
    )
    with database.pinned(tuned):
        _run(device, rng, "xgemm", (64, 64, 64), np.float32)
    assert built[-1]["ORDER"] == 1


def test_xgemm_on_padded_device_buffers(device, rng):
    """The kernel on buffers already on the device (what ``parskel bench resident`` times on
    OpenCL): operands padded with zeros to whole tiles give NumPy's product in the top-left
    block; sides that are not whole tiles, a buffer too small or an integer type are refused
    before a launch."""
    from parskel.algorithms import xgemm
    from parskel.algorithms.matmuls import padded_product

    params = XGEMM_CONFIGS[0]
    a = rng.standard_normal((37, 45)).astype(np.float32)
    b = rng.standard_normal((45, 29)).astype(np.float32)
    sides, ba, bb, bc = padded_product(device, a, b, (params["MWG"], params["KWG"], params["NWG"]))
    m, k, n = sides
    xgemm.xgemm_buffers(device, ba, bb, bc, sides, np.float32, **params)
    c = np.empty((37, 29), np.float32)
    device.download_trimmed(bc, (m, n), c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    with pytest.raises(ShapeError, match="whole tiles"):
        xgemm.xgemm_buffers(device, ba, bb, bc, (37, k, n), np.float32, **params)
    with pytest.raises(ShapeError, match="fewer than"):
        xgemm.xgemm_buffers(device, ba, bb, device.alloc(4), sides, np.float32, **params)
    with pytest.raises(DTypeError, match="float32 or float64"):
        xgemm.xgemm_buffers(device, ba, bb, bc, sides, np.int32, **params)


def test_xgemm_refuses_tiles_that_do_not_divide(device):
    a = np.ones((4, 4), np.float32)
    with pytest.raises(VariantError, match="divide"):
        ps.matmul(a, a, variant="xgemm", device=device, MWG=64, MDIMC=32, VW=4)


@pytest.mark.parametrize("params", [{"MR": 1, "NV": 1}, {"MR": 6, "NV": 3}, {"MR": 16, "NV": 1}], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_packed_cpu_other_tiles(device, rng, params, dtype):
    """Tiles of other shapes; 37 x 45 x 29 leaves partial tiles at both edges of C."""
    if dtype == np.float64 and not device.info.fp64:
        pytest.skip(f"{device.id} has no fp64")
    _run(device, rng, "packed_cpu", (37, 45, 29), dtype, **params)
    _run(device, rng, "packed_cpu", (3, 200, 70), dtype, **params)


@pytest.mark.parametrize("tile", [4, 8])
def test_tiles_other_sizes(device, rng, tile):
    _run(device, rng, "tiles", (21, 19, 23), np.float32, TILE=tile)


def test_default_variant_and_strided_inputs(device, rng):
    a, b = _operands(rng, 40, 30, 20, np.float32)
    _assert_product(ps.matmul(b.T, a.T, device=device), b.T, a.T)


def test_transfers_are_recorded(device, rng):
    a, b = _operands(rng, 33, 33, 33, np.float32)
    with device.record() as rec:
        ps.matmul(a, b, variant="tiles", device=device)
    timing = rec.timing
    assert timing.launches == 1
    assert timing.upload > 0 and timing.kernel > 0 and timing.download > 0


@pytest.mark.parametrize(
    "a, b",
    [
        (np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)),
        (np.float32(2), np.ones((3, 1), np.float32)),
        (np.ones((2, 2, 3), np.int32), np.ones((3, 3, 4), np.int32)),
    ],
)
def test_shape_errors(device, a, b):
    with pytest.raises(ShapeError):
        ps.matmul(a, b, device=device)


@pytest.mark.parametrize("dtypes", [(np.int32, "U2"), (object, np.float64), (">f4", ">f4")])
def test_dtype_errors(device, dtypes):
    with pytest.raises(DTypeError, match="complex128"):
        ps.matmul(np.ones((2, 2), dtypes[0]), np.ones((2, 2), dtypes[1]), device=device)


def test_variant_errors(device):
    a = np.ones((2, 2), np.float32)
    with pytest.raises(VariantError):
        ps.matmul(a, a, variant="strassen", device=device)
    with pytest.raises(VariantError):
        ps.matmul(a, a, variant="blocks", WIDTH=3, device=device)
    with pytest.raises(VariantError):
        ps.matmul(a, a, variant="naive", TILE=16, device=device)
    with pytest.raises(VariantError, match="batched kernel"):
        ps.matmul(a.astype(np.int32), a, variant="naive", device=device)


def test_4097_default_variant(device):
    """The acceptance case: a 4097 x 4097 product, checked on a sample of rows and columns."""
    rng = np.random.default_rng(4097)
    n = 4097
    a, b = _operands(rng, n, n, n, np.float32)
    c = ps.matmul(a, b, device=device)
    assert c.shape == (n, n)
    rows = np.r_[0, 1, rng.choice(n, 30, replace=False), n - 1]
    cols = np.r_[0, rng.choice(n, 30, replace=False), n - 1]
    _assert_product(c[rows], a[rows], b)
    _assert_product(c[:, cols], a, b[:, cols])
