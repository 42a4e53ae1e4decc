"""MapReduce: reduce(map(a_i)) fused into one pass, without an intermediate container
(seed 004, SkePU's MapReduce). Kernel template: ``kernels/skeletons/reduce.cl``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..containers.base import Container
from .reduce import Reduction
from .userfn import UserFunction, UserSource


class MapReduce(Reduction):
    """``MapReduce(f, op, identity)(a, *extra)``: ``op``-reduction of ``f(a[i], [index], ...)``.

    Extra arguments go to ``f`` first (as many as it declares), the rest to ``op``;
    ``commutative`` as for :class:`Reduce`.

    >>> sumsq = ps.MapReduce(lambda x: x * x, lambda a, b: a + b, identity=0)
    >>> sumsq(ps.Vector(np.arange(4, dtype=np.float32)))
    np.float32(14.0)
    >>> sumsq = ps.MapReduce("float f(float x) { return x * x; }",
    ...                      "float add(float a, float b) { return a + b; }", identity=0)
    >>> sumsq(ps.Vector(np.arange(4, dtype=np.float32)))
    np.float32(14.0)
    """

    name = "MapReduce"

    def __init__(
        self, map_source: UserSource, reduce_source: UserSource, identity: Any = 0, *, commutative: bool | None = None
    ) -> None:
        mapper = UserFunction(map_source, self.name, "map", 1)
        super().__init__(reduce_source, identity, mapper, commutative)

    def __call__(self, a: Container | np.ndarray, *extra: Any, out: Container | None = None) -> Any:
        return self._reduce(a, extra, out)
