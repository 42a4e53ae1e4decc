"""Onesweep: an LSD radix sort of 8-bit digits in one launch per digit (beside seed 000's sorts).

One histogram launch counts the digits of all four passes; each pass then ranks tiles of keys
stably in local memory and finds each tile's output offsets by a decoupled look-back over the
tiles before it (``kernels/sort/onesweep.cl``), so the keys are read and written once per pass.
uint32, int32 and float32 keys (the order of :mod:`parskel.algorithms.keys`, encoded as the
first pass reads them and decoded as the last writes them), with or without 4-byte values,
stably, of any length. Device arrays (CuPy, PyTorch) are read in place and the result is written
straight into a new device array. Devices without forward progress between work-groups get the
decoupled fallback (:mod:`parskel.runtime.traits`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..runtime import Buffer, Device, Kernel, Program
from ..runtime.arrays import empty_like
from ..runtime.kept import KeptZeroed, keeps
from ..runtime.memo import remembered
from ..runtime.traits import groups_per_unit, has_warp_ops, lookback_defines, register_bound, with_warp_ops
from .keys import KEY_KINDS, check_keys
from .registry import Param, Requirement, Variant, register
from .single_pass import PROGRESS
from .sorts import add_buffer_sort

RADIX = 256
PASSES = 4
#: The tile heights a pass is built for (keys per work-item). From 37 keys in groups of 256 a
#: tile needs more local memory than CUDA's 48 KB of fixed arrays: there it takes dynamic
#: shared memory (``PS_TILE_LOCAL``), up to the device's opt-in limit; OpenCL devices refuse it.
#: On an H200, 48 keys sorted 2^28 keys in 4.60 ms against 5.19 for 36; 56 and 64, which took
#: 5.91-5.93 ms, are left out (docs/benchmarks.md, 2026-11-27).
KEYS_PER_ITEM = (4, 8, 12, 15, 16, 20, 24, 28, 32, 36, 40, 44, 48)
#: Status words pack a 2-bit flag with a 30-bit count; from this many keys on they are 64-bit.
WIDE_FROM = 1 << 30
#: work-items of a pass over keys that share an SM on NVIDIA's OpenCL, by a bound on their
#: registers (80 in groups of 256): the driver's compiler, left alone, gives the pass 107 and
#: fits two groups. A sort of 2^28 keys on an H200 took 5.94 ms so, 7.11 without.
RESIDENT_PASS = 768
#: the bytes of a sort's counters: the digit counts, the tile counters and the digit starts
COUNTERS_BYTES = (2 * PASSES * RADIX + PASSES) * 4
#: the bytes of the counters that must be zero when a sort begins: the digit counts (the
#: kernels zero the tile counters, and clear the status words, themselves: see onesweep.cl)
CLEARED_BYTES = PASSES * RADIX * 4
#: Counters kept between a GPU's sorts (:mod:`parskel.runtime.kept`): the digit starts kernel
#: leaves them zeroed for the next sort, so that a sort enqueues no fill before its histogram
#: (a fill took 8 us of the host's time on the H200 machine, in a sort of 2^24 pairs whose
#: histogram started 33-39 us after the call).
_COUNTERS = KeptZeroed(most=1)
#: sections of status words: pass p looks back in section p % 2
SECTIONS = 2

Result = Any  # an array, or a (keys, values) pair of arrays


def _local_bytes(work_group: int, keys_per_item: int, ranks: bool) -> int:
    """Local memory of a pass (one counter row per 32 lanes, the most there are): a tile of
    keys (through which the values pass too), the digits' bases and the fallback's counts, and
    where the device ranks without warp operations a 16-bit rank per key and the digits' starts
    in the tile (with them, the warps' counters take the starts)."""
    tile = work_group * keys_per_item
    scratch = work_group + work_group // 4 + 34
    return 4 * ((work_group // 32) * RADIX + tile + (2 + ranks) * RADIX + scratch + 3) + 2 * tile * ranks


def _fits(device: Device, work_group: int, keys_per_item: int, ranks: bool | None = None) -> bool:
    """Whether a pass's local arrays fit in ``device``'s local memory (with its tile of keys in
    dynamic local memory where the device has more of that, see :func:`_dynamic`): with
    ``ranks`` where the pass ranks without warp operations, which is decided by the device when
    left out (CUDA and NVIDIA's OpenCL rank by warp operations, other OpenCL devices in local
    memory)."""
    ranks = not has_warp_ops(device) if ranks is None else ranks
    most = max(device.info.local_mem_bytes, device.info.local_mem_optin_bytes)
    return _local_bytes(work_group, keys_per_item, ranks) <= most


def _dynamic(device: Device, work_group: int, keys_per_item: int) -> bool:
    """Whether a pass's tile of keys comes from dynamic local memory: where its local arrays
    exceed the fixed ones a work-group may have, on a device that gives more when asked (CUDA;
    :func:`_fits` refuses such tiles elsewhere, and a pass that ranks in local memory is built
    as tall as fits instead)."""
    info = device.info
    fixed = info.local_mem_bytes
    return (
        info.local_mem_optin_bytes > fixed and _local_bytes(work_group, keys_per_item, not has_warp_ops(device)) > fixed
    )


def sort_buffers(
    device: Device,
    keys: Buffer,
    out_keys: Buffer,
    n: int,
    key_dtype: Any,
    values: Buffer | None = None,
    out_values: Buffer | None = None,
    *,
    work_group: int = 256,
    keys_per_item: int = 15,
    progress: int = 0,
) -> None:
    """Enqueue the sort of ``n`` keys of ``key_dtype`` (uint32, int32, float32) from ``keys``
    into ``out_keys``, and of their ``values`` into ``out_values``; does not wait.

    The inputs are left as they were unless an output is the same buffer (an in-place sort).
    The caller checks sizes and dtypes (:func:`parskel.algorithms.keys.check_keys`).
    """
    if n == 0:
        return
    passes = count_digits(
        device, keys, n, key_dtype, values is not None, work_group=work_group, keys_per_item=keys_per_item,
        progress=progress,
    )  # fmt: skip
    passes(out_keys, values, out_values)


Passes = Callable[[Buffer, "Buffer | None", "Buffer | None"], None]


def count_digits(
    device: Device,
    keys: Buffer,
    n: int,
    key_dtype: Any,
    with_values: bool,
    *,
    work_group: int,
    keys_per_item: int,
    progress: int,
) -> Passes:
    """Enqueue the first part of :func:`sort_buffers` (``n`` > 0 keys): the count of the digits
    of ``keys``, which needs no output yet; the function ``(out_keys, values, out_values)`` that
    enqueues the rest, once, into outputs the caller may make meanwhile."""
    shape = (key_dtype, with_values, n, work_group, keys_per_item, progress)
    key = (device, *shape, device.info.local_mem_bytes, n >= WIDE_FROM)
    layout = remembered(_LAYOUTS, key, lambda: _layout(device, *shape))
    kept = keeps(device)
    counters = _COUNTERS.take(device, COUNTERS_BYTES) if kept else None
    if counters is None:
        counters = device.alloc(COUNTERS_BYTES)
        device.fill(counters, _ZERO, CLEARED_BYTES)
    status = device.alloc(layout.status_bytes)
    wg = work_group
    device.launch(layout.histogram, layout.groups * wg, wg, keys, counters, status, layout.n, layout.chunk)
    device.launch(layout.starts, wg, wg, counters)

    def passes(out_keys: Buffer, values: Buffer | None, out_values: Buffer | None) -> None:
        # pass p reads chain[p] and writes chain[p + 1]: the last pass lands in the output
        pairs = [(keys, out_keys)] if values is None else [(keys, out_keys), (values, out_values)]
        chains = []
        for source, target in pairs:
            assert target is not None
            spare = device.alloc(n * 4)
            chains.append([source, spare, target, spare, target])
        for p in range(PASSES):
            moved = [buffer for chain in chains for buffer in (chain[p], chain[p + 1])]
            device.launch(layout.sweep, layout.tiles * wg, wg, *moved, counters, status, layout.n, _PASS_NUMBERS[p])
        if kept:  # zeroed again by the digit starts kernel, before the next sort's commands run
            _COUNTERS.give(device, counters)

    return passes


_ZERO = np.uint32(0)
_PASS_NUMBERS = tuple(np.uint32(p) for p in range(PASSES))


@dataclass(frozen=True)
class _Layout:
    """What sort_buffers launches for one kind of sort of n keys: found once (a sort in a loop
    only looks it up), with its scalar arguments made."""

    histogram: Kernel
    starts: Kernel
    sweep: Kernel
    tiles: int
    status_bytes: int
    groups: int  # of the histogram, each over a chunk of the keys
    n: np.uint32
    chunk: np.uint32


_LAYOUTS: dict[Hashable, _Layout] = {}


def _layout(
    device: Device, key_dtype: Any, with_values: bool, n: int, work_group: int, keys_per_item: int, progress: int
) -> _Layout:
    wide = n >= WIDE_FROM
    waits = lookback_defines(device, progress)
    kind = np.dtype(key_dtype)
    key = (device, kind, with_values, wide, work_group, keys_per_item, *waits.values(), device.info.local_mem_bytes)
    plan = remembered(_PLANS, key, lambda: _plan(device, kind, with_values, wide, work_group, keys_per_item, waits))
    histogram, starts, sweep, tile = plan
    tiles = -(-n // tile)
    groups = min(tiles, groups_per_unit(device, work_group) * device.info.compute_units)
    status_bytes = SECTIONS * tiles * RADIX * (8 if wide else 4)
    return _Layout(histogram, starts, sweep, tiles, status_bytes, groups, np.uint32(n), np.uint32(-(-n // groups)))


# sort_buffers' kernels and tile, per device, key type, values or not, width of the status
# words, parameters, look-back and local memory (which the tile must fit): found once
_PLANS: dict[Hashable, tuple[Kernel, Kernel, Kernel, int]] = {}


def _plan(
    device: Device,
    key_dtype: np.dtype,
    with_values: bool,
    wide: bool,
    work_group: int,
    keys_per_item: int,
    waits: dict[str, int],
) -> tuple[Kernel, Kernel, Kernel, int]:
    """The histogram, digit starts and pass kernels of a sort, and its tile of keys."""
    defines = {
        "WG": work_group,
        "KEY_KIND": KEY_KINDS[key_dtype],
        "WITH_VALUES": int(with_values),
        "WIDE": int(wide),
        "LANES": work_group if device.type == "cpu" else 32,
        **waits,
    }
    if not with_values:  # (a pass over pairs, which reads its values with the keys, spills under it)
        defines.update(register_bound(device, work_group, RESIDENT_PASS))
    items = [keys_per_item]

    def build(warp: dict[str, int]) -> Program:
        if not (warp or has_warp_ops(device)):  # ranks in local memory: the tile leaves them room
            fitting = [k for k in KEYS_PER_ITEM if k <= keys_per_item and _fits(device, work_group, k, True)]
            items[0] = max(fitting, default=keys_per_item)
        return device.program("sort/onesweep.cl", {**defines, "ITEMS": items[0], **warp})

    dynamic = _dynamic(device, work_group, keys_per_item)
    if dynamic:
        defines["PS_DYNAMIC_LOCAL"] = 1
    program = with_warp_ops(device, build)
    kernels = program.kernel("onesweep_histogram"), program.kernel("onesweep_starts"), program.kernel("onesweep_pass")
    if dynamic:  # the pass's tile of keys, given to each of its launches
        kernels[2].take_dynamic_local(4 * work_group * items[0])
    return (*kernels, work_group * items[0])


def _onesweep(
    device: Device,
    keys: Any,
    values: Any,
    *,
    work_group: int,
    keys_per_item: int,
    progress: int,
) -> Result:
    """Host arrays are uploaded and sorted in place on the device; device arrays are read where
    they are and sorted into new device arrays."""
    check_keys(keys)
    n = keys.size
    if n == 0:
        return keys.copy() if values is None else (keys.copy(), values.copy())
    arrays = [keys] if values is None else [keys, values]
    on_host = isinstance(keys, np.ndarray)
    sources = [device.to_device(array) if on_host else device.wrap(array)[0] for array in arrays]
    passes = count_digits(
        device, sources[0], n, keys.dtype, values is not None, work_group=work_group, keys_per_item=keys_per_item,
        progress=progress,
    )  # fmt: skip
    results = []
    if on_host:  # sorted in place on the device
        targets = sources
    else:  # into new device arrays of the caller's kind, made while the device counts the digits
        results = [empty_like(array) for array in arrays]
        targets = [device.wrap(out)[0] for out in results]
    passes(targets[0], *((sources[1], targets[1]) if values is not None else (None, None)))
    if on_host:
        for array, buffer in zip(arrays, targets):
            host = empty_like(array)
            device.download(buffer, host)
            results.append(host)
    return results[0] if values is None else (results[0], results[1])


register(
    Variant(
        family="sort",
        name="onesweep",
        seed="beyond 000 §5.2",
        summary="LSD radix sort, 8-bit digits, one launch per digit: stable tile ranking, decoupled look-back",
        run=_onesweep,
        params=(
            Param("work_group", 256, (256, 512), "work-items per work-group (one per digit and more)"),
            Param("keys_per_item", 15, KEYS_PER_ITEM, "keys per work-item"),
            PROGRESS,
        ),
        tags=frozenset({"stable"}),
        requires=(
            Requirement(
                "work_group <= the device's largest work-group",
                lambda dev, p: p["work_group"] <= dev.info.max_work_group_size,
            ),
            Requirement(
                "local memory for a tile of keys",
                lambda dev, p: _fits(dev, p["work_group"], p["keys_per_item"]),
            ),
        ),
    )
)


def _onesweep_buffers(
    device: Device,
    keys: Buffer,
    values: Buffer | None,
    out_keys: Buffer,
    out_values: Buffer | None,
    n: int,
    bits: int,
    **params: int,
) -> None:
    """onesweep's :data:`~.sorts.BufferSort` (all 32 bits compared)."""
    sort_buffers(device, keys, out_keys, n, np.uint32, values, out_values, **params)


add_buffer_sort("onesweep", _onesweep_buffers)
