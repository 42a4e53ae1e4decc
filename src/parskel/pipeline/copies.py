"""Host memory copies on several threads: one thread copies a few GB/s, while staging must keep
up with a link of tens of GB/s. NumPy releases the GIL while it copies, so threads run at once."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

#: Threads that copy at once (the cores, up to 16: beyond that a host's memory bandwidth, not
#: its cores, bounds a copy).
THREADS = max(1, min(16, os.cpu_count() or 1))

#: A copy is cut into parts of at least this many bytes, one a thread; a smaller copy is made
#: on the calling thread, where handing it to another would cost more than it saves. On the
#: H100's host (2026-11-26), a 2048 x 2048 matmul from NumPy, whose two 16 MiB operands are
#: copied into pinned memory, took 3.3-3.5 ms end to end with parts of 2 MiB (8 threads each
#: operand) and 4.2-4.3 ms with parts of 512 KiB (16 threads of 1 MiB), three rounds alternating.
PART_BYTES = 2 << 20

_pool: ThreadPoolExecutor | None = None


def _threads() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="parskel-copy")
    return _pool


def _parts(dst: np.ndarray, src: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(dst, src)`` cut along the first axis into about ``nbytes / PART_BYTES`` pairs, at most
    :data:`THREADS`."""
    count = min(THREADS, dst.nbytes // PART_BYTES, dst.shape[0] if dst.ndim else 1)
    if count <= 1:
        return [(dst, src)]
    bounds = np.linspace(0, dst.shape[0], count + 1).astype(int)
    return [(dst[a:b], src[a:b]) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def copy(pairs: Sequence[tuple[np.ndarray, np.ndarray]], *, add: bool = False) -> None:
    """``dst[...] = src`` (``dst += src`` with ``add``) for every pair, same shapes and dtypes,
    on as many threads as the bytes warrant; returns once all are done.

    >>> a, b = np.zeros(3 << 20, np.float32), np.ones(3 << 20, np.float32)
    >>> copy([(a, b)]); copy([(a, b)], add=True); float(a.sum())
    6291456.0
    """
    work = [part for dst, src in pairs for part in _parts(dst, src)]

    def run(dst: np.ndarray, src: np.ndarray) -> None:
        if add:
            np.add(dst, src, out=dst)
        else:
            np.copyto(dst, src)

    if len(work) <= 1:
        for dst, src in work:
            run(dst, src)
        return
    futures = [_threads().submit(run, dst, src) for dst, src in work]
    for future in futures:
        future.result()
