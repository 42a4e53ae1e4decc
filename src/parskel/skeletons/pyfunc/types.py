"""The types of translated Python values and NumPy's rules for combining them.

A value is a scalar of a NumPy dtype, a registered struct (a record dtype), a pointer (a
container passed as an extra argument, or MapOverlap's window), or a tuple (until it is stored,
when it becomes a struct). Python ``int`` and ``float`` values are *weak* scalars (NEP 50): next
to a typed value they take its type (``float32 * 2.5`` is ``float32``, ``int8 + 1`` is ``int8``),
and only on their own do they need a type of their own: ``int64`` and ``float64``, NumPy's
defaults (``float32`` on a device without double precision).

Results follow NumPy exactly because NumPy computes them: ``ufunc.resolve_dtypes`` with Python's
``int`` and ``float`` standing for weak operands.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ...containers.structs import element_c_type, vector_of
from ...errors import UserFunctionError

BOOL = np.dtype(np.bool_)
INT64 = np.dtype(np.int64)
UINT32 = np.dtype(np.uint32)
FLOAT32 = np.dtype(np.float32)
FLOAT64 = np.dtype(np.float64)
_DEVICE_SCALARS = {np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32)} | {
    INT64,
    np.dtype(np.uint64),
    FLOAT32,
    FLOAT64,
    BOOL,
}


@dataclass(frozen=True)
class Scalar:
    """A number (or bool) of ``dtype``; ``weak`` for a Python int or float, stored as ``dtype``."""

    dtype: np.dtype
    weak: bool = False

    @property
    def kind(self) -> str:
        return self.dtype.kind

    def __str__(self) -> str:
        if self.weak:
            return "Python int" if self.kind in "iu" else "Python float"
        return str(self.dtype)


def _no_vectors(dtype: np.dtype) -> None:
    vector = vector_of(dtype)
    if vector is not None:
        raise UserFunctionError(
            f"Python user functions do not compute with OpenCL vector types ({vector}); write the function "
            f"in C, where {vector} has OpenCL's operators and lanes: '{vector} f({vector} p) {{ return p + p; }}'"
        )


@dataclass(frozen=True)
class Record:
    """A struct registered with ``ps.struct`` (a tuple's values become one when stored)."""

    dtype: np.dtype

    def __post_init__(self) -> None:
        _no_vectors(self.dtype)

    def field(self, name: str) -> tuple[np.dtype, tuple[int, ...]] | None:
        fields: Mapping[str, Any] = self.dtype.fields or {}
        if name not in fields:
            return None
        sub: np.dtype = fields[name][0]
        if sub.subdtype is not None:
            return sub.subdtype[0], tuple(sub.subdtype[1])
        return sub, ()

    def __str__(self) -> str:
        return element_c_type(self.dtype)


@dataclass(frozen=True)
class Pointer:
    """Elements in memory: a container (``global``) or MapOverlap's window (``window``, of
    ``dims`` dimensions), indexed with ``p[i]`` (a window: ``w[k]``, ``w[dr, dc]``, or one offset
    per axis of a Tensor3 or Tensor4)."""

    dtype: np.dtype
    space: Literal["global", "window"] = "global"
    dims: int = 1

    def __post_init__(self) -> None:
        _no_vectors(self.dtype)

    def __str__(self) -> str:
        what = "container" if self.space == "global" else f"{self.dims}D window"
        return f"{what} of {Scalar(self.dtype) if self.dtype.names is None else Record(self.dtype)}"


@dataclass(frozen=True)
class Tuple:
    """A tuple expression; stored (returned, assigned) it becomes a struct."""

    items: tuple[Type, ...]

    def __str__(self) -> str:
        return f"tuple({', '.join(map(str, self.items))})"


Type = Scalar | Record | Pointer | Tuple


def element(dtype: np.dtype) -> Scalar | Record:
    """The type of one element of ``dtype``."""
    return Record(dtype) if dtype.names is not None else Scalar(dtype)


def weak_int() -> Scalar:
    return Scalar(INT64, weak=True)


def weak_float(fp64: bool) -> Scalar:
    return Scalar(FLOAT64 if fp64 else FLOAT32, weak=True)


def c_name(t: Scalar | Record) -> str:
    """The C spelling of a scalar or struct type."""
    if isinstance(t, Record):
        return element_c_type(t.dtype)
    return "bool" if t.dtype == BOOL else element_c_type(t.dtype)


def _operand(t: Scalar) -> Any:
    """How ``resolve_dtypes`` is told about an operand: weak ones by their Python type."""
    if t.weak:
        return int if t.kind in "iu" else float
    return t.dtype


class PromotionError(TypeError):
    """NumPy has no loop for these operand types (``-`` of bools, ``<<`` of floats, ...)."""


@functools.lru_cache(maxsize=4096)
def _resolve(ufunc: np.ufunc, operands: tuple[Any, ...]) -> tuple[tuple[np.dtype, ...], np.dtype]:
    try:
        found = ufunc.resolve_dtypes(operands + (None,) * ufunc.nout)
    except (TypeError, np.exceptions.DTypePromotionError) as exc:
        raise PromotionError(str(exc)) from None
    return tuple(found[: ufunc.nin]), found[ufunc.nin]


def resolve(ufunc: np.ufunc, types: tuple[Scalar, ...], fp64: bool) -> tuple[tuple[Scalar, ...], Scalar]:
    """The loop NumPy picks for ``ufunc`` on operands of ``types``: the types the operands are
    converted to, and the result type. Only weak operands give a weak result (Python's rules:
    ``int / int`` is a float, comparisons give bools)."""
    if all(t.weak for t in types):
        floats = any(t.kind == "f" for t in types)
        _, out = _resolve(ufunc, tuple(FLOAT64 if t.kind == "f" else INT64 for t in types))
        common = weak_float(fp64) if out.kind == "f" or floats else weak_int()
        return tuple(common for _ in types), Scalar(BOOL) if out == BOOL else common
    ins, out = _resolve(ufunc, tuple(_operand(t) for t in types))
    return tuple(Scalar(d) for d in ins), Scalar(out)


def join(a: Type, b: Type, fp64: bool) -> Type | None:
    """The type of a variable that holds values of types ``a`` and ``b`` (NumPy's promotion;
    a weak value takes the other's type); ``None`` if they do not mix."""
    if a == b:
        return a
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        if a.weak and b.weak:
            return weak_float(fp64) if "f" in (a.kind, b.kind) else weak_int()
        if a.weak or b.weak:
            strong, weak = (b, a) if a.weak else (a, b)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sample = 0.0 if weak.kind == "f" else 0
                return Scalar(np.result_type(strong.dtype, sample))
        return Scalar(np.promote_types(a.dtype, b.dtype))
    return None


def materialise(t: Type, fp64: bool) -> Type:
    """The type a value is stored with: a weak float as the device's float (its storage)."""
    if isinstance(t, Scalar) and t.weak:
        return Scalar(INT64 if t.kind in "iu" else (FLOAT64 if fp64 else FLOAT32))
    return t


def supported(dtype: np.dtype) -> bool:
    """Whether the devices compute with ``dtype`` (no float16, no complex)."""
    return dtype in _DEVICE_SCALARS


def can_cast(src: Scalar, dst: Scalar) -> bool:
    """NumPy's ``same_kind`` casting (weak values cast to any number type)."""
    if src.weak:
        return dst.kind in "fiu" and (src.kind in "iu" or dst.kind == "f")
    return bool(np.can_cast(src.dtype, dst.dtype, casting="same_kind"))
