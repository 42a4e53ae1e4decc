"""Sort keys as unsigned integers: staging them on a device and back.

Every sort kernel compares and buckets ``uint`` keys. int32 and float32 keys are mapped onto
uint32 by order-preserving bit transforms (``kernels/sort/keys.cl``), applied on the device
after the upload and undone before the download:

- int32: flip the sign bit.
- float32: every NaN first becomes NumPy's quiet NaN (``0x7fc00000``); then a negative number
  has all its bits flipped and any other number its sign bit. So ``-inf < ... < -0.0 < +0.0 <
  ... < +inf < NaN``: -0.0 sorts before +0.0, and NaNs sort last, as in ``np.sort``, whatever
  their sign bit; NaNs are equal to each other and keep their input order in a stable sort,
  as in ``np.argsort(kind="stable")``. A NaN comes back as ``0x7fc00000``: its payload and
  sign bit are not kept.

Padding uses the largest encoded key, ``0xffffffff``, so it sorts after every real key (after
equal ones too, in a stable sort) and is trimmed away on the download.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DTypeError, ShapeError
from ..runtime import Buffer, Device, round_to_multiple

KEY_KINDS = {np.dtype(np.uint32): 0, np.dtype(np.int32): 1, np.dtype(np.float32): 2}
PAD = np.uint32(0xFFFFFFFF)
#: The most keys one sort takes: positions and the padded power of two must fit a uint.
MAX_KEYS = 1 << 31
_WORK_GROUP = 256


def check_keys(keys: np.ndarray) -> None:
    """Raise unless ``keys`` is a 1D array of a supported key dtype."""
    if keys.ndim != 1:
        raise ShapeError(f"sort takes a 1D array of keys, got shape {keys.shape}")
    if keys.dtype not in KEY_KINDS:
        supported = ", ".join(str(d) for d in KEY_KINDS)
        raise DTypeError(f"sort keys must be one of {supported}, got {keys.dtype}; convert them with astype")
    if keys.size > MAX_KEYS:
        raise ShapeError(f"can sort at most {MAX_KEYS} keys at once, not {keys.size}")


def check_values(values: np.ndarray, n: int) -> None:
    """Raise unless ``values`` is a 1D array of ``n`` 4-byte numbers."""
    if values.ndim != 1 or values.size != n:
        raise ShapeError(f"values must be a 1D array of the {n} keys' length, got shape {values.shape}")
    if values.dtype.kind not in "iuf" or values.dtype.itemsize != 4:
        raise DTypeError(f"values must have a 4-byte numeric dtype (int32, uint32, float32), got {values.dtype}")


def upload_keys(device: Device, keys: np.ndarray, padded: int) -> Buffer:
    """A buffer of ``padded`` encoded keys: ``keys``, then :data:`PAD` up to ``padded``."""
    n = keys.size
    buffer = device.alloc(padded * 4)
    device.upload(buffer, keys)
    if padded > n:
        device.fill(buffer, PAD, (padded - n) * 4, offset=n * 4)
    _transform(device, "encode_keys", buffer, n, keys.dtype)
    return buffer


def download_keys(device: Device, buffer: Buffer, keys: Any) -> Any:
    """The sorted ``keys``: the first ``keys.size`` of ``buffer`` decoded to their dtype (the
    buffer is decoded in place), in a new array of the kind of ``keys`` (NumPy or CuPy)."""
    n = keys.size
    _transform(device, "decode_keys", buffer, n, keys.dtype)
    out = np.empty_like(keys)
    device.download(buffer, out)
    return out


def _transform(device: Device, kernel_name: str, buffer: Buffer, n: int, dtype: np.dtype) -> None:
    kind = KEY_KINDS[np.dtype(dtype)]
    if kind == 0 or n == 0:
        return
    kernel = device.program("sort/keys.cl", {"KEY_KIND": kind}).kernel(kernel_name)
    device.launch(kernel, round_to_multiple(n, _WORK_GROUP), _WORK_GROUP, buffer, np.uint32(n))
