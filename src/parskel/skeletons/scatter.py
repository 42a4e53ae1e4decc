"""Scatter (write element i to position p[i]) and its inverse Gather (read element p[i]): the
permute step of seed 004's radix sort in one call, where SkelCL needed a Map with the output as
an extra argument and SkePU a 3-step workaround. Template ``kernels/skeletons/scatter.cl``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..containers.base import Container, shape_of
from ..containers.vector import Vector
from ..errors import DTypeError, ShapeError, UserFunctionError
from ..runtime import Device, Kernel, round_to_multiple
from .arguments import bind_extras, mark_written
from .base import Skeleton
from .program import build, check_size, group_size
from .userfn import UserFunction, UserSource, dtype_of

TEMPLATE = "skeletons/scatter.cl"


@dataclass(frozen=True)
class _Plan:
    kernel: Kernel
    group: int
    out_dtype: np.dtype


class _Permute(Skeleton):
    kernel_name = ""

    def __init__(self, source: UserSource | None = None) -> None:
        super().__init__()
        self.fn = None if source is None else UserFunction(source, self.name, "user", 1)
        if self.fn is not None:
            self.fn.check_indices(1)
            if self.fn.return_type == "void":
                raise UserFunctionError(f"{self.name}: the user function must return the element to write")

    def _build(self, dev: Device, values: Container, positions: Container) -> _Plan:
        fn = self.fn
        if fn is None:
            out_dtype, apply, extra_params, functions = values.dtype, "(x)", "", []
        else:
            fn.check_element(0, values.c_type, "the values")
            out_dtype = dtype_of(fn.return_type, fn.where)
            apply = fn.call(["(x)"], ["ps_i"], "ps_x")
            extra_params, functions = fn.extra_params("ps_x"), [fn]
        out_t = values.c_type if fn is None else fn.return_type
        glue = (
            f"#define PS_IN_T {values.c_type}\n#define PS_OUT_T {out_t}\n#define PS_P_T {positions.c_type}\n"
            f"#define PS_APPLY(x) {apply}\n#define PS_EXTRA_PARAMS{extra_params}\n"
        )
        program = build(dev, self.name, TEMPLATE, functions, [values.dtype, out_dtype], glue)
        kernel = program.kernel(self.kernel_name)
        return _Plan(kernel, group_size(kernel, dev), out_dtype)

    def _permute(self, values: Any, positions: Any, extra: tuple[Any, ...], out: Any, out_size: int) -> Container:
        values, positions = self._inputs([values, positions], ["values", "positions"], same_shape=False)
        if values.ndim != 1 or positions.ndim != 1:
            raise ShapeError(f"{self.name}: values and positions must be Vectors")
        if positions.dtype.kind not in "iu":
            raise DTypeError(f"{self.name}: positions must be integers, not {positions.dtype}")
        if self.kernel_name == "ps_scatter" and len(positions) != len(values):
            raise ShapeError(
                f"{self.name}: each value needs one position; got {len(values)} values and {len(positions)} positions"
            )
        dev = values.device
        plan = self._plan((dev, values.dtype, positions.dtype), lambda: self._build(dev, values, positions))
        args, written = ([], []) if self.fn is None else bind_extras(self.fn, extra, dev)
        if self.fn is None and extra:
            raise UserFunctionError(f"{self.name} without a user function takes no extra arguments")
        n = len(positions)
        check_size(max(n, len(values), out_size), self.name)
        result = self._output(out, values, (out_size,), plan.out_dtype, [values, positions, *written], may_alias=False)
        if out is None:
            dev.fill(result.output_buffer(), np.uint8(0))
        limit = len(values) if self.kernel_name == "ps_gather" else out_size
        bad = dev.alloc(4)
        dev.fill(bad, np.int32(0))
        dev.launch(
            plan.kernel,
            round_to_multiple(n, plan.group),
            plan.group,
            values.to_device(),
            positions.to_device(),
            result.writable_buffer(),
            bad,
            np.uint32(n),
            np.uint32(limit),
            *args,
        )
        result.mark_device_written()
        mark_written(written)
        flag = np.zeros(1, dtype=np.int32)
        dev.download(bad, flag)
        if flag[0]:
            raise ShapeError(f"{self.name}: a position lies outside 0..{limit - 1}")
        return result


class Scatter(_Permute):
    """``Scatter(f=None)(values, positions, *extra, out=None, size=None)``: ``out[p[i]] = f(values[i])``.

    A new result has ``size`` elements (default ``len(values)``), zero where nothing is written.
    Positions outside the result raise :class:`ShapeError`; with repeated positions one of the
    writes wins.

    >>> values = ps.Vector(np.array([10, 20, 30], np.int32))
    >>> ps.Scatter()(values, ps.Vector(np.array([2, 0, 1], np.uint32))).numpy()
    array([20, 30, 10], dtype=int32)
    >>> ps.Scatter(lambda x: x + 1)(values, ps.Vector(np.array([2, 0, 1], np.uint32))).numpy()
    array([21, 31, 11], dtype=int32)
    """

    name = "Scatter"
    kernel_name = "ps_scatter"

    def __call__(
        self, values: Vector, positions: Vector, *extra: Any, out: Vector | None = None, size: int | None = None
    ) -> Container:
        if out is not None:
            size = len(out)
        elif size is None:
            size = len(values)
        else:
            (size,) = shape_of(size, f"{self.name}: size")
        return self._permute(values, positions, extra, out, size)


class Gather(_Permute):
    """``Gather(f=None)(values, positions, *extra, out=None)``: ``out[i] = f(values[p[i]])``, the
    inverse of Scatter; the result has ``len(positions)`` elements."""

    name = "Gather"
    kernel_name = "ps_gather"

    def __call__(self, values: Vector, positions: Vector, *extra: Any, out: Vector | None = None) -> Container:
        return self._permute(values, positions, extra, out, len(positions))
