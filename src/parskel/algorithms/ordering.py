"""Sorting keys of every dtype, along one axis of an n-dimensional array, and ``argsort``.

The sorts of :mod:`.sorts` compare 32-bit keys. Keys of any other dtype become 32-bit words on
the device whose unsigned order is the keys' order (``kernels/sort/words.cl``): bool, 8- and
16-bit integers and float16 make one word, 64-bit keys two (their high and low halves). A sort
along an axis sorts every row of that axis at once, by (row, key): the row number is packed
above a key of 8 or 16 bits, and is a word of its own above a wider one. Several words are
sorted least significant first, each sort stable and moving the elements' positions along (an
LSD radix sort over words); the keys and values are then gathered in the order found. So every
sort here is stable, and ``argsort`` is the positions.

The words are sorted by the variants that sort device buffers (:func:`.sorts.sort_words`: the
radix, onesweep and CPU-shaped variants, and local_bitonic for up to 4096 keys); the bitonic
variants sort 32-bit keys of one array only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime import Buffer, Device, round_to_multiple
from . import registry
from .axes import normalized, to_rows
from .keys import check_kind, check_sortable, sorted_copy
from .operands import prepare, result_buffer, staged
from .scratch import scratch
from .sorts import LOCAL_CAPACITY, sort_words

#: How words.cl transforms a key of each dtype kind: unsigned, signed, float.
_CLASSES = {"b": 0, "u": 0, "i": 1, "f": 2}
_WG = 256


def sort_rows(
    dev: Device,
    keys: Any,
    values: Any,
    *,
    sorted_keys: bool = True,
    order: bool = False,
    variant: str | None = None,
    params: dict[str, Any] | None = None,
) -> tuple[Any, Any, Any]:
    """Sort each row of the C-contiguous 2D ``keys`` (and ``values`` of its shape) stably: the
    sorted keys (if ``sorted_keys``, else None), the values moved with them (or None) and, if
    ``order``, the positions the sorted keys had in their row (argsort's int64 result)."""
    params = params or {}
    rows, row = keys.shape
    flat_keys = keys.reshape(-1)
    flat_values = None if values is None else values.reshape(-1)
    n = flat_keys.size
    if n == 0 or row == 1:  # nothing moves
        return (
            sorted_copy(keys) if sorted_keys else None,
            None if values is None else values.copy(),
            np.zeros_like(keys, dtype=np.int64) if order else None,
        )
    bits = 8 if keys.dtype.kind == "b" else 8 * keys.dtype.itemsize
    by_rows = rows > 1 and _rows_fit(dev, row, variant)
    row_bits = 0 if by_rows else (rows - 1).bit_length()
    packed = row_bits > 0 and bits <= 16 and bits + row_bits <= 32
    # the words, least significant first, with the bits of each the sort compares
    words = [("lo", min(bits, 32) + (row_bits if packed else 0))]
    if bits == 64:
        words.append(("hi", 32))
    if row_bits and not packed:
        words.append(("row", row_bits))

    def sort_pass(
        keys_in: Buffer, values_in: Buffer | None, keys_out: Buffer, values_out: Buffer | None, compared: int
    ) -> None:
        if by_rows:
            _sort_each_row(dev, keys_in, values_in, keys_out, values_out, rows, row, params)
        else:
            sort_words(dev, keys_in, values_in, keys_out, values_out, n, bits=compared, variant=variant, **params)

    program = dev.program(
        "sort/words.cl", {"KEY_BITS": bits, "KEY_CLASS": _CLASSES[keys.dtype.kind], "ROWS": int(packed)}
    )
    size = (round_to_multiple(n, _WG), _WG)
    un, urow = np.uint32(n), np.uint32(row)
    moves_values = flat_values is not None and flat_values.itemsize == 4 and not order
    with scratch(dev) as take:
        lo = take(4 * n)
        hi = take(4 * n) if bits == 64 else lo
        dev.launch(program.kernel("encode_words"), *size, staged(dev, flat_keys), lo, hi, un, urow)
        sorted_lo = take(4 * n)
        if len(words) == 1 and (flat_values is None or moves_values) and sorted_keys and not order:
            # one word: the keys come back from it, and 4-byte values move with it
            value_out: Any = None
            if flat_values is not None:
                value_buffer, value_out = result_buffer(dev, flat_values)
            moved_from = None if flat_values is None else staged(dev, flat_values)
            sort_pass(lo, moved_from, sorted_lo, None if value_out is None else value_buffer, words[0][1])
            key_out = _decoded(dev, program, sorted_lo, flat_keys, size)
            if value_out is not None:
                dev.download(value_buffer, value_out)
            return _shaped(key_out, keys.shape), _shaped(value_out, keys.shape), None
        positions_in, positions_out = take(4 * n), take(4 * n)
        dev.launch(program.kernel("iota"), *size, positions_in, un)
        sort_pass(lo, positions_in, sorted_lo, positions_out, words[0][1])
        for name, compared in words[1:]:
            positions_in, positions_out = positions_out, positions_in
            if name == "hi":
                gather(dev, hi, positions_in, lo, n, np.dtype(np.uint32))
            else:
                dev.launch(program.kernel("segment_words"), *size, positions_in, lo, un, urow)
            sort_pass(lo, positions_in, sorted_lo, positions_out, compared)
        key_out = position_out = value_out = None
        if order:
            position_buffer, position_out = result_buffer(dev, flat_keys, dtype=np.int64)
            dev.launch(program.kernel("positions"), *size, positions_out, position_buffer, un, urow)
            dev.download(position_buffer, position_out)
        if sorted_keys and len(words) == 1:
            key_out = _decoded(dev, program, sorted_lo, flat_keys, size)
        elif sorted_keys:
            key_buffer, key_out = result_buffer(dev, flat_keys)
            dev.launch(program.kernel("gather_keys"), *size, staged(dev, flat_keys), positions_out, key_buffer, un)
            dev.download(key_buffer, key_out)
        if flat_values is not None:
            value_buffer, value_out = result_buffer(dev, flat_values)
            gather(dev, staged(dev, flat_values), positions_out, value_buffer, n, flat_values.dtype)
            dev.download(value_buffer, value_out)
    return _shaped(key_out, keys.shape), _shaped(value_out, keys.shape), _shaped(position_out, keys.shape)


def _rows_fit(dev: Device, row: int, variant: str | None) -> bool:
    """Whether each row of ``row`` keys is sorted by a work-group of its own, in local memory
    (local_bitonic): when the caller names it, and by default on GPUs. Not by default on CPUs,
    whose work-groups pay for every barrier: on PoCL (2 cores) 1024 rows of 1024 float32 took
    157 ms so, 26 ms through radix11_cpu's global passes."""
    if variant != "local_bitonic" and (variant is not None or dev.type == "cpu"):
        return False
    return not registry.get("sort", "local_bitonic").unmet(dev, None, {"n": row})


def _sort_each_row(
    dev: Device,
    keys: Buffer,
    values: Buffer | None,
    out_keys: Buffer,
    out_values: Buffer | None,
    rows: int,
    row: int,
    params: dict[str, Any],
) -> None:
    """Enqueue the stable sort of each row of ``row`` uint32 keys (and their values) by a
    work-group of its own (local_bitonic, launched over the rows)."""
    chosen = registry.get("sort", "local_bitonic")
    group = chosen.fitted(dev, params, {"n": row})["work_group"]
    defines = {"KEY_KIND": 0, "CAPACITY": LOCAL_CAPACITY, "WG": group, "WITH_VALUES": values is not None}
    kernel = dev.program("sort/local_bitonic.cl", defines).kernel("local_bitonic")
    moved = (keys, out_keys) if values is None or out_values is None else (values, out_values)
    dev.launch(kernel, rows * group, group, keys, out_keys, *moved, np.uint32(row))


def _shaped(array: Any, shape: tuple[int, ...]) -> Any:
    return None if array is None else array.reshape(shape)


def _decoded(dev: Device, program: Any, words: Buffer, like: Any, size: tuple[int, int]) -> Any:
    """The keys of ``like``'s dtype back from their sorted one-word forms."""
    key_buffer, out = result_buffer(dev, like)
    dev.launch(program.kernel("decode_words"), *size, words, key_buffer, np.uint32(like.size))
    dev.download(key_buffer, out)
    return out


def moved_as(dtype: np.dtype) -> tuple[str, int]:
    """How kernels move elements of ``dtype`` without reading them: as how many units of which
    unsigned C type (the widest of uchar, ushort, uint, ulong that divides the element's size)."""
    unit = next(u for u in (8, 4, 2, 1) if dtype.itemsize % u == 0)
    return {8: "ulong", 4: "uint", 2: "ushort", 1: "uchar"}[unit], dtype.itemsize // unit


def gather(dev: Device, source: Buffer, order: Buffer, target: Buffer, n: int, dtype: np.dtype) -> None:
    """Enqueue ``target[i] = source[order[i]]`` for ``n`` elements of ``dtype`` (uint32 ``order``)."""
    element, words = moved_as(dtype)
    kernel = dev.program("primitives/gather.cl", {"E": element, "WORDS": words}).kernel("gather")
    dev.launch(kernel, round_to_multiple(n, _WG), _WG, source, order, target, np.uint32(n))


def argsort(
    a: Any,
    axis: int | None = -1,
    *,
    kind: str | None = None,
    variant: str | None = None,
    device: Device | str | None = None,
    **params: int,
) -> Any:
    """The positions that sort ``a`` along ``axis``, stably: ``np.argsort(a, axis, kind="stable")``.

    Keys as :func:`parskel.sort` takes them (bool, 8- to 64-bit integers, float16, float32,
    float64, any shape); ``axis=None`` sorts the flattened array. The result is int64, as
    NumPy's. Equal keys keep their order (every ``kind`` gives the stable order); unlike NumPy,
    -0.0 sorts before +0.0; NaNs sort last. ``variant`` and ``params`` choose the sort of the
    keys' words (:func:`parskel.algorithms.sorts.sort_words`). CUDA device arrays stay on
    their GPU (see :mod:`parskel.algorithms.operands`).

    >>> ps.argsort(np.array([3.0, 1.0, 3.0, -0.0, 0.0]))
    array([3, 4, 1, 0, 2])
    >>> ps.argsort(np.array([[3, 1, 2], [0, 5, 4]], dtype=np.int8), axis=0)
    array([[1, 0, 0],
           [0, 1, 1]])
    """
    check_kind(kind, "argsort")
    dev, (keys,), returned = prepare(device, a)
    check_sortable(keys, "argsort")
    if axis is None:
        keys, axis = keys.reshape(-1), 0
    axis = normalized(axis, keys.ndim, "argsort")
    rows, restore = to_rows(keys, axis)
    positions = sort_rows(dev, rows, None, sorted_keys=False, order=True, variant=variant, params=params)[2]
    return returned(restore(positions))
