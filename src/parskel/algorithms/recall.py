"""What a call on CuPy arrays ran, remembered by the signature of its arguments.

``parskel.sort``, ``parskel.scan`` and ``parskel.matmul`` on CuPy arrays check their
arguments, select the device and dispatch among variants before the first kernel is enqueued:
tens of microseconds of Python that the GPU waits through when the call is timed alone (CUB's
C++ has none). A loop calls them on arrays of one shape and dtype time after time, and the
answer is the same each time. So the first call of a signature goes the whole way and leaves
here what it ran (the device, the variant and its parameter values, as a function of the
arrays); later calls of that signature run it at once.

A signature holds everything the choice depended on: each array's shape, dtype and GPU, and
the call's other arguments. Only calls on exact CuPy arrays in C order that ran through the
CUDA backend are remembered; other arrays (PyTorch tensors, views that need a copy) always go
the whole way. What was remembered is dropped when a variant is registered, or the
preferences or the tuning database change (:func:`parskel.runtime.memo.choices`), and by a
call that fails in a way the dispatch would have recovered from (the whole way then tries the
variants again).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from ..runtime.arrays import _cupy_array
from ..runtime.memo import choices
from .registry import RECOVERABLE, Variant

#: the most signatures remembered per function; more empties its memory
MOST = 256

Plan = Callable[..., Any]
#: what :meth:`Recall.replayed` gives where it has nothing to run
MISSED: Any = object()
R = TypeVar("R")


class Recall:
    """The plans of one public function, per signature.

    >>> recall = Recall()
    >>> recall.plan(("sig",)) is None
    True
    >>> recall.keep(("sig",), lambda x: x + 1)
    >>> recall.plan(("sig",))(1)
    2
    >>> recall.forget(("sig",)); recall.plan(("sig",)) is None
    True
    """

    __slots__ = ("_plans",)

    def __init__(self) -> None:
        self._plans: dict[Hashable, tuple[int, Plan]] = {}

    def plan(self, key: Hashable | None) -> Plan | None:
        """The plan kept for ``key``, unless it is stale (or ``key`` is None: nothing to recall)."""
        if key is None:
            return None
        try:
            found = self._plans.get(key)
        except TypeError:  # an argument that cannot be hashed: never kept
            return None
        if found is None or found[0] != choices():
            return None
        return found[1]

    def keep(self, key: Hashable | None, plan: Plan) -> None:
        """Keep ``plan`` for ``key`` (nothing where ``key`` is None or cannot be hashed)."""
        if key is None:
            return
        try:
            hash(key)
        except TypeError:
            return
        if len(self._plans) >= MOST:
            self._plans.clear()
        self._plans[key] = (choices(), plan)

    def forget(self, key: Hashable) -> None:
        """Drop what was kept for ``key``."""
        self._plans.pop(key, None)

    def replayed(self, key: Hashable | None, *arrays: Any) -> Any:
        """The result of the plan kept for ``key`` on ``arrays``, or :data:`MISSED` where none
        is kept, or where it failed as a variant may (it is then forgotten, so that the call
        goes the whole way, which tries the variants again).

        >>> recall = Recall()
        >>> recall.replayed(("sig",), 1) is MISSED
        True
        >>> recall.keep(("sig",), lambda x: x + 1); recall.replayed(("sig",), 1)
        2
        """
        plan = self.plan(key)
        if plan is None:
            return MISSED
        try:
            return plan(*arrays)
        except RECOVERABLE:
            assert key is not None
            self.forget(key)
            return MISSED


def signature(array: Any) -> tuple[Any, ...] | None:
    """What a call's plan depends on in ``array``: its shape, dtype and GPU, for an exact CuPy
    array in C order (None for anything else; ``()`` for None).

    >>> signature(None), signature(np.zeros(3))
    ((), None)
    """
    if array is None:
        return ()
    if type(array) is not _cupy_array() or not array.flags.c_contiguous:
        return None
    return (array.shape, array.dtype, array.data.device_id)


def runs_on(device: Any) -> bool:
    """Whether a plan on CuPy arrays can be kept for a call that ran on ``device`` (a CUDA device:
    the arrays were used where they are)."""
    return bool(device.backend == "cuda")


def call_key(arrays: Sequence[Any], arguments: tuple[Any, ...], params: Mapping[str, Any]) -> Hashable | None:
    """What a call on ``arrays`` (CuPy arrays or None) with its other ``arguments`` and
    tunables ``params`` is remembered by; None where an array has no :func:`signature`. Each
    argument counts with its type: ``256.0`` and ``False`` equal ``256`` and ``0``, and a call
    that the whole way refuses for them must not find the plan of one it accepted.

    >>> call_key([np.zeros(3)], (True,), {})
    >>> call_key([None], (0,), {"WG": 256}) == call_key([None], (False,), {"WG": 256.0})
    False
    """
    shapes = tuple([signature(a) for a in arrays])  # (lists: a call on a GPU waits on this)
    if None in shapes:
        return None
    return (
        shapes,
        tuple([(type(a), a) for a in arguments]),
        tuple([(name, type(value), value) for name, value in params.items()]) if params else (),
    )


def recording(
    call: Callable[[Variant, dict[str, int]], R], ran: list[tuple[Variant, dict[str, int]]]
) -> Callable[[Variant, dict[str, int]], R]:
    """``call`` (a dispatch's), also appending to ``ran`` the variant and parameter values of
    each of its calls that returned: what the plan of a later call runs."""

    def recorded(chosen: Variant, values: dict[str, int]) -> R:
        result = call(chosen, values)
        ran.append((chosen, values))
        return result

    return recorded


def rerun(device: Any, chosen: Variant, values: dict[str, int]) -> Plan:
    """The plan that runs ``chosen`` with ``values`` on a call's arrays, as the dispatch did."""

    def plan(*arrays: Any) -> Any:
        with device.current():
            return chosen.run(device, *arrays, **values)

    return plan
