"""Scan: prefix combinations, inclusive or exclusive, with the total (seed 004, section 2.4.1).
Any size, in one launch; kernel template ``kernels/skeletons/scan.cl``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..containers.base import Container
from ..errors import ShapeError, boolean
from ..runtime import Buffer, Device, Kernel
from ..runtime.traits import aligned, lookback_defines
from .arguments import bind_extras, mark_written
from .base import Skeleton
from .identity import identity_buffer, identity_glue
from .program import build, build_grouped, build_warped, check_size
from .reduce import extra_args, load_shape, operator
from .userfn import UserSource

TEMPLATE = "skeletons/scan.cl"


@dataclass(frozen=True)
class _Plan:
    kernel: Kernel
    group: int
    items: int
    identity: Buffer


class Scan(Skeleton):
    """``Scan(op, identity, inclusive=False)(a, *extra) -> (Vector, total)``.

    Element i of the result combines elements 0..i-1 (exclusive) or 0..i (inclusive) in index
    order, so ``op`` must be associative but need not be commutative. ``total`` is the
    combination of all elements, a NumPy scalar (or record). One launch: each work-group scans
    a tile and finds its offset by a decoupled look-back (``kernels/scan/single_pass.h``).

    >>> prefix = ps.Scan(lambda a, b: a + b, identity=0)
    >>> positions, count = prefix(ps.Vector(np.array([1, 0, 1, 1], np.int32)))
    >>> positions.numpy(), count
    (array([0, 1, 1, 2], dtype=int32), np.int32(3))
    >>> ps.Scan("int add(int a, int b) { return a + b; }", identity=0, inclusive=True)(
    ...     ps.Vector(np.array([1, 0, 1, 1], np.int32)))[0].numpy()
    array([1, 1, 2, 3], dtype=int32)
    """

    name = "Scan"

    def __init__(self, source: UserSource, identity: Any = 0, *, inclusive: bool = False) -> None:
        super().__init__()
        self.op, self.dtype = operator(source, self.name)
        self.identity = identity
        self.inclusive = boolean(inclusive, "Scan: inclusive")

    def _build(self, dev: Device, vec_ok: bool) -> _Plan:
        op = self.op
        items, vec = load_shape(self.dtype, vec_ok)
        glue = (
            f"#define PS_T {op.return_type}\n#define PS_VT {op.return_type}{vec}\n"
            f"#define PS_OP(a, b) {op.call(['(a)', '(b)'], [], 'ps_x')}\n"
            f"#define PS_EXTRA_PARAMS {op.extra_params('ps_x')}\n#define PS_EXTRA_ARGS {extra_args(op, 'ps_x')}\n"
            f"#define ITEMS {items}\n#define VEC {vec}\n#define INCLUSIVE {int(self.inclusive)}\n"
            + "".join(f"#define {k} {v}\n" for k, v in lookback_defines(dev).items())
            + identity_glue(self.identity)
        )
        program, group = build_grouped(
            dev,
            lambda L: build_warped(
                dev, lambda g: build(dev, self.name, TEMPLATE, [op], [self.dtype], g), glue + f"#define PS_WG {L}\n"
            ),
            ("ps_scan",),
        )
        ident = identity_buffer(self.identity, self.dtype, dev, program, "Scan identity")
        return _Plan(program.kernel("ps_scan"), group, items, ident)

    def __call__(self, a: Container | np.ndarray, *extra: Any, out: Any = None) -> tuple[Container | np.ndarray, Any]:
        if isinstance(a, np.ndarray):  # a host array, in chunks where that pays
            from .pipelined import scan

            return scan(self, a, extra, out)
        (a,) = self._inputs([a], ["the input"])
        if a.c_type != self.op.return_type:
            raise ShapeError(f"Scan: the operator works on {self.op.return_type!r}, the input holds {a.c_type!r}")
        dev = a.device
        check_size(a.size, self.name)
        args, written = bind_extras(self.op, extra, dev)
        if any(a is w for w in written):
            raise ShapeError("Scan: a container passed for writing must not also be the input")
        result = self._output(out, a, a.shape, self.dtype, [a], may_alias=True)
        src = a.to_device()
        dst = result.writable_buffer() if out is not None else result.output_buffer()
        vec_ok = aligned(src, 16) and aligned(dst, 16)
        plan = self._plan((dev, vec_ok), lambda: self._build(dev, vec_ok))
        total = self._scan(dev, plan, src, dst, a.size, args)
        result.mark_device_written()
        mark_written(written)
        host = np.empty(1, dtype=self.dtype)
        dev.download(total, host, offset=total_offset(a.size, plan, self.dtype))
        return result, host[0]

    def _scan(self, dev: Device, plan: _Plan, src: Buffer, dst: Buffer, n: int, args: list[Any]) -> Buffer:
        """Scan ``n`` elements of ``src`` into ``dst``; returns the buffer that holds their total
        at :func:`total_offset`."""
        if n == 0:
            return plan.identity
        L = plan.group
        tiles = -(-n // (L * plan.items))
        state = dev.alloc((tiles + 1) * 4)
        dev.fill(state, np.uint32(0))
        values = dev.alloc(2 * tiles * self.dtype.itemsize)
        dev.launch(
            plan.kernel, tiles * L, L, src, dst, state, values, plan.identity, np.uint32(n), np.uint32(tiles), *args
        )
        return values


def total_offset(n: int, plan: _Plan, dtype: np.dtype) -> int:
    """Where the total of ``n`` scanned elements is: the last tile's inclusive prefix (byte 0 of
    the identity buffer when there is none)."""
    if n == 0:
        return 0
    tiles = -(-n // (plan.group * plan.items))
    return (2 * tiles - 1) * dtype.itemsize
