"""Call-time arguments of skeletons: containers checked, extra arguments bound to a user
function's parameters, scalars converted without loss, written containers marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..containers.base import Container
from ..containers.structs import element_c_type, vector_of
from ..errors import DTypeError, ShapeError, UserFunctionError
from ..runtime import Device
from .userfn import UserFunction, dtype_of


def check_container(value: Any, what: str, device: Device | None = None) -> Container:
    if not isinstance(value, Container):
        raise TypeError(
            f"{what} must be a container (ps.Vector, ps.Matrix, ps.Tensor3, ps.Tensor4), not {type(value).__name__}"
        )
    if device is not None and value.device is not device:
        raise ShapeError(
            f"{what} lives on {value.device.id}, but the other inputs on {device.id}; "
            "create the containers on one device"
        )
    return value


def bind_extras(fn: UserFunction, values: Sequence[Any], device: Device) -> tuple[list[Any], list[Container]]:
    """Kernel arguments for the extra parameters, and the containers the function may write."""
    if len(values) != len(fn.extras):
        names = ", ".join(p.declaration() for p in fn.extras) or "none"
        raise UserFunctionError(
            f"{fn.where} {fn.signature.name!r} takes {len(fn.extras)} extra argument(s) ({names}), got {len(values)}"
        )
    args: list[Any] = []
    written: list[Container] = []
    for p, value in zip(fn.extras, values):
        what = f"{fn.where} {fn.signature.name!r}, extra argument {p.name!r}"
        if p.pointer:
            if not p.is_global:
                raise UserFunctionError(f"{what}: a container parameter must be declared __global")
            c = check_container(value, what, device)
            if c.c_type != p.type:
                raise DTypeError(f"{what} is declared {p.type!r}, but the container holds {c.c_type!r}")
            args.append(c.to_device() if p.const else c.writable_buffer())
            if not p.const:
                written.append(c)
        else:
            args.append(scalar_argument(value, p.type, what))
    return args, written


def scalar_argument(value: Any, ctype: str, what: str) -> np.generic:
    """``value`` as a NumPy scalar of the C type ``ctype``; refuses lossy conversions."""
    if isinstance(value, Container):
        raise TypeError(f"{what} is a scalar parameter ({ctype}); declare it __global {ctype} * for a container")
    dtype = dtype_of(ctype, what)
    if vector_of(dtype) is not None:
        return _vector_argument(value, dtype, ctype, what)
    if dtype.names is not None:
        arr = np.zeros(1, dtype=dtype)
        if isinstance(value, np.void) and value.dtype != dtype:
            raise DTypeError(f"{what} expects struct {ctype!r}, got a record of dtype {value.dtype}")
        arr[0] = value
        return arr[0]
    if isinstance(value, np.generic):
        if value.dtype != dtype:
            raise DTypeError(
                f"{what} is declared {ctype!r} ({dtype}), got a {value.dtype} scalar; convert it explicitly"
            )
        return value
    numbers = (int, float, complex) if dtype.kind == "c" else (int, float)
    if isinstance(value, bool) or not isinstance(value, numbers):
        raise TypeError(f"{what} expects a {ctype} number, got {type(value).__name__}")
    if dtype.kind in "iu":
        if not isinstance(value, int):
            raise DTypeError(f"{what} is declared {ctype!r}; got the non-integer {value!r}")
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise DTypeError(f"{what}: {value} does not fit in {ctype}")
    return dtype.type(value)


def _vector_argument(value: Any, dtype: np.dtype, ctype: str, what: str) -> np.generic:
    """A vector from one number for every lane (as OpenCL widens a scalar), a sequence of one
    number per lane, or a record of the vector's dtype; each lane converted without loss."""
    if isinstance(value, np.void):
        if value.dtype != dtype:
            raise DTypeError(f"{what} expects a {ctype}, got a record of dtype {value.dtype}")
        return value
    names = dtype.names or ()
    if isinstance(value, np.ndarray):
        value = value.tolist()
    lanes = list(value) if isinstance(value, (tuple, list)) else [value] * len(names)
    if len(lanes) != len(names):
        raise DTypeError(f"{what} is a {ctype}: give {len(names)} lanes or one number for every lane, not {len(lanes)}")
    lane_type = element_c_type(dtype.fields[names[0]][0]) if dtype.fields else ctype
    out = np.zeros(1, dtype=dtype)
    for name, lane in zip(names, lanes):
        out[name] = scalar_argument(lane, lane_type, f"{what}, lane {name}")
    return out[0]


def as_buffer_value(value: Any, dtype: np.dtype, what: str) -> np.ndarray:
    """A one-element host array of ``dtype`` holding ``value`` (refusing lossy conversions)."""
    arr = np.zeros(1, dtype=dtype)
    arr[0] = scalar_argument(value, element_c_type(dtype), what)
    return arr


def mark_written(containers: Sequence[Container]) -> None:
    for c in containers:
        c.mark_device_written()
