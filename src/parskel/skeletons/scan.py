"""Scan: prefix combinations, inclusive or exclusive, with the total (seed 004, section 2.4.1).
Any size, in as many levels as needed; kernel template ``kernels/skeletons/scan.cl``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..containers.base import Container
from ..errors import ShapeError, boolean
from ..runtime import Buffer, Device, Kernel, round_to_multiple
from .arguments import bind_extras, mark_written
from .base import Skeleton
from .identity import identity_buffer, identity_glue
from .program import build, build_grouped, check_size
from .reduce import operator

TEMPLATE = "skeletons/scan.cl"
PER_ITEM = 4


@dataclass(frozen=True)
class _Plan:
    blocks: Kernel
    add: Kernel
    group: int
    identity: Buffer


class Scan(Skeleton):
    """``Scan(op, identity, inclusive=False)(a, *extra) -> (Vector, total)``.

    Element i of the result combines elements 0..i-1 (exclusive) or 0..i (inclusive) in index
    order, so ``op`` must be associative but need not be commutative. ``total`` is the
    combination of all elements, a NumPy scalar (or record).

    >>> prefix = ps.Scan("int add(int a, int b) { return a + b; }", identity=0)
    >>> positions, count = prefix(ps.Vector(np.array([1, 0, 1, 1], np.int32)))
    >>> positions.numpy(), count
    (array([0, 1, 1, 2], dtype=int32), np.int32(3))
    """

    name = "Scan"

    def __init__(self, source: str, identity: Any = 0, *, inclusive: bool = False) -> None:
        super().__init__()
        self.op, self.dtype = operator(source, self.name)
        self.identity = identity
        self.inclusive = boolean(inclusive, "Scan: inclusive")

    def _build(self, dev: Device) -> _Plan:
        op = self.op
        glue = (
            f"#define PS_T {op.return_type}\n"
            f"#define PS_OP(a, b) {op.call(['(a)', '(b)'], [], 'ps_x')}\n"
            f"#define PS_EXTRA_PARAMS{op.extra_params('ps_x')}\n"
            f"#define PS_PER_ITEM {PER_ITEM}\n" + identity_glue(self.identity)
        )
        program, group = build_grouped(
            dev,
            lambda L: build(dev, self.name, TEMPLATE, [op], [self.dtype], glue + f"#define PS_WG {L}\n"),
            ("ps_scan_blocks", "ps_scan_add"),
        )
        blocks, add = program.kernel("ps_scan_blocks"), program.kernel("ps_scan_add")
        ident = identity_buffer(self.identity, self.dtype, dev, program, "Scan identity")
        return _Plan(blocks, add, group, ident)

    def __call__(self, a: Container, *extra: Any, out: Container | None = None) -> tuple[Container, Any]:
        (a,) = self._inputs([a], ["the input"])
        if a.c_type != self.op.return_type:
            raise ShapeError(f"Scan: the operator works on {self.op.return_type!r}, the input holds {a.c_type!r}")
        dev = a.device
        plan = self._plan(dev, lambda: self._build(dev))
        check_size(a.size, self.name)
        args, written = bind_extras(self.op, extra, dev)
        if any(a is w for w in written):
            raise ShapeError("Scan: a container passed for writing must not also be the input")
        result = self._output(out, a, a.shape, self.dtype, [a], may_alias=True)
        src = a.to_device()
        dst = result.writable_buffer() if out is not None else result.output_buffer()
        total = self._scan(dev, plan, src, dst, a.size, self.inclusive, args)
        result.mark_device_written()
        mark_written(written)
        host = np.empty(1, dtype=self.dtype)
        dev.download(total, host)
        return result, host[0]

    def _scan(
        self, dev: Device, plan: _Plan, src: Buffer, dst: Buffer, n: int, inclusive: bool, args: list[Any]
    ) -> Buffer:
        """Scan ``n`` elements of ``src`` into ``dst``; returns a buffer holding their total."""
        if n == 0:
            return plan.identity
        L = plan.group
        block = L * PER_ITEM
        groups = -(-n // block)
        item = self.dtype.itemsize
        sums = dev.alloc(groups * item)
        dev.launch(plan.blocks, groups * L, L, src, dst, sums, plan.identity, np.uint32(n), np.uint32(inclusive), *args)
        if groups == 1:
            return sums
        offsets = dev.alloc(groups * item)
        total = self._scan(dev, plan, sums, offsets, groups, False, args)
        dev.launch(plan.add, round_to_multiple(n, L), L, dst, offsets, np.uint32(n), np.uint32(block), *args)
        return total
