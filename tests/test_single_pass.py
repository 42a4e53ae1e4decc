"""The single-pass GPU variants (scan/single_pass, sort/onesweep) in every look-back mode.

Each mode runs on every device: ``progress=1`` polls until a predecessor publishes (safe on PoCL,
whose started work-groups keep running), ``progress=2`` is the decoupled fallback, and with no
polls at all (``SPINS = 0``) the fallback recomputes every predecessor it finds silent. The
shared tests (test_scan.py, test_sort.py) run the defaults over every size and distribution.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

import parskel as ps
from parskel.algorithms import onesweep, scans, single_pass
from parskel.errors import LaunchError
from parskel.runtime import traits
from test_scan import assert_scan, sample, skip_without_fp64
from test_sort import DISTRIBUTIONS, extreme_keys, random_keys

SCAN_DTYPES = [np.int32, np.uint32, np.float32, np.int64, np.uint64, np.float64]
MODES = [0, 1, 2]


@pytest.fixture(params=["polls", "no_polls"])
def spins(request, monkeypatch):
    if request.param == "no_polls":
        monkeypatch.setattr(traits, "SPINS", 0)
    return request.param


@pytest.mark.parametrize("dtype", SCAN_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("progress", MODES)
def test_scan_modes(device, rng, spins, progress, dtype):
    skip_without_fp64(device, dtype)
    for n, inclusive in [(1, True), (1000, False), (64 * 16 * 40 + 3, True), (200_003, False)]:
        x = sample(rng, dtype, n)
        got = ps.scan(x, inclusive=inclusive, variant="single_pass", device=device, progress=progress, WG=64)
        assert_scan(got, x, inclusive)


@pytest.mark.parametrize("progress", MODES)
def test_scans_that_keep_their_zeroed_state_between_calls(device, rng, monkeypatch, progress):
    """A GPU's scans on its own queue keep their look-back state, zeroed again behind each
    kernel for the next call: scans of growing and shrinking sizes and of other element sizes,
    one after another, each against NumPy (kept here on every device)."""
    monkeypatch.setattr(single_pass, "keeps", lambda dev: dev.on_own_queue)
    single_pass._STATES.free(device)
    try:
        for n, dtype, inclusive in [
            (200_003, np.int32, True),
            (5_000, np.int32, False),
            (200_003, np.float64, True),
            (70_001, np.uint32, True),
            (400_009, np.int64, False),
            (70_001, np.int32, True),
        ]:
            skip_without_fp64(device, dtype)
            x = sample(rng, dtype, n)
            got = ps.scan(x, inclusive=inclusive, variant="single_pass", device=device, progress=progress, WG=64)
            assert_scan(got, x, inclusive)
        assert 0 < len(single_pass._STATES.held(device)) <= single_pass._STATES.most
    finally:
        assert single_pass._STATES.free(device) > 0


def test_a_scan_called_again_takes_its_worked_out_launch_until_the_device_is_described_anew(device, rng, monkeypatch):
    """Scans of one size, type and kind share one worked-out launch (kernel, grid, state); a
    device whose description is replaced (a smaller local memory here, which a staged tile must
    fit) gets a new one, built for it. Each result against NumPy."""
    monkeypatch.setattr(single_pass, "_CALLS", {})
    x = sample(rng, np.int32, 3 * 256 * 32 + 5)
    params = {"WG": 256, "ITEMS": 32, "STAGE": 1}
    for _ in range(3):
        assert_scan(ps.scan(x, inclusive=True, variant="single_pass", device=device, **params), x, True)
    assert [call.info for call in single_pass._CALLS.values()] == [device.info]
    small = single_pass.stage_bytes(256, 8, 4) + 2048  # room for 8 elements a work-item, not 12
    monkeypatch.setattr(device, "info", dataclasses.replace(device.info, local_mem_bytes=small))
    assert_scan(ps.scan(x, inclusive=True, variant="single_pass", device=device, **params), x, True)
    assert [call.info for call in single_pass._CALLS.values()][-1] is device.info
    assert any(dict(d).get("ITEMS") == 8 for path, d in device._by_path if path == "scan/single_pass.cl")


@pytest.mark.parametrize("params", [{"WG": 128, "ITEMS": 1}, {"WG": 64, "ITEMS": 3}, {"WG": 512, "ITEMS": 32}])
def test_scan_tile_shapes(device, rng, params):
    if params["WG"] > device.info.max_work_group_size:
        pytest.skip(f"{device.id} runs at most {device.info.max_work_group_size} work-items a group")
    for n in [params["WG"] * max(params["ITEMS"], 1) * k + r for k in (1, 7) for r in (-1, 0, 1)]:
        x = sample(rng, np.int64, n)
        try:
            got = ps.scan(x, inclusive=True, variant="single_pass", device=device, **params)
        except LaunchError as exc:  # the kernel needs more registers than such a group has
            pytest.skip(str(exc))
        assert_scan(got, x, True)


@pytest.mark.parametrize("dtype", SCAN_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("params", [{"WG": 64, "ITEMS": 16}, {"WG": 128, "ITEMS": 3}, {"WG": 64, "ITEMS": 1}])
def test_scan_through_local_memory(device, rng, spins, dtype, params):
    """STAGE=1: tiles read and written through local memory, in-place scans of device buffers
    included, at sizes around the tiles' edges."""
    skip_without_fp64(device, dtype)
    tile = params["WG"] * params["ITEMS"]
    for n, inclusive in [(1, True), (tile - 1, False), (tile, True), (tile * 9 + 1, False), (70_001, True)]:
        x = sample(rng, dtype, n)
        got = ps.scan(x, inclusive=inclusive, variant="single_pass", device=device, STAGE=1, progress=2, **params)
        assert_scan(got, x, inclusive)
    x = sample(rng, dtype, 50_000)
    buffer = device.to_device(x)
    scans.scan_buffer(device, buffer, buffer, x.size, dtype, inclusive=True, variant="single_pass", STAGE=1, **params)
    got = np.empty_like(x)
    device.download(buffer, got)
    assert_scan(got, x, True)


def test_a_staged_tile_larger_than_local_memory_takes_fewer_elements_a_work_item(device, rng):
    # 1024 x 32 elements do not fit 48 KiB, in 4 bytes or 8: the tile takes the most that fit
    from parskel.algorithms.single_pass import ITEMS_CHOICES, stage_bytes, stage_limit, staged_items

    for dtype in (np.int32, np.int64, np.float64) if device.info.fp64 else (np.int32, np.int64):
        items = staged_items(device, 1024, 32, np.dtype(dtype).itemsize)
        assert 0 < items < 32 and stage_bytes(1024, items, np.dtype(dtype).itemsize) <= stage_limit(device)
        larger = [k for k in ITEMS_CHOICES if k > items]
        assert stage_bytes(1024, larger[0], np.dtype(dtype).itemsize) > stage_limit(device)
        x = rng.integers(-50, 50, 300_001).astype(dtype)
        got = ps.scan(x, variant="single_pass", device=device, STAGE=1, WG=1024, ITEMS=32, inclusive=True)
        np.testing.assert_array_equal(got, np.cumsum(x, dtype=dtype))


def assert_sorted_buffers(device, out_keys, out_values, keys: np.ndarray, values: np.ndarray) -> None:
    """The device buffers ``out_keys`` and ``out_values`` hold ``keys`` and ``values`` sorted stably."""
    got_keys, got_values = np.empty_like(keys), np.empty_like(values)
    device.download(out_keys, got_keys)
    device.download(out_values, got_values)
    order = stable_order(keys)
    np.testing.assert_array_equal(got_keys, keys[order])
    np.testing.assert_array_equal(got_values, values[order])


def stable_order(keys: np.ndarray) -> np.ndarray:
    """The stable order of parskel's sorts: NumPy's, with -0.0 before +0.0 (and NaNs all equal)."""
    if keys.dtype.kind != "f":
        return np.argsort(keys, kind="stable")
    minus_zero_first = np.where(np.isnan(keys), 1, ~np.signbit(keys))
    return np.lexsort((minus_zero_first, keys))


@pytest.mark.parametrize("progress", MODES)
def test_onesweep_modes(device, rng, spins, progress):
    # tiles of 256 x 4 keys: dozens of tiles, each look-back several tiles deep
    for dtype in [np.uint32, np.int32, np.float32]:
        for name, shape in DISTRIBUTIONS.items():
            keys = shape(rng, random_keys(rng, dtype, 40_007))
            values = np.arange(keys.size, dtype=np.uint32)
            out_keys, out_values = ps.sort(
                keys, values, variant="onesweep", device=device, progress=progress, keys_per_item=4
            )
            order = stable_order(keys)
            np.testing.assert_array_equal(out_keys, keys[order], err_msg=f"{name} {np.dtype(dtype)}")
            np.testing.assert_array_equal(out_values, values[order], err_msg=f"{name} {np.dtype(dtype)}")


@pytest.mark.parametrize("wide", [False, True], ids=["status32", "status64"])
def test_onesweep_clears_its_status_words_itself(device, rng, monkeypatch, wide):
    """The host zeroes at most the digit counts: the histogram clears section 0 of the status
    words for the first pass, and each pass the other section for the next. The status
    buffer starts here as stale words (published prefixes of 0, which a look-back would
    take), and is read after every launch: each section is clear before its pass runs, and
    the sort matches NumPy."""
    if wide:
        monkeypatch.setattr(onesweep, "WIDE_FROM", 0)
    stale = np.uint64(1 << 63) if wide else np.uint32(1 << 31)
    keys = random_keys(rng, np.uint32, 30_011)  # tiles of 256 x 4: 30 tiles a pass
    values = rng.permutation(keys.size).astype(np.uint32)
    kb, vb = device.to_device(keys), device.to_device(values)
    ok, ov = device.alloc(keys.nbytes), device.alloc(values.nbytes)
    tiles = -(-keys.size // (256 * 4))
    section = tiles * onesweep.RADIX * stale.itemsize
    allocate, launch = device.alloc, device.launch
    status: list = []
    states: list[np.ndarray] = []

    def alloc(nbytes):
        buffer = allocate(nbytes)
        if nbytes == 2 * section:  # the status words
            device.fill(buffer, stale)
            status.append(buffer)
        return buffer

    def launched(*args):
        event = launch(*args)
        state = np.empty(status[0].nbytes, np.uint8)
        device.download(status[0], state)
        states.append(state.view(stale.dtype).reshape(2, -1))
        return event

    monkeypatch.setattr(device, "alloc", alloc)
    monkeypatch.setattr(device, "launch", launched)
    onesweep.sort_buffers(device, kb, ok, keys.size, np.uint32, vb, ov, keys_per_item=4)
    assert len(status) == 1
    histogram, _, *passes = states
    assert not histogram[0].any() and (histogram[1] == stale).all()
    for p, after in enumerate(passes[:-1]):
        assert not after[(p + 1) % 2].any(), f"pass {p} left the next pass's section"
    assert_sorted_buffers(device, ok, ov, keys, values)


def test_onesweep_sorts_keep_their_counters_zeroed_by_their_kernels(device, rng, monkeypatch):
    """A GPU's sorts on its own queue keep one buffer of counters, which no fill zeroes again:
    the digit starts kernel zeroes the counts once it has read them (and the tile counters
    before the passes take tiles). Kept here on every device, the buffer is read after each
    sort: its counts zero; sorts of other sizes and kinds, one after another, each against
    NumPy."""
    monkeypatch.setattr(onesweep, "keeps", lambda dev: dev.on_own_queue)
    onesweep._COUNTERS.free(device)
    fills = []
    fill = device.fill
    monkeypatch.setattr(
        device, "fill", lambda buffer, value, nbytes=None, **k: fills.append(nbytes) or fill(buffer, value, nbytes, **k)
    )
    try:
        for n, dtype, with_values in [(30_011, np.uint32, True), (5_000, np.float32, False), (70_001, np.int32, True)]:
            keys = random_keys(rng, dtype, n)
            values = rng.permutation(n).astype(np.uint32) if with_values else None
            got = ps.sort(keys, values, variant="onesweep", device=device, keys_per_item=4)
            order = stable_order(keys)
            np.testing.assert_array_equal(got[0] if with_values else got, keys[order])
            if with_values:
                np.testing.assert_array_equal(got[1], values[order])
            (counters,) = onesweep._COUNTERS.held(device)
            words = np.empty(onesweep.COUNTERS_BYTES // 4, np.uint32)
            device.download(counters, words)
            assert not words[: onesweep.CLEARED_BYTES // 4].any()
        assert fills == [onesweep.CLEARED_BYTES]  # the first sort's, when the buffer was made
    finally:
        assert onesweep._COUNTERS.free(device) == onesweep.COUNTERS_BYTES


def test_onesweep_wide_status_words(device, rng, monkeypatch):
    """The 64-bit status words of sorts of 2^30 keys and more, on a small sort."""
    monkeypatch.setattr(onesweep, "WIDE_FROM", 0)
    keys = np.concatenate([extreme_keys(np.float32, rng), random_keys(rng, np.float32, 9000)])
    values = rng.permutation(keys.size).astype(np.float32)
    out_keys, out_values = ps.sort(keys, values, variant="onesweep", device=device, keys_per_item=8)
    order = stable_order(keys)
    np.testing.assert_array_equal(out_keys, keys[order])
    np.testing.assert_array_equal(out_values, values[order])


@pytest.mark.parametrize(
    "params",
    [
        {"work_group": 512, "keys_per_item": 4},
        {"work_group": 256, "keys_per_item": 20},
        {"work_group": 256, "keys_per_item": 36},  # the tallest in CUDA's 48 KB of fixed local arrays
        {"work_group": 256, "keys_per_item": 48},  # on CUDA from dynamic shared memory; not on NVIDIA's OpenCL
    ],
)
def test_onesweep_tile_shapes(device, rng, params):
    unmet = ps.algorithms.get("sort", "onesweep").unmet(device, params, {"itemsize": 4})
    if unmet:
        pytest.skip(f"{device.id} cannot run these tiles: {'; '.join(unmet)}")
    tile = params["work_group"] * params["keys_per_item"]
    for n in [tile - 1, tile, tile + 1, 5 * tile + 17]:
        keys = rng.integers(0, 50, n, dtype=np.uint32) << np.uint32(rng.integers(0, 25))
        values = np.arange(n, dtype=np.int32)
        try:
            out_keys, out_values = ps.sort(keys, values, variant="onesweep", device=device, **params)
        except LaunchError as exc:  # the kernel needs more registers than such a group has
            pytest.skip(str(exc))
        order = stable_order(keys)
        np.testing.assert_array_equal(out_keys, keys[order])
        np.testing.assert_array_equal(out_values, values[order])


def test_onesweep_pairs_sort_in_a_tile_of_keys_exactly_as_tall(device, rng, monkeypatch):
    """The values pass through the keys' local array, their digits kept in registers: a sort
    with values takes the tile tuned for keys even where local memory holds that tile and not a
    byte more."""
    room = onesweep._local_bytes(256, 20, not traits.has_warp_ops(device))
    monkeypatch.setattr(device, "info", dataclasses.replace(device.info, local_mem_bytes=room))
    built = []
    program = device.program
    monkeypatch.setattr(device, "program", lambda path, defines=None: built.append(defines) or program(path, defines))
    keys = random_keys(rng, np.uint32, 30_011)
    values = np.arange(keys.size, dtype=np.uint32)
    out_keys, out_values = ps.sort(keys, values, variant="onesweep", device=device, work_group=256, keys_per_item=20)
    order = stable_order(keys)
    np.testing.assert_array_equal(out_keys, keys[order])
    np.testing.assert_array_equal(out_values, values[order])
    assert [d["ITEMS"] for d in built] == [20]


def _gpu(backend: str, vendor: str) -> SimpleNamespace:
    optin = 227 << 10 if backend == "cuda" else 0  # a Hopper block's shared memory, asked for
    info = SimpleNamespace(
        vendor=vendor, local_mem_bytes=48 << 10, local_mem_optin_bytes=optin, max_work_group_size=1024
    )
    return SimpleNamespace(backend=backend, type="gpu", id=f"{backend}:7", info=info)


def test_onesweep_tiles_leave_room_for_ranks_only_where_the_pass_ranks_in_local_memory(monkeypatch):
    """CUDA and NVIDIA's OpenCL (warp operations through PTX) rank a tile's keys in registers:
    256 x 28 keys fit their 48 KiB of local memory. Other OpenCL devices, and an NVIDIA driver
    that refused the PTX, keep a 16-bit rank per key there too, which that tile overflows."""
    sweep = ps.algorithms.get("sort", "onesweep")
    tall = {"work_group": 256, "keys_per_item": 28}
    assert onesweep._local_bytes(256, 28, False) <= 48 << 10 < onesweep._local_bytes(256, 28, True)
    nvidia_cl, other_cl = _gpu("opencl", "NVIDIA Corporation"), _gpu("opencl", "Advanced Micro Devices, Inc.")
    assert sweep.unmet(_gpu("cuda", "NVIDIA"), tall) == []
    assert sweep.unmet(nvidia_cl, tall) == []
    assert sweep.unmet(other_cl, tall) == ["local memory for a tile of keys"]
    monkeypatch.setattr(traits, "_NO_PTX", {nvidia_cl.id})
    assert sweep.unmet(nvidia_cl, tall) == ["local memory for a tile of keys"]
    # 48 keys a work-item: past the fixed 48 KiB, in CUDA's dynamic shared memory only
    taller = {"work_group": 256, "keys_per_item": 48}
    assert onesweep._dynamic(_gpu("cuda", "NVIDIA"), 256, 48) and not onesweep._dynamic(_gpu("cuda", "NVIDIA"), 256, 28)
    assert sweep.unmet(_gpu("cuda", "NVIDIA"), taller) == []
    assert sweep.unmet(_gpu("opencl", "NVIDIA Corporation"), taller) == ["local memory for a tile of keys"]
    pascal = _gpu("cuda", "NVIDIA")  # a GPU that gives a block no more than its fixed 48 KiB
    pascal.info.local_mem_optin_bytes = 48 << 10
    assert sweep.unmet(pascal, taller) == ["local memory for a tile of keys"] and not onesweep._dynamic(pascal, 256, 48)


def test_onesweep_built_without_warp_operations_shortens_a_tile_that_leaves_no_room_for_ranks(device, rng, monkeypatch):
    """Where the pass must rank in local memory after all (a driver that refused the PTX), a
    tile chosen for warp operations is built as tall as still fits, and sorts."""
    if traits.has_warp_ops(device):
        pytest.skip(f"{device.id} ranks by warp operations: its tiles need no room for ranks")
    room = onesweep._local_bytes(256, 16, True)
    monkeypatch.setattr(device, "info", dataclasses.replace(device.info, local_mem_bytes=room))
    monkeypatch.setattr(onesweep, "_PLANS", {})
    monkeypatch.setattr(onesweep, "_LAYOUTS", {})
    built = []
    program = device.program
    monkeypatch.setattr(device, "program", lambda path, defines=None: built.append(defines) or program(path, defines))
    keys = random_keys(rng, np.uint32, 3 * 256 * 28 + 5)
    values = np.arange(keys.size, dtype=np.uint32)
    kb, vb = device.to_device(keys), device.to_device(values)
    ok, ov = device.alloc(keys.nbytes), device.alloc(values.nbytes)
    onesweep.sort_buffers(device, kb, ok, keys.size, np.uint32, vb, ov, work_group=256, keys_per_item=28)
    assert_sorted_buffers(device, ok, ov, keys, values)
    assert [d["ITEMS"] for d in built] == [16]


def test_the_pass_over_keys_reaches_nvidia_opencl_with_its_register_bound(device, rng, monkeypatch):
    """On NVIDIA's OpenCL the pass over keys is built with `.maxnreg` in its PTX (the driver takes
    no launch bounds), and sorts; a pass over pairs is built without it."""
    if not (device.backend == "opencl" and traits.is_nvidia_gpu(device)):
        pytest.skip(f"{device.id}: only NVIDIA's OpenCL takes a register bound through its PTX")
    import pyopencl as cl

    monkeypatch.setattr(onesweep, "_PLANS", {})
    monkeypatch.setattr(onesweep, "_LAYOUTS", {})
    keys = random_keys(rng, np.uint32, 3 * 256 * 28 + 5)
    values = np.arange(keys.size, dtype=np.uint32)
    order = stable_order(keys)
    got_keys, got_values = ps.sort(keys, values, variant="onesweep", device=device, work_group=256, keys_per_item=28)
    np.testing.assert_array_equal(got_keys, keys[order])
    np.testing.assert_array_equal(got_values, values[order])
    got_keys = ps.sort(keys, variant="onesweep", device=device, work_group=256, keys_per_item=28)
    np.testing.assert_array_equal(got_keys, keys[order])
    built = {
        dict(defines).get("WITH_VALUES"): program
        for (path, defines), program in device._by_path.items()
        if path == "sort/onesweep.cl" and dict(defines).get("ITEMS") == 28
    }
    ptx = {k: p._handle.get_info(cl.program_info.BINARIES)[0].decode(errors="replace") for k, p in built.items()}
    assert ".maxnreg 80" in ptx[0] and ".maxnreg" not in ptx[1]


def test_the_scan_reaches_nvidia_opencl_with_the_register_bound_of_its_groups(device, rng, monkeypatch):
    """On NVIDIA's OpenCL, ``MIN_GROUPS`` (CUDA's launch bounds) becomes `.maxnreg` in the scan's
    PTX: five groups of 256 share an SM's 64K registers at 48 a work-item; without it, none."""
    if not (device.backend == "opencl" and traits.is_nvidia_gpu(device)):
        pytest.skip(f"{device.id}: only NVIDIA's OpenCL takes a register bound through its PTX")
    import pyopencl as cl

    monkeypatch.setattr(single_pass, "_PLANS", {})
    monkeypatch.setattr(single_pass, "_CALLS", {})
    x = sample(rng, np.int32, 7 * 256 * 32 + 3)
    for groups in (5, 0):
        got = ps.scan(
            x, inclusive=True, variant="single_pass", device=device, WG=256, STAGE=1, ITEMS=32, MIN_GROUPS=groups
        )
        assert_scan(got, x, True)
    built = {
        dict(defines).get("MIN_GROUPS"): program
        for (path, defines), program in device._by_path.items()
        if path == "scan/single_pass.cl" and dict(defines).get("ITEMS") == 32 and dict(defines).get("STAGE") == 1
    }
    ptx = {k: p._handle.get_info(cl.program_info.BINARIES)[0].decode(errors="replace") for k, p in built.items()}
    assert ".maxnreg 48" in ptx[5] and ".maxnreg" not in ptx[0]


def test_min_groups_bounds_registers_by_launch_bounds_on_cuda_and_the_ptx_on_nvidia_opencl():
    """What MIN_GROUPS adds to the scan's defines, by device (no device needed)."""
    from types import SimpleNamespace as NS

    nvidia_cl = NS(backend="opencl", type="gpu", info=NS(vendor="NVIDIA Corporation"))
    assert single_pass._bound(nvidia_cl, 256, 5) == {"PS_MAX_REGISTERS": 48}
    assert single_pass._bound(nvidia_cl, 256, 0) == {}
    assert single_pass._bound(nvidia_cl, 512, 5) == {"PS_MAX_REGISTERS": 32}  # an SM holds 2048 work-items
    assert single_pass._bound(NS(backend="cuda"), 256, 5) == {}
    pocl = NS(backend="opencl", type="cpu", info=NS(vendor="The pocl project"))
    assert single_pass._bound(pocl, 256, 5) == {}


def test_only_four_and_eight_byte_sums_of_a_polling_look_back_share_a_word_with_their_status(device):
    """PACKED (one word of 8 or 16 bytes per tile for status and value) is asked for 4-byte (1)
    and 8-byte (2) elements where the look-back polls, never with the decoupled fallback, whose
    tiles keep flags apart, nor for other sizes."""
    assert traits.lookback_defines(device, 1, 4)["PACKED"] == 1
    assert traits.lookback_defines(device, 1, 8)["PACKED"] == 2
    assert traits.lookback_defines(device, 1, 2)["PACKED"] == 0
    assert traits.lookback_defines(device, 1, 16)["PACKED"] == 0
    assert traits.lookback_defines(device, 2, 4)["PACKED"] == 0
    assert traits.lookback_defines(device, 2, 8)["PACKED"] == 0
    assert traits.lookback_defines(device, 1)["PACKED"] == 0


def test_tiles_are_group_numbers_only_where_work_groups_start_in_order(device):
    """ORDERED (a tile is its group's number, no atomic counter) where the look-back polls on a
    device that starts work-groups in order; a device told to poll without that promise
    (progress=1 on PoCL) keeps the counter, and the decoupled fallback never needs the order."""
    in_order = traits.forward_progress(device)
    assert traits.lookback_defines(device, 0)["ORDERED"] == int(in_order)
    assert traits.lookback_defines(device, 1)["ORDERED"] == int(in_order)
    assert traits.lookback_defines(device, 2)["ORDERED"] == 0
