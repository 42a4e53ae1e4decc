"""Prefix sums (scan) in the four variants of seed 000, chapter 4.

Every variant gives both the exclusive scan (``out[i] = x[0] + ... + x[i-1]``, the seed's
default) and the inclusive one (``out[i] = x[0] + ... + x[i]``). Integer sums wrap around
exactly like ``np.cumsum(x, dtype=x.dtype)``: signed integers are scanned as the unsigned type
of the same width, whose addition has the same bits and, unlike signed overflow in C, is
defined. Float sums are added in a tree order, not left to right, so they differ from
``np.cumsum`` by rounding, by a few ulps of the running sum of magnitudes
``np.cumsum(np.abs(x))`` (not of the possibly cancelled result): the tests allow 1e-4 of it
for float32 and 1e-12 for float64.

Two levels:

- :func:`scan` (and each variant's ``run``): host arrays in, host array out; the upload,
  kernels and download go through the :class:`Device`, so ``device.record()`` splits them.
- :func:`scan_buffer`: enqueues the scan of a device buffer for other algorithms (radix sort's
  histograms), without waiting.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ..errors import DTypeError, ShapeError, VariantError, boolean
from ..runtime import Buffer, Device, Program, c_type, round_to_multiple, round_to_power_of_two
from ..runtime.arrays import empty_like
from ..runtime.memo import remembered
from ..runtime.traits import built_within, group_within
from . import registry
from .axes import normalized, to_rows
from .operands import prepare
from .recall import MISSED, Recall, call_key, recording, runs_on
from .registry import Param, Requirement, Variant, register
from .segmented import result_dtype, scan_rows

#: Element types a scan accepts, and the type its kernels add in (see the module's docstring).
KERNEL_TYPES: dict[np.dtype, np.dtype] = {
    np.dtype(np.int32): np.dtype(np.uint32),
    np.dtype(np.uint32): np.dtype(np.uint32),
    np.dtype(np.int64): np.dtype(np.uint64),
    np.dtype(np.uint64): np.dtype(np.uint64),
    np.dtype(np.float32): np.dtype(np.float32),
    np.dtype(np.float64): np.dtype(np.float64),
}

#: The largest n: Blelloch's tree over the next power of two must keep uint indices.
MAX_ELEMENTS = 1 << 31

#: Elements one work-group scans in one block, per work-item, in the two block variants.
PAIR = 2
VECTOR = 16

#: ``enqueue(device, src, dst, n, kernel_dtype, inclusive, *, WG)``: one variant's device-level
#: scan. Tunables keep the names of the kernels' ``#define``s (``WG``), as in the registry.
Enqueue = Callable[..., None]


def kernel_dtype(dtype: DTypeLike, device: Device | None = None) -> np.dtype:
    """The type scan kernels add ``dtype`` in; :class:`DTypeError` if it cannot be scanned here
    (remembered per dtype and device: a scan asks for it on every call)."""
    return remembered(_KERNEL_DTYPES, (dtype, device), lambda: _kernel_dtype(dtype, device))


_KERNEL_DTYPES: dict[Hashable, np.dtype] = {}


def _kernel_dtype(dtype: DTypeLike, device: Device | None) -> np.dtype:
    dt = np.dtype(dtype)
    kt = KERNEL_TYPES.get(dt)  # a big-endian dtype compares unequal to its native twin
    if kt is None:
        names = ", ".join(str(d) for d in KERNEL_TYPES)
        raise DTypeError(f"cannot scan {dt}; supported: {names} (native byte order)")
    c_type(kt, device)
    return kt


def scan(
    x: ArrayLike,
    *,
    axis: int | None = None,
    dtype: DTypeLike | None = None,
    inclusive: bool = False,
    variant: str | None = None,
    device: Device | str | None = None,
    max_device_memory: int | str | None = None,
    **params: int,
) -> np.ndarray:
    """All prefix sums of ``x`` along ``axis`` as a new array, as ``np.cumsum(x, axis, dtype)``
    (``inclusive=True``) or its exclusive form.

    ``axis=None`` (the default, as in NumPy) scans the flattened array; an int scans every row
    along that axis. ``inclusive=False`` (the default) gives ``[0, x0, x0+x1, ...]``,
    ``inclusive=True`` gives ``[x0, x0+x1, ...]``. The result has ``dtype`` if given, else that
    of ``np.cumsum`` for bool and integers narrower than 32 bits (int64, or uint64 for unsigned
    ones) and ``x``'s own otherwise; unlike ``np.cumsum``, int32 and uint32 keep their type
    (they wrap around as ``np.cumsum(x, dtype=x.dtype)`` does). float16 is summed in float32
    and rounded once; complex numbers are summed part by part.

    ``x`` may be a CUDA device array (CuPy, PyTorch): see :mod:`parskel.algorithms.operands`.
    1D scans of int32, uint32, int64, uint64, float32 and float64 into their own type run on
    ``variant``, one of ``parskel.algorithms.variants("scan")`` (``hillis_steele``,
    ``blelloch``, ``recursive_blocks``, ``vector_blocks``, ...); by default the fastest known
    for the device runs, falling back when one cannot. ``params`` are the variant's tunables
    (``WG``, the work-group size). NumPy arrays of those larger than the device's memory, or
    than ``max_device_memory`` (see :func:`parskel.max_device_memory`), are scanned in chunks;
    on a GPU large ones go through pinned memory (see :mod:`parskel.algorithms.pipelined`).
    Other dtypes and scans along an axis run on the segmented scan of
    :mod:`parskel.algorithms.segmented`. A distributed ``ps.Vector`` (:mod:`parskel.dist`) is
    scanned part by part into a distributed result.

    >>> ps.scan(np.array([3, 1, 4, 1, 5], dtype=np.int32))
    array([0, 3, 4, 8, 9], dtype=int32)
    >>> ps.scan([3, 1, 4], inclusive=True)
    array([3, 4, 8])
    >>> ps.scan(np.array([[1, 2], [3, 4]], dtype=np.int8), axis=0, inclusive=True)
    array([[1, 2],
           [4, 6]])
    """
    inclusive = boolean(inclusive, "scan: inclusive")
    key = call_key([x], (axis, dtype, inclusive, variant, device, max_device_memory), params)
    done = _RECALL.replayed(key, x)  # a CuPy array of a signature seen before: what that call ran
    if done is not MISSED:
        return done
    placed = getattr(x, "distribution", None)
    if placed is not None:  # a distributed container (parskel.dist): scanned part by part
        return placed.scan(
            x, inclusive=inclusive, variant=variant, device=device, max_device_memory=max_device_memory, **params
        )
    dev, (given,), returned = prepare(device, x)
    result_type = result_dtype(given.dtype, dtype, "scan")
    if axis is None:
        given, axis = given.reshape(-1), 0
    axis = normalized(axis, given.ndim, "scan")
    if given.size > MAX_ELEMENTS:
        raise ShapeError(f"can scan at most {MAX_ELEMENTS} elements, got {given.size}")
    if given.ndim > 1 or given.dtype != result_type or result_type not in KERNEL_TYPES:
        rows, restore = to_rows(given, axis)
        return returned(restore(scan_rows(dev, rows, result_type, inclusive)))
    arr = _checked(given)
    kernel_dtype(arr.dtype, dev)
    if isinstance(arr, np.ndarray):  # a host array: through pinned memory, or in chunks, where that pays
        from .pipelined import scan as in_chunks

        done = in_chunks(dev, arr, inclusive, variant, params, max_device_memory)
        if done is not None:
            return done
    ran: list[tuple[Variant, dict[str, int]]] = []
    run = recording(lambda v, p: v.run(dev, arr, inclusive=inclusive, **p), ran)
    context = {"n": arr.size, "itemsize": arr.dtype.itemsize}
    result = registry.dispatch("scan", dev, variant, params, run, context)
    if key is not None and ran and runs_on(dev):
        _RECALL.keep(key, _planned(dev, *ran[-1], inclusive, kernel_dtype(arr.dtype, dev)))
    return returned(result)


_RECALL = Recall()


def _planned(
    device: Device, chosen: Variant, values: dict[str, int], inclusive: bool, kt: np.dtype
) -> Callable[[Any], Any]:
    """The scan of a CuPy array as a call with ``chosen`` and ``values`` ran it (see
    :mod:`parskel.algorithms.recall`): the variant's enqueue from the array into a new one."""
    enqueue = _ENQUEUE.get(chosen.name)

    def plan(x: Any) -> Any:
        x = x if x.ndim == 1 else x.reshape(-1)  # (scanned flattened, as the whole way does)
        with device.current():
            if enqueue is None:  # a variant that scans arrays only
                return chosen.run(device, x, inclusive=inclusive, **values)
            return _on_device(device, enqueue, x, kt, inclusive, values)

    return plan


def _on_device(device: Device, enqueue: Enqueue, x: Any, kt: np.dtype, inclusive: bool, values: dict[str, int]) -> Any:
    """The scan of the CUDA array ``x`` into a new one, read where it is: no copies."""
    out = empty_like(x)
    if x.size:
        enqueue(device, device.wrap(x)[0], device.wrap(out)[0], x.size, kt, inclusive, **values)
    return out


def scan_buffer(
    device: Device,
    src: Buffer,
    dst: Buffer,
    n: int,
    dtype: DTypeLike,
    *,
    inclusive: bool = False,
    variant: str | None = None,
    **params: int,
) -> None:
    """Enqueue the scan of the first ``n`` elements of ``src`` into ``dst``; does not wait.

    ``dtype`` is the element type of both buffers. ``dst`` may be ``src`` (an in-place scan)
    with every variant; elements of ``dst`` beyond ``n`` are left alone. ``variant`` names one
    of ``parskel.algorithms.variants("scan")``; by default the fastest known for the device
    that can run there with ``params`` is used, as in :func:`scan`. Temporary buffers are
    allocated as needed and released once the enqueued commands are done with them.
    Raises before enqueueing anything: :class:`ShapeError` if a buffer is smaller than ``n``
    elements, :class:`DTypeError`, or :class:`VariantError` for an unknown variant or
    parameter or one the device cannot run.
    """
    kt = kernel_dtype(dtype, device)
    n = int(n)
    if not 0 <= n <= MAX_ELEMENTS:
        raise ShapeError(f"can scan 0 to {MAX_ELEMENTS} elements, not {n}")
    for name, buf in (("src", src), ("dst", dst)):
        if buf.nbytes < n * kt.itemsize:
            raise ShapeError(f"{name} holds {buf.nbytes} bytes, fewer than {n} {np.dtype(dtype)} elements")

    def enqueue(chosen: Variant, values: dict[str, int]) -> None:
        if not scans_buffers(chosen.name):  # the next preferred variant is tried, if none was named
            raise VariantError(f"scan variant {chosen.name!r} scans arrays only, not device buffers")
        if n:
            _ENQUEUE[chosen.name](device, src, dst, n, kt, inclusive, **values)

    registry.dispatch("scan", device, variant, params, enqueue, {"n": n, "itemsize": kt.itemsize})


def values_at(tiles: int) -> int:
    """Where the tiles' values start in a one-pass scan's state buffer, in 4-byte words: after
    the counter and the tiles' flags, on a 16-byte boundary, which a tile's status and 8-byte
    value read as one word need (``SP_VALUES_AT`` in ``scan/single_pass.cl``; ``chained_cpu.cl``
    lays out its totals the same way).

    >>> values_at(1), values_at(3), values_at(4)
    (4, 4, 8)
    """
    return (tiles + 4) & ~3


def scans_buffers(name: str) -> bool:
    """Whether the scan variant ``name`` scans device buffers (:func:`scan_buffer`): the
    built-in ones do; a variant registered with only a ``run`` scans arrays."""
    return name in _ENQUEUE


def _checked(x: Any) -> Any:
    """``x`` (a NumPy array, or a CuPy array for a CUDA device) checked for a scan."""
    if not hasattr(x, "ndim"):
        x = np.asarray(x)
    if x.ndim != 1:
        raise ShapeError(f"scan takes a 1D array, got shape {x.shape}")
    kernel_dtype(x.dtype)
    if x.size > MAX_ELEMENTS:
        raise ShapeError(f"can scan at most {MAX_ELEMENTS} elements, got {x.size}")
    return x


def host_run(name: str, doc: str) -> Callable[..., np.ndarray]:
    """A variant's host-level ``run``: upload, scan on the device, download (on a device that
    shares host memory, the scan reads ``x`` and writes the result array in place: no copies)."""

    def run(device: Device, x: np.ndarray, *, inclusive: bool, **params: int) -> np.ndarray:
        x = _checked(x)
        kt = kernel_dtype(x.dtype, device)
        values = registry.get("scan", name).resolve(params)
        if not isinstance(x, np.ndarray):
            return _on_device(device, _ENQUEUE[name], x, kt, inclusive, values)
        out = empty_like(x)
        if x.size:
            src, dst = device.host_buffer(x), device.host_buffer(out, upload=False)
            _ENQUEUE[name](device, src, dst, x.size, kt, inclusive, **values)
            device.download(dst, out)
        return out

    run.__doc__ = doc
    return run


def _program(device: Device, path: str, kt: np.dtype, **defines: int) -> Program:
    return device.program(f"scan/{path}", {"T": c_type(kt, device), **defines})


def _convert(device: Device, kt: np.dtype, n: int, wg: int, name: str, *args: Any) -> None:
    kernel = _program(device, "convert.cl", kt).kernel(name)
    wg = group_within(wg, kernel)  # a tuned size may exceed what this device built it for
    device.launch(kernel, round_to_multiple(n, wg), wg, *args, np.uint32(n))


# hillis_steele -------------------------------------------------------------------------------
def _hillis_steele(
    device: Device, src: Buffer, dst: Buffer, n: int, kt: np.dtype, inclusive: bool, *, WG: int = 256
) -> None:
    nbytes = n * kt.itemsize
    if n == 1:
        if not inclusive:
            device.fill(dst, kt.type(0), nbytes)
        elif dst is not src:
            device.copy(dst, src, nbytes)
        return
    temps = [device.alloc(nbytes), device.alloc(nbytes)]
    # an exclusive scan is the inclusive scan of the input shifted by one; an in-place
    # inclusive scan copies the input first, because the last pass writes dst
    if not inclusive:
        _convert(device, kt, n, WG, "shift_right", src, temps[0])
        current, fresh = temps[0], {id(temps[1])}
    elif dst is src:
        device.copy(temps[0], src, nbytes)
        current, fresh = temps[0], {id(temps[1])}
    else:
        current, fresh = src, {id(t) for t in temps}
    kernel = _program(device, "hillis_steele.cl", kt).kernel("hillis_steele_pass")
    WG = group_within(WG, kernel)
    offsets = [1 << k for k in range((n - 1).bit_length())]
    for offset in offsets:
        last = offset == offsets[-1]
        target = dst if last else temps[0] if current is not temps[0] else temps[1]
        copy_from = 0 if last or id(target) in fresh else offset >> 1
        fresh.discard(id(target))
        device.launch(
            kernel, round_to_multiple(n, WG), WG, current, target, np.uint32(offset), np.uint32(copy_from), np.uint32(n)
        )
        current = target


# blelloch ------------------------------------------------------------------------------------
def _blelloch(
    device: Device, src: Buffer, dst: Buffer, n: int, kt: np.dtype, inclusive: bool, *, WG: int = 256
) -> None:
    size = round_to_power_of_two(n)
    item = kt.itemsize
    tree = device.alloc(size * item)
    device.copy(tree, src, n * item)
    if size > n:
        device.fill(tree, kt.type(0), (size - n) * item, offset=n * item)
    program = _program(device, "blelloch.cl", kt)
    up, down = program.kernel("up_sweep"), program.kernel("down_sweep")
    WG = group_within(WG, up, down)
    levels = size.bit_length() - 1
    for level in range(levels):
        nodes = size >> (level + 1)
        device.launch(up, nodes, min(WG, nodes), tree, np.uint32(1 << level))
    device.fill(tree, kt.type(0), item, offset=(size - 1) * item)
    for level in reversed(range(levels)):
        nodes = size >> (level + 1)
        device.launch(down, nodes, min(WG, nodes), tree, np.uint32(1 << level))
    if inclusive:
        _convert(device, kt, n, WG, "add_input", tree, src, dst)
    else:
        device.copy(dst, tree, n * item)


# recursive_blocks and vector_blocks ----------------------------------------------------------
def _block_scan(path: str, kernel_name: str, per_item: int) -> Enqueue:
    """The recursive block scan of seed 000 sections 4.4 (2 elements per work-item) and 4.5 (16)."""

    def enqueue(
        device: Device, src: Buffer, dst: Buffer, n: int, kt: np.dtype, inclusive: bool, *, WG: int = 256
    ) -> None:
        # blocks of WG: built again for smaller ones where this device runs fewer work-items
        WG, scan_kernel = built_within(WG, lambda wg: _program(device, path, kt, WG=wg).kernel(kernel_name))
        block = per_item * WG
        groups = -(-n // block)
        if groups == 1:
            # one block: no block totals to propagate, and dst stands in for the unused sums
            device.launch(scan_kernel, WG, WG, src, dst, dst, np.uint32(n), np.uint32(inclusive), np.uint32(0))
            return
        sums = device.alloc(groups * kt.itemsize)
        device.launch(scan_kernel, groups * WG, WG, src, dst, sums, np.uint32(n), np.uint32(inclusive), np.uint32(1))
        enqueue(device, sums, sums, groups, kt, False, WG=WG)
        add = _program(device, "add_sums.cl", kt, WG=WG, PER_ITEM=per_item).kernel("add_sums")
        device.launch(add, groups * WG, WG, dst, sums, np.uint32(n))

    return enqueue


_ENQUEUE: dict[str, Enqueue] = {
    "hillis_steele": _hillis_steele,
    "blelloch": _blelloch,
    "recursive_blocks": _block_scan("recursive_blocks.cl", "scan_blocks", PAIR),
    "vector_blocks": _block_scan("vector_blocks.cl", "scan_blocks_vec", VECTOR),
}


def add_enqueue(name: str, enqueue: Enqueue) -> None:
    """Make a variant registered by another module (``single_pass``) usable by :func:`scan_buffer`."""
    _ENQUEUE[name] = enqueue


_WG = Param("WG", 256, (64, 128, 256, 512, 1024), "work-group size (work-items)")
_FITS_GROUP = Requirement(
    "work-group size WG <= the device's maximum",
    lambda dev, p: p["WG"] <= dev.info.max_work_group_size,
)
_FITS_LOCAL = Requirement(
    "local memory for 2 * WG elements of 8 bytes",
    lambda dev, p: 2 * p["WG"] * 8 <= dev.info.local_mem_bytes,
)

_SUMMARIES = {
    "hillis_steele": (
        "000 §4.2",
        (_FITS_GROUP,),
        "naive inclusive scan (Hillis-Steele): one launch per pass, double-buffered, O(n log n) work",
    ),
    "blelloch": (
        "000 §4.3",
        (_FITS_GROUP,),
        "work-efficient scan (Blelloch): pad to a power of two, up-sweep and down-sweep, one launch per level",
    ),
    "recursive_blocks": (
        "000 §4.4",
        (_FITS_GROUP, _FITS_LOCAL),
        "each work-group scans 2*WG elements in local memory; block sums scanned recursively, then added back",
    ),
    "vector_blocks": (
        "000 §4.5",
        (_FITS_GROUP, _FITS_LOCAL),
        "each work-item scans two 8-wide vectors in registers before the local block scan: 16*WG elements a block",
    ),
}

for _name, (_seed, _requires, _summary) in _SUMMARIES.items():
    register(
        Variant(
            family="scan",
            name=_name,
            seed=_seed,
            summary=_summary,
            run=host_run(_name, f"Scan ``x`` with {_name}: {_summary}."),
            params=(_WG,),
            requires=_requires,
        )
    )
