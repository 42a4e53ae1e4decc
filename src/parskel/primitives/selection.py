"""Selection: stream compaction by a user predicate (``copy_if``, ``partition_if`` and the
reusable :class:`Select`), NumPy's ``partition`` and ``argpartition``, and ``top_k``.

A predicate is a Python function or OpenCL C source of one element, as skeletons take them
(it may return a bool); it runs as a ``ps.Map`` to flags, which parskel's scan turns into the
elements' places (``kernels/primitives/compact.cl``). The kept elements keep their order.
"""

from __future__ import annotations

import operator
from collections.abc import Hashable
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from ..algorithms.axes import normalized, to_rows
from ..algorithms.keys import check_sortable
from ..algorithms.operands import prepare
from ..algorithms.ordering import sort_rows
from ..containers.base import Container
from ..errors import ArgumentError, ShapeError, UserFunctionError
from ..runtime import Device
from ..runtime.arrays import is_device_array
from ..skeletons import Map, function
from ..skeletons.userfn import UserFunction, UserSource
from .base import as_container, compact


class Select:
    """Stream compaction by a user predicate, built once and called many times (as a skeleton).

    ``Select(pred)(a)`` is ``a[pred(a)]`` for a 1D array or Vector: the elements for which
    ``pred`` is true, in order (CUB's ``DeviceSelect::If``, Thrust's ``copy_if``);
    :meth:`partition` also gives the others after them. ``pred`` is a Python function or OpenCL
    C source taking one element and returning a bool or a number (true where nonzero).

    >>> positive = ps.Select("bool f(float x) { return x > 0; }")
    >>> positive(np.array([1.5, -2.0, 3.0], dtype=np.float32))
    array([1.5, 3. ], dtype=float32)
    """

    def __init__(self, predicate: UserSource) -> None:
        self._predicate = predicate
        self._flags: dict[Hashable, Map] = {}

    def _flag_map(self, dtype: np.dtype, device: Device) -> Map:
        """The Map from elements to uint flags: the predicate, wrapped by a function that calls it."""
        key = (dtype, device.info.fp64)
        found = self._flags.get(key)
        if found is None:
            if callable(self._predicate):
                source = function(self._predicate).source(dtype, fp64=device.info.fp64)
            else:
                source = self._predicate
            fn = UserFunction(source, "Select", "predicate", 1)
            if fn.extras or fn.index_positions:
                raise UserFunctionError(
                    f"Select: the predicate {fn.signature.name!r} takes one element and nothing else"
                )
            element = fn.elements[0].type
            wrapper = f"uint ps_select_flag({element} x) {{ return {fn.signature.name}(x) ? 1u : 0u; }}\n"
            found = self._flags[key] = Map(source + "\n" + wrapper)
        return found

    def _run(self, a: Any, partition: bool, device: Device | str | None) -> tuple[Any, int]:
        vector, returned = as_container(a, device, "Select")
        flags = self._flag_map(vector.dtype, vector.device)(vector)
        assert isinstance(flags, Container)
        dev, n, source = vector.device, vector.size, vector.to_device()
        # the result is of the input's kind: a device array's is one of its device, else a NumPy array
        if is_device_array(a) and not isinstance(a, Container):
            like = dev.view(source, vector.shape, vector.dtype)
        else:
            like = np.empty(0, vector.dtype)
        out, count = compact(dev, source, flags.to_device(), n, like, partition=partition)
        return returned(out), count

    def __call__(self, a: Any, *, device: Device | str | None = None) -> Any:
        return self._run(a, False, device)[0]

    def partition(self, a: Any, *, device: Device | str | None = None) -> tuple[Any, int]:
        """All elements of ``a``, those the predicate accepts first, then the others, each in
        their order (Thrust's ``stable_partition``), and how many it accepts."""
        return self._run(a, True, device)

    def __repr__(self) -> str:
        return "ps.Select(...)"


def copy_if(a: Any, predicate: UserSource, *, device: Device | str | None = None) -> Any:
    """The elements of the 1D ``a`` for which ``predicate`` is true, in order (see :class:`Select`).

    >>> ps.copy_if(np.arange(10, dtype=np.int32), "bool odd(int x) { return x % 2; }")
    array([1, 3, 5, 7, 9], dtype=int32)
    """
    return Select(predicate)(a, device=device)


def partition_if(a: Any, predicate: UserSource, *, device: Device | str | None = None) -> tuple[Any, int]:
    """All elements of the 1D ``a``, those for which ``predicate`` is true first, then the
    others, each in order, and how many are true (see :meth:`Select.partition`).

    >>> ps.partition_if(np.arange(6, dtype=np.int32), "bool odd(int x) { return x % 2; }")
    (array([1, 3, 5, 0, 2, 4], dtype=int32), 3)
    """
    return Select(predicate).partition(a, device=device)


def _check_kth(a: Any, kth: Any, axis: int | None, what: str) -> None:
    """Raise unless every ``kth`` is a position along ``axis`` of ``a``."""
    shape = np.shape(a)
    length = int(np.prod(shape)) if axis is None else shape[normalized(axis, len(shape), what)]
    for k in np.atleast_1d(np.asarray(kth)).tolist():
        if isinstance(k, bool) or not isinstance(k, int):
            raise ArgumentError(f"{what}: kth must be integers, got {kth!r}")
        if not -length <= k < length:
            raise ShapeError(f"{what}: kth={k} is out of bounds for an axis of length {length}")


def partition(a: ArrayLike, kth: int | ArrayLike, axis: int | None = -1, *, device: Device | str | None = None) -> Any:
    """``a`` rearranged along ``axis`` so that the element at each ``kth`` position is where a
    sort would put it, smaller ones before and larger ones after, as ``np.partition``. parskel
    returns the sorted array, which is such an arrangement (NumPy leaves each side unordered).

    >>> ps.partition(np.array([7, 1, 5, 3]), 2)
    array([1, 3, 5, 7])
    """
    from ..algorithms.sorts import sort

    _check_kth(a, kth, axis, "partition")
    return sort(cast(Any, a), axis=axis, device=device)


def argpartition(
    a: ArrayLike, kth: int | ArrayLike, axis: int | None = -1, *, device: Device | str | None = None
) -> Any:
    """The positions that partition ``a`` (see :func:`partition`), as ``np.argpartition``: here
    the positions that sort it, stably.

    >>> ps.argpartition(np.array([7, 1, 5, 3]), 1)
    array([1, 3, 2, 0])
    """
    from ..algorithms.ordering import argsort

    _check_kth(a, kth, axis, "argpartition")
    return argsort(a, axis=axis, device=device)


def top_k(
    a: ArrayLike, k: int, axis: int = -1, *, largest: bool = True, device: Device | str | None = None
) -> tuple[Any, Any]:
    """The ``k`` largest elements of ``a`` along ``axis`` (the smallest with ``largest=False``),
    in order from the largest (smallest), and their positions (int64), as ``torch.topk``.
    Equal elements (-0.0 and +0.0 too) come in the order of their positions; NaNs count as the
    largest. Keys as ``ps.sort`` takes them.

    >>> ps.top_k(np.array([3, 9, 1, 9, 4]), 3)
    (array([9, 9, 4]), array([1, 3, 4]))
    """
    dev, (arr,), returned = prepare(device, a)
    check_sortable(arr, "top_k")
    axis = normalized(axis, arr.ndim, "top_k")
    length = arr.shape[axis]
    k = operator.index(k)
    if not 0 <= k <= length:
        raise ShapeError(f"top_k: k={k} must be between 0 and the axis' length {length}")
    rows, _ = to_rows(arr, axis)
    keys = rows + rows.dtype.type(0) if rows.dtype.kind == "f" else rows  # -0.0 as +0.0: equal, as in NumPy
    if largest:  # the stable ascending order of the reversed rows, read from its end: ties by position
        flipped = np.ascontiguousarray(keys[:, ::-1], like=keys)
        order = sort_rows(dev, flipped, None, sorted_keys=False, order=True)[2]
        positions = (length - 1) - order[:, ::-1][:, :k]
    else:
        positions = sort_rows(dev, keys, None, sorted_keys=False, order=True)[2][:, :k]
    positions = np.ascontiguousarray(positions, like=positions)
    values = np.take_along_axis(rows, positions, 1)
    moved = np.moveaxis(arr, axis, -1).shape[:-1] + (k,)

    def back(x: Any) -> Any:
        return np.ascontiguousarray(np.moveaxis(x.reshape(moved), -1, axis), like=x)

    return returned((back(values), back(positions)))
