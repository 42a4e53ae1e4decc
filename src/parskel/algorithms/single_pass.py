"""Scan in one pass with decoupled look-back (Merrill and Garland), beside seed 000's variants.

Each work-group scans a tile of ``WG * ITEMS`` elements held in registers (loaded as 16-byte
vectors where the buffers allow), publishes the tile's sum, and looks back over its
predecessors' published sums for its offset: the input is read once and the output written once,
in one launch (see ``kernels/scan/single_pass.h``). On devices without forward progress
between work-groups the look-back uses the decoupled fallback (see
:mod:`parskel.runtime.traits`). Sums follow the rules of :mod:`parskel.algorithms.scans`.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from ..errors import VariantError
from ..runtime import Buffer, Device, Kernel, c_type
from ..runtime.kept import KeptZeroed, keeps
from ..runtime.memo import remembered
from ..runtime.traits import aligned, built_within, lookback_defines, register_bound, with_warp_ops
from .registry import Param, Requirement, Variant, register
from .scans import add_enqueue, host_run, values_at

#: bytes of input per work-item when ITEMS is left to the dtype (0)
ITEM_BYTES = 64

PROGRESS = Param(
    "progress",
    0,
    (0, 1, 2),
    "look-back waits: 0 by device, 1 poll until published (needs forward progress), 2 decoupled fallback",
)


#: The elements per work-item the variant is built for (besides 0: 64 bytes' worth).
ITEMS_CHOICES = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)


def items_for(dtype: np.dtype, items: int) -> int:
    """Elements per work-item: ``items``, or 64 bytes' worth when 0."""
    return items or max(ITEM_BYTES // dtype.itemsize, 1)


def stage_bytes(wg: int, items: int, itemsize: int) -> int:
    """Local memory a work-group stages its tile in with STAGE=1: an element of padding per
    128 bytes' worth, at most per 32 (``SP_ROW`` in ``kernels/scan/single_pass.h``).

    >>> stage_bytes(256, 32, 4), stage_bytes(256, 16, 8)
    (33796, 34824)
    """
    tile = wg * items
    row = 32 if itemsize <= 4 else 16 if itemsize == 8 else 8
    return (tile + tile // row + 1) * itemsize


def stage_limit(device: Device) -> int:
    """The most bytes a staged tile may take: the device's local memory, at most 48 KiB (a CUDA
    kernel's static shared memory)."""
    return min(device.info.local_mem_bytes, 48 << 10)


def staged_items(device: Device, wg: int, items: int, itemsize: int) -> int:
    """The elements per work-item of a staged tile: ``items``, or the most of the variant's
    choices below it whose tile fits the device (a tile tuned for 4-byte elements halves for
    8-byte ones); 0 if not even one element a work-item fits.

    >>> class _Info: local_mem_bytes = 48 << 10
    >>> class _Device: info = _Info()
    >>> staged_items(_Device(), 256, 32, 4), staged_items(_Device(), 256, 32, 8)
    (32, 16)
    """
    limit = stage_limit(device)
    fitting = [k for k in ITEMS_CHOICES if 0 < k <= items and stage_bytes(wg, k, itemsize) <= limit]
    return max(fitting, default=0)


def vector_width(dtype: np.dtype, items: int, aligned: bool) -> int:
    """Elements per load: 16 bytes where ``items`` allows it and every buffer is ``aligned`` to
    16 bytes, else 1.

    >>> vector_width(np.dtype(np.int32), 32, True), vector_width(np.dtype(np.int32), 6, True)
    (4, 1)
    """
    width = max(16 // dtype.itemsize, 1)
    return width if aligned and items % width == 0 else 1


def enqueue(
    device: Device,
    src: Buffer,
    dst: Buffer,
    n: int,
    kt: np.dtype,
    inclusive: bool,
    *,
    WG: int = 256,
    ITEMS: int = 0,
    progress: int = 0,
    STAGE: int = 0,
    MIN_GROUPS: int = 0,
    HINTS: int = 0,
) -> None:
    """Enqueue the single-pass scan of ``n`` elements of ``src`` into ``dst`` (may be ``src``)."""
    vectors = aligned(src, 16) and aligned(dst, 16)
    key = (device, id(device.info), n, kt, inclusive, WG, ITEMS, progress, STAGE, MIN_GROUPS, HINTS, vectors)
    made = lambda: _Call(device, n, kt, inclusive, vectors, WG, ITEMS, progress, STAGE, MIN_GROUPS, HINTS)
    call = remembered(_CALLS, key, made)
    if call.info is not device.info:  # the id of a description since replaced
        call = _CALLS[key] = made()
    call(src, dst)


class _Call:
    """One scan's launch with all but its buffers worked out: its kernel, grid and the size of
    its look-back state. A scan called again and again (a loop over arrays of one size, where
    the host's time before the launch shows in each call) finds it in :data:`_CALLS`."""

    __slots__ = ("_device", "_flags", "_launch", "_n", "_nbytes", "_packed", "_tiles", "info")

    def __init__(
        self,
        device: Device,
        n: int,
        kt: np.dtype,
        inclusive: bool,
        vectors: bool,
        WG: int,
        ITEMS: int,
        progress: int,
        STAGE: int,
        MIN_GROUPS: int,
        HINTS: int,
    ) -> None:
        waits = lookback_defines(device, progress, kt.itemsize)
        key = (
            device, kt, inclusive, WG, ITEMS, STAGE, MIN_GROUPS, HINTS, vectors, *waits.values(),
            device.info.local_mem_bytes,
        )  # fmt: skip
        kernel, group, tile = remembered(
            _PLANS, key, lambda: _plan(device, kt, inclusive, WG, ITEMS, STAGE, MIN_GROUPS, HINTS, vectors, waits)
        )
        tiles = -(-n // tile)
        self._flags = values_at(tiles) * 4
        self._nbytes = self._flags + 2 * tiles * kt.itemsize
        self._packed = bool(waits["PACKED"])
        self._n, self._tiles = np.uint32(n), np.uint32(tiles)
        self._device, self.info = device, device.info
        self._launch = device.launcher(kernel, tiles * group, group)

    def __call__(self, src: Buffer, dst: Buffer) -> None:
        device, nbytes = self._device, self._nbytes
        kept = keeps(device)
        state = _STATES.take(device, nbytes) if kept else None
        if state is None:
            state = device.alloc(nbytes)
            # the counter and flags start at zero; so do the values where they hold the tiles' status
            device.fill(state, _ZERO, None if self._packed else self._flags)
        self._launch(src, dst, state, self._n, self._tiles)
        if kept:
            device.fill(state, _ZERO, nbytes)  # zero again behind the kernel, for the next call
            _STATES.give(device, state)


#: the scans enqueued so far, by device, size, type, kind of scan, parameters and whether the
#: buffers take vectors (as many as :func:`remembered` keeps)
_CALLS: dict[Hashable, _Call] = {}
_ZERO = np.uint32(0)
#: Look-back states kept zeroed between calls (:mod:`parskel.runtime.kept`): a call zeroes its
#: state behind its kernel, for the next one, instead of allocating and zeroing one before it,
#: which took 18 us of the host's time on the H200 machine before the kernel could start. Each
#: 4 bytes and two elements a tile (0.4 MB for 2^28 int32 in the tuned tiles), two a device.
_STATES = KeptZeroed(most=2)


# enqueue's kernel, work-group size and tile per device, type, kind of scan, parameters, whether
# the buffers take 16-byte vectors, look-back and local memory (which a staged tile must fit):
# found once
_PLANS: dict[Hashable, tuple[Kernel, int, int]] = {}


def _plan(
    device: Device,
    kt: np.dtype,
    inclusive: bool,
    WG: int,
    ITEMS: int,
    STAGE: int,
    MIN_GROUPS: int,
    HINTS: int,
    vectors: bool,
    waits: dict[str, int],
) -> tuple[Kernel, int, int]:
    items = items_for(kt, ITEMS)
    if STAGE:
        fitting = staged_items(device, WG, items, kt.itemsize)
        if not fitting:
            raise VariantError(
                f"scan/single_pass with STAGE=1 stages {stage_bytes(WG, 1, kt.itemsize)} bytes of local memory "
                f"per work-group at least (WG={WG}); {device.id} allows {stage_limit(device)}"
            )
        items = fitting
    defines: dict[str, int | str] = {
        "T": c_type(kt, device),
        "WG": WG,
        "ITEMS": items,
        "VEC": vector_width(kt, items, vectors),
        "INCLUSIVE": int(inclusive),
        "STAGE": STAGE,
        "MIN_GROUPS": MIN_GROUPS,
        "HINTS": HINTS,
        **waits,
    }
    # a compiler that needs more registers than groups of WG have (a tuned WG is for another
    # compiler): smaller tiles
    group, kernel = built_within(
        WG, lambda wg: _kernel(device, {**defines, "WG": wg, **_bound(device, wg, MIN_GROUPS)})
    )
    return kernel, group, group * items


def _bound(device: Device, wg: int, min_groups: int) -> dict[str, int]:
    """``MIN_GROUPS`` on NVIDIA's OpenCL, which takes no launch bounds: the registers that let
    that many groups of ``wg`` share an SM, as a bound in the kernel's PTX (see
    :func:`~parskel.runtime.traits.register_bound`); CUDA bounds them by ``__launch_bounds__``."""
    return register_bound(device, wg, min_groups * wg) if min_groups else {}


def _kernel(device: Device, defines: dict[str, int | str]) -> Kernel:
    program = with_warp_ops(device, lambda warp: device.program("scan/single_pass.cl", {**defines, **warp}))
    return program.kernel("single_pass_scan")


_NAME = "single_pass"
_SUMMARY = "one pass: tiles in registers, vector loads, decoupled look-back (decoupled fallback where needed)"

add_enqueue(_NAME, enqueue)
register(
    Variant(
        family="scan",
        name=_NAME,
        seed="beyond 000 §4",
        summary=_SUMMARY,
        run=host_run(_NAME, f"Scan ``x`` with {_NAME}: {_SUMMARY}."),
        params=(
            Param("WG", 256, (64, 128, 256, 512, 1024), "work-group size (work-items)"),
            Param(
                "ITEMS",
                0,
                (0, *ITEMS_CHOICES),
                "elements per work-item (0: 64 bytes' worth; with STAGE=1, at most what local memory holds)",
            ),
            PROGRESS,
            Param("STAGE", 0, (0, 1), "1: tiles read and written through local memory in whole lines"),
            Param(
                "MIN_GROUPS",
                0,
                (0, 2, 3, 4, 5, 6, 8, 10),
                "NVIDIA GPUs: work-groups an SM must hold at once, which bounds the registers (0: compiler's choice)",
            ),
            Param(
                "HINTS",
                0,
                (0, 1, 2, 3),
                "NVIDIA GPUs, STAGE=1: tiles read (1), written (2) or both (3) with the streaming cache operator",
            ),
        ),
        requires=(
            Requirement(
                "work-group size WG <= the device's maximum", lambda dev, p: p["WG"] <= dev.info.max_work_group_size
            ),
            Requirement(
                "with STAGE=1, one element a work-item fits the device's local memory (48 KiB at most on CUDA)",
                lambda dev, p: not p.get("STAGE") or staged_items(dev, p["WG"], 1, p.get("itemsize", 4)) > 0,
            ),
        ),
    )
)
