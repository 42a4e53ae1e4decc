"""Vector: a 1D container (seed 004, SkelCL/SkePU ``Vector``)."""

from __future__ import annotations

from typing import Any

from numpy.typing import DTypeLike

from ..runtime import Device
from .base import Container


class Vector(Container):
    """A 1D array kept on the host and on a device, copied lazily; with ``distribution=``
    (``ps.dist.block(devices)``, ...) spread over several devices (:mod:`parskel.dist`).

    >>> v = ps.Vector(np.arange(5, dtype=np.float32))
    >>> w = ps.Vector(size=1000, dtype=np.int32)          # zeros
    >>> len(v), w.numpy().sum()
    (5, np.int64(0))
    """

    ndim = 1
    __slots__ = ()

    def __init__(
        self,
        data: Any = None,
        *,
        dtype: DTypeLike | None = None,
        size: int | None = None,
        device: Device | str | None = None,
        copy: bool = True,
        distribution: Any = None,
    ) -> None:
        super().__init__(data, dtype=dtype, shape=None if size is None else (size,), device=device, copy=copy)
