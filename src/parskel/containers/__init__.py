"""Containers: Vector, Matrix, Tensor3 and Tensor4 with lazy host/device coherence, and struct
element types."""

from ..errors import ShapeError
from .base import Container
from .matrix import Matrix
from .structs import struct
from .tensor import Tensor3, Tensor4
from .vector import Vector

__all__ = ["Container", "Matrix", "Tensor3", "Tensor4", "Vector", "struct"]

#: The container class of each rank (number of axes).
RANKS: dict[int, type[Container]] = {1: Vector, 2: Matrix, 3: Tensor3, 4: Tensor4}


def of_rank(ndim: int, what: str) -> type[Container]:
    """The container class of ``ndim`` axes; a :class:`~parskel.errors.ShapeError` naming the
    ranks there are otherwise (``what`` says who asks).

    >>> of_rank(3, "Generate").__name__
    'Tensor3'
    """
    found = RANKS.get(ndim)
    if found is None:
        raise ShapeError(f"{what}: containers have 1 to 4 axes (Vector, Matrix, Tensor3, Tensor4), got {ndim} axes")
    return found
