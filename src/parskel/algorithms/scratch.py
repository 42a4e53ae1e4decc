"""Scratch memory for the algorithms' intermediate results, kept from one call to the next.

On a device that shares host memory (a CPU device), scratch buffers are host arrays: NumPy asks
the OS for huge pages for large arrays, which are far faster to touch the first time than the
driver's own allocations. Touching fresh memory still costs page faults (on a 2-core virtual
machine here about as long as sorting the same bytes), so the arrays of a call are kept for the
calls after it, up to :data:`KEEP_BYTES` in all, the most recently used first. Elsewhere
scratch buffers are device memory, allocated per call.

>>> with scratch(ps.device()) as take:
...     temp = take(4096)                    # a Buffer, for commands enqueued in the block
>>> temp.nbytes
4096
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from ..runtime import Buffer, Device

#: The most bytes of host arrays kept for later calls.
KEEP_BYTES = 512 << 20

_kept: list[np.ndarray] = []  # most recently returned last
_lock = threading.Lock()


@contextmanager
def scratch(device: Device) -> Iterator[Callable[[int], Buffer]]:
    """``take(nbytes)`` inside the block gives a scratch buffer of ``nbytes``; on leaving it,
    the device finishes the commands using them and their host arrays are kept for reuse."""
    taken: list[np.ndarray] = []

    def take(nbytes: int) -> Buffer:
        if not (nbytes and device.shares_host_memory):
            return device.alloc(nbytes)
        array = _reuse(nbytes)
        taken.append(array)
        return device.host_buffer(array, upload=False)

    try:
        yield take
    finally:
        if taken:
            device.finish()
            _keep(taken)


def _reuse(nbytes: int) -> np.ndarray:
    with _lock:
        for i in range(len(_kept) - 1, -1, -1):
            if _kept[i].nbytes == nbytes:
                return _kept.pop(i)
    return np.empty(nbytes, np.uint8)


def _keep(arrays: list[np.ndarray]) -> None:
    with _lock:
        _kept.extend(arrays)
        total = sum(a.nbytes for a in _kept)
        while _kept and total > KEEP_BYTES:
            total -= _kept.pop(0).nbytes
