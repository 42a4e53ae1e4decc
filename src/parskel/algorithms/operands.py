"""Inputs of the array algorithms: NumPy arrays, or device arrays that stay on their GPU.

``parskel.sort``, ``scan``, ``matmul``, ``vector_add`` and ``saxpy`` take NumPy arrays (or
anything ``np.asarray`` accepts) and return NumPy arrays. They also take CUDA device arrays:
CuPy arrays, PyTorch tensors on a GPU, anything with ``__cuda_array_interface__`` or DLPack.
Such an input runs on its own GPU through the CUDA backend unless a device is named, moves
between device buffers without passing through the host, and the result comes back as the
same kind of array (a CuPy array for CuPy, a tensor for PyTorch), also without a host copy.
Asked to run on an OpenCL device, a device array is copied to the host first. A call on CuPy
arrays of a shape, dtype and GPU seen before, with the same other arguments, runs at once what
the first such call chose (:mod:`parskel.algorithms.recall`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..runtime import Buffer, Device, hostpool
from ..runtime import device as select_device
from ..runtime.arrays import cuda_ordinal, host_copy, is_device_array, returner


def prepare(device: Device | str | None, *arrays: Any) -> tuple[Device, list[Any], Callable[[Any], Any]]:
    """The device to run on, the arrays as the variants take them (NumPy, or the CUDA backend's
    arrays on a CUDA device), and the function that turns a result into the kind of array the
    caller gave."""
    on_gpu = [a for a in arrays if a is not None and is_device_array(a)]
    if device is None and on_gpu:
        device = f"cuda:{cuda_ordinal(on_gpu[0])}"
    dev = select_device(device)
    keep = dev.backend == "cuda"
    converted = [None if a is None else _converted(dev, a, keep) for a in arrays]
    return dev, converted, returner(on_gpu[0] if on_gpu and keep else None)


def _converted(dev: Device, array: Any, keep_on_device: bool) -> Any:
    if not is_device_array(array):
        return np.asarray(array)
    return dev.wrap(array)[1] if keep_on_device else host_copy(array)


def staged(device: Device, array: Any) -> Buffer:
    """A buffer kernels read ``array`` from: the host array itself on a device that shares host
    memory, else a copy (uploaded, or copied on the GPU for a CUDA array). Never written."""
    return device.host_buffer(array) if isinstance(array, np.ndarray) else device.to_device(array)


def result_buffer(
    device: Device, like: Any, shape: tuple[int, ...] | None = None, dtype: Any = None
) -> tuple[Buffer, Any]:
    """A new array of ``like``'s kind and dtype (and shape, unless ``shape`` or ``dtype`` is
    given), and the buffer kernels fill it through (read back with ``device.download(buffer, array)``)."""
    if isinstance(like, np.ndarray):
        out = hostpool.empty(like.shape if shape is None else shape, like.dtype if dtype is None else dtype)
    else:
        out = np.empty_like(like, order="C", shape=shape, dtype=dtype)
    return (device.host_buffer(out, upload=False) if isinstance(out, np.ndarray) else device.alloc(out.nbytes)), out
