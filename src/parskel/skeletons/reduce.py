"""Reduce: a_0 (+) a_1 (+) ... with an associative operator and its neutral element
(seed 004, section 2.4.1), over any number of elements in one launch: warps fold contiguous
chunks, and the last work-group to finish combines the groups' partials.
Kernel template: ``kernels/skeletons/reduce.cl`` (shared with MapReduce)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..containers.base import Container
from ..errors import ShapeError, UserFunctionError
from ..runtime import Buffer, Device, Kernel
from ..runtime.traits import aligned, groups_per_unit
from . import pipelined
from .arguments import bind_extras, check_container, mark_written
from .base import Skeleton
from .identity import identity_buffer, identity_glue
from .program import build, build_grouped, build_warped, check_size, tuned_group
from .userfn import UserFunction, UserSource, dtype_of

TEMPLATE = "skeletons/reduce.cl"
CPU_CHAINS = 8
#: The work-group size on CPUs unless tuned: each work-item folds a long run alone, and a group
#: of one combines without a tree (2^20 floats on 2 cores: 0.116 -> 0.097 ms; 2^18: 0.058 -> 0.027)
CPU_GROUP = 1


def chains(dev: Device, dtype: np.dtype) -> int:
    """Independent folds per work-item: several on CPUs, whose compilers may not reorder a
    floating-point or record operator and so would wait out its latency element by element;
    one for integers, whose folds the compiler vectorises itself, and on GPUs."""
    return CPU_CHAINS if dev.type == "cpu" and dtype.kind not in "iub" else 1


#: ``return a OP b;`` (or ``b OP a``), in parentheses or not
_BINARY = re.compile(r"return\s*\(?\s*(\w+)\s*([-+*&|^])\s*(\w+)\s*\)?\s*;")
#: ``return f(a, b);`` for a function f that commutes
_CALL = re.compile(r"return\s*(\w+)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*;")
_COMMUTING_CALLS = {"fmin", "fmax"}  # IEEE: the number when the other operand is NaN
_INTEGER_CALLS = {"min", "max"}  # on floats a NaN operand makes the order matter


def commutes(op: UserFunction) -> bool:
    """Whether ``op`` is seen to commute: its body is one ``+``, ``*``, ``&``, ``|`` or ``^``
    of its two operands, or ``fmin``/``fmax`` of them (``min``/``max`` for integers).
    Anything else counts as not commuting, which is always safe.

    >>> commutes(operator("float f(float a, float b) { return a + b; }", "Reduce")[0])
    True
    >>> commutes(operator("float f(float a, float b) { return a - b; }", "Reduce")[0])
    False
    >>> commutes(operator("int f(int a, int b) { return max(b, a); }", "Reduce")[0])
    True
    """
    symbol = _binary(op)
    if symbol is not None:
        return symbol != "-"
    operands = {p.name for p in op.elements}
    found = _CALL.fullmatch(op.body.strip())
    if found is None or {found[2], found[3]} != operands or len(operands) != 2:
        return False
    integer = dtype_of(op.return_type, op.where).kind in "iu"
    name = found[1]
    integer_call = name in _INTEGER_CALLS or re.fullmatch(r"ps_m(in|ax)_\w+", name) is not None
    return name in _COMMUTING_CALLS or (integer and integer_call)


def adds(op: UserFunction) -> bool:
    """Whether ``op``'s body is one ``+`` of its two operands.

    >>> adds(operator("int f(int a, int b) { return (b + a); }", "Scan")[0])
    True
    >>> adds(operator("int f(int a, int b) { return a * b; }", "Scan")[0])
    False
    """
    return _binary(op) == "+"


def _binary(op: UserFunction) -> str | None:
    """The operator (``+``, ``-``, ``*``, ``&``, ``|`` or ``^``) where ``op``'s body is one such
    operator of its two operands, else None."""
    found = _BINARY.fullmatch(op.body.strip())
    operands = {p.name for p in op.elements}
    return found[2] if found is not None and {found[1], found[3]} == operands and len(operands) == 2 else None


def operator(source: UserSource, skeleton: str, role: str = "reduce") -> tuple[UserFunction, np.dtype]:
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
    if t == "bool":
        raise UserFunctionError(f"{fn.where} {fn.signature.name!r}: an operator cannot work on bools; use uchar")
    return fn, dtype_of(t, fn.where)


@dataclass(frozen=True)
class _Plan:
    kernel: Kernel
    group: int
    items: int  # elements a work-item reads per step (see load_shape)
    groups: int  # the most work-groups a launch uses
    identity: Buffer
    partials: Buffer  # one value per work-group
    counter: Buffer  # zero between launches (the last group resets it)
    result: Buffer  # one element, reused for results that go to the host at once (host memory on CPUs)


def extra_args(fn: UserFunction, prefix: str) -> str:
    """The extra arguments of ``fn`` as a call passes them on: ``, <prefix>0, <prefix>1``."""
    return "".join(f", {prefix}{k}" for k in range(len(fn.extras)))


def load_shape(dtype: np.dtype, aligned_16: bool) -> tuple[int, int]:
    """Elements per work-item per step (64 bytes' worth, at most 16) and the width of the
    vectors they are read as (16 bytes for scalars of 4 and 8 bytes on aligned buffers)."""
    items = max(1, min(16, 64 // dtype.itemsize))
    scalar = dtype.names is None and dtype.kind != "c"
    vec = 16 // dtype.itemsize if scalar and dtype.itemsize in (4, 8) and aligned_16 else 1
    return items, vec


class Reduction(Skeleton):
    """One-pass reduction of a (possibly mapped) input; Reduce and MapReduce configure it."""

    def __init__(
        self,
        op_source: UserSource,
        identity: Any,
        mapper: UserFunction | None = None,
        commutative: bool | None = None,
    ) -> None:
        super().__init__()
        self.op, self.dtype = operator(op_source, self.name)
        self.identity = identity
        self.mapper = mapper
        #: whether elements may be combined out of order (a CPU then folds them in vectors)
        self.commutative = commutes(self.op) if commutative is None else bool(commutative)
        if identity is None:
            raise UserFunctionError(f"{self.name}: give the operator's neutral element (identity=...)")

    def _functions(self) -> list[UserFunction]:
        return [self.mapper, self.op] if self.mapper else [self.op]

    def _build(self, dev: Device, a: Container, vec_ok: bool) -> _Plan:
        op = self.op
        t = op.return_type
        if self.mapper is None:
            if a.c_type != t:
                raise ShapeError(f"{self.name}: the operator works on {t!r}, the input holds {a.c_type!r}")
            mapped = "(x)"
            map_params = map_args = ""
        else:
            m = self.mapper
            # the kernel knows the extent of the last axis only: a Tensor gives the flat index
            axes = ["(i)"] if a.ndim == 1 else ["(i) / ps_cols", "(i) % ps_cols"] if a.ndim == 2 else None
            indices = m.element_indices(a.ndim, "(i)", axes)
            m.check_element(0, a.c_type, "the input")
            if m.return_type != t:
                raise ShapeError(
                    f"{self.name}: the map function returns {m.return_type!r}, the reduce operator works on {t!r}"
                )
            mapped = m.call(["(x)"], indices, "ps_m")
            map_params, map_args = m.extra_params("ps_m"), extra_args(m, "ps_m")
        items, vec = load_shape(a.dtype, vec_ok)
        glue = (
            f"#define PS_T {t}\n#define PS_IN_T {a.c_type}\n#define PS_IN_VT {a.c_type}{vec}\n"
            f"#define PS_MAP(x, i) {mapped}\n"
            f"#define PS_OP(a, b) {op.call(['(a)', '(b)'], [], 'ps_x')}\n"
            f"#define PS_MAP_EXTRA_PARAMS {map_params}\n#define PS_MAP_EXTRA_ARGS {map_args}\n"
            f"#define PS_OP_EXTRA_PARAMS {op.extra_params('ps_x')}\n#define PS_OP_EXTRA_ARGS {extra_args(op, 'ps_x')}\n"
            f"#define ITEMS {items}\n#define VEC {vec}\n#define PS_CHAINS {chains(dev, self.dtype)}\n"
            f"#define PS_COMMUTES {int(self.commutative)}\n" + identity_glue(self.identity)
        )
        program, group = build_grouped(
            dev,
            lambda L: build_warped(
                dev,
                lambda g: build(dev, self.name, TEMPLATE, self._functions(), [a.dtype, self.dtype], g),
                glue + f"#define PS_WG {L}\n",
            ),
            ("ps_reduce",),
            tuned_group(dev, "ps_reduce", cpu=CPU_GROUP),
        )
        ident = identity_buffer(self.identity, self.dtype, dev, program, f"{self.name} identity")
        groups = max(1, dev.info.compute_units * groups_per_unit(dev, group))
        counter = dev.alloc(4)
        dev.fill(counter, np.uint32(0))
        return _Plan(
            program.kernel("ps_reduce"),
            group,
            items,
            groups,
            ident,
            dev.alloc(groups * self.dtype.itemsize),
            counter,
            # on a device that works in host memory, memory the host reads the result from
            # once the kernel is done: no read command, which PoCL's worker threads would have
            # to take up after the kernel (on 16 cores a second hand-over of 50-70 us)
            dev.host_buffer(np.empty(1, self.dtype), upload=False)
            if dev.shares_host_memory
            else dev.alloc(self.dtype.itemsize),
        )

    def _reduce(self, a: Any, extra: tuple[Any, ...], out: Container | None) -> Any:
        if isinstance(a, np.ndarray):  # a host array, in chunks where that pays
            return pipelined.reduction(self, a, extra, out)
        (a,) = self._inputs([a], ["the input"])
        dev = a.device
        src = a.to_device()
        vec_ok = aligned(src, 16)
        plan = self._plan((dev, a.dtype, a.ndim, vec_ok), lambda: self._build(dev, a, vec_ok))
        if out is not None:
            check_container(out, f"{self.name}: out", dev)
            if out.size != 1 or out.dtype != self.dtype:
                raise ShapeError(
                    f"{self.name}: out must hold one {self.dtype} element, got shape {out.shape} of {out.dtype}"
                )
            if out is a:
                raise ShapeError(f"{self.name}: out must not be the input")
        return self._launch(plan, dev, src, a.shape, extra, out)

    def _host_plan(self, dev: Device, x: np.ndarray, src: Buffer) -> _Plan | None:
        """The plan of a reduction of the host array ``x`` (read through ``src``) that
        :meth:`_launch` can run at once: one whose types were reduced before (through a
        container, which checks them and builds the kernel); else None."""
        return self._plans.get((dev, x.dtype, x.ndim, aligned(src, 16)))

    def _launch(
        self, plan: _Plan, dev: Device, src: Buffer, shape: tuple[int, ...], extra: tuple[Any, ...], out: Any
    ) -> Any:
        """The reduction of ``src`` (elements of ``shape``) into ``out``, a checked one-element
        container, or else into the plan's result, read back as a NumPy scalar."""
        n = math.prod(shape)
        check_size(n, self.name)
        if self.mapper is None:
            args, written = bind_extras(self.op, extra, dev)
        else:
            k = len(self.mapper.extras)
            margs, mwritten = bind_extras(self.mapper, extra[:k], dev)
            op_args, owritten = bind_extras(self.op, extra[k:], dev)
            args, written = margs + op_args, mwritten + owritten
        target = out.output_buffer() if out is not None else plan.result
        if n == 0:
            dev.copy(target, plan.identity, self.dtype.itemsize)
        else:
            L = plan.group
            groups = min(-(-n // (L * plan.items)), plan.groups)
            cols = shape[-1] if len(shape) == 2 else 1
            dev.launch(
                plan.kernel,
                groups * L,
                L,
                src,
                target,
                plan.partials,
                plan.counter,
                plan.identity,
                np.uint32(n),
                np.uint32(cols),
                *args,
            )
        mark_written(written)
        if out is not None:
            out.mark_device_written()
            return out
        kept = target.host  # the plan's result in host memory, where the device works there
        host = kept if kept is not None else np.empty(1, dtype=self.dtype)
        dev.download(target, host)  # (into its own memory: a wait for the kernel)
        return (host.copy() if kept is not None else host)[0]  # (a record would be a view of it)


class Reduce(Reduction):
    """``Reduce(op, identity)(a, *extra)``: the reduction of all elements with ``op``.

    ``op`` is ``T op(T a, T b)`` (a Python ``op`` gets and returns the input's type T),
    associative (not necessarily commutative); ``identity`` its
    neutral element, as a value (a number, a record for a struct) or as C source (``"(affine){1, 0}"``).
    Returns a NumPy scalar (a ``np.void`` record for structs); ``out=`` a one-element Vector
    keeps the result on the device.

    ``commutative`` says whether ``op(a, b) == op(b, a)``; left out, parskel sees it in an
    operator that is one ``+``, ``*``, ``&``, ``|`` or ``^`` of its operands, or their
    ``fmin``/``fmax`` (``min``/``max`` for integers). A CPU device then folds consecutive
    elements side by side, in vectors, and a GPU's lanes each fold their own elements and
    combine once; otherwise the order is kept.

    >>> v = ps.Vector(np.arange(100, dtype=np.float32))
    >>> ps.Reduce(lambda a, b: max(a, b), identity=-np.inf)(v)
    np.float32(99.0)
    >>> total = ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)
    >>> total(v)
    np.float32(4950.0)
    """

    name = "Reduce"

    def __init__(self, source: UserSource, identity: Any = 0, *, commutative: bool | None = None) -> None:
        super().__init__(source, identity, commutative=commutative)

    def __call__(self, a: Container | np.ndarray, *extra: Any, out: Container | None = None) -> Any:
        return self._reduce(a, extra, out)
