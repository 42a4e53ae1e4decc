"""Tensor3 and Tensor4: 3D and 4D row-major containers (SkePU's ``Tensor3`` and ``Tensor4``).

Their elements lie in C order, the last axis varying fastest, as in a C-contiguous NumPy array;
Map, Zip, Generate and MapOverlap give user functions one index per axis (``i, j, k`` and
``i, j, k, l``), and the skeletons that see their input as a sequence (Reduce, Scan, MapReduce)
take them flat.
"""

from __future__ import annotations

from typing import Any

from numpy.typing import DTypeLike

from ..runtime import Device
from .base import Container


class Tensor3(Container):
    """A 3D row-major array kept on the host and on a device, copied lazily.

    >>> t = ps.Tensor3(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    >>> z = ps.Tensor3(shape=(5, 1, 7), dtype=np.int32)     # zeros
    >>> t.shape, z.shape, t.numpy()[1, 2, 3]
    ((2, 3, 4), (5, 1, 7), np.float32(23.0))
    """

    ndim = 3
    __slots__ = ()

    def __init__(
        self,
        data: Any = None,
        *,
        dtype: DTypeLike | None = None,
        shape: tuple[int, int, int] | None = None,
        device: Device | str | None = None,
        copy: bool = True,
        distribution: Any = None,
    ) -> None:
        super().__init__(data, dtype=dtype, shape=shape, device=device, copy=copy)


class Tensor4(Container):
    """A 4D row-major array kept on the host and on a device, copied lazily.

    >>> t = ps.Tensor4(np.ones((2, 3, 4, 5), dtype=np.float64))
    >>> z = ps.Tensor4(shape=(1, 2, 0, 3), dtype=np.uint8)  # zeros (none here)
    >>> t.shape, t.size, z.size
    ((2, 3, 4, 5), 120, 0)
    """

    ndim = 4
    __slots__ = ()

    def __init__(
        self,
        data: Any = None,
        *,
        dtype: DTypeLike | None = None,
        shape: tuple[int, int, int, int] | None = None,
        device: Device | str | None = None,
        copy: bool = True,
        distribution: Any = None,
    ) -> None:
        super().__init__(data, dtype=dtype, shape=shape, device=device, copy=copy)
