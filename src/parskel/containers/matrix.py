"""Matrix: a 2D row-major container (seed 004, SkelCL/SkePU ``Matrix``)."""

from __future__ import annotations

from typing import Any

from numpy.typing import DTypeLike

from ..runtime import Device
from .base import Container


class Matrix(Container):
    """A 2D row-major array kept on the host and on a device, copied lazily; with
    ``distribution=`` spread over several devices by rows (:mod:`parskel.dist`).

    >>> m = ps.Matrix(np.eye(3, dtype=np.float32))
    >>> z = ps.Matrix(shape=(4, 5), dtype=np.float32)     # zeros
    >>> m.shape, z.shape
    ((3, 3), (4, 5))

    Elements may be OpenCL vector types, as in a :class:`Vector`: an image of RGBA pixels is
    ``ps.Matrix(pixels, dtype=ps.uchar4)`` for ``pixels`` of shape (rows, columns, 4).
    """

    ndim = 2
    __slots__ = ()

    def __init__(
        self,
        data: Any = None,
        *,
        dtype: DTypeLike | None = None,
        shape: tuple[int, int] | None = None,
        device: Device | str | None = None,
        copy: bool = True,
        distribution: Any = None,
    ) -> None:
        super().__init__(data, dtype=dtype, shape=shape, device=device, copy=copy)

    @property
    def rows(self) -> int:
        return self._shape[0]

    @property
    def cols(self) -> int:
        return self._shape[1]
