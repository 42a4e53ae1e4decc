"""Arrays of other libraries in CUDA device memory (CuPy, PyTorch, Numba, anything with
``__cuda_array_interface__`` or DLPack), recognised without importing any of them.

Layers above the runtime ask here whether an argument is such an array, which GPU it lives on,
and for the backend's view of it; only :mod:`parskel.runtime.cuda` imports CuPy to provide that
view, and only when a device array actually arrives.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from . import hostpool

_DLPACK_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged


def is_device_array(obj: Any) -> bool:
    """Whether ``obj`` is an array in CUDA device memory.

    >>> is_device_array(np.zeros(3))
    False
    """
    if isinstance(obj, np.ndarray):
        return False
    if type(obj) is _cupy_array():  # (asking a CuPy array for its interface builds the interface)
        return True
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    probe = getattr(obj, "__dlpack_device__", None)
    if probe is None:
        return False
    try:
        kind, _ = probe()
    except Exception:
        return False
    return int(kind) in _DLPACK_CUDA


def empty_like(array: Any) -> Any:
    """A new, uninitialised, C-ordered array of ``array``'s kind, shape and dtype: NumPy for a
    host array, CuPy (on the current device) for a CuPy array, made by its type without
    NumPy's dispatch to CuPy, which costs a call several microseconds; others as
    ``np.empty_like`` makes them.

    >>> empty_like(np.zeros((2, 3), np.int16)).shape, empty_like(np.zeros(2, np.int16)).dtype
    ((2, 3), dtype('int16'))
    """
    kind = type(array)
    if kind is np.ndarray:
        return hostpool.empty(array.shape, array.dtype)
    if kind is _cupy_array():
        return kind(array.shape, array.dtype)
    return np.empty_like(array, order="C")


def _cupy_array() -> Any:
    """CuPy's array type if CuPy has been imported (by the caller or the CUDA backend), else None."""
    cupy = sys.modules.get("cupy")
    return getattr(cupy, "ndarray", None)


def cuda_ordinal(obj: Any) -> int:
    """The CUDA device number that holds the device array ``obj``."""
    probe = getattr(obj, "__dlpack_device__", None)
    if probe is not None:
        kind, ordinal = probe()
        if int(kind) in _DLPACK_CUDA:
            return int(ordinal)
    return int(backend_view(obj).device.id)


def backend_view(obj: Any) -> Any:
    """The device array as the CUDA backend's kernels take it (a CuPy array sharing its memory)."""
    from .cuda import as_cupy

    return as_cupy(obj)


def host_copy(obj: Any) -> np.ndarray:
    """A NumPy copy of a device array (for a device that cannot read CUDA memory)."""
    return backend_view(obj).get()


def returner(like: Any) -> Callable[[Any], Any]:
    """The function that gives a result computed for ``like`` back as ``like``'s kind of array.

    Results of the CUDA backend are CuPy arrays; a PyTorch caller gets tensors (through DLPack,
    without a copy). PyTorch is not imported: it is in ``sys.modules`` when a tensor exists.
    """
    if like is None or not type(like).__module__.startswith("torch"):
        return lambda result: result
    from_dlpack = sys.modules["torch"].from_dlpack

    def to_torch(result: Any) -> Any:
        if isinstance(result, tuple):
            return tuple(from_dlpack(r) for r in result)
        return from_dlpack(result)

    return to_torch


def based_on(array: Any, kind: type) -> bool:
    """Whether ``array``, or what it is a view of (and so on down its ``base`` chain, through
    the objects that memoryviews export), is a ``kind``: how a backend tells host arrays over
    its own page-locked memory.

    >>> base = np.zeros(4)
    >>> based_on(base[1:], np.ndarray), based_on(base[1:], bytes)
    (True, False)
    >>> based_on(np.frombuffer(b"abcd", np.uint8), bytes)  # NumPy's memoryview of the bytes
    True
    """
    while array is not None:
        if isinstance(array, kind):
            return True
        array = array.obj if isinstance(array, memoryview) else getattr(array, "base", None)
    return False


def host_memory_bytes() -> int:
    """The host's physical memory in bytes, 0 where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0


def host_address(array: np.ndarray) -> int:
    """The address of a C-contiguous host array's first byte: through ctypes' view of a
    writable array's buffer, a third of the time ``array.ctypes.data`` takes (on the path of
    every small copy and host buffer).

    >>> a = np.arange(8, dtype=np.int32)
    >>> host_address(a[2:]) == a.ctypes.data + 8
    True
    """
    if array.flags.writeable and array.nbytes:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))  # type: ignore[arg-type]
    return int(array.ctypes.data)
