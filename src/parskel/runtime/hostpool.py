"""Host memory for large results, kept for the next result of the same size once freed.

glibc gives every allocation of 32 MiB or more its own mapping and unmaps it when it is freed,
so each new large NumPy array meets its pages for the first time: the kernel maps and zeroes
every page on its first write, inside whatever writes the result. On a CPU device that is the
kernel itself, and the cost is large: on a 2-core AMD Zen 5 (PoCL 3.1), a scan of 2^26 int32
took 20.4-21.1 ms into a new array and 15.1-15.4 ms into one written before (2026-11-26).

:func:`empty` hands out arrays of at least :data:`POOL_BYTES` from mappings that outlive them:
when an array and every view of it are gone, its mapping goes back to a free list and the next
array of the same size (rounded up to :data:`GRAIN`) is made on it, its pages already mapped. At
most :func:`idle_limit` bytes wait in the free lists (the oldest go first); ``PARSKEL_HOST_POOL``
sets that limit in bytes, and ``0`` turns the pool off. Smaller arrays are NumPy's own, which
glibc keeps in its heap.

A pooled array is an ordinary writable NumPy array over a ``memoryview`` of the mapping (at the
end of its ``base`` chain); its memory is reused only once nothing refers to that memoryview
any more. Like an
array of ``np.frombuffer`` (or the page-locked results of the CUDA backend), it does not own
its memory, so NumPy refuses to ``resize`` it in place; ``np.resize`` makes a new one.

>>> a = empty((POOL_BYTES // 4,), np.float32)
>>> a.shape, a.dtype, a.flags.c_contiguous and a.flags.writeable
((8388608,), dtype('float32'), True)
>>> empty(5, np.int16).shape
(5,)
"""

from __future__ import annotations

import contextlib
import math
import mmap
import os
import threading
import weakref
from collections import OrderedDict, deque
from typing import Any

import numpy as np

from ..errors import ArgumentError

#: Arrays of at least this many bytes come from the pool: glibc's largest threshold for giving
#: an allocation its own mapping (``DEFAULT_MMAP_THRESHOLD_MAX`` on 64-bit systems).
POOL_BYTES = 32 << 20
#: Mappings are whole multiples of this (a huge page), and sizes are matched in them.
GRAIN = 2 << 20
#: The largest share of the host's memory idle mappings keep, at most :data:`IDLE_MOST` bytes.
IDLE_SHARE = 1 / 8
IDLE_MOST = 4 << 30
ENV_VAR = "PARSKEL_HOST_POOL"

_free: OrderedDict[int, list[mmap.mmap]] = OrderedDict()  # by size, the least recently freed first
_returned: deque[mmap.mmap] = deque()  # freed by finalizers, not yet in _free (appends are atomic)
_lock = threading.Lock()
_idle = [0]  # bytes in _free


def idle_limit() -> int:
    """The most bytes that freed mappings keep for reuse: ``PARSKEL_HOST_POOL`` if set, else
    :data:`IDLE_SHARE` of the host's memory, at most :data:`IDLE_MOST`."""
    value = os.environ.get(ENV_VAR, "").strip()
    if value:
        try:
            return max(0, int(value))
        except ValueError:
            raise ArgumentError(f"{ENV_VAR} must be a number of bytes (0 turns the pool off); got {value!r}") from None
    from .arrays import host_memory_bytes  # (arrays hands out its host arrays from here)

    return min(IDLE_MOST, int(IDLE_SHARE * host_memory_bytes()))


def empty(shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
    """A new, uninitialised, C-ordered host array of ``shape`` and ``dtype``; from the pool
    where it is large (see above), which makes its pages already mapped where a freed array of
    the same size left them."""
    dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    dtype = np.dtype(dtype)
    nbytes = math.prod(dims) * dtype.itemsize
    if nbytes < POOL_BYTES or dtype.hasobject:
        return np.empty(dims, dtype)
    limit = idle_limit()
    if limit == 0:
        return np.empty(dims, dtype)
    size = -(-nbytes // GRAIN) * GRAIN
    try:
        block = _take(size, limit)
    except OSError:  # no mapping to be had: NumPy's own allocation says what it can
        return np.empty(dims, dtype)
    raw = np.frombuffer(block, np.uint8, nbytes)
    # NumPy's own memoryview of the mapping, raw's base, lives as long as any array over it
    weakref.finalize(raw.base, _returned.append, block)
    return raw.view(dtype).reshape(dims)


# page-locked results ----------------------------------------------------------------------------

#: Results of staged operations of this many bytes and more come back in page-locked memory where
#: the device offers it (:meth:`parskel.runtime.Device.host_result`): the device writes them at the
#: link's speed, while a pageable result costs a host copy out of a staging slot (and, when new,
#: the host's page faults).
PINNED_RESULT_BYTES = 4 << 20
#: The most of the host's memory that live page-locked results may hold at once, over all devices.
PINNED_RESULT_SHARE = 0.25
_pinned_live = [0]  # bytes of page-locked results alive now


def pinned_result_room(nbytes: int) -> bool:
    """Whether a result of ``nbytes`` may come back in page-locked memory: it is at least
    :data:`PINNED_RESULT_BYTES`, and with it the live page-locked results hold at most
    :data:`PINNED_RESULT_SHARE` of the host's memory (none where the host does not say).

    >>> pinned_result_room(PINNED_RESULT_BYTES - 1)
    False
    """
    from .arrays import host_memory_bytes

    limit = int(PINNED_RESULT_SHARE * host_memory_bytes())
    return nbytes >= PINNED_RESULT_BYTES and _pinned_live[0] + nbytes <= limit


def pinned_result_made(owner: Any, nbytes: int) -> None:
    """Count ``nbytes`` of page-locked results as live until ``owner`` (the object at the end of
    the result's ``base`` chain, which every view of it keeps alive) is gone."""
    _pinned_live[0] += nbytes
    weakref.finalize(owner, _pinned_result_freed, nbytes)


def pinned_results_live() -> int:
    """Bytes of page-locked results alive now."""
    return _pinned_live[0]


def _pinned_result_freed(nbytes: int) -> None:
    _pinned_live[0] -= nbytes


def idle_bytes() -> int:
    """Bytes that freed mappings keep for reuse now."""
    with _lock:
        _settle(idle_limit())
        return _idle[0]


def clear() -> None:
    """Unmap every idle mapping (those of arrays still alive stay theirs)."""
    with _lock:
        _settle(0)


def _take(size: int, limit: int) -> mmap.mmap:
    with _lock:
        _settle(limit)
        blocks = _free.get(size)
        if blocks:
            block = blocks.pop()
            _idle[0] -= size
            if not blocks:
                del _free[size]
            return block
    if hasattr(mmap, "MAP_PRIVATE"):  # private: a shared anonymous mapping would not get huge pages
        block = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    else:
        block = mmap.mmap(-1, size)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        with contextlib.suppress(OSError):  # a kernel without transparent huge pages: small pages then
            block.madvise(mmap.MADV_HUGEPAGE)
    return block


def _settle(limit: int) -> None:
    """Under the lock: mappings freed since into the free lists, then the oldest idle ones
    unmapped until at most ``limit`` bytes are idle."""
    while _returned:
        block = _returned.popleft()
        size = len(block)
        _free.setdefault(size, []).append(block)
        _free.move_to_end(size)
        _idle[0] += size
    while _idle[0] > limit and _free:
        size, blocks = next(iter(_free.items()))
        with contextlib.suppress(BufferError):  # still exported: unmapped once that ends
            blocks.pop(0).close()
        _idle[0] -= size
        if not blocks:
            del _free[size]
