"""Host memory copies on several threads: one thread copies a few GB/s, while staging must keep
up with a link of tens of GB/s. NumPy releases the GIL while it copies, so threads run at once.

NumPy copies through glibc's ``memmove``, which reads every line of the destination before
writing it unless the copy exceeds a threshold glibc derives from the cache (151 MiB on the
H200 machine's 16-core host, where the parts here are 4 MiB). Where the host has a usable CPU
device of at least :data:`STREAM_UNITS` compute units (PoCL), large contiguous copies are made
by a kernel on it instead (``kernels/pipeline/stream_copy.cl``: non-temporal stores, which
write a line without reading it). On that host 256 MiB went into page-locked memory at 62-68
GB/s that way against 36-37 GB/s on 16 threads, and a ``Reduce`` of 2^26 floats from NumPy
through the H200 took 7.2-7.4 ms instead of 11.4-12.2 (2026-11-26). A device that fails to
build or run the kernel is not asked again, and its copy is made on the threads."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..errors import ParskelError
from ..runtime import devices

#: Threads that copy at once (the cores, up to 16: beyond that a host's memory bandwidth, not
#: its cores, bounds a copy).
THREADS = max(1, min(16, os.cpu_count() or 1))

#: A copy is cut into parts of at least this many bytes, one a thread; a smaller copy is made
#: on the calling thread, where handing it to another would cost more than it saves. On the
#: H100's host (2026-11-26), a 2048 x 2048 matmul from NumPy, whose two 16 MiB operands are
#: copied into pinned memory, took 3.3-3.5 ms end to end with parts of 2 MiB (8 threads each
#: operand) and 4.2-4.3 ms with parts of 512 KiB (16 threads of 1 MiB), three rounds alternating.
PART_BYTES = 2 << 20

#: Copies made by the host's CPU device: those of at least this many bytes, on a device of at
#: least :data:`STREAM_UNITS` compute units (fewer cores share fewer memory channels, and the
#: threads' copies were not measured to lose there), in :data:`STREAM_PIECES` pieces.
STREAM_BYTES = 4 << 20
STREAM_UNITS = 8
STREAM_PIECES = 64

_pool: ThreadPoolExecutor | None = None
_streamer: list[Any] = []  # [] not looked for yet; [None] none; [(device, kernel)]
_stream_lock = threading.Lock()


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
    if not add:
        streamed: list[tuple[np.ndarray, np.ndarray]] = []
        rest: list[tuple[np.ndarray, np.ndarray]] = []
        for pair in pairs:
            (streamed if _streams(*pair) else rest).append(pair)
        if streamed and _stream(streamed):
            pairs = rest
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


def _streams(dst: np.ndarray, src: np.ndarray) -> bool:
    """Whether the copy of ``src`` into ``dst`` is one the host's CPU device makes."""
    return (
        dst.nbytes >= STREAM_BYTES
        and dst.flags.c_contiguous
        and src.flags.c_contiguous
        and dst.flags.writeable
        and _device_kernel() is not None
    )


def _device_kernel() -> Any:
    """The host's CPU device and its copy kernel, found once: None where there is none with
    :data:`STREAM_UNITS` compute units that works in host memory (or it fails to build)."""
    if not _streamer:
        with _stream_lock:
            if not _streamer:
                _streamer.append(_find_streamer())
    return _streamer[0]


def _find_streamer() -> Any:
    try:
        for device in devices():
            if (
                device.backend == "opencl"
                and device.type == "cpu"
                and device.info.compute_units >= STREAM_UNITS
                and device.shares_host_memory
            ):
                return device, device.program("pipeline/stream_copy.cl").kernel("stream_copy")
    except (ParskelError, OSError):
        pass
    return None


def _stream(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> bool:
    """The copies made by the host's CPU device, each waited for; False (and the device not
    asked again) where it fails, so that the caller makes them on its threads."""
    found = _device_kernel()
    if found is None:
        return False
    device, kernel = found
    try:
        with _stream_lock:  # one copy at a time: the kernel's arguments are its own
            for dst, src in pairs:
                target, source = dst.reshape(-1).view(np.uint8), src.reshape(-1).view(np.uint8)
                n = target.nbytes
                piece = -(-n // STREAM_PIECES)
                args = (device.host_buffer(source), device.host_buffer(target, upload=False))
                device.launch(kernel, STREAM_PIECES, 1, *args, np.uint64(n), np.uint64(piece))
                device.finish()
    except (ParskelError, MemoryError):
        _streamer[0] = None
        return False
    return True
