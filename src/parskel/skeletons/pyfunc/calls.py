"""The functions a user function may call: ``math``, NumPy's element-wise functions, a few
built-ins, and type conversions, each with the NumPy ufunc whose type rules it follows and the C
it becomes.

``math`` functions follow NumPy's rules on the device (``math.sqrt`` of a float32 is a float32,
as in Numba and cupyx.jit), except ``math.floor``, ``math.ceil`` and ``math.trunc``, which give
integers as in Python.
"""

from __future__ import annotations

import builtins
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Function:
    """A callable the translator knows: ``kind`` says how it is translated, ``ufunc`` gives its
    types (NumPy's), ``c`` the C function where one exists, ``args`` how many it takes."""

    name: str
    kind: str
    ufunc: np.ufunc | None = None
    c: str = ""
    args: tuple[int, int] = (1, 1)


@dataclass(frozen=True)
class Conversion:
    """``int(x)``, ``float(x)``, ``bool(x)``, ``np.float32(x)``, ...: the value as ``dtype``;
    ``weak`` for Python's int and float (NEP 50: they still take a typed partner's type)."""

    name: str
    dtype: np.dtype
    weak: bool = False


# element-wise NumPy ufuncs with a C function of the same meaning, and their math aliases
_UFUNCS: dict[str, tuple[str, tuple[str, ...]]] = {
    # numpy name: (C name, names in math)
    "sqrt": ("sqrt", ("sqrt",)),
    "cbrt": ("cbrt", ("cbrt",)),
    "exp": ("exp", ("exp",)),
    "exp2": ("exp2", ("exp2",)),
    "expm1": ("expm1", ("expm1",)),
    "log": ("log", ("log",)),
    "log2": ("log2", ("log2",)),
    "log10": ("log10", ("log10",)),
    "log1p": ("log1p", ("log1p",)),
    "sin": ("sin", ("sin",)),
    "cos": ("cos", ("cos",)),
    "tan": ("tan", ("tan",)),
    "arcsin": ("asin", ("asin",)),
    "arccos": ("acos", ("acos",)),
    "arctan": ("atan", ("atan",)),
    "sinh": ("sinh", ("sinh",)),
    "cosh": ("cosh", ("cosh",)),
    "tanh": ("tanh", ("tanh",)),
    "arcsinh": ("asinh", ("asinh",)),
    "arccosh": ("acosh", ("acosh",)),
    "arctanh": ("atanh", ("atanh",)),
    "fabs": ("fabs", ("fabs",)),
    "floor": ("floor", ()),
    "ceil": ("ceil", ()),
    "trunc": ("trunc", ()),
    "rint": ("rint", ()),
    "arctan2": ("atan2", ("atan2",)),
    "hypot": ("hypot", ()),
    "copysign": ("copysign", ("copysign",)),
    "fmod": ("fmod", ("fmod",)),
    "fmax": ("fmax", ()),
    "fmin": ("fmin", ()),
}
_PREDICATES = ("isnan", "isinf", "isfinite")
_NUMPY_TYPES = (
    np.int8,
    np.uint8,
    np.int16,
    np.uint16,
    np.int32,
    np.uint32,
    np.int64,
    np.uint64,
    np.float32,
    np.float64,
    np.bool_,
)


@functools.lru_cache(maxsize=1)
def catalog() -> dict[int, Function | Conversion]:
    """Every known callable, by ``id`` (the objects are module attributes that live forever)."""
    found: dict[int, Function | Conversion] = {}

    def add(obj: Any, entry: Function | Conversion) -> None:
        found.setdefault(id(obj), entry)

    for np_name, (c, math_names) in _UFUNCS.items():
        ufunc = getattr(np, np_name)
        nin = ufunc.nin
        add(ufunc, Function(f"numpy.{np_name}", "ufunc", ufunc, c, (nin, nin)))
        for m in math_names:
            add(getattr(math, m), Function(f"math.{m}", "ufunc", ufunc, c, (nin, nin)))
    for name in _PREDICATES:
        add(getattr(np, name), Function(f"numpy.{name}", "predicate", getattr(np, name), name))
        add(getattr(math, name), Function(f"math.{name}", "predicate", getattr(np, name), name))
    for name in ("floor", "ceil", "trunc"):
        add(getattr(math, name), Function(f"math.{name}", "to_int", getattr(np, name), name))
    add(np.square, Function("numpy.square", "square", np.multiply))
    add(np.absolute, Function("numpy.absolute", "abs", np.absolute))
    add(builtins.abs, Function("abs", "abs", np.absolute))
    add(builtins.round, Function("round", "round", np.rint))
    add(np.power, Function("numpy.power", "pow", np.power, "pow", (2, 2)))
    add(builtins.pow, Function("pow", "pow", np.power, "pow", (2, 2)))
    add(math.pow, Function("math.pow", "pow", np.power, "pow", (2, 2)))
    add(math.hypot, Function("math.hypot", "ufunc", np.hypot, "hypot", (2, 2)))
    add(builtins.max, Function("max", "max", np.maximum, "max", (2, 64)))
    add(builtins.min, Function("min", "min", np.minimum, "min", (2, 64)))
    add(np.maximum, Function("numpy.maximum", "maximum", np.maximum, "maximum", (2, 2)))
    add(np.minimum, Function("numpy.minimum", "maximum", np.minimum, "minimum", (2, 2)))
    add(np.clip, Function("numpy.clip", "clip", np.maximum, "", (3, 3)))
    add(np.where, Function("numpy.where", "where", None, "", (3, 3)))
    add(builtins.int, Conversion("int", np.dtype(np.int64), weak=True))
    add(builtins.float, Conversion("float", np.dtype(np.float64), weak=True))
    add(builtins.bool, Conversion("bool", np.dtype(np.bool_)))
    for t in _NUMPY_TYPES:
        add(t, Conversion(f"numpy.{t.__name__}", np.dtype(t)))
    return found


def lookup(obj: Any) -> Function | Conversion | None:
    return catalog().get(id(obj))


def dtype_of_annotation(obj: Any) -> np.dtype | None:
    """The dtype an annotation names: a NumPy scalar type, ``float``/``int``/``bool`` (NumPy's
    ``float64``/``int64``/``bool``), or a dtype (a struct registered with ``ps.struct``)."""
    if isinstance(obj, np.dtype):
        return obj
    if obj in (builtins.float, builtins.int, builtins.bool) or obj in _NUMPY_TYPES:
        return np.dtype(obj)
    return None
