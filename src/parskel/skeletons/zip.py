"""Zip: g(a_i, b_i, ...) over two or more inputs of one shape whose types may all differ
(seed 004, section 2.4.1). Shares Map's kernel template."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..containers.base import Container
from ..errors import UserFunctionError
from . import pipelined
from .map import Elementwise
from .userfn import UserSource


class Zip(Elementwise):
    """``Zip(g, inputs=2)(a, b, ..., *extra)``: ``g(a[i], b[i], ..., [index], *extra)``.

    >>> x, y = ps.Vector(np.ones(3, np.float32)), ps.Vector(np.arange(3, dtype=np.float32))
    >>> ps.Zip(lambda x, y, s: s * x + y)(x, y, 2.0).numpy()
    array([2., 3., 4.], dtype=float32)
    >>> axpy = ps.Zip("float f(float x, int y, float s) { return s * x + y; }")
    >>> axpy(x, ps.Vector(np.arange(3, dtype=np.int32)), 2.0).numpy()
    array([2., 3., 4.], dtype=float32)
    """

    name = "Zip"

    def __init__(self, source: UserSource, inputs: int = 2) -> None:
        if inputs < 2:
            raise UserFunctionError(f"Zip combines two or more inputs, not {inputs}; use Map for one")
        super().__init__(source, inputs)

    def __call__(self, *args: Any, out: Any = None) -> Container | np.ndarray | None:
        if len(args) < self.inputs:
            raise UserFunctionError(f"Zip: expected {self.inputs} input containers, got {len(args)} arguments")
        if any(isinstance(x, np.ndarray) for x in args[: self.inputs]):  # host arrays, in chunks where that pays
            return pipelined.elementwise(self, args[: self.inputs], args[self.inputs :], out)
        inputs = self._inputs(args[: self.inputs], [f"input {k}" for k in range(self.inputs)], bools=True)
        return self._run(inputs, inputs[0], args[self.inputs :], out)
