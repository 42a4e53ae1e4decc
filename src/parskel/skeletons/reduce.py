"""Reduce: a_0 (+) a_1 (+) ... with an associative operator and its neutral element
(seed 004, section 2.4.1), over any number of elements in as many passes as needed.
Kernel template: ``kernels/skeletons/reduce.cl`` (shared with MapReduce)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..containers.base import Container
from ..errors import ShapeError, UserFunctionError
from ..runtime import Buffer, Device, Kernel
from .arguments import bind_extras, check_container, mark_written
from .base import Skeleton
from .identity import identity_buffer, identity_glue
from .program import build, build_grouped, check_size
from .userfn import UserFunction, dtype_of

TEMPLATE = "skeletons/reduce.cl"


def operator(source: str, skeleton: str, role: str = "reduce") -> tuple[UserFunction, np.dtype]:
    """Parse a binary operator ``T op(T a, T b)``; returns it with T's dtype."""
    fn = UserFunction(source, skeleton, role, 2)
    t = fn.return_type
    for p in fn.elements:
        if p.pointer or p.type != t:
            raise UserFunctionError(
                f"{fn.where} {fn.signature.name!r}: an operator takes two {t!r} operands and returns "
                f"{t!r}; parameter {p.name!r} is {p.type!r}"
            )
    fn.check_indices(0)
    return fn, dtype_of(t, fn.where)


@dataclass(frozen=True)
class _Plan:
    first: Kernel
    partials: Kernel
    group: int
    identity: Buffer
    result: Buffer  # one element, reused for results that go to the host at once


class Reduction(Skeleton):
    """Multi-pass reduction of a (possibly mapped) input; Reduce and MapReduce configure it."""

    def __init__(self, op_source: str, identity: Any, mapper: UserFunction | None = None) -> None:
        super().__init__()
        self.op, self.dtype = operator(op_source, self.name)
        self.identity = identity
        self.mapper = mapper
        if identity is None:
            raise UserFunctionError(f"{self.name}: give the operator's neutral element (identity=...)")

    def _functions(self) -> list[UserFunction]:
        return [self.mapper, self.op] if self.mapper else [self.op]

    def _build(self, dev: Device, a: Container) -> _Plan:
        op = self.op
        t = op.return_type
        if self.mapper is None:
            op_in = a.c_type
            if a.c_type != t:
                raise ShapeError(f"{self.name}: the operator works on {t!r}, the input holds {a.c_type!r}")
            load = "ps_in[i]"
            map_params = ""
        else:
            m = self.mapper
            m.check_indices(2 if a.ndim == 2 else 1)
            m.check_element(0, a.c_type, "the input")
            if m.return_type != t:
                raise ShapeError(
                    f"{self.name}: the map function returns {m.return_type!r}, the reduce operator works on {t!r}"
                )
            op_in = a.c_type
            indices = ["(i)"] if len(m.index_positions) < 2 else ["(i) / ps_cols", "(i) % ps_cols"]
            load = m.call(["ps_in[i]"], indices, "ps_m")
            map_params = m.extra_params("ps_m")
        glue = (
            f"#define PS_T {t}\n#define PS_IN_T {op_in}\n"
            f"#define PS_LOAD(i) {load}\n"
            f"#define PS_OP(a, b) {op.call(['(a)', '(b)'], [], 'ps_x')}\n"
            f"#define PS_MAP_EXTRA_PARAMS{map_params}\n"
            f"#define PS_OP_EXTRA_PARAMS{op.extra_params('ps_x')}\n" + identity_glue(self.identity)
        )
        program, group = build_grouped(
            dev,
            lambda L: build(
                dev, self.name, TEMPLATE, self._functions(), [a.dtype, self.dtype], glue + f"#define PS_WG {L}\n"
            ),
            ("ps_reduce_first", "ps_reduce_partials"),
        )
        first, partials = program.kernel("ps_reduce_first"), program.kernel("ps_reduce_partials")
        ident = identity_buffer(self.identity, self.dtype, dev, program, f"{self.name} identity")
        return _Plan(first, partials, group, ident, dev.alloc(self.dtype.itemsize))

    def _reduce(self, a: Any, extra: tuple[Any, ...], out: Container | None) -> Any:
        (a,) = self._inputs([a], ["the input"])
        dev = a.device
        plan = self._plan((dev, a.dtype, a.ndim), lambda: self._build(dev, a))
        n = a.size
        check_size(n, self.name)
        if self.mapper is None:
            args, written = bind_extras(self.op, extra, dev)
            op_args = args
        else:
            k = len(self.mapper.extras)
            margs, mwritten = bind_extras(self.mapper, extra[:k], dev)
            op_args, owritten = bind_extras(self.op, extra[k:], dev)
            args, written = margs + op_args, mwritten + owritten
        if out is not None:
            check_container(out, f"{self.name}: out", dev)
            if out.size != 1 or out.dtype != self.dtype:
                raise ShapeError(
                    f"{self.name}: out must hold one {self.dtype} element, got shape {out.shape} of {out.dtype}"
                )
            if out is a:
                raise ShapeError(f"{self.name}: out must not be the input")
        target = out.output_buffer() if out is not None else plan.result
        item = self.dtype.itemsize
        L = plan.group
        if n == 0:
            dev.copy(target, plan.identity, item)
        else:
            groups = min(-(-n // L), L * 4)
            chunk = -(-n // groups)
            groups = -(-n // chunk)
            dst = target if groups == 1 else dev.alloc(groups * item)
            dev.launch(
                plan.first,
                groups * L,
                L,
                a.to_device(),
                dst,
                plan.identity,
                np.uint32(n),
                np.uint32(chunk),
                np.uint32(a.shape[-1] if a.ndim == 2 else 1),
                *args,
            )
            while groups > 1:
                src, count = dst, groups
                groups = min(-(-count // L), L)
                chunk = -(-count // groups)
                groups = -(-count // chunk)
                dst = target if groups == 1 else dev.alloc(groups * item)
                dev.launch(
                    plan.partials, groups * L, L, src, dst, plan.identity, np.uint32(count), np.uint32(chunk), *op_args
                )
        mark_written(written)
        if out is not None:
            out.mark_device_written()
            return out
        host = np.empty(1, dtype=self.dtype)
        dev.download(target, host)
        return host[0]


class Reduce(Reduction):
    """``Reduce(op, identity)(a, *extra)``: the reduction of all elements with ``op``.

    ``op`` is ``T op(T a, T b)``, associative (not necessarily commutative); ``identity`` its
    neutral element, as a value (a number, a record for a struct) or as C source (``"(affine){1, 0}"``).
    Returns a NumPy scalar (a ``np.void`` record for structs); ``out=`` a one-element Vector
    keeps the result on the device.

    >>> total = ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)
    >>> total(ps.Vector(np.arange(100, dtype=np.float32)))
    np.float32(4950.0)
    """

    name = "Reduce"

    def __init__(self, source: str, identity: Any = 0) -> None:
        super().__init__(source, identity)

    def __call__(self, a: Container, *extra: Any, out: Container | None = None) -> Any:
        return self._reduce(a, extra, out)
