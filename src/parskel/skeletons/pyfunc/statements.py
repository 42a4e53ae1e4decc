"""Python statements as C statements, and a whole function as a C function.

Local variables are C locals declared at the top of the function with one type each: the
promotion (NumPy's) of every value assigned to them, found by repeating type inference over
the body until no type widens, so ``s = 0`` followed by ``s += x[k]`` (float32) makes ``s`` a
float32 from the start, as it is from the first addition in Python.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import UserFunctionError
from . import ctext
from .analysis import Analysis, Index
from .calls import dtype_of_annotation
from .expressions import Expressions, Unknown, Value, bare, describe
from .types import (
    UINT32,
    Pointer,
    Record,
    Scalar,
    Tuple,
    Type,
    c_name,
    can_cast,
    element,
    join,
    materialise,
)

if TYPE_CHECKING:
    from .function import PyFunction

_ROUNDS = 64  # types only widen, so inference settles in a few rounds; this bounds a bug


@dataclass(frozen=True)
class Translation:
    """One function translated for one tuple of argument types.

    ``text`` is its C definition, ``deps`` the (guard, text) pieces it needs before it (python.h
    helpers, struct constructors, translated helper functions), ``params`` the type of each
    parameter (``Index`` for an index parameter), ``written`` the positions of the containers it
    writes."""

    c_name: str
    text: str
    deps: tuple[tuple[str, str], ...]
    params: tuple[Type | type[Index], ...]
    returns: Type | None
    written: frozenset[int]

    @property
    def source(self) -> str:
        """The complete C source: helpers first, the function last."""
        return ctext.HEADER + "".join(text for _, text in self.deps) + self.text


class FunctionTranslator(Expressions):
    """Translates one function for one tuple of argument types."""

    def __init__(
        self,
        fn: PyFunction,
        analysis: Analysis,
        args: tuple[Type, ...],
        returns: Type | None,
        *,
        fp64: bool,
        stack: tuple[PyFunction, ...],
        main: bool,
        c_name: str,
    ) -> None:
        self.fn, self.analysis, self.fp64, self.stack, self.main = fn, analysis, fp64, stack, main
        self.names = ctext.Names()
        self.c_function = c_name
        self.emitting = False
        self.deps: dict[str, str] = {}
        self.written: set[str] = set()
        self.required = returns  # the skeleton's demand (an operator returns its operand type)
        self.declared_return = None if analysis.returns is None else element(analysis.returns)
        if returns is not None and self.declared_return not in (None, returns):
            self.fail(
                analysis.located.node,
                f"the function is annotated to return {self.declared_return}, but here it must return {returns}",
            )
        self.param_types = self.bind(args)
        self.vars: dict[str, Type] = {name: t for name, t in self.param_types.items() if t is not Index}
        for name, t in self.param_types.items():
            if t is Index:
                self.vars[name] = Scalar(UINT32)
        self.declared: dict[str, Type] = {}
        self.temps: dict[str, Type] = {}
        self.returned: Type | None = None
        self.returns_value = self.returns_nothing = False
        self.changed = False
        # while emitting: the locals assigned so far in the text, and how deep in loops we are
        self.assigned: set[str] = set()
        self.loops = 0
        for name in self.param_types:
            self.names(name)

    # -- parameters ------------------------------------------------------------------------

    def bind(self, args: tuple[Type, ...]) -> dict[str, Any]:
        params = self.analysis.params
        positional = [p for p in params if not (self.main and p.index)]
        if len(args) != len(positional):
            names = ", ".join(p.name for p in positional)
            self.fail(self.analysis.located.node, f"takes {len(positional)} arguments ({names}), got {len(args)}")
        found: dict[str, Any] = {}
        given = iter(args)
        for p in params:
            if self.main and p.index:
                found[p.name] = Index
                continue
            t = next(given)
            if p.index:  # a helper's index parameter: a ps_index passed on by the caller
                t = Scalar(UINT32)
            elif p.annotation is not None:
                want = element(p.annotation)
                if isinstance(t, Pointer):
                    self.fail(p.node, f"parameter {p.name!r} receives a {t}, not a {want}")
                convertible = isinstance(t, Scalar) and isinstance(want, Scalar) and can_cast(t, want)
                weak = isinstance(t, Scalar) and t.weak
                if t != want and not (convertible and (weak or not self.main)):
                    self.fail(p.node, f"parameter {p.name!r} is annotated {want}, but receives a {describe(t)}")
                t = want
            found[p.name] = t
        return found

    def var_code(self, name: str) -> str:
        return self.names(name)

    def expr_Name(self, node: ast.Name) -> Value:
        name = node.id
        if self.emitting and self.loops == 0 and name in self.analysis.locals and name not in self.assigned:
            # outside loops the text is the order of execution, so Python would fail here too
            self.fail(node, f"{name!r} is used before it is assigned")
        return super().expr_Name(node)

    # -- the whole function ----------------------------------------------------------------

    def translate(self) -> Translation:
        for _ in range(_ROUNDS):
            self.changed = False
            self.block(self.analysis.body, 1)
            if not self.changed:
                break
        self.emitting = True
        body = self.block(self.analysis.body, 1)
        returns = self.return_type()
        if returns is not None and not _always_returns(self.analysis.body):
            self.fail(
                self.analysis.located.node,
                "the function can reach its end without returning a value; every path must end with return",
            )
        params, prologue = [], []
        for name, t in self.param_types.items():
            c = self.names(name)
            if t is Index:
                params.append(f"ps_index {c}")
                continue
            final = self.vars[name]
            if final != t:  # a parameter assigned a wider type: a local of that type takes over
                params.append(_declaration(t, f"ps_p_{c}", False))
                start = self.convert(Value(f"ps_p_{c}", t), final, self.analysis.located.node)
                prologue.append(f"    {_declaration(final, c, False)} = {start};\n")
            else:
                params.append(_declaration(t, c, name in self.written))
        declared = [(self.vars[n], self.names(n)) for n in sorted(self.analysis.locals) if n in self.vars]
        locals_ = [f"    {_declaration(t, c, False)};\n" for t, c in declared]
        locals_ += [f"    {_declaration(t, n, False)};\n" for n, t in self.temps.items()]
        head = f"{'void' if returns is None else c_name(returns)} {self.c_function}({', '.join(params) or 'void'})"
        where = self.analysis.located
        comment = f"/* {where.name}: {where.path}, line {where.node.lineno} */\n"
        text = comment + head + "\n{\n" + "".join(prologue + locals_) + "".join(body) + "}\n"
        positions = [k for k, name in enumerate(self.param_types) if name in self.written]
        return Translation(
            self.c_function,
            text,
            tuple(self.deps.items()),
            tuple(self.param_types.values()),
            returns,
            frozenset(positions),
        )

    def return_type(self) -> Scalar | Record | None:
        if self.required is not None or self.declared_return is not None:
            t = self.required or self.declared_return
        elif self.returns_value and self.returned is not None:
            t = materialise(self.returned, self.fp64)
        else:
            return None
        assert isinstance(t, Scalar | Record)
        return t

    # -- statements ------------------------------------------------------------------------

    def block(self, statements: list[ast.stmt], depth: int) -> list[str]:
        lines: list[str] = []
        for s in statements:
            try:
                lines += self.statement(s, depth)
            except Unknown as unknown:
                if self.emitting:
                    self.fail(unknown.node, f"{unknown.name!r} is used before it is assigned")
                # the loop or branch bodies may still assign variables that decide other types
                for nested in ("body", "orelse"):
                    self.block(getattr(s, nested, []), depth + 1)
        return lines

    def statement(self, s: ast.stmt, depth: int) -> list[str]:
        method = getattr(self, f"stmt_{type(s).__name__}", None)
        if method is None:
            self.fail(s, f"{type(s).__name__} statements are not supported in a user function")
        return method(s, depth)

    @staticmethod
    def line(depth: int, text: str) -> str:
        return "    " * depth + text + "\n"

    def stmt_Pass(self, s: ast.Pass, depth: int) -> list[str]:
        return []

    def stmt_Break(self, s: ast.Break, depth: int) -> list[str]:
        return [self.line(depth, "break;")]

    def stmt_Continue(self, s: ast.Continue, depth: int) -> list[str]:
        return [self.line(depth, "continue;")]

    def stmt_Expr(self, s: ast.Expr, depth: int) -> list[str]:
        if isinstance(s.value, ast.Constant):
            return []  # a docstring
        value = self.expr(s.value)
        return [self.line(depth, f"{value.code};")] if isinstance(s.value, ast.Call) else []

    def stmt_Return(self, s: ast.Return, depth: int) -> list[str]:
        if s.value is None or (isinstance(s.value, ast.Constant) and s.value.value is None):
            if self.returns_value or self.required is not None or self.declared_return is not None:
                self.fail(s, "a bare return in a function that returns values")
            self.returns_nothing = True
            return [self.line(depth, "return;")]
        value = self.expr(s.value)
        if value.type is None:  # returns what a call returns: nothing (lambda x: store(out, x))
            if self.returns_value or self.required is not None or self.declared_return is not None:
                self.fail(s, "returns the result of a call that returns nothing")
            self.returns_nothing = True
            return [self.line(depth, f"{value.code};"), self.line(depth, "return;")]
        if self.returns_nothing:
            self.fail(s, "this function returns a value here and nothing elsewhere")
        self.returns_value = True
        fixed = self.required or self.declared_return
        if fixed is None:
            t = value.type if not isinstance(value.type, Tuple) else self.stored(value, s)
            if isinstance(t, Pointer):
                self.fail(s, "a user function cannot return a container")
            self.widen_return(t, s)
            if not self.emitting:
                return []
            fixed = self.return_type()
        elif (
            self.required is not None
            and isinstance(value.type, Scalar)
            and isinstance(fixed, Scalar)
            and not can_cast(value.type, fixed)
        ):  # an operator returns its operands' type
            self.fail(s, f"returns a {value.type} value, but here it must return {fixed}; convert it explicitly")
        if not self.emitting:
            return []
        assert fixed is not None
        return [self.line(depth, f"return {bare(self.convert(value, fixed, s))};")]

    def widen_return(self, t: Type, node: ast.AST) -> None:
        if self.returned is None:
            self.returned, self.changed = t, True
            return
        joined = join(self.returned, t, self.fp64)
        if joined is None:
            self.fail(node, f"returns a {describe(t)} here and a {describe(self.returned)} elsewhere")
        if joined != self.returned:
            self.returned, self.changed = joined, True

    def stmt_Assign(self, s: ast.Assign, depth: int) -> list[str]:
        value = self.expr(s.value)
        if len(s.targets) == 1:
            return self.assign(s.targets[0], value, s, depth)
        lines = []
        if value.const is None and not isinstance(value.type, Tuple):
            held = self.hold(value, s)
            lines.append(self.line(depth, f"{held.code} = {bare(value.code)};"))
            value = held
        for target in s.targets:
            lines += self.assign(target, value, s, depth)
        return lines

    def hold(self, value: Value, node: ast.AST) -> Value:
        """A temporary for ``value`` (emitting only; while inferring, the value itself)."""
        if not self.emitting:
            return value
        t = self.stored(value, node)
        name = self.names.temporary()
        self.temps[name] = t
        return Value(name, t)

    def stmt_AugAssign(self, s: ast.AugAssign, depth: int) -> list[str]:
        current = self.expr(s.target)
        return self.assign(s.target, self.binary(s.op, current, self.expr(s.value), s), s, depth)

    def stmt_AnnAssign(self, s: ast.AnnAssign, depth: int) -> list[str]:
        if not isinstance(s.target, ast.Name):
            self.fail(s, "only a variable can be annotated")
        name = s.target.id
        named = self.analysis.outside.get(s.annotation)
        if named is None:  # typing.Any: an ordinary assignment
            return [] if s.value is None else self.assign(s.target, self.expr(s.value), s, depth)
        dtype = dtype_of_annotation(named)
        if dtype is None:
            self.fail(s, "annotate a variable with a NumPy scalar type, float, int, bool or a struct")
        t = element(dtype)
        if self.declared.get(name, t) != t or (name in self.param_types):
            self.fail(s, f"{name!r} is declared with another type elsewhere")
        self.declared[name] = t
        if self.vars.get(name) != t:
            self.vars[name], self.changed = t, True
        return [] if s.value is None else self.assign(s.target, self.expr(s.value), s, depth)

    def assign(self, target: ast.expr, value: Value, node: ast.AST, depth: int) -> list[str]:
        if isinstance(target, ast.Name):
            return self.assign_name(target.id, value, node, depth)
        if isinstance(target, ast.Tuple):
            return self.unpack(target, value, node, depth)
        if isinstance(target, ast.Subscript):
            base = self.expr(target.value)
            t = base.type
            if isinstance(t, Pointer):
                if t.space == "window":
                    self.fail(target, "the window is read-only")
                assert base.root is not None
                self.written.add(base.root)
                lvalue, want = self.subscript(base, target), element(t.dtype)
            elif isinstance(t, Record) and isinstance(target.value, ast.Name):
                k = self.position(target, len(t.dtype.names or ()))
                field = (t.dtype.names or ())[k]
                lvalue, want = f"{base.code}.{field}", self.field_type(t, field, target)
            else:
                self.fail(target, f"cannot assign into a {describe(t)}")
        elif isinstance(target, ast.Attribute):
            base = self.expr(target.value)
            t = base.type
            if not isinstance(t, Record):
                self.fail(target, f"a {describe(t)} has no attribute {target.attr!r}")
            if isinstance(target.value, ast.Subscript):
                inner = self.expr(target.value.value)
                if inner.root is not None:
                    self.written.add(inner.root)
            elif not isinstance(target.value, ast.Name):
                self.fail(target, "assign to fields of variables or of container elements")
            lvalue, want = f"{self.atom(base.code)}.{target.attr}", self.field_type(t, target.attr, target)
        else:
            self.fail(target, f"cannot assign to {ast.unparse(target)}")
        if not self.emitting:
            if isinstance(value.type, Tuple):
                self.stored(value, node)
            return []
        return [self.line(depth, f"{lvalue} = {bare(self.convert(value, want, node))};")]

    def field_type(self, t: Record, field: str, node: ast.AST) -> Scalar | Record:
        found = t.field(field)
        if found is None:
            self.fail(node, f"struct {t} has no field {field!r}")
        sub, shape = found
        if shape:
            self.fail(node, f"field {field!r} of struct {t} is an array, which user functions cannot write")
        return element(sub)

    def assign_name(self, name: str, value: Value, node: ast.AST, depth: int) -> list[str]:
        t = value.type
        if t is None:
            self.fail(node, "assigns the result of a call that returns nothing")
        if isinstance(t, Tuple):
            t = self.stored(value, node)
        old = self.vars.get(name)
        if isinstance(old, Pointer) or isinstance(t, Pointer):
            self.fail(node, f"{name!r} names a container; it cannot be assigned")
        if name in self.declared:
            new = self.declared[name]
        elif self.param_types.get(name) is Index:
            self.fail(node, f"the index parameter {name!r} cannot be assigned")
        else:
            joined = t if old is None else join(old, t, self.fp64)
            if joined is None:
                self.fail(node, f"{name!r} holds a {describe(t)} here and a {describe(old)} elsewhere")
            new = joined
            if new != old:
                assert not self.emitting, f"{name}: {old} widened to {new} after inference"
                self.vars[name], self.changed = new, True
        if not self.emitting:
            return []
        self.assigned.add(name)
        return [self.line(depth, f"{self.names(name)} = {bare(self.convert(value, new, node))};")]

    def unpack(self, target: ast.Tuple, value: Value, node: ast.AST, depth: int) -> list[str]:
        t = value.type
        lines: list[str] = []
        if isinstance(t, Tuple):
            items = list(value.items)
        elif isinstance(t, Record):
            held = self.hold(value, node)
            if self.emitting:
                lines.append(self.line(depth, f"{held.code} = {bare(value.code)};"))
            items = [Value(f"{held.code}.{f}", self.field_type(t, f, node)) for f in t.dtype.names or ()]
        else:
            self.fail(node, f"cannot unpack a {describe(t)}")
        if len(items) != len(target.elts):
            self.fail(node, f"unpacks {len(items)} values into {len(target.elts)} targets")
        if isinstance(t, Tuple) and self.emitting:
            # every value is computed before any target changes, as in a, b = b, a
            for k, item in enumerate(items):
                if item.const is None:
                    temp = self.hold(item, node)
                    assert temp.type is not None
                    lines.append(self.line(depth, f"{temp.code} = {bare(self.convert(item, temp.type, node))};"))
                    items[k] = Value(temp.code, temp.type if isinstance(item.type, Tuple) else item.type)
        for sub, item in zip(target.elts, items):
            lines += self.assign(sub, item, node, depth)
        return lines

    def stmt_If(self, s: ast.If, depth: int) -> list[str]:
        lines = [self.line(depth, f"if ({bare(self.test(s.test))}) {{")]
        lines += self.block(s.body, depth + 1)
        orelse = s.orelse
        while len(orelse) == 1 and isinstance(orelse[0], ast.If):
            inner = orelse[0]
            lines.append(self.line(depth, f"}} else if ({bare(self.test(inner.test))}) {{"))
            lines += self.block(inner.body, depth + 1)
            orelse = inner.orelse
        if orelse:
            lines.append(self.line(depth, "} else {"))
            lines += self.block(orelse, depth + 1)
        lines.append(self.line(depth, "}"))
        return lines

    def stmt_While(self, s: ast.While, depth: int) -> list[str]:
        self.loops += 1
        lines = [self.line(depth, f"while ({bare(self.test(s.test))}) {{")]
        lines += self.block(s.body, depth + 1)
        lines.append(self.line(depth, "}"))
        self.loops -= 1
        return lines

    def stmt_For(self, s: ast.For, depth: int) -> list[str]:
        assert isinstance(s.target, ast.Name) and isinstance(s.iter, ast.Call)
        name = s.target.id
        args = [self.expr(a) for a in s.iter.args]
        for a, n in zip(args, s.iter.args):
            if not isinstance(a.type, Scalar) or a.type.kind not in "iu":
                self.fail(n, f"range() takes integers, not a {describe(a.type)}")
        zero, one = self.constant(0, s), self.constant(1, s)
        start, stop, step = (zero, args[0], one) if len(args) == 1 else (*args, one) if len(args) == 2 else args
        if step.const == 0:
            self.fail(s.iter, "range() step must not be zero")
        storage = np.dtype(np.int32) if all(_fits_int32(a) for a in args) else np.dtype(np.int64)
        if self.param_types.get(name) is not None:
            self.fail(s.target, f"the loop variable {name!r} is a parameter; use another name")
        self.assign_name(name, Value(name, Scalar(storage, weak=True)), s, depth)
        if not self.emitting:
            self.block(s.body, depth + 1)
            return []
        var_t = self.vars[name]
        direct = (
            isinstance(var_t, Scalar)
            and var_t.kind == "i"
            and name not in self.declared
            and not _assigned_in(s.body, name)
            and not self.read_outside(s, name)
        )
        lines: list[str] = []
        counter = self.names(name) if direct else self.names.temporary()
        counter_t = var_t if direct else Scalar(storage, weak=True)
        assert isinstance(counter_t, Scalar)
        if not direct:
            self.temps[counter] = counter_t
        nodes = list(s.iter.args)
        bound = self.bound(stop, nodes[1 if len(nodes) > 1 else 0], s, lines, depth)
        stride = step if step.const is not None else self.bound(step, nodes[2], s, lines, depth)
        cmp = _compare_type(counter_t, stop)
        if cmp is None:
            self.fail(s.iter, f"range() over {describe(stop.type)} bounds is not supported; convert them")
        c = self.convert(Value(counter, counter_t), cmp, s)
        b = self.convert(bound, cmp, s)
        if step.const is not None:
            condition = f"{c} {'<' if step.const > 0 else '>'} {b}"
            stepped = f"{counter} += {self.convert(step, counter_t, s)}"
            increment = {1: f"++{counter}", -1: f"--{counter}"}.get(step.const, stepped)
        else:
            condition = f"({stride.code} > 0 ? {c} < {b} : {c} > {b})"
            increment = f"{counter} += {self.convert(stride, counter_t, s)}"
        init = bare(self.convert(start, counter_t, s))
        lines.append(self.line(depth, f"for ({counter} = {init}; {condition}; {increment}) {{"))
        self.assigned.add(name)
        if not direct:
            lines += self.assign_name(name, Value(counter, counter_t), s, depth + 1)
        self.loops += 1
        lines += self.block(s.body, depth + 1)
        self.loops -= 1
        lines.append(self.line(depth, "}"))
        return lines

    def bound(self, value: Value, node: ast.expr, loop: ast.For, lines: list[str], depth: int) -> Value:
        """A range() argument, evaluated once before the loop as Python does (a variable the
        loop does not assign is read as it is)."""
        if value.const is not None:
            return value
        assert isinstance(loop.target, ast.Name)
        if isinstance(node, ast.Name) and node.id != loop.target.id and not _assigned_in(loop.body, node.id):
            return value
        assert isinstance(value.type, Scalar)
        held = self.hold(value, self.analysis.located.node)
        lines.append(self.line(depth, f"{held.code} = {bare(value.code)};"))
        return Value(held.code, value.type)

    def read_outside(self, loop: ast.For, name: str) -> bool:
        inside = {id(n) for stmt in loop.body for n in ast.walk(stmt)}
        for stmt in self.analysis.body:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in inside:
                    return True
        return False

    # -- calls of other @ps.function ----------------------------------------------------------

    def call_helper(self, fn: PyFunction, node: ast.Call) -> Value:
        if fn is self.fn or fn in self.stack:
            self.fail(node, f"{fn.name} calls itself (directly or through other functions); recursion is not supported")
        args = [self.expr(a) for a in node.args]
        types: list[Type] = []
        for a in args:
            if a.type is None:
                self.fail(node, "passes the result of a call that returns nothing")
            types.append(self.stored(a, node) if isinstance(a.type, Tuple) else a.type)
        try:
            done = fn.translation(tuple(types), fp64=self.fp64, stack=(*self.stack, self.fn), main=False)
        except UserFunctionError as exc:
            raise UserFunctionError(f"{exc}\n  called from {self.analysis.located.where(node)}") from None
        codes = []
        for k, (a, t) in enumerate(zip(args, done.params)):
            assert not isinstance(t, type)  # helpers have no index parameters of their own
            codes.append(self.convert(a, t, node))
            if k in done.written:
                if a.root is None or a.root not in self.param_types:
                    self.fail(node, f"{fn.name} writes its argument {k + 1}, which must be a container parameter")
                self.written.add(a.root)
        if self.emitting:
            for guard, text in done.deps:
                self.need(guard, text)
            self.need(f"PS_PY_HAVE_{done.c_name}", ctext.guarded(f"PS_PY_HAVE_{done.c_name}", done.text))
        return Value(f"{done.c_name}({', '.join(map(bare, codes))})", done.returns)


def _declaration(t: Type | type[Index], name: str, written: bool) -> str:
    if t is Index:
        return f"ps_index {name}"
    if isinstance(t, Pointer):
        if t.space == "window":
            return f"const {c_name(element(t.dtype))} *{name}"
        return f"__global {'' if written else 'const '}{c_name(element(t.dtype))} *{name}"
    assert isinstance(t, Scalar | Record)
    return f"{c_name(t)} {name}"


def _fits_int32(value: Value) -> bool:
    t = value.type
    if value.const is not None:
        return -(2**31) <= int(value.const) < 2**31
    return isinstance(t, Scalar) and not t.weak and bool(np.can_cast(t.dtype, np.int32))


def _compare_type(counter: Scalar, bound: Value) -> Scalar | None:
    t = bound.type
    assert isinstance(t, Scalar)
    if bound.const is not None or t.weak:
        return Scalar(np.promote_types(counter.dtype, t.dtype if not t.weak else counter.dtype))
    found = np.promote_types(counter.dtype, t.dtype)
    return None if found.kind == "f" else Scalar(found)


def _assigned_in(body: list[ast.stmt], name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for s in body for n in ast.walk(s)
    )


def _always_returns(body: list[ast.stmt]) -> bool:
    for s in body:
        if isinstance(s, ast.Return):
            return True
        if isinstance(s, ast.If) and _always_returns(s.body) and _always_returns(s.orelse):
            return True
        if (
            isinstance(s, ast.While)
            and isinstance(s.test, ast.Constant)
            and s.test.value is True
            and not any(isinstance(n, ast.Break) for stmt in s.body for n in _loop_level(stmt))
        ):
            return True
    return False


def _loop_level(node: ast.AST) -> list[ast.AST]:
    """The nodes of ``node`` outside any nested loop (where a break would leave ours)."""
    found = [node]
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, ast.For | ast.While):
            found += _loop_level(child)
    return found
