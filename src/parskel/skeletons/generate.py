"""Generate: a Vector or Matrix computed from the index alone (seed 004, SkePU's Generate).
Shares Map's kernel template."""

from __future__ import annotations

from typing import Any

from ..containers.base import Container
from ..containers.matrix import Matrix
from ..containers.vector import Vector
from ..errors import ShapeError, UserFunctionError
from ..runtime import Device, device as select_device
from .map import Elementwise


class Generate(Elementwise):
    """``Generate(f)(shape, *extra)``: ``f(index..., *extra)`` for every position.

    An int shape gives a Vector (one ``ps_index``), a pair a Matrix (row and column, or the
    flat index if ``f`` declares one ``ps_index``).

    >>> ramp = ps.Generate("float f(ps_index i) { return 0.5f * i; }")  # doctest: +SKIP
    >>> ramp(8).numpy()
    """

    name = "Generate"

    def __init__(self, source: str) -> None:
        super().__init__(source, 0)
        if self._void:
            raise UserFunctionError("Generate: the user function must return the element it generates")

    def __call__(self, shape: int | tuple[int, int], *extra: Any, out: Container | None = None,
                 device: Device | str | None = None) -> Container:
        if out is not None:
            like = out
        else:
            dev = select_device(device)
            if isinstance(shape, int):
                like = Vector.empty(shape, self._out_dtype, device=dev)
            elif len(shape) == 2:
                like = Matrix.empty(tuple(shape), self._out_dtype, device=dev)
            else:
                raise ShapeError(f"Generate: shape must be an int or a pair, got {shape!r}")
        result = self._run([], like, extra, out if out is not None else like)
        assert result is not None
        return result
