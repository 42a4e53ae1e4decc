"""Sorts shaped for CPU devices: LSD radix sorts over a few long runs (see :mod:`.runs`).

Each work-group counts the digits of its run in a private array (in its core's L1 cache) and
places its keys in order, so the sorts are stable. They take the keys and values of
:mod:`.sorts`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..runtime import Buffer, Device
from . import runs
from .keys import KEY_KINDS, check_keys
from .operands import result_buffer, staged
from .registry import Variant, register
from .scans import scan_buffer
from .scratch import scratch
from .sorts import BufferSort, add_buffer_sort

Result = np.ndarray | tuple[np.ndarray, np.ndarray]

KEY_BITS = 32
#: Above this many counts (work-groups times buckets), the host scans a pass's counts on the
#: device instead of every work-group adding them all up (many cores, many buckets).
SCAN_COUNTS = 1 << 15


def _radix_cpu(bits: int) -> Callable[..., Result]:
    def run(device: Device, keys: np.ndarray, values: np.ndarray | None, *, groups_per_cu: int, min_run: int) -> Result:
        check_keys(keys)
        n = keys.size
        if n == 0:
            return keys.copy() if values is None else (keys.copy(), values.copy())
        passes = -(-KEY_BITS // bits)
        key_buffer, out = result_buffer(device, keys)
        with scratch(device) as take:
            keys_at = _chain(staged(device, keys), key_buffer, passes, take)
            values_at: list[Buffer] = []
            if values is not None:
                value_buffer, out_values = result_buffer(device, values)
                values_at = _chain(staged(device, values), value_buffer, passes, take)
            _passes(device, bits, KEY_KINDS[keys.dtype], keys_at, values_at, n, groups_per_cu, min_run, take)
            device.download(key_buffer, out)
            if values is None:
                return out
            device.download(value_buffer, out_values)
            return out, out_values

    return run


def _radix_cpu_buffers(bits: int) -> BufferSort:
    """The :data:`~.sorts.BufferSort` of the CPU-shaped radix sorts: one pass per digit of the
    ``compared`` bits."""

    def enqueue(
        device: Device,
        keys: Buffer,
        values: Buffer | None,
        out_keys: Buffer,
        out_values: Buffer | None,
        n: int,
        compared: int,
        *,
        groups_per_cu: int,
        min_run: int,
    ) -> None:
        passes = -(-compared // bits)
        with scratch(device) as take:
            keys_at = _chain(keys, out_keys, passes, take)
            values_at = [] if values is None or out_values is None else _chain(values, out_values, passes, take)
            _passes(device, bits, 0, keys_at, values_at, n, groups_per_cu, min_run, take)

    return enqueue


def _passes(
    device: Device,
    bits: int,
    kind: int,
    keys_at: list[Buffer],
    values_at: list[Buffer],
    n: int,
    groups_per_cu: int,
    min_run: int,
    take: Callable[[int], Buffer],
) -> None:
    """Enqueue the passes: pass p moves the keys (and values) from ``keys_at[p]`` to the next;
    keys of ``kind`` (:data:`~.keys.KEY_KINDS`) are encoded by the first and decoded by the last."""
    defines = {"KEY_KIND": kind, "WITH_VALUES": bool(values_at), "RADIX_BITS": bits}
    program = device.program("sort/radix_cpu.cl", defines)
    groups, chunk = runs.runs(device, n, groups_per_cu, min_run)
    passes = len(keys_at) - 1
    if groups == 1:  # one run: every pass in one launch
        ends = [(chain[-2] if passes > 1 else chain[-1], chain[-1]) for chain in (keys_at, values_at) if chain]
        values_args = [values_at[0], *ends[1]] if values_at else []
        one = program.kernel("radix_cpu_one")
        device.launch(one, 1, 1, keys_at[0], *ends[0], np.uint32(n), np.uint32(passes), *values_args)
        return
    histogram, scatter = program.kernel("radix_cpu_histogram"), program.kernel("radix_cpu_scatter")
    histogram.in_chains()
    scatter.in_chains()
    size = (np.uint32(n), np.uint32(chunk))
    scanned = groups << bits > SCAN_COUNTS
    counts = take(groups * (1 << bits) * 4)
    for p in range(passes):
        src, dst = keys_at[p : p + 2]
        shift, encode, decode = np.uint32(p * bits), np.uint32(p == 0), np.uint32(p == passes - 1)
        device.launch(histogram, groups, 1, src, counts, *size, shift, encode)
        if scanned:
            scan_buffer(device, counts, counts, groups << bits, np.uint32)
        moved = values_at[p : p + 2]
        device.launch(scatter, groups, 1, src, dst, counts, np.uint32(scanned), *size, shift, encode, decode, *moved)


def _chain(first: Buffer, result: Buffer, passes: int, take: Callable[[int], Buffer]) -> list[Buffer]:
    """The buffers the passes move elements through, pass p from the p-th to the next: the input
    ``first`` (only read: on a CPU device it may be the caller's array), then a scratch buffer
    and ``result`` in turn, ending with ``result``."""
    spare = take(result.nbytes) if passes > 1 else result
    return [first] + [result if (passes - p) % 2 else spare for p in range(passes)]


register(
    Variant(
        family="sort",
        name="radix8_cpu",
        seed="beyond 000 §5.2: CPU-shaped",
        summary="LSD radix sort, 8-bit digits, a few long runs with private per-group histograms, stable",
        run=_radix_cpu(8),
        params=runs.params(4),
        tags=frozenset({"stable"}),
    )
)
register(
    Variant(
        family="sort",
        name="radix11_cpu",
        seed="beyond 000 §5.2: CPU-shaped",
        summary="LSD radix sort, 11-bit digits (3 passes), a few long runs with private per-group histograms, stable",
        run=_radix_cpu(11),
        params=runs.params(4),
        tags=frozenset({"stable"}),
    )
)
add_buffer_sort("radix8_cpu", _radix_cpu_buffers(8))
add_buffer_sort("radix11_cpu", _radix_cpu_buffers(11))
