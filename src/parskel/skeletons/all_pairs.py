"""AllPairs: every row of A with every column of B through a user zip and reduce (seed 004,
SkelCL's AllPairs); with multiply and add it is matrix multiplication. Template
``kernels/skeletons/all_pairs.cl``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ..containers.base import Container
from ..containers.matrix import Matrix
from ..errors import ShapeError
from ..runtime import Buffer, Device, Kernel, round_to_multiple
from .arguments import bind_extras, mark_written
from .base import Skeleton
from .identity import identity_buffer, identity_glue
from .program import build, check_size, group_size
from .reduce import operator
from .userfn import UserFunction, UserSource

TEMPLATE = "skeletons/all_pairs.cl"


@dataclass(frozen=True)
class _Plan:
    kernel: Kernel
    side: int
    identity: Buffer


class AllPairs(Skeleton):
    """``AllPairs(zip, reduce, identity)(A, B, *extra)``: the Matrix whose element ``C[i, j]``
    folds ``zip(A[i, l], B[l, j])`` for l = 0 to k - 1, in order, into ``identity`` with ``reduce``.

    ``zip`` may declare up to three index parameters (row, column, and l). Extra
    arguments go to ``zip`` first, the rest to ``reduce``.

    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> matmul = ps.AllPairs(lambda a, b: a * b, lambda x, y: x + y, identity=0)
    >>> matmul(ps.Matrix(a), ps.Matrix(a.T.copy())).numpy()
    array([[ 5., 14.],
           [14., 50.]], dtype=float32)
    >>> matmul = ps.AllPairs("float mul(float a, float b) { return a * b; }",
    ...                      "float add(float x, float y) { return x + y; }", identity=0)
    >>> matmul(ps.Matrix(a), ps.Matrix(a.T.copy())).numpy()
    array([[ 5., 14.],
           [14., 50.]], dtype=float32)
    """

    name = "AllPairs"

    def __init__(self, zip_source: UserSource, reduce_source: UserSource, identity: Any = 0) -> None:
        super().__init__()
        self.zip = UserFunction(zip_source, self.name, "zip", 2)
        self.zip.check_indices(3)
        self.op, self.dtype = operator(reduce_source, self.name)
        if self.zip.return_type != self.op.return_type:
            raise ShapeError(f"AllPairs: zip returns {self.zip.return_type!r}, reduce works on {self.op.return_type!r}")
        self.identity = identity

    def _build(self, dev: Device, a: Container, b: Container) -> _Plan:
        self.zip.check_element(0, a.c_type, "A")
        self.zip.check_element(1, b.c_type, "B")
        glue = (
            f"#define PS_T {self.op.return_type}\n#define PS_A_T {a.c_type}\n#define PS_B_T {b.c_type}\n"
            f"#define PS_ZIP(a, b) {self.zip.call(['(a)', '(b)'], ['ps_row', 'ps_col', 'ps_l'], 'ps_z')}\n"
            f"#define PS_OP(x, y) {self.op.call(['(x)', '(y)'], [], 'ps_x')}\n"
            f"#define PS_EXTRA_PARAMS{self.zip.extra_params('ps_z')}{self.op.extra_params('ps_x')}\n"
            + identity_glue(self.identity)
        )
        program = build(dev, self.name, TEMPLATE, [self.zip, self.op], [a.dtype, b.dtype, self.dtype], glue)
        kernel = program.kernel("ps_all_pairs")
        side = 1 << ((group_size(kernel, dev).bit_length() - 1) // 2)
        return _Plan(kernel, side, identity_buffer(self.identity, self.dtype, dev, program, "AllPairs identity"))

    def __call__(self, a: Matrix, b: Matrix, *extra: Any, out: Matrix | None = None) -> Container:
        left, right = self._inputs([a, b], ["A", "B"], same_shape=False)
        a, b = cast(Matrix, left), cast(Matrix, right)
        if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
            raise ShapeError(f"AllPairs: A {a.shape} and B {b.shape} must be matrices with A's columns == B's rows")
        dev = a.device
        plan = self._plan((dev, a.dtype, b.dtype), lambda: self._build(dev, a, b))
        n, k = a.shape
        m = b.shape[1]
        check_size(max(a.size, b.size, n * m), self.name)
        nz = len(self.zip.extras)
        zargs, zwritten = bind_extras(self.zip, extra[:nz], dev)
        oargs, owritten = bind_extras(self.op, extra[nz:], dev)
        written = zwritten + owritten
        result = self._output(out, a, (n, m), self.dtype, [a, b, *written], may_alias=False)
        dst = result.writable_buffer() if out is not None else result.output_buffer()
        s = plan.side
        dev.launch(
            plan.kernel,
            (round_to_multiple(m, s), round_to_multiple(n, s)),
            (s, s),
            a.to_device(),
            b.to_device(),
            dst,
            plan.identity,
            np.uint32(n),
            np.uint32(k),
            np.uint32(m),
            *zargs,
            *oargs,
        )
        result.mark_device_written()
        mark_written(written)
        return result
