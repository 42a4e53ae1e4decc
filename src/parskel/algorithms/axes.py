"""Operations along one axis of an n-dimensional array (``ps.sort(a, axis=-1)``,
``ps.scan(a, axis=0)``): the axis is checked as NumPy checks it, then moved last, so that the
kernels see rows of one length one after another, and the result is moved back.

>>> rows, restore = to_rows(np.arange(6).reshape(2, 3), 0)
>>> rows.shape
(3, 2)
>>> restore(rows).shape
(2, 3)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ArgumentError, ShapeError


def normalized(axis: Any, ndim: int, what: str) -> int:
    """``axis`` as an index from 0, for an array of ``ndim`` dimensions; a clear error otherwise."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise ArgumentError(f"{what}: axis must be an int or None, got {axis!r}")
    axis = int(axis)
    if not -ndim <= axis < ndim:
        if ndim == 0:
            raise ShapeError(f"{what}: a 0-dimensional array has no axis {axis}; pass axis=None")
        raise ShapeError(
            f"{what}: axis {axis} is out of bounds for an array of {ndim} dimensions (-{ndim} to {ndim - 1})"
        )
    return axis % ndim


def to_rows(array: Any, axis: int) -> tuple[Any, Callable[[Any], Any]]:
    """``array`` with ``axis`` moved last, as a C-contiguous 2D array of rows (a copy unless the
    axis is already last), and the function that gives a result of that 2D shape (or of that
    shape with another dtype) back in ``array``'s layout, C-contiguous."""
    # like=: a device array (CuPy) stays one, as np.moveaxis keeps it through its dispatch
    moved = np.moveaxis(array, axis, -1) if axis != array.ndim - 1 else array
    shape = moved.shape
    count = int(np.prod(shape[:-1], dtype=np.int64))
    rows = np.ascontiguousarray(moved, like=moved).reshape(count, shape[-1])

    def restore(result: Any) -> Any:
        back = result.reshape(shape)
        return back if axis == array.ndim - 1 else np.ascontiguousarray(np.moveaxis(back, -1, axis), like=back)

    return rows, restore
