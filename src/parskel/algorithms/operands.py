"""Inputs of the array algorithms: NumPy arrays, or device arrays that stay on their GPU.

``parskel.sort``, ``scan``, ``matmul``, ``vector_add`` and ``saxpy`` take NumPy arrays (or
anything ``np.asarray`` accepts) and return NumPy arrays. They also take CUDA device arrays:
CuPy arrays, PyTorch tensors on a GPU, anything with ``__cuda_array_interface__`` or DLPack.
Such an input runs on its own GPU through the CUDA backend unless a device is named, moves
between device buffers without passing through the host, and the result comes back as the
same kind of array (a CuPy array for CuPy, a tensor for PyTorch), also without a host copy.
Asked to run on an OpenCL device, a device array is copied to the host first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..runtime import Device
from ..runtime import device as select_device
from ..runtime.cuda import as_cupy, is_device_array


def prepare(device: Device | str | None, *arrays: Any) -> tuple[Device, list[Any], Callable[[Any], Any]]:
    """The device to run on, the arrays as the variants take them (NumPy, or CuPy on a CUDA
    device), and the function that turns a result into the kind of array the caller gave."""
    on_gpu = [a for a in arrays if a is not None and is_device_array(a)]
    if device is None and on_gpu:
        device = f"cuda:{as_cupy(on_gpu[0]).device.id}"
    dev = select_device(device)
    keep = dev.backend == "cuda"
    converted = [None if a is None else _converted(a, keep) for a in arrays]
    return dev, converted, _returner(on_gpu[0] if on_gpu and keep else None)


def _converted(array: Any, keep_on_device: bool) -> Any:
    if not is_device_array(array):
        return np.asarray(array)
    found = as_cupy(array)
    return found if keep_on_device else found.get()


def _returner(like: Any) -> Callable[[Any], Any]:
    """Results are CuPy arrays when the inputs were device arrays: give PyTorch its tensors."""
    if like is None or not type(like).__module__.startswith("torch"):
        return lambda result: result
    import torch

    def to_torch(result: Any) -> Any:
        if isinstance(result, tuple):
            return tuple(torch.from_dlpack(r) for r in result)
        return torch.from_dlpack(result)

    return to_torch
