"""Generate: a Vector, Matrix, Tensor3 or Tensor4 computed from the index alone (seed 004,
SkePU's Generate). Shares Map's kernel template."""

from __future__ import annotations

from typing import Any

from ..containers import of_rank
from ..containers.base import Container, shape_of
from ..errors import UserFunctionError
from ..runtime import Device
from ..runtime import device as select_device
from .map import Elementwise
from .userfn import UserSource


class Generate(Elementwise):
    """``Generate(f)(shape, *extra)``: ``f(index..., *extra)`` for every position.

    An int shape gives a Vector (one index parameter), a pair a Matrix (row and column), a
    triple a Tensor3 (``i, j, k``) and four sizes a Tensor4 (``i, j, k, l``): ``f`` declares
    one index parameter per axis, first axis first, or a single one for the flat index. In
    Python, index parameters are keyword-only or annotated ``ps.Index``; in C they are typed
    ``ps_index``; their names are free, their order counts.

    >>> ps.Generate(lambda *, i: np.float32(i) * 0.5)(4).numpy()
    array([0. , 0.5, 1. , 1.5], dtype=float32)
    >>> ramp = ps.Generate("float f(ps_index i) { return 0.5f * i; }")
    >>> ramp(4).numpy()
    array([0. , 0.5, 1. , 1.5], dtype=float32)
    >>> cube = ps.Generate(lambda *, i, j, k: np.float32(100 * i + 10 * j + k))((2, 2, 3))
    >>> type(cube).__name__
    'Tensor3'
    >>> cube.numpy()[1]
    array([[100., 101., 102.],
           [110., 111., 112.]], dtype=float32)
    """

    name = "Generate"

    def __init__(self, source: UserSource) -> None:
        super().__init__(source, 0)
        if self._void:
            raise UserFunctionError("Generate: the user function must return the element it generates")

    def __call__(
        self,
        shape: int | tuple[int, ...],
        *extra: Any,
        out: Container | None = None,
        device: Device | str | None = None,
    ) -> Container:
        assert self._out_dtype is not None  # a void function was refused when built
        if out is not None:
            like = out
        else:
            dims = shape_of(shape, "Generate: shape")
            like = of_rank(len(dims), "Generate: shape").empty(dims, self._out_dtype, device=select_device(device))
        result = self._run([], like, extra, out if out is not None else like)
        assert result is not None
        return result
