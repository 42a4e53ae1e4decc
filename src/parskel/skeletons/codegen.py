"""User functions: parsing their signatures, binding call-time arguments, generating kernels.

A user function is OpenCL C source whose *last* top-level function is the one the skeleton
calls (helpers may come before it; its name is free). Its parameters are, in order, the
skeleton's element parameters, then any mix of

- ``ps_index`` parameters, which receive the element's index (a Matrix gives row then column,
  or the flat index when only one is declared), and
- extra arguments given at call time: scalars (``float s``, a struct by value) and containers
  (``__global float *table``: random read access; without ``const``, write access too).

Each user function is compiled in its own named part (``Map_user_function.cl``), so a compiler
message points at the user's line; its name is mapped to a fixed one by a macro, so two user
functions of one skeleton may both be called ``f``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..containers.base import Container
from ..containers.structs import element_c_type, struct_definitions, struct_dtype, structs_named_in
from ..errors import BuildError, DTypeError, ShapeError, UserFunctionError
from ..runtime import Buffer, Device, Program, Source
from ..runtime.cltypes import scalar_types
from ..runtime.sources import read_kernel_file

INDEX_TYPE = "ps_index"
_QUALIFIERS = {
    "const",
    "volatile",
    "restrict",
    "__restrict",
    "__global",
    "global",
    "__local",
    "local",
    "__constant",
    "constant",
    "__private",
    "private",
    "inline",
    "static",
}
_ALIASES = {
    "unsigned int": "uint",
    "unsigned": "uint",
    "unsigned char": "uchar",
    "unsigned short": "ushort",
    "unsigned long": "ulong",
    "signed char": "char",
    "signed int": "int",
    "signed short": "short",
    "signed long": "long",
}
_SCALARS = {element_c_type(dt): dt for dt in scalar_types()}
_FUNCTION = re.compile(r"([A-Za-z_][\w\s\*]*?)\b([A-Za-z_]\w*)\s*\(([^()]*)\)\s*\{")
_COMPOUND_LITERAL = re.compile(r"^\s*\(\s*[A-Za-z_]\w*\s*\)\s*(\{.*\})\s*$", re.S)
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


@dataclass(frozen=True)
class Param:
    """One declared parameter: its base C type, name, and pointer qualifiers."""

    type: str
    name: str
    pointer: bool = False
    is_global: bool = False
    const: bool = False

    @property
    def is_index(self) -> bool:
        return self.type == INDEX_TYPE and not self.pointer

    def declaration(self) -> str:
        if self.pointer:
            return f"__global {'const ' if self.const else ''}{self.type} *{self.name}"
        return f"{self.type} {self.name}"


@dataclass(frozen=True)
class Signature:
    return_type: str
    name: str
    params: tuple[Param, ...]


def _normalise(words: list[str]) -> str:
    text = " ".join(words)
    return _ALIASES.get(text, text)


def _parse_param(text: str, where: str) -> Param:
    pointer = "*" in text or "[" in text
    text = re.sub(r"\[[^\]]*\]", " ", text).replace("*", " ")
    words = text.split()
    if len(words) < 2:
        raise UserFunctionError(f"{where}: cannot read the parameter {text.strip()!r}; give it a type and a name")
    quals = {w for w in words[:-1] if w in _QUALIFIERS}
    base = [w for w in words[:-1] if w not in _QUALIFIERS]
    return Param(
        type=_normalise(base),
        name=words[-1],
        pointer=pointer,
        is_global=bool(quals & {"__global", "global"}),
        const="const" in quals,
    )


def parse_signature(source: str, where: str) -> Signature:
    """The signature of the last top-level function in ``source``."""
    if not isinstance(source, str) or not source.strip():
        raise UserFunctionError(f"{where}: expected the user function as OpenCL C source text")
    text = _COMMENTS.sub(lambda m: " " * len(m.group()), source)
    found = None
    for match in _FUNCTION.finditer(text):
        head = text[: match.start()]
        if head.count("{") == head.count("}"):
            found = match
    if found is None:
        raise UserFunctionError(f"{where}: no function definition found in:\n{source}")
    ret_words = [w for w in found[1].replace("*", " * ").split() if w not in _QUALIFIERS]
    if "*" in ret_words:
        raise UserFunctionError(f"{where}: a user function cannot return a pointer")
    raw = found[3].strip()
    params = () if raw in ("", "void") else tuple(_parse_param(p, where) for p in raw.split(","))
    return Signature(_normalise(ret_words), found[2], params)


def dtype_of(ctype: str, where: str) -> np.dtype:
    """The NumPy dtype for a C type name used by a user function (scalar or registered struct)."""
    if ctype in _SCALARS:
        return _SCALARS[ctype]
    found = struct_dtype(ctype)
    if found is None:
        raise DTypeError(f"{where}: unknown element type {ctype!r}; register structs with ps.struct")
    return found


class UserFunction:
    """A parsed user function with its role in a skeleton (``map``, ``reduce``, ...)."""

    def __init__(self, source: str, skeleton: str, role: str, elements: int) -> None:
        self.source = source
        self.skeleton = skeleton
        self.role = role
        self.where = f"{skeleton}: user function"
        self.signature = parse_signature(source, self.where)
        params = self.signature.params
        if len(params) < elements:
            raise UserFunctionError(
                f"{self.where} {self.signature.name!r} takes {len(params)} parameters, but {skeleton} "
                f"passes {elements} element(s) first"
            )
        self.elements = params[:elements]
        for p in self.elements:
            if p.is_index:
                raise UserFunctionError(f"{self.where}: parameter {p.name!r} comes before the {elements} element(s)")
        rest = params[elements:]
        self.index_positions = [k for k, p in enumerate(rest) if p.is_index]
        self.extras = [p for p in rest if not p.is_index]
        self._rest = rest
        self.name = f"ps_{role}_fn"

    @property
    def return_type(self) -> str:
        return self.signature.return_type

    def check_element(self, k: int, ctype: str, what: str) -> None:
        p = self.elements[k]
        if p.pointer or p.type != ctype:
            raise DTypeError(
                f"{self.where} {self.signature.name!r}: parameter {p.name!r} is declared "
                f"{'a pointer to ' if p.pointer else ''}{p.type!r}, but {what} has elements of type {ctype!r}"
            )

    def check_indices(self, most: int) -> None:
        if len(self.index_positions) > most:
            raise UserFunctionError(
                f"{self.where} {self.signature.name!r} declares {len(self.index_positions)} ps_index "
                f"parameters; here at most {most} can be given"
            )

    def part(self) -> tuple[str, str]:
        return (
            f"{self.skeleton}_{self.role}_function.cl" if self.role != "user" else f"{self.skeleton}_user_function.cl",
            self.source,
        )

    def call(self, elements: Sequence[str], indices: Sequence[str], prefix: str) -> str:
        """A C call expression; extras are passed as ``<prefix>0, <prefix>1, ...``."""
        args = list(elements)
        extra = 0
        index = 0
        for p in self._rest:
            if p.is_index:
                args.append(f"(ps_index)({indices[index]})")
                index += 1
            else:
                args.append(f"{prefix}{extra}")
                extra += 1
        return f"{self.name}({', '.join(args)})"

    def extra_params(self, prefix: str) -> str:
        return "".join(
            f", {Param(p.type, f'{prefix}{k}', p.pointer, p.is_global, p.const).declaration()}"
            for k, p in enumerate(self.extras)
        )


# arguments ---------------------------------------------------------------------------------


def check_container(value: Any, what: str, device: Device | None = None) -> Container:
    if not isinstance(value, Container):
        raise TypeError(f"{what} must be a ps.Vector or ps.Matrix, not {type(value).__name__}")
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
            args.append(c.to_device())
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
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} expects a {ctype} number, got {type(value).__name__}")
    if dtype.kind in "iu":
        if not isinstance(value, int):
            raise DTypeError(f"{what} is declared {ctype!r}; got the non-integer {value!r}")
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise DTypeError(f"{what}: {value} does not fit in {ctype}")
    return dtype.type(value)


# building ----------------------------------------------------------------------------------


def header(dtypes: Sequence[np.dtype], functions: Sequence[UserFunction]) -> str:
    """Common definitions before the user functions: the index type and every struct used."""
    used = list(dtypes)
    for fn in functions:
        used += structs_named_in(fn.source)
    return f'#include "common/parskel.h"\ntypedef uint {INDEX_TYPE};\n{struct_definitions(used)}'


def build(
    device: Device,
    skeleton: str,
    template: str,
    functions: Sequence[UserFunction],
    dtypes: Sequence[np.dtype],
    glue: str,
    prelude: str = "",
) -> Program:
    """Compose header (+ ``prelude``, which user functions see), user functions (renamed),
    glue macros and the template, and build it."""
    parts: list[tuple[str, str]] = [(f"{skeleton}_types.h", header(dtypes, functions) + prelude)]
    for fn in functions:
        parts.append((f"{skeleton}_{fn.role}_rename.h", f"#define {fn.signature.name} {fn.name}\n"))
        parts.append(fn.part())
        parts.append((f"{skeleton}_{fn.role}_unrename.h", f"#undef {fn.signature.name}\n"))
    parts.append((f"{skeleton}_glue.h", glue))
    parts.append((template, read_kernel_file(template)))
    source = Source.compose(parts, name=f"{skeleton} kernel")
    try:
        return device.build(source)
    except BuildError as exc:
        names = " and ".join(repr(fn.signature.name) for fn in functions) or "(none)"
        raise BuildError(f"{skeleton} with user function {names}", exc.log, exc.excerpt) from None


def launch_size(n: int, group: int) -> int:
    return -(-n // group) * group


def check_size(n: int, what: str) -> None:
    if n >= 2**31:
        raise ShapeError(f"{what}: {n} elements exceed the skeletons' limit of 2**31 - 1")


def mark_written(containers: Sequence[Container]) -> None:
    for c in containers:
        c.mark_device_written()


def group_size(kernel: Any, device: Device, most: int = 256) -> int:
    """The largest power of two <= ``most`` this kernel can run as a work-group here."""
    limit = min(most, kernel.max_work_group_size, device.info.max_work_group_size)
    return 1 << (limit.bit_length() - 1)


def build_grouped(
    device: Device, build_at: Callable[[int], Program], kernels: Sequence[str], most: int = 256
) -> tuple[Program, int]:
    """Build a program whose local arrays are sized by its work-group size (``PS_WG``).

    ``build_at(L)`` builds for groups of ``L``: the largest power of two <= ``most`` the device
    allows, halved while a kernel cannot run that many work-items (too many registers).
    """
    limit = min(most, device.info.max_work_group_size)
    size = 1 << (limit.bit_length() - 1)
    while True:
        program = build_at(size)
        fits = min(program.kernel(name).max_work_group_size for name in kernels)
        if fits >= size or size == 1:
            return program, size
        size = 1 << (fits.bit_length() - 1)


def as_buffer_value(value: Any, dtype: np.dtype, what: str) -> np.ndarray:
    """A one-element host array of ``dtype`` holding ``value`` (refusing lossy conversions)."""
    arr = np.zeros(1, dtype=dtype)
    arr[0] = scalar_argument(value, element_c_type(dtype), what)
    return arr


def identity_glue(identity: Any) -> str:
    """A neutral element given as C source becomes an initialiser the program evaluates once.

    A C compound literal, ``(affine){1, 0}``, becomes its brace list: C++ (the CUDA backend)
    has no compound literals, and both languages initialise a struct from the list.
    """
    if not isinstance(identity, str):
        return ""
    literal = _COMPOUND_LITERAL.match(identity)
    return f"#define PS_IDENTITY_EXPR {literal[1] if literal else f'({identity})'}\n"


def identity_buffer(identity: Any, dtype: np.dtype, device: Device, program: Program, what: str) -> Buffer:
    """A one-element device buffer holding the neutral element (a value, or C source)."""
    if isinstance(identity, str):
        buffer = device.alloc(dtype.itemsize)
        device.launch(program.kernel("ps_identity"), 1, 1, buffer)
        return buffer
    if identity is None:
        raise UserFunctionError(f"{what}: give a neutral element (identity=...)")
    return device.to_device(as_buffer_value(identity, dtype, what))
