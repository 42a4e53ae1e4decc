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

Keys of the other :data:`SORTABLE` dtypes are mapped by the same transforms at their own
width (``kernels/sort/words.cl``, :mod:`parskel.algorithms.ordering`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ArgumentError, DTypeError, ShapeError
from ..runtime import Buffer, Device, round_to_multiple
from ..runtime.arrays import empty_like

KEY_KINDS = {np.dtype(np.uint32): 0, np.dtype(np.int32): 1, np.dtype(np.float32): 2}
#: Key dtypes ``ps.sort`` and ``ps.argsort`` take.
SORTABLE = tuple(
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8,
        np.uint8,
        np.int16,
        np.uint16,
        np.float16,
        np.int32,
        np.uint32,
        np.float32,
        np.int64,
        np.uint64,
        np.float64,
    )
)
#: NumPy's ``kind=`` values: every one gives the stable order here.
KINDS = (None, "stable", "mergesort", "quicksort", "heapsort")
#: Sizes of the value elements a sort moves (of any dtype of these sizes: numbers, bool, complex).
VALUE_SIZES = (1, 2, 4, 8, 16)
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


def check_kind(kind: Any, what: str) -> None:
    """Raise unless ``kind`` is one of NumPy's sort kinds (:data:`KINDS`)."""
    if kind not in KINDS:
        raise ArgumentError(f"{what}: kind must be one of {KINDS[1:]} or None (all sort stably here), got {kind!r}")


def check_sortable(keys: Any, what: str) -> None:
    """Raise unless ``keys`` has a dtype :data:`SORTABLE` names and few enough elements."""
    if keys.dtype not in SORTABLE:  # a big-endian dtype compares unequal to its native twin
        names = ", ".join(str(d) for d in SORTABLE)
        raise DTypeError(f"{what}: keys must be one of {names} (native byte order), got {keys.dtype}")
    if keys.size > MAX_KEYS:
        raise ShapeError(f"{what}: can sort at most {MAX_KEYS} keys at once, not {keys.size}")


def check_values_like(values: Any, keys: Any, what: str) -> None:
    """Raise unless ``values`` has the keys' shape and a dtype a sort can move."""
    if values.shape != keys.shape:
        raise ShapeError(f"{what}: values must have the keys' shape {keys.shape}, got {values.shape}")
    if values.dtype.kind not in "biufc" or values.dtype.itemsize not in VALUE_SIZES:
        raise DTypeError(
            f"{what}: values must be bool, integers, floats or complex numbers of 1, 2, 4, 8 or 16 bytes, "
            f"got {values.dtype}"
        )


def is_native(keys: Any, values: Any) -> bool:
    """Whether a 1D sort goes straight to the variants: 32-bit keys, and values of 4-byte numbers."""
    return keys.dtype in KEY_KINDS and (values is None or (values.dtype.kind in "iuf" and values.itemsize == 4))


def sorted_copy(keys: Any) -> Any:
    """Keys that need no sorting (one to a row) as a sort gives them back: a copy (NumPy or a
    device array) with every NaN the canonical one, as the kernels return it.

    >>> nan = np.array([0xFE00, 0x3C00], np.uint16).view(np.float16)  # a negative NaN, and 1.0
    >>> [hex(w) for w in sorted_copy(nan).view(np.uint16)]
    ['0x7e00', '0x3c00']
    """
    out = keys.copy()
    if out.dtype.kind == "f":
        out[out != out] = float("nan")
    return out


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
    out = empty_like(keys)
    device.download(buffer, out)
    return out


def _transform(device: Device, kernel_name: str, buffer: Buffer, n: int, dtype: np.dtype) -> None:
    kind = KEY_KINDS[np.dtype(dtype)]
    if kind == 0 or n == 0:
        return
    kernel = device.program("sort/keys.cl", {"KEY_KIND": kind}).kernel(kernel_name)
    device.launch(kernel, round_to_multiple(n, _WORK_GROUP), _WORK_GROUP, buffer, np.uint32(n))
