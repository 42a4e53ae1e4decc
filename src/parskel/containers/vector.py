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

    Elements may be OpenCL vector types: ``dtype=ps.float4`` (``ps.uchar4``, ``ps.double2``, ...;
    2, 3, 4, 8 or 16 lanes), from records of that dtype or from an array whose last axis holds
    the lanes. User functions in C take and return them by their OpenCL names, with OpenCL's
    operators and lanes (``.x`` .. ``.w``, ``.s0`` .. ``.sf``) on both backends; 3 lanes are
    stored in the space of 4, as OpenCL stores them (``ps.float3`` is 16 bytes).

    >>> p = ps.Vector(np.ones((3, 4), np.float32), dtype=ps.float4)
    >>> ps.Map("float4 f(float4 p) { return p * 2.0f + (float4)(0.0f, 0.0f, 0.0f, p.x); }")(p).numpy()["w"]
    array([3., 3., 3.], dtype=float32)
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
