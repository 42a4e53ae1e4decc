"""NumPy dtypes as the C types of kernel source (OpenCL C spelling)."""

from __future__ import annotations

import numpy as np
from numpy.typing import DTypeLike

from ..errors import DTypeError
from .base import Device

_C_TYPES: dict[np.dtype, str] = {
    np.dtype(np.int8): "char",
    np.dtype(np.uint8): "uchar",
    np.dtype(np.int16): "short",
    np.dtype(np.uint16): "ushort",
    np.dtype(np.int32): "int",
    np.dtype(np.uint32): "uint",
    np.dtype(np.int64): "long",
    np.dtype(np.uint64): "ulong",
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
}


def c_type(dtype: DTypeLike, device: Device | None = None) -> str:
    """The C name of a scalar dtype; refuses float64 on a device without fp64."""
    dt = np.dtype(dtype)
    if dt.byteorder == ">":
        raise DTypeError(f"big-endian dtype {dt} is not supported; convert it with astype")
    name = _C_TYPES.get(dt)
    if name is None:
        supported = ", ".join(str(d) for d in _C_TYPES)
        raise DTypeError(f"no kernel type for dtype {dt}; supported: {supported}")
    if name == "double" and device is not None and not device.info.fp64:
        raise DTypeError(f"{device.id} ({device.name}) has no double precision (fp64) support")
    return name


def scalar_types() -> tuple[np.dtype, ...]:
    """Every scalar dtype a kernel can be generated for."""
    return tuple(_C_TYPES)
