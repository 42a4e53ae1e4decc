"""MapArray: f(a_i, whole array b) with random access to b (seed 004, SkePU's MapArray).
Shares Map's kernel template: the array is the function's first extra parameter."""

from __future__ import annotations

from typing import Any

from ..containers.base import Container
from ..errors import UserFunctionError
from .map import Elementwise
from .userfn import UserSource


class MapArray(Elementwise):
    """``MapArray(f)(a, b, *extra)``: ``f(a[i], b, [index], *extra)`` with ``b`` a ``__global``
    pointer to the whole of container ``b``.

    >>> src = ps.Vector(np.array([1.5, 2.5, 3.5], np.float32))
    >>> positions = ps.Vector(np.array([2, 2, 0], np.uint32))
    >>> ps.MapArray(lambda p, src: src[p])(positions, src).numpy()
    array([3.5, 3.5, 1.5], dtype=float32)
    >>> permute = ps.MapArray("float f(uint p, __global const float *src) { return src[p]; }")
    >>> permute(positions, src).numpy()
    array([3.5, 3.5, 1.5], dtype=float32)
    """

    name = "MapArray"

    def __init__(self, source: UserSource) -> None:
        super().__init__(source, 1)
        if not self.fn.extras or not self.fn.extras[0].pointer:
            raise UserFunctionError(
                f"MapArray: after the element, {self.fn.signature.name!r} must take the array as "
                "a __global pointer parameter"
            )

    def __call__(self, a: Container, b: Container, *extra: Any, out: Container | None = None) -> Container | None:
        (a,) = self._inputs([a], ["the input"])
        return self._run([a], a, (b, *extra), out)
