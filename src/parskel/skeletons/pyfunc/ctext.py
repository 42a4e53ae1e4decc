"""The C text of translated functions: literals of each type, names that cannot clash with C,
OpenCL or CUDA words, the helpers of ``skeletons/python.h`` a function needs, and struct
constructors (C++ has no compound literals, so tuples are built by small functions)."""

from __future__ import annotations

import itertools
import keyword
import math
import re
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...containers.structs import element_c_type, struct, struct_dtype, struct_name
from ...errors import DTypeError
from .types import BOOL

HEADER = '#include "skeletons/python.h"\n'

# words a Python name must not become in C: keywords of C and C++, OpenCL's and CUDA's types,
# qualifiers, built-ins and the macros of parskel's headers
_WORDS = """auto break case char const continue default do double else enum extern float for goto if inline
    int long register restrict return short signed sizeof static struct switch typedef union
    unsigned void volatile while bool true false uchar ushort uint ulong half size_t ptrdiff_t
    intptr_t uintptr_t class namespace template typename this new delete operator private public
    protected virtual friend using try catch throw explicit mutable export constexpr decltype
    nullptr static_assert alignas alignof noexcept thread_local asm and or not xor bitand bitor
    compl global local constant kernel read_only write_only read_write image2d_t sampler_t event_t
    dim3 threadIdx blockIdx blockDim gridDim warpSize min max clamp mix sign step select mad
    mad24 mul24 degrees radians pown powr popcount clz mul_hi rotate barrier mem_fence isnan isinf
    isfinite sqrt cbrt exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan atan2 sinh
    cosh tanh asinh acosh atanh fabs floor ceil trunc rint round fmod hypot copysign fmin fmax pow
    abs"""
_RESERVED = frozenset(_WORDS.split())
_VECTOR = re.compile(r"^(char|uchar|short|ushort|int|uint|long|ulong|float|double|half)(2|3|4|8|16)$")
_FUNCTION_LIKE = re.compile(r"^(get|as|convert|vload|vstore|atomic|atom|native|half)_\w*$|^(vload|vstore)\d+$")


def reserved(name: str) -> bool:
    """Whether ``name`` may mean something else in C: a keyword, a type, a built-in, or a macro
    (OpenCL's and parskel's constants are capitals: M_PI, FLT_MAX, T; a trailing _ frees one)."""
    return (
        name in _RESERVED
        or keyword.iskeyword(name)
        or name.lower().startswith("ps_")
        or name.startswith("__")
        or (name.isupper() and not name.endswith("_"))
        or bool(_VECTOR.match(name) or _FUNCTION_LIKE.match(name))
    )


class Names:
    """C names for Python names, unique within one function and never a reserved word."""

    def __init__(self) -> None:
        self._given: dict[str, str] = {}
        self._taken: set[str] = set()
        self._temps = 0

    def __call__(self, name: str) -> str:
        found = self._given.get(name)
        if found is None:
            found = name if re.match(r"^[A-Za-z_]\w*$", name) and name.isascii() else "v"
            if found.lower().startswith("ps_") or found.startswith("__"):
                found = "v" + found  # parskel's and the compilers' prefixes, whatever follows
            if reserved(found) or found in self._taken:
                candidates = itertools.chain([f"{found}_"], (f"v{k}_{found}" for k in itertools.count()))
                found = next(c for c in candidates if not reserved(c) and c not in self._taken)
            self._given[name] = found
            self._taken.add(found)
        return found

    def temporary(self) -> str:
        self._temps += 1
        return f"ps_t{self._temps}"


def literal(value: int | float | bool, dtype: np.dtype) -> str:
    """``value`` as a C literal of ``dtype``; ``OverflowError`` for an int that does not fit
    (NumPy refuses those too)."""
    if dtype == BOOL:
        return "true" if value else "false"
    if dtype.kind in "iu":
        number = int(value)
        info = np.iinfo(dtype)
        if not info.min <= number <= info.max:
            raise OverflowError(f"the Python int {number} does not fit in {dtype}")
        c = element_c_type(dtype)
        suffix = {"uint": "u", "long": "L", "ulong": "UL"}.get(c, "")
        if number == info.min and number < 0:
            text = f"({number + 1}{suffix} - 1)"
        else:
            text = f"{number}{suffix}" if number >= 0 else f"({number}{suffix})"
        return text if c in ("int", "uint", "long", "ulong") else f"(({c}){text})"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a value beyond float32 becomes inf, as in NumPy
        number = dtype.type(value)
    single = dtype == np.float32
    if math.isnan(number):
        return "PS_NAN_F" if single else "PS_NAN"
    if math.isinf(number):
        name = "PS_INFINITY_F" if single else "PS_INFINITY"
        return name if number > 0 else f"(-{name})"
    text = str(number) if single else repr(float(number))
    if "e" not in text and "." not in text:
        text += ".0"
    text += "f" if single else ""
    return f"({text})" if text.startswith("-") else text


def runtime_helper(family: str, dtype: np.dtype) -> tuple[str, str, str]:
    """(guard, C text, function-name prefix) of a ``python.h`` helper family for ``dtype``."""
    c = element_c_type(dtype)
    if family == "divmod":
        if dtype.kind == "f":
            macro = f"PS_PY_DIVMOD_FLOAT({c})"
        elif dtype.kind == "i":
            unsigned = element_c_type(np.dtype(f"u{dtype.itemsize}"))
            macro = f"PS_PY_DIVMOD_SIGNED({c}, {unsigned})"
        else:
            macro = f"PS_PY_DIVMOD_UNSIGNED({c})"
    elif family == "maximum":
        macro = f"PS_PY_MAXIMUM_{'FLOAT' if dtype.kind == 'f' else 'INT'}({c})"
    else:
        macro = f"PS_PY_{family.upper()}({c})"
    guard = f"PS_PY_HAVE_{family}_{c}"
    return guard, f"#ifndef {guard}\n#define {guard}\n{macro}\n#endif\n", c


def guarded(guard: str, text: str) -> str:
    return f"#ifndef {guard}\n#define {guard}\n{text}#endif\n"


def constructor(dtype: np.dtype) -> tuple[str, str, str]:
    """(guard, C text, function name) of a function building struct ``dtype`` from its fields."""
    name = struct_name(dtype)
    fields: Mapping[str, Any] = dtype.fields or {}
    params, lines = [], []
    for k, field in enumerate(dtype.names or ()):
        sub: np.dtype = fields[field][0]
        if sub.subdtype is not None:
            raise DTypeError(f"struct {name!r} cannot be built from a tuple: its field {field!r} is an array")
        params.append(f"{element_c_type(sub)} v{k}")
        lines.append(f"    ps_r.{field} = v{k};\n")
    function = f"ps_make_{name}"
    head = f"inline {name} {function}({', '.join(params)})\n"
    text = f"{head}{{\n    {name} ps_r;\n{''.join(lines)}    return ps_r;\n}}\n"
    guard = f"PS_PY_HAVE_make_{name}"
    return guard, guarded(guard, text), function


def tuple_dtype(fields: list[np.dtype]) -> np.dtype:
    """The struct a tuple of values of these dtypes is stored as: fields ``f0``, ``f1``, ...
    (NumPy's names for unnamed fields), registered under a name built from the field types."""
    dtype = np.dtype([(f"f{k}", d) for k, d in enumerate(fields)], align=True)
    try:
        struct_name(dtype)
        return dtype
    except DTypeError:
        pass
    base = "tuple_" + "_".join(element_c_type(d) for d in fields)
    name, k = base, 1
    while struct_dtype(name) not in (None, dtype):
        k += 1
        name = f"{base}_{k}"
    return struct(name, dtype)
