"""User functions: parsing their signatures and calling them from generated kernels.

A user function is OpenCL C source (Python functions become such source through ``pyfunc``)
whose *last* top-level function is the one the skeleton
calls (helpers may come before it; its name is free). Its parameters are, in order, the
skeleton's element parameters, then any mix of

- ``ps_index`` parameters, which receive the element's index: the flat index to one such
  parameter, or one index per axis to as many as the container has axes (row then column of a
  Matrix; ``i, j, k`` of a Tensor3 and ``i, j, k, l`` of a Tensor4, first axis first), and
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

from ..containers.structs import COMPLEX_TYPES, element_c_type, struct_dtype
from ..errors import DTypeError, UserFunctionError
from ..runtime.cltypes import scalar_types, vector_types

INDEX_TYPE = "ps_index"
# what a skeleton takes as a user function: OpenCL C source, or a Python function to translate
UserSource = str | Callable[..., Any]
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
_SCALARS = {element_c_type(dt): dt for dt in (*scalar_types(), *COMPLEX_TYPES, np.dtype(np.bool_), *vector_types())}
_FUNCTION = re.compile(r"([A-Za-z_][\w\s\*]*?)\b([A-Za-z_]\w*)\s*\(([^()]*)\)\s*\{")
# comments, and preprocessor lines (with their continuations), which hold no function definition
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/|^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.S | re.M)


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


def _last_function(source: str) -> tuple[str, re.Match[str] | None]:
    """``source`` with its comments blanked out, and the head of its last top-level function
    definition (None if it has none)."""
    text = _COMMENTS.sub(lambda m: " " * len(m.group()), source)
    found = None
    for match in _FUNCTION.finditer(text):
        head = text[: match.start()]
        if head.count("{") == head.count("}"):
            found = match
    return text, found


def parse_signature(source: UserSource, where: str) -> Signature:
    """The signature of the last top-level function in ``source``."""
    if not isinstance(source, str) or not source.strip():
        raise UserFunctionError(f"{where}: expected the user function as OpenCL C source text")
    _, found = _last_function(source)
    if found is None:
        raise UserFunctionError(f"{where}: no function definition found in:\n{source}")
    ret_words = [w for w in found[1].replace("*", " * ").split() if w not in _QUALIFIERS]
    if "*" in ret_words:
        raise UserFunctionError(f"{where}: a user function cannot return a pointer")
    raw = found[3].strip()
    params = () if raw in ("", "void") else tuple(_parse_param(p, where) for p in raw.split(","))
    return Signature(_normalise(ret_words), found[2], params)


def function_body(source: str) -> str:
    """The statements of the last top-level function in ``source`` (between its braces), without
    comments: what :func:`parse_signature` found the signature of."""
    text, found = _last_function(source)
    if found is None:
        return ""
    depth, start = 1, found.end()
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i]
    return text[start:]


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

    def __init__(self, source: UserSource, skeleton: str, role: str, elements: int) -> None:
        self.skeleton = skeleton
        self.role = role
        self.where = f"{skeleton}: user function"
        self.signature = parse_signature(source, self.where)
        assert isinstance(source, str)  # parse_signature refuses anything else
        self.source = source
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
        for p in self.extras:
            if p.pointer and not p.is_global:
                raise UserFunctionError(
                    f"{self.where} {self.signature.name!r}: the extra parameter {p.name!r} is a pointer "
                    f"outside global memory; a container argument is declared '__global {p.type} *{p.name}'"
                    " (add const for read-only access); local memory cannot be passed to a user function"
                )
        self._rest = rest
        self.name = f"ps_{role}_fn"

    @property
    def return_type(self) -> str:
        return self.signature.return_type

    @property
    def body(self) -> str:
        """The function's statements, without comments."""
        return function_body(self.source)

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

    def element_indices(self, ndim: int, flat: str, axes: Sequence[str] | None) -> list[str]:
        """What the ``ps_index`` parameters receive on a container of ``ndim`` axes: one
        parameter the flat index ``flat``, ``ndim`` of them one index per axis (the C
        expressions ``axes``, first axis first); ``axes=None`` where a skeleton gives only the
        flat index. Other counts are refused, saying what can be declared."""
        count = len(self.index_positions)
        if count <= 1:
            return [flat]
        if axes is not None and count == ndim:
            return list(axes)
        names = {2: "row and column", 3: "i, j, k", 4: "i, j, k, l"}
        allowed = "1 (the flat index)" if axes is None or ndim == 1 else f"1 (the flat index) or {ndim} ({names[ndim]})"
        raise UserFunctionError(
            f"{self.where} {self.signature.name!r} declares {count} ps_index parameters; on a container of "
            f"{ndim} ax{'es' if ndim > 1 else 'is'} {self.skeleton} gives {allowed}"
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
        """The extra parameters as they follow a kernel's own: `` , float ps_x0, ...`` (the
        leading space keeps ``#define PS_EXTRA_PARAMS`` an object-like macro)."""
        return "".join(
            f" , {Param(p.type, f'{prefix}{k}', p.pointer, p.is_global, p.const).declaration()}"
            for k, p in enumerate(self.extras)
        )
