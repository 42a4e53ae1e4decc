"""Sorts shaped for CPU devices: LSD radix sorts over a few long runs (see :mod:`.runs`).

Each work-group counts the digits of its run in a private array (in its core's L1 cache) and
places its keys in order, so the sorts are stable. They take the keys and values of
:mod:`.sorts`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..runtime import Device
from . import runs
from .keys import KEY_KINDS, check_keys
from .registry import Variant, register

Result = np.ndarray | tuple[np.ndarray, np.ndarray]

KEY_BITS = 32


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
        src, dst = device.to_device(keys), device.alloc(n * 4)
        moved = [] if values is None else [device.to_device(values), device.alloc(n * 4)]
        counts = device.alloc(groups * (1 << bits) * 4)
        passes = -(-KEY_BITS // bits)
        size = (np.uint32(n), np.uint32(chunk))
        for p in range(passes):
            shift, encode, decode = np.uint32(p * bits), np.uint32(p == 0), np.uint32(p == passes - 1)
            device.launch(histogram, groups, 1, src, counts, *size, shift, encode)
            device.launch(scatter, groups, 1, src, dst, counts, *size, shift, encode, decode, *moved)
            src, dst = dst, src
            moved.reverse()
        out = np.empty_like(keys)
        device.download(src, out)
        if values is None:
            return out
        out_values = np.empty_like(values)
        device.download(moved[0], out_values)
        return out, out_values

    return run


register(
    Variant(
        family="sort",
        name="radix8_cpu",
        seed="beyond 000 §5.2: CPU-shaped",
        summary="LSD radix sort, 8-bit digits, a few long runs with private per-group histograms, stable",
        run=_radix_cpu(8),
        params=runs.params(4),
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
    )
)
