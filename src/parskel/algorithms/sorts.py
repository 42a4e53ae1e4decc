"""Sorting (seed 000, chapter 5): bitonic networks and LSD radix sorts of 32-bit keys.

Keys are uint32, int32 or float32 of any length; int32 and float32 sort through the
order-preserving bit transforms of :mod:`parskel.algorithms.keys` (-0.0 before +0.0, NaNs
last). The radix variants also move a ``values`` array (any 4-byte dtype) along with the keys
and are stable: equal keys keep their input order. The bitonic variants sort keys only.

Every variant's ``run(device, keys, values, **params)`` returns the sorted keys, or the pair
``(keys, values)`` when values are given; inputs are never modified.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ShapeError, VariantError
from ..runtime import Buffer, Device, Program, round_to_multiple, round_to_power_of_two
from ..runtime.arrays import empty_like
from ..runtime.traits import group_within
from . import registry
from .axes import normalized, to_rows
from .keys import (
    KEY_KINDS,
    PAD,
    check_keys,
    check_kind,
    check_sortable,
    check_values,
    check_values_like,
    download_keys,
    is_native,
    sorted_copy,
    upload_keys,
)
from .operands import prepare, result_buffer, staged
from .recall import MISSED, Recall, call_key, recording, rerun, runs_on
from .registry import Param, Requirement, Variant, register
from .scans import scan_buffer

Result = np.ndarray | tuple[np.ndarray, np.ndarray]

BUCKETS = 16
PASSES = 8  # 4-bit digits of 32-bit keys
_POWERS = (16, 32, 64, 128, 256, 512, 1024)


def sort(
    keys: np.ndarray,
    values: np.ndarray | None = None,
    *,
    axis: int | None = -1,
    kind: str | None = None,
    variant: str | None = None,
    device: Device | str | None = None,
    max_device_memory: int | str | None = None,
    **params: int,
) -> Result:
    """Sort ``keys`` ascending along ``axis`` on a device, stably; a new array, as ``np.sort``.

    Keys are bool, int8 to int64, uint8 to uint64, float16, float32 or float64, of any shape;
    ``axis=-1`` (the default) sorts every row along the last axis, ``axis=None`` the flattened
    array. With ``values`` (an array of the keys' shape: numbers, bool or complex) returns
    ``(sorted_keys, values)`` with the values permuted like their keys, stably (as
    ``np.take_along_axis(values, np.argsort(keys, axis, kind="stable"), axis)``). ``kind`` is
    accepted for NumPy's sake; every sort here is stable.

    ``keys`` may be a CUDA device array (CuPy, PyTorch): it is sorted on its GPU and the result
    is the same kind of array, without host copies (see :mod:`parskel.algorithms.operands`).
    ``variant`` picks one of ``parskel.algorithms.variants("sort")``; by default the fastest
    known for the device runs, falling back when one cannot. ``params`` are the variant's
    tunables (``work_group``, ``keys_per_item``, ...). 1D uint32, int32 and float32 keys, alone
    or with 4-byte values, go straight to the variants (the bitonic ones take no values);
    other keys, values and axes go through the words of :mod:`parskel.algorithms.ordering`.

    Float order: ``-inf < ... < -0.0 < +0.0 < ... < +inf < NaN``: unlike NumPy, -0.0 sorts
    before +0.0, and every NaN comes back as NumPy's quiet NaN of its dtype (see
    :mod:`parskel.algorithms.keys`).

    1D NumPy arrays of 32-bit keys larger than the device's memory, or than
    ``max_device_memory`` (bytes, or a text such as ``"64MiB"``; see
    :func:`parskel.max_device_memory`), are sorted in pieces; on a GPU large ones go through
    pinned memory (see :mod:`parskel.algorithms.pipelined`).

    ``keys`` may be a distributed ``ps.Vector`` (:mod:`parskel.dist`): a sample sort across its
    parts gives a distributed result (:mod:`parskel.dist.algorithms`).

    >>> ps.sort(np.array([3, 1, 2], dtype=np.uint32))
    array([1, 2, 3], dtype=uint32)
    >>> ps.sort(np.array([0.5, -0.0, np.nan, 0.0, -np.inf], np.float32))
    array([-inf, -0. ,  0. ,  0.5,  nan], dtype=float32)
    >>> ps.sort(np.array([[3, -1, 2], [9, 8, 7]], dtype=np.int64))
    array([[-1,  2,  3],
           [ 7,  8,  9]])
    """
    key = call_key([keys, values], (axis, kind, variant, device, max_device_memory), params)
    done = _RECALL.replayed(key, keys, values)  # CuPy arrays of a signature seen before: what that call ran
    if done is not MISSED:
        return done
    placed = getattr(keys, "distribution", None)
    if placed is not None:  # a distributed container (parskel.dist): sorted across its parts
        return placed.sort(keys, values, variant=variant, device=device, max_device_memory=max_device_memory, **params)
    check_kind(kind, "sort")
    lists = (not hasattr(keys, "dtype"), values is not None and not hasattr(values, "dtype"))
    dev, (keys, values), returned = prepare(device, keys, values)
    keys, key_type = _narrowed(keys, lists[0])
    if values is not None:
        values, value_type = _narrowed(values, lists[1])
    check_sortable(keys, "sort")
    if values is not None:
        check_values_like(values, keys, "sort")
    if key is not None and keys.ndim != 1:  # (a plan runs on the arrays as they come)
        key = None
    if axis is None:
        keys, values, axis = keys.reshape(-1), None if values is None else values.reshape(-1), 0
    axis = normalized(axis, keys.ndim, "sort")
    result: Any
    if keys.ndim == 1 and is_native(keys, values):
        ran: list[tuple[Variant, dict[str, int]]] = []
        result = _sort_vector(dev, keys, values, variant, params, max_device_memory, ran)
        if key is not None and ran and runs_on(dev):
            _RECALL.keep(key, rerun(dev, *ran[-1]))
    else:
        from .ordering import sort_rows

        rows, restore = to_rows(keys, axis)
        value_rows = None if values is None else to_rows(values, axis)[0]
        out_keys, out_values, _ = sort_rows(dev, rows, value_rows, variant=variant, params=params)
        result = restore(out_keys) if values is None else (restore(out_keys), restore(out_values))
    if values is None:
        return returned(result.astype(key_type, copy=False))
    return returned((result[0].astype(key_type, copy=False), result[1].astype(value_type, copy=False)))


def _sort_vector(
    dev: Device,
    keys: Any,
    values: Any,
    variant: str | None,
    params: dict[str, int],
    max_device_memory: int | str | None,
    ran: list[tuple[Variant, dict[str, int]]],
) -> Result:
    """A 1D array of 32-bit keys (and 4-byte values) sorted by the variants; the variant that
    sorted them and its parameter values are appended to ``ran`` (none by the pieces of a host
    array's sort)."""
    check_keys(keys)
    if values is not None:
        check_values(values, keys.size)
    if isinstance(keys, np.ndarray):  # host arrays: through pinned memory, or in pieces, where that pays
        from .pipelined import sort as in_pieces

        result = in_pieces(dev, keys, values, variant, params, max_device_memory)
        if result is not None:
            return result
    run = recording(lambda v, p: v.run(dev, keys, values, **p), ran)
    return registry.dispatch("sort", dev, variant, params, run, {"n": keys.size}, _tuned_as(values))


_RECALL = Recall()


def _tuned_as(values: Any) -> str | None:
    """The tuning a sort reads: sorts with values are tuned apart (``parskel tune sort_pairs``),
    since their tiles hold twice the data."""
    return None if values is None else "sort_pairs"


def _narrowed(array: np.ndarray, from_list: bool) -> tuple[np.ndarray, np.dtype]:
    """A Python list of ints becomes int64 in NumPy: sort it as int32 when that loses nothing,
    and give it back as int64, as ``np.sort`` of the list would."""
    if from_list and array.dtype == np.int64 and array.size:
        info = np.iinfo(np.int32)
        if info.min <= array.min() and array.max() <= info.max:
            return array.astype(np.int32), array.dtype
    return array, array.dtype


# shared ------------------------------------------------------------------------------------


def _work_group_fits() -> Requirement:
    return Requirement(
        "work_group <= the device's largest work-group",
        lambda dev, p: p["work_group"] <= dev.info.max_work_group_size,
    )


def _copies(keys: np.ndarray, values: np.ndarray | None) -> Result:
    return sorted_copy(keys) if values is None else (sorted_copy(keys), values.copy())


# bitonic -----------------------------------------------------------------------------------


def _keys_only(name: str, values: np.ndarray | None) -> None:
    if values is not None:
        raise VariantError(f"sort/{name} sorts keys only; use a radix variant to sort values with them")


def _bitonic(device: Device, keys: np.ndarray, values: np.ndarray | None, *, work_group: int) -> Result:
    """One launch of P/2 work-items per (box width, increment) of the network."""
    check_keys(keys)
    _keys_only("bitonic", values)
    n = keys.size
    if n <= 1:
        return sorted_copy(keys)
    step = device.program("sort/bitonic.cl").kernel("bitonic_step")
    padded = round_to_power_of_two(n)
    buffer = upload_keys(device, keys, padded)
    items = padded // 2
    # a tuned work-group may exceed what this device builds the kernel for (NVIDIA's OpenCL: 256)
    local = min(items, group_within(work_group, step))
    boxwidth = 2
    while boxwidth <= padded:
        inc = boxwidth // 2
        while inc > 0:
            device.launch(step, items, local, buffer, np.uint32(inc), np.uint32(boxwidth))
            inc //= 2
        boxwidth *= 2
    return download_keys(device, buffer, keys)


def _bitonic_fused(
    device: Device, keys: np.ndarray, values: np.ndarray | None, *, work_group: int, fuse: int
) -> Result:
    """Up to ``fuse`` keys per work-item merged in registers: log2(fuse) columns per launch."""
    check_keys(keys)
    _keys_only("bitonic_fused", values)
    n = keys.size
    if n <= 1:
        return sorted_copy(keys)
    program = device.program("sort/bitonic_fused.cl")
    kernels = {lvl: program.kernel(f"bitonic_fused{1 << lvl}") for lvl in range(1, fuse.bit_length())}
    work_group = group_within(work_group, *kernels.values())  # as in _bitonic
    padded = round_to_power_of_two(n)
    buffer = upload_keys(device, keys, padded)
    boxwidth = 2
    while boxwidth <= padded:
        inc = boxwidth // 2
        while inc > 0:
            # inc.bit_length() columns remain in this box width: fuse as many as allowed.
            lvl = min(inc.bit_length(), fuse.bit_length() - 1)
            items = padded >> lvl
            device.launch(kernels[lvl], items, min(work_group, items), buffer, np.uint32(inc), np.uint32(boxwidth))
            inc >>= lvl
        boxwidth *= 2
    return download_keys(device, buffer, keys)


# one work-group ----------------------------------------------------------------------------

#: The most keys :func:`_local_bitonic` sorts: keys and positions in 32 KiB of local memory.
LOCAL_CAPACITY = 4096


def _local_bitonic(device: Device, keys: np.ndarray, values: np.ndarray | None, *, work_group: int) -> Result:
    """The whole sort in one work-group's local memory: one launch, stable, with values."""
    check_keys(keys)
    n = keys.size
    if n > LOCAL_CAPACITY:
        raise VariantError(f"sort/local_bitonic sorts at most {LOCAL_CAPACITY} keys in one work-group, not {n}")
    if n <= 1:
        return _copies(keys, values)
    defines = {
        "KEY_KIND": KEY_KINDS[keys.dtype],
        "CAPACITY": LOCAL_CAPACITY,
        "WG": work_group,
        "WITH_VALUES": values is not None,
    }
    kernel = device.program("sort/local_bitonic.cl", defines).kernel("local_bitonic")
    key_buffer, out = result_buffer(device, keys)
    source = staged(device, keys)
    if values is None:
        device.launch(kernel, work_group, work_group, source, key_buffer, source, key_buffer, np.uint32(n))
        device.download(key_buffer, out)
        return out
    value_buffer, out_values = result_buffer(device, values)
    device.launch(
        kernel, work_group, work_group, source, key_buffer, staged(device, values), value_buffer, np.uint32(n)
    )
    device.download(key_buffer, out, wait=False)
    device.download(value_buffer, out_values)
    return out, out_values


def _local_bitonic_buffers(
    device: Device,
    keys: Buffer,
    values: Buffer | None,
    out_keys: Buffer,
    out_values: Buffer | None,
    n: int,
    bits: int,
    *,
    work_group: int,
) -> None:
    """local_bitonic's :data:`BufferSort` (all 32 bits compared)."""
    if n > LOCAL_CAPACITY:
        raise VariantError(f"sort/local_bitonic sorts at most {LOCAL_CAPACITY} keys in one work-group, not {n}")
    defines = {"KEY_KIND": 0, "CAPACITY": LOCAL_CAPACITY, "WG": work_group, "WITH_VALUES": values is not None}
    kernel = device.program("sort/local_bitonic.cl", defines).kernel("local_bitonic")
    moved = (keys, out_keys) if values is None or out_values is None else (values, out_values)
    device.launch(kernel, work_group, work_group, keys, out_keys, *moved, np.uint32(n))


# radix -------------------------------------------------------------------------------------


def _radix_program(
    device: Device, path: str, local: bool, with_values: bool, work_group: int, keys_per_item: int
) -> Program:
    defines = {"KEYS_PER_ITEM": keys_per_item, "WITH_VALUES": with_values}
    if local:  # the local counts are sized at build time
        defines["WG"] = work_group
    return device.program(path, defines)


def _radix_passes(
    device: Device, program: Program, src: Buffer, moved: list[Buffer], items: int, work_group: int, bits: int
) -> tuple[Buffer, list[Buffer]]:
    """Enqueue the passes over the low ``bits`` bits of the padded keys in ``src`` (and the
    values in ``moved[0]``, with ``moved[1]`` to move them into); the buffers holding the
    sorted keys and values."""
    histogram, permute = program.kernel("radix_histogram"), program.kernel("radix_permute")
    counts = device.alloc(items * BUCKETS * 4)
    dst = device.alloc(src.nbytes)
    for shift in range(0, bits, 4):
        device.launch(histogram, items, work_group, src, counts, np.uint32(shift))
        scan_buffer(device, counts, counts, items * BUCKETS, np.uint32)
        device.launch(permute, items, work_group, src, dst, counts, np.uint32(shift), *moved)
        src, dst = dst, src
        moved = moved[::-1]
    return src, moved


def _radix(path: str, *, local: bool) -> Callable[..., Result]:
    """The host side shared by the radix variants; ``path`` holds their two kernels."""

    def run(
        device: Device, keys: np.ndarray, values: np.ndarray | None, *, work_group: int, keys_per_item: int
    ) -> Result:
        check_keys(keys)
        n = keys.size
        if n == 0:
            return _copies(keys, values)
        program = _radix_program(device, path, local, values is not None, work_group, keys_per_item)
        padded = round_to_multiple(n, work_group * keys_per_item)
        src = upload_keys(device, keys, padded)
        moved: list[Buffer] = []
        if values is not None:
            moved = [device.alloc(padded * 4), device.alloc(padded * 4)]
            device.upload(moved[0], values)
        src, moved = _radix_passes(device, program, src, moved, padded // keys_per_item, work_group, 4 * PASSES)
        out = download_keys(device, src, keys)
        if values is None:
            return out
        out_values = empty_like(values)
        device.download(moved[0], out_values)
        return out, out_values

    return run


def _radix_buffers(path: str, *, local: bool) -> BufferSort:
    """The radix variants' :data:`BufferSort`: one pass per 4 of the ``bits`` compared."""

    def enqueue(
        device: Device,
        keys: Buffer,
        values: Buffer | None,
        out_keys: Buffer,
        out_values: Buffer | None,
        n: int,
        bits: int,
        *,
        work_group: int,
        keys_per_item: int,
    ) -> None:
        program = _radix_program(device, path, local, values is not None, work_group, keys_per_item)
        padded = round_to_multiple(n, work_group * keys_per_item)
        src = device.alloc(padded * 4)
        device.copy(src, keys, 4 * n)
        if padded > n:  # the largest key sorts after every real one, whatever bits are compared
            device.fill(src, PAD, (padded - n) * 4, offset=n * 4)
        moved: list[Buffer] = []
        if values is not None:
            moved = [device.alloc(padded * 4), device.alloc(padded * 4)]
            device.copy(moved[0], values, 4 * n)
        src, moved = _radix_passes(device, program, src, moved, padded // keys_per_item, work_group, bits)
        device.copy(out_keys, src, 4 * n)
        if values is not None and out_values is not None:
            device.copy(out_values, moved[0], 4 * n)

    return enqueue


def sort_buffer(
    device: Device,
    keys: Buffer,
    values: Buffer | None,
    n: int,
    *,
    bits: int = 32,
    work_group: int = 256,
    keys_per_item: int = 32,
) -> None:
    """Enqueue a stable sort of the first ``n`` uint32 ``keys`` of a device buffer, in place,
    moving the uint32 ``values`` with them; does not wait.

    Only the low ``bits`` bits of the keys are compared (the ``radix`` variant, one pass per 4
    bits), so keys known to be below ``2**bits`` sort in fewer passes. For algorithms that keep
    their data on the device, as :func:`scan_buffer` is for scans.
    """
    if not 0 < bits <= 32:
        raise ValueError(f"bits must be 1 to 32, not {bits}")
    for name, buf in (("keys", keys), ("values", values)):
        if buf is not None and buf.nbytes < 4 * n:
            raise ShapeError(f"{name} holds {buf.nbytes} bytes, fewer than {n} uint32 elements")
    if n <= 1:
        return
    enqueue = _BUFFER_SORTS["radix"]
    enqueue(device, keys, values, keys, values, n, bits, work_group=work_group, keys_per_item=keys_per_item)


#: ``enqueue(device, keys, values, out_keys, out_values, n, bits, **params)``: a variant's stable
#: sort of ``n`` uint32 keys of a device buffer into another, compared as unsigned integers of
#: which only the low ``bits`` matter (a variant may compare more), moving the uint32 ``values``
#: into ``out_values`` unless both are None. The inputs are only read (the outputs are other
#: buffers); it does not wait. The sorts of keys of other dtypes run on it
#: (:mod:`parskel.algorithms.ordering`).
BufferSort = Callable[..., None]
_BUFFER_SORTS: dict[str, BufferSort] = {}


def add_buffer_sort(name: str, enqueue: BufferSort) -> None:
    """Give the variant ``name`` (registered by its module) a :data:`BufferSort`."""
    _BUFFER_SORTS[name] = enqueue


def sort_words(
    device: Device,
    keys: Buffer,
    values: Buffer | None,
    out_keys: Buffer,
    out_values: Buffer | None,
    n: int,
    *,
    bits: int = 32,
    variant: str | None = None,
    **params: int,
) -> None:
    """Enqueue a stable sort of ``n`` uint32 ``keys`` (and ``values``) of device buffers into
    ``out_keys`` (and ``out_values``) with ``variant``, or with the best variant for the device
    that sorts buffers (:data:`BufferSort`); does not wait."""

    def enqueue(chosen: Variant, values_of_params: dict[str, int]) -> None:
        run = _BUFFER_SORTS.get(chosen.name)
        if run is None:
            sorters = ", ".join(_BUFFER_SORTS)
            raise VariantError(
                f"sort/{chosen.name} sorts 32-bit keys only; keys of other dtypes, batches and argsort "
                f"go through {sorters}"
            )
        if n:
            run(device, keys, values, out_keys, out_values, n, bits, **values_of_params)

    registry.dispatch("sort", device, variant, params, enqueue, {"n": n}, _tuned_as(values))


def _local_fits() -> Requirement:
    return Requirement(
        f"{BUCKETS} uints of local memory per work-item",
        lambda dev, p: p["work_group"] * BUCKETS * 4 <= dev.info.local_mem_bytes,
    )


def _small_enough() -> Requirement:
    return Requirement(
        f"at most {LOCAL_CAPACITY} keys, and local memory for them and their positions",
        lambda dev, p: p.get("n", 0) <= LOCAL_CAPACITY and dev.info.local_mem_bytes >= 2 * LOCAL_CAPACITY * 4,
    )


def _work_group(default: int) -> Param:
    return Param("work_group", default, _POWERS, "work-items per work-group")


register(
    Variant(
        family="sort",
        name="bitonic",
        seed="000 §5.2.1",
        summary="bitonic network, one launch per (box width, increment), n/2 work-items",
        run=_bitonic,
        params=(_work_group(256),),
        requires=(_work_group_fits(),),
    )
)
register(
    Variant(
        family="sort",
        name="bitonic_fused",
        seed="000 §5.2.2",
        summary="bitonic network, 2/4/8/16 keys per work-item merged in registers (kernel fusion)",
        run=_bitonic_fused,
        params=(_work_group(256), Param("fuse", 16, (2, 4, 8, 16), "most keys merged per work-item")),
        requires=(_work_group_fits(),),
    )
)
register(
    Variant(
        family="sort",
        name="radix",
        seed="000 §5.2.3",
        summary="LSD radix sort, 4-bit digits, private per-work-item histograms, stable",
        run=_radix("sort/radix.cl", local=False),
        params=(_work_group(256), Param("keys_per_item", 32, (8, 16, 32, 64, 128), "keys per work-item")),
        requires=(_work_group_fits(),),
        tags=frozenset({"stable"}),
    )
)
register(
    Variant(
        family="sort",
        name="radix_local",
        seed="000 §5.2.4",
        summary="radix with the per-work-item histograms in local memory",
        run=_radix("sort/radix_local.cl", local=True),
        params=(_work_group(256), Param("keys_per_item", 32, (8, 16, 32, 64, 128), "keys per work-item")),
        requires=(_work_group_fits(), _local_fits()),
        tags=frozenset({"stable"}),
    )
)
register(
    Variant(
        family="sort",
        name="radix_local_vec",
        seed="000 §5.2.5",
        summary="radix_local with keys and values read as uint16 vectors",
        run=_radix("sort/radix_local_vec.cl", local=True),
        params=(
            _work_group(256),
            Param("keys_per_item", 128, (16, 32, 64, 128, 256), "keys per work-item, a multiple of 16"),
        ),
        requires=(_work_group_fits(), _local_fits()),
        tags=frozenset({"stable"}),
    )
)
register(
    Variant(
        family="sort",
        name="local_bitonic",
        seed="beyond 000 §5.2.1: the single-tile path",
        summary=f"up to {LOCAL_CAPACITY} keys sorted in one work-group's local memory, one launch, stable",
        run=_local_bitonic,
        params=(_work_group(256),),
        requires=(_work_group_fits(), _small_enough()),
        tags=frozenset({"stable"}),
    )
)

add_buffer_sort("local_bitonic", _local_bitonic_buffers)
for _name in ("radix", "radix_local", "radix_local_vec"):
    add_buffer_sort(_name, _radix_buffers(f"sort/{_name}.cl", local=_name != "radix"))
