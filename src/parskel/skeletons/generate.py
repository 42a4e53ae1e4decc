"""Generate: a Vector or Matrix computed from the index alone (seed 004, SkePU's Generate).
Shares Map's kernel template."""

from __future__ import annotations

from typing import Any

from ..containers.base import Container, shape_of
from ..containers.matrix import Matrix
from ..containers.vector import Vector
from ..errors import ShapeError, UserFunctionError
from ..runtime import Device
from ..runtime import device as select_device
from .map import Elementwise
from .userfn import UserSource


class Generate(Elementwise):
    """``Generate(f)(shape, *extra)``: ``f(index..., *extra)`` for every position.

    An int shape gives a Vector (one index parameter), a pair a Matrix (row and column, or the
    flat index if ``f`` declares one). In Python, index parameters are keyword-only or
    annotated ``ps.Index``; in C they are typed ``ps_index``.

    >>> ps.Generate(lambda *, i: np.float32(i) * 0.5)(4).numpy()
    array([0. , 0.5, 1. , 1.5], dtype=float32)
    >>> ramp = ps.Generate("float f(ps_index i) { return 0.5f * i; }")
    >>> ramp(4).numpy()
    array([0. , 0.5, 1. , 1.5], dtype=float32)
    """

    name = "Generate"

    def __init__(self, source: UserSource) -> None:
        super().__init__(source, 0)
        if self._void:
            raise UserFunctionError("Generate: the user function must return the element it generates")

    def __call__(
        self,
        shape: int | tuple[int, int],
        *extra: Any,
        out: Container | None = None,
        device: Device | str | None = None,
    ) -> Container:
        assert self._out_dtype is not None  # a void function was refused when built
        if out is not None:
            like = out
        else:
            dims = shape_of(shape, "Generate: shape")
            dev = select_device(device)
            if len(dims) == 1:
                like = Vector.empty(dims, self._out_dtype, device=dev)
            elif len(dims) == 2:
                like = Matrix.empty(dims, self._out_dtype, device=dev)
            else:
                raise ShapeError(f"Generate: shape must be a size or a pair (rows, cols), got {shape!r}")
        result = self._run([], like, extra, out if out is not None else like)
        assert result is not None
        return result
