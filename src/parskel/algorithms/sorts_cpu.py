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
        defines = {"KEY_KIND": KEY_KINDS[keys.dtype], "WITH_VALUES": values is not None, "RADIX_BITS": bits}
        program = device.program("sort/radix_cpu.cl", defines)
        histogram, scatter = program.kernel("radix_cpu_histogram"), program.kernel("radix_cpu_scatter")
        groups, chunk = runs.runs(device, n, groups_per_cu, min_run)
        passes = -(-KEY_BITS // bits)
        size = (np.uint32(n), np.uint32(chunk))
        with scratch(device) as take:
            counts = take(groups * (1 << bits) * 4)
            keys_at, out = _chain(device, keys, passes, take)
            values_at: list[Buffer] = []
            if values is not None:
                values_at, out_values = _chain(device, values, passes, take)
            scanned = groups << bits > SCAN_COUNTS
            for p in range(passes):
                src, dst = keys_at[p : p + 2]
                shift, encode, decode = np.uint32(p * bits), np.uint32(p == 0), np.uint32(p == passes - 1)
                device.launch(histogram, groups, 1, src, counts, *size, shift, encode)
                if scanned:
                    scan_buffer(device, counts, counts, groups << bits, np.uint32)
                moved = values_at[p : p + 2]
                device.launch(
                    scatter, groups, 1, src, dst, counts, np.uint32(scanned), *size, shift, encode, decode, *moved
                )
            device.download(keys_at[-1], out)
            if values is None:
                return out
            device.download(values_at[-1], out_values)
            return out, out_values

    return run


def _chain(
    device: Device, array: np.ndarray, passes: int, take: Callable[[int], Buffer]
) -> tuple[list[Buffer], np.ndarray]:
    """The buffers the passes move ``array``'s elements through, pass p from the p-th to the
    next, and the result array: the input first (only read: on a CPU device it is the caller's
    array), then a scratch buffer and the result's in turn, ending with the result's."""
    result, out = result_buffer(device, array)
    spare = take(array.nbytes) if passes > 1 else result
    chain = [staged(device, array)] + [result if (passes - p) % 2 else spare for p in range(passes)]
    return chain, out


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
