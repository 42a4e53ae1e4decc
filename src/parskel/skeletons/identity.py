"""Neutral elements of operators, given as values or as C source, on the device."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..errors import UserFunctionError
from ..runtime import Buffer, Device, Program
from .arguments import as_buffer_value

_COMPOUND_LITERAL = re.compile(r"^\s*\(\s*[A-Za-z_]\w*\s*\)\s*(\{.*\})\s*$", re.S)


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
