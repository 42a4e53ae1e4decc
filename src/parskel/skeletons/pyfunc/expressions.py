"""Python expressions as C expressions, typed by NumPy's rules.

Every operation converts its operands to the types NumPy's loop for it takes (so ``int32 +
uint32`` is computed in ``int64``, ``int8 + int8`` wraps in ``int8``), and C's own promotions
never decide a result. Constant expressions of Python numbers are folded here, in Python, so
``x * (1 / 3)`` costs one multiplication and no double precision.
"""

from __future__ import annotations

import ast
import math
import operator
import re
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from ...errors import DTypeError
from . import calls, ctext
from .analysis import Analysis, Index, is_constant
from .types import (
    BOOL,
    INT64,
    Pointer,
    PromotionError,
    Record,
    Scalar,
    Tuple,
    Type,
    c_name,
    element,
    join,
    materialise,
    resolve,
    supported,
    weak_float,
    weak_int,
)

_BINARY: dict[type, tuple[np.ufunc, str, Callable[[Any, Any], Any]]] = {
    ast.Add: (np.add, "+", operator.add),
    ast.Sub: (np.subtract, "-", operator.sub),
    ast.Mult: (np.multiply, "*", operator.mul),
    ast.Div: (np.true_divide, "/", operator.truediv),
    ast.FloorDiv: (np.floor_divide, "//", operator.floordiv),
    ast.Mod: (np.remainder, "%", operator.mod),
    ast.Pow: (np.power, "**", operator.pow),
    ast.LShift: (np.left_shift, "<<", operator.lshift),
    ast.RShift: (np.right_shift, ">>", operator.rshift),
    ast.BitAnd: (np.bitwise_and, "&", operator.and_),
    ast.BitOr: (np.bitwise_or, "|", operator.or_),
    ast.BitXor: (np.bitwise_xor, "^", operator.xor),
}
_COMPARE: dict[type, tuple[np.ufunc, str, Callable[[Any, Any], Any]]] = {
    ast.Eq: (np.equal, "==", operator.eq),
    ast.NotEq: (np.not_equal, "!=", operator.ne),
    ast.Lt: (np.less, "<", operator.lt),
    ast.LtE: (np.less_equal, "<=", operator.le),
    ast.Gt: (np.greater, ">", operator.gt),
    ast.GtE: (np.greater_equal, ">=", operator.ge),
}
_CALL = re.compile(r"^[A-Za-z_]\w*\(")
_NARROW = {"char", "uchar", "short", "ushort", "bool"}  # C computes these in int: cast back
_SIMPLE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789.[]")


@dataclass(frozen=True)
class Value:
    """A translated expression: its C code and type; ``const`` is its value where known now
    (literals and captured constants), ``items`` a tuple's values, ``root`` the parameter a
    pointer came from."""

    code: str
    type: Type | None
    const: Any = None
    items: tuple[Value, ...] = ()
    root: str | None = None


class Unknown(Exception):
    """A variable whose type is not known yet (while types are still being inferred)."""

    def __init__(self, name: str, node: ast.AST) -> None:
        super().__init__(name)
        self.name = name
        self.node = node


class Expressions:
    """The expression half of a function's translation (the statement half subclasses it)."""

    analysis: Analysis
    fp64: bool
    emitting: bool
    vars: dict[str, Type]
    written: set[str]
    deps: dict[str, str]

    # -- helpers ---------------------------------------------------------------------------

    def fail(self, node: ast.AST | None, message: str) -> NoReturn:
        raise self.analysis.located.error(node, message)

    def need(self, guard: str, text: str) -> None:
        if self.emitting and guard not in self.deps:
            self.deps[guard] = text

    def runtime(self, family: str, t: Scalar) -> str:
        guard, text, suffix = ctext.runtime_helper(family, t.dtype)
        self.need(guard, text)
        return suffix

    def var_code(self, name: str) -> str:
        raise NotImplementedError

    def call_helper(self, fn: Any, node: ast.Call) -> Value:
        raise NotImplementedError

    # -- constants and conversions ---------------------------------------------------------

    def constant(self, value: Any, node: ast.AST) -> Value:
        if isinstance(value, bool | np.bool_):
            return Value("true" if value else "false", Scalar(BOOL), bool(value))
        if isinstance(value, np.generic):
            dtype = value.dtype
            if not supported(dtype):
                self.fail(node, f"a constant of type {dtype} is not supported on the devices")
            return Value(self.literal(value.item(), dtype, node), Scalar(dtype), value.item())
        if isinstance(value, int):
            code = ctext.literal(value, INT64) if -(2**63) <= value < 2**63 else ""
            return Value(code, weak_int(), value)
        if isinstance(value, float):
            t = weak_float(self.fp64)
            return Value(ctext.literal(value, t.dtype), t, value)
        self.fail(node, f"the constant {value!r} is not a number")

    def literal(self, value: Any, dtype: np.dtype, node: ast.AST) -> str:
        try:
            return ctext.literal(value, dtype)
        except OverflowError as exc:
            self.fail(node, f"{exc} (NumPy refuses it too); convert explicitly")

    def convert(self, value: Value, to: Type, node: ast.AST) -> str:
        """The C code of ``value`` as a value of type ``to``."""
        t = value.type
        if isinstance(to, Scalar):
            if not isinstance(t, Scalar):
                self.fail(node, f"a {describe(t)} cannot be used as a {to}")
            if value.const is not None:
                if to.dtype == BOOL:
                    return "true" if value.const else "false"
                return self.literal(value.const, to.dtype, node)
            if to.dtype == BOOL and t.dtype != BOOL:
                return f"({value.code} != 0)"
            if c_name(t) == c_name(to):
                return value.code
            return f"({c_name(to)}){self.atom(value.code)}"
        if isinstance(to, Record):
            if isinstance(t, Tuple):
                return self.build(value, to, node)
            if t != to:
                self.fail(node, f"a {describe(t)} cannot be used as a {to}")
            return value.code
        if isinstance(to, Pointer):
            if not isinstance(t, Pointer) or t.dtype != to.dtype or t.space != to.space or t.dims != to.dims:
                self.fail(node, f"a {describe(t)} cannot be passed as a {to}")
            return value.code
        self.fail(node, f"a {describe(t)} cannot be stored")

    @staticmethod
    def atom(code: str) -> str:
        """``code`` as an operand of a cast or ``.field``: parenthesised unless it is one already
        (a name, a literal, a call, or a parenthesised expression)."""
        call = _CALL.match(code)
        start = call.end() - 1 if call else 0
        if set(code) <= _SIMPLE or (code[start] == "(" and balanced_outer(code[start:])):
            return code
        return f"({code})"

    def stored(self, value: Value, node: ast.AST) -> Type:
        """The type ``value`` is stored with (a tuple becomes a struct)."""
        t = value.type
        if t is None:
            self.fail(node, "this call returns nothing, so it has no value")
        if isinstance(t, Tuple):
            fields = []
            for item in value.items:
                st = self.stored(item, node)
                if isinstance(st, Pointer):
                    self.fail(node, "a tuple cannot hold a container")
                assert isinstance(st, Scalar | Record)
                if st.dtype == BOOL:
                    self.fail(node, "a tuple stored as a struct cannot hold a bool; convert it to an integer")
                fields.append(st.dtype)
            try:
                return Record(ctext.tuple_dtype(fields))
            except DTypeError as exc:
                self.fail(node, str(exc))
        return materialise(t, self.fp64)

    def build(self, value: Value, to: Record, node: ast.AST) -> str:
        """A tuple's values as struct ``to``, field by field."""
        names = to.dtype.names or ()
        if len(names) != len(value.items):
            self.fail(node, f"a tuple of {len(value.items)} values cannot become struct {to} of {len(names)} fields")
        try:
            guard, text, function = ctext.constructor(to.dtype)
        except DTypeError as exc:
            self.fail(node, str(exc))
        self.need(guard, text)
        args = []
        for name, item in zip(names, value.items):
            sub, shape = to.field(name) or (None, ())
            assert sub is not None and not shape
            args.append(self.convert(item, element(sub), node))
        return f"{function}({', '.join(map(bare, args))})"

    # -- expressions -----------------------------------------------------------------------

    def expr(self, node: ast.expr) -> Value:
        if node in self.analysis.outside:
            found = self.analysis.outside[node]
            if is_constant(found):
                return self.constant(found, node)
            self.fail(node, f"{ast.unparse(node)} ({describe_object(found)}) cannot be used as a value")
        method = getattr(self, f"expr_{type(node).__name__}", None)
        if method is None:
            self.fail(node, f"{type(node).__name__} expressions are not supported in a user function")
        return method(node)

    def expr_Constant(self, node: ast.Constant) -> Value:
        return self.constant(node.value, node)

    def expr_Name(self, node: ast.Name) -> Value:
        t = self.vars.get(node.id)
        if t is None:
            raise Unknown(node.id, node)
        return Value(self.var_code(node.id), t, root=node.id if isinstance(t, Pointer) else None)

    def expr_Tuple(self, node: ast.Tuple) -> Value:
        items = tuple(self.expr(e) for e in node.elts)
        for item in items:
            if item.type is None or isinstance(item.type, Pointer):
                self.fail(node, f"a tuple cannot hold a {describe(item.type)}")
        return Value("", Tuple(tuple(i.type for i in items if i.type is not None)), items=items)

    def expr_Attribute(self, node: ast.Attribute) -> Value:
        base = self.expr(node.value)
        t = base.type
        if not isinstance(t, Record):
            self.fail(node, f"a {describe(t)} has no attribute {node.attr!r}")
        found = t.field(node.attr)
        if found is None:
            self.fail(node, f"struct {t} has no field {node.attr!r}; its fields are {', '.join(t.dtype.names or ())}")
        sub, shape = found
        if shape:
            self.fail(node, f"field {node.attr!r} of struct {t} is an array, which user functions cannot read")
        return Value(f"{self.atom(base.code)}.{node.attr}", element(sub))

    def expr_Subscript(self, node: ast.Subscript) -> Value:
        base = self.expr(node.value)
        t = base.type
        if isinstance(t, Pointer):
            return Value(self.subscript(base, node), element(t.dtype))
        if isinstance(t, Tuple | Record):
            k = self.position(node, len(base.items) if isinstance(t, Tuple) else len(t.dtype.names or ()))
            if isinstance(t, Tuple):
                return base.items[k]
            name = (t.dtype.names or ())[k]
            sub, shape = t.field(name) or (None, ())
            if shape or sub is None:
                self.fail(node, f"field {name!r} of struct {t} is an array, which user functions cannot read")
            return Value(f"{self.atom(base.code)}.{name}", element(sub))
        self.fail(node, f"a {describe(t)} cannot be indexed")

    def position(self, node: ast.Subscript, size: int) -> int:
        index = self.expr(node.slice)
        if not isinstance(index.const, int) or isinstance(index.const, bool):
            self.fail(node, "a tuple or struct is indexed by a constant integer")
        k = index.const + size if index.const < 0 else index.const
        if not 0 <= k < size:
            self.fail(node, f"index {index.const} is out of range for {size} values")
        return k

    def subscript(self, base: Value, node: ast.Subscript) -> str:
        """The C lvalue ``base[...]`` of a pointer: a container's element, or a window's."""
        t = base.type
        assert isinstance(t, Pointer)
        indices = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        want = t.dims if t.space == "window" else 1
        if len(indices) != want:
            what = f"a {t.dims}D window" if t.space == "window" else "a container (seen flat)"
            self.fail(node, f"{what} takes {want} index{'es' if want > 1 else ''}, got {len(indices)}")
        codes = []
        for index_node in indices:
            index = self.expr(index_node)
            it = index.type
            if not isinstance(it, Scalar) or it.kind not in "iu":
                self.fail(index_node, f"an index must be an integer, not a {describe(it)}")
            codes.append(index.code if index.const is None else self.literal(index.const, INT64, index_node))
        if t.space == "window" and t.dims > 1:
            return f"ps_get({base.code}, {', '.join(codes)})"
        return f"{base.code}[{codes[0]}]"

    def expr_BinOp(self, node: ast.BinOp) -> Value:
        return self.binary(node.op, self.expr(node.left), self.expr(node.right), node)

    def binary(self, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value:
        ufunc, symbol, python = _BINARY[type(op)]
        lt, rt = left.type, right.type
        if not isinstance(lt, Scalar) or not isinstance(rt, Scalar):
            self.fail(node, f"{symbol} of a {describe(lt)} and a {describe(rt)} is not supported")
        if lt.weak and rt.weak and left.const is not None and right.const is not None:
            return self.fold(python, (left.const, right.const), node)
        ins, out = self.resolve(ufunc, (lt, rt), symbol, node)
        a, b = self.convert(left, ins[0], node), self.convert(right, ins[1], node)
        c = c_name(out)
        if isinstance(op, ast.Pow):
            code = self.power(right, a, b, out, node)
        elif isinstance(op, ast.FloorDiv | ast.Mod):
            if out.kind == "u" and right.const:  # a nonzero constant divisor: C's / and % agree
                code = f"({a} {'/' if isinstance(op, ast.FloorDiv) else '%'} {b})"
            else:
                suffix = self.runtime("divmod", out)
                code = f"ps_{'floordiv' if isinstance(op, ast.FloorDiv) else 'mod'}_{suffix}({bare(a)}, {bare(b)})"
        else:
            code = f"({a} {symbol} {b})"
        if c in _NARROW and not code.startswith("ps_"):
            code = f"({c}){code}"
        return Value(code, out)

    def power(self, right: Value, a: str, b: str, out: Scalar, node: ast.AST) -> str:
        """``a ** b``, with NumPy's shortcuts for the exponents 2, 0.5, 1, 0 and -1 (exact as in
        NumPy, and as fast as writing them out)."""
        e = right.const
        if out.kind == "f":
            if e == 2:
                return f"({a} * {a})" if set(a) <= _SIMPLE else f"ps_square_{self.runtime('square', out)}({bare(a)})"
            if e == 0.5:
                return f"sqrt({bare(a)})"
            if e == 1:
                return a
            if e == -1:
                return f"({self.literal(1, out.dtype, node)} / {self.atom(a)})"
            if e == 0:
                return self.literal(1, out.dtype, node)
            return f"pow({bare(a)}, {bare(b)})"
        if e == 2:
            return f"({a} * {a})" if set(a) <= _SIMPLE else f"ps_square_{self.runtime('square', out)}({bare(a)})"
        return f"ps_ipow_{self.runtime('ipow', out)}({bare(a)}, {bare(b)})"

    def resolve(
        self, ufunc: np.ufunc, operands: tuple[Scalar, ...], what: str, node: ast.AST
    ) -> tuple[tuple[Scalar, ...], Scalar]:
        try:
            ins, out = resolve(ufunc, operands, self.fp64)
        except PromotionError as exc:
            self.fail(node, f"{what} of {' and '.join(map(str, operands))}: NumPy has no such operation ({exc})")
        for t in (*ins, out):
            if not supported(t.dtype):
                advice = (
                    "write the function in C, where complex numbers are cfloat and cdouble (cfloat_mul, ...)"
                    if t.dtype.kind == "c"
                    else "convert the operands first (e.g. np.float32(x))"
                )
                self.fail(
                    node,
                    f"{what} of {' and '.join(map(str, operands))} gives {t.dtype} in NumPy, which Python user "
                    f"functions do not compute; {advice}",
                )
        return ins, out

    def fold(self, python: Callable[..., Any], values: tuple[Any, ...], node: ast.AST) -> Value:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = python(*values)
        except (ArithmeticError, ValueError) as exc:
            self.fail(node, f"this constant expression fails in Python: {exc}")
        if isinstance(result, np.generic):
            result = result.item()
        if isinstance(result, bool):
            return Value("true" if result else "false", Scalar(BOOL), result)
        return self.constant(result, node)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Value:
        if isinstance(node.op, ast.Not):
            return Value(f"(!{self.atom(self.test(node.operand))})", Scalar(BOOL))
        value = self.expr(node.operand)
        t = value.type
        if not isinstance(t, Scalar):
            self.fail(node, f"a unary operator on a {describe(t)} is not supported")
        if isinstance(node.op, ast.UAdd):
            return value
        if t.weak and value.const is not None:
            return self.fold(operator.neg if isinstance(node.op, ast.USub) else operator.invert, (value.const,), node)
        ufunc = np.negative if isinstance(node.op, ast.USub) else np.invert
        ins, out = self.resolve(ufunc, (t,), "-" if isinstance(node.op, ast.USub) else "~", node)
        a = self.convert(value, ins[0], node)
        if out.dtype == BOOL:
            return Value(f"(!{self.atom(a)})", out)
        code = f"({'-' if isinstance(node.op, ast.USub) else '~'}{self.atom(a)})"
        return Value(f"({c_name(out)}){code}" if c_name(out) in _NARROW else code, out)

    def test(self, node: ast.expr) -> str:
        """The C condition for Python's truth of ``node``."""
        if isinstance(node, ast.BoolOp):
            joiner = " && " if isinstance(node.op, ast.And) else " || "
            return "(" + joiner.join(self.atom(self.test(v)) for v in node.values) + ")"
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return f"(!{self.atom(self.test(node.operand))})"
        return self.truth(self.expr(node), node)

    def truth(self, value: Value, node: ast.AST) -> str:
        t = value.type
        if not isinstance(t, Scalar):
            self.fail(node, f"the truth of a {describe(t)} is not defined here")
        if value.const is not None:
            return "true" if value.const else "false"
        return value.code if t.dtype == BOOL else f"({value.code} != 0)"

    def expr_BoolOp(self, node: ast.BoolOp) -> Value:
        values = [self.expr(v) for v in node.values]
        for v, n in zip(values, node.values):
            if not isinstance(v.type, Scalar) or v.type.dtype != BOOL:
                self.fail(
                    n,
                    "'and'/'or' of numbers gives one of the numbers in Python; compare explicitly "
                    "(x > 0 and y > 0) or write a conditional expression (a if c else b)",
                )
        joiner = " && " if isinstance(node.op, ast.And) else " || "
        return Value("(" + joiner.join(self.atom(v.code) for v in values) + ")", Scalar(BOOL))

    def expr_Compare(self, node: ast.Compare) -> Value:
        parts = []
        left = self.expr(node.left)
        consts = []
        for op, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node)
            ufunc, symbol, python = _COMPARE[type(op)]
            lt, rt = left.type, right.type
            if not isinstance(lt, Scalar) or not isinstance(rt, Scalar):
                self.fail(node, f"{symbol} of a {describe(lt)} and a {describe(rt)} is not supported")
            if left.const is not None and right.const is not None and lt.weak and rt.weak:
                consts.append(python(left.const, right.const))
            else:
                ins, _ = self.resolve(ufunc, (lt, rt), symbol, node)
                if ins[0] != ins[1]:
                    self.fail(node, f"{symbol} of {lt} and {rt} is not supported; convert one of them first")
                parts.append(f"({self.convert(left, ins[0], node)} {symbol} {self.convert(right, ins[1], node)})")
            left = right
        if not parts:
            return Value("true" if all(consts) else "false", Scalar(BOOL), all(consts))
        if consts and not all(consts):
            return Value("false", Scalar(BOOL), False)
        return Value(parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")", Scalar(BOOL))

    def expr_IfExp(self, node: ast.IfExp) -> Value:
        condition = self.test(node.test)
        a, b = self.expr(node.body), self.expr(node.orelse)
        return self.choose(condition, a, b, node)

    def choose(self, condition: str, a: Value, b: Value, node: ast.AST) -> Value:
        ta = self.stored(a, node) if isinstance(a.type, Tuple) else a.type
        tb = self.stored(b, node) if isinstance(b.type, Tuple) else b.type
        t = None if ta is None or tb is None else join(ta, tb, self.fp64)
        if t is None or isinstance(t, Pointer | Tuple):
            self.fail(node, f"the two values, a {describe(a.type)} and a {describe(b.type)}, do not mix")
        code = f"({condition} ? {self.convert(a, t, node)} : {self.convert(b, t, node)})"
        return Value(code, t)

    # -- calls -----------------------------------------------------------------------------

    def expr_Call(self, node: ast.Call) -> Value:
        from .function import PyFunction

        fn = self.analysis.outside.get(node.func, _MISSING)
        if fn is _MISSING:
            self.fail(node, f"{ast.unparse(node.func)} is not a function user functions can call")
        if isinstance(fn, PyFunction):
            return self.call_helper(fn, node)
        if isinstance(fn, types.FunctionType):
            self.fail(
                node,
                f"call to the Python function {fn.__qualname__}, which is not a @ps.function: decorate "
                "it with @ps.function to call it from a user function",
            )
        if fn is range:
            self.fail(node, "range() can only be the iterable of a for loop")
        entry = calls.lookup(fn)
        if entry is None:
            self.fail(node, f"call to {describe_object(fn)}, which user functions cannot translate")
        if isinstance(entry, calls.Conversion):
            return self.conversion(entry, node)
        low, high = entry.args
        if not low <= len(node.args) <= high:
            count = str(low) if low == high else f"{low} to {high}"
            self.fail(node, f"{entry.name} takes {count} arguments here, got {len(node.args)}")
        args = [self.expr(a) for a in node.args]
        if entry.name.startswith("numpy.") and all(isinstance(a.type, Scalar) and a.type.weak for a in args):
            args = [self.strengthen(a) for a in args]  # NumPy takes Python numbers alone as int64, float64
        return getattr(self, f"call_{entry.kind}")(entry, args, node)

    def strengthen(self, value: Value) -> Value:
        t = materialise(value.type, self.fp64) if value.type is not None else None
        node = self.analysis.located.node
        if value.const is None or not isinstance(t, Scalar):
            return Value(self.convert(value, t, node), t) if t is not None else value
        return Value(self.literal(value.const, t.dtype, node), t, value.const)

    def numbers(self, entry: calls.Function, args: list[Value], node: ast.AST) -> tuple[Scalar, ...]:
        found = []
        for a in args:
            if not isinstance(a.type, Scalar):
                self.fail(node, f"{entry.name} of a {describe(a.type)} is not supported")
            found.append(a.type)
        return tuple(found)

    def folded(
        self, entry: calls.Function, args: list[Value], node: ast.AST, python: Callable[..., Any]
    ) -> Value | None:
        if all(a.const is not None and isinstance(a.type, Scalar) and a.type.weak for a in args):
            return self.fold(python, tuple(a.const for a in args), node)
        return None

    def call_ufunc(self, entry: calls.Function, args: list[Value], node: ast.AST) -> Value:
        assert entry.ufunc is not None
        operands = self.numbers(entry, args, node)
        folded = self.folded(entry, args, node, entry.ufunc)
        if folded is not None:
            return folded
        ins, out = self.resolve(entry.ufunc, operands, entry.name, node)
        codes = [self.convert(a, t, node) for a, t in zip(args, ins)]
        if out.kind in "iub":
            if entry.c in ("floor", "ceil", "trunc", "rint"):
                return Value(codes[0], out)  # NumPy's integer loops: the value itself
            if entry.c in ("fmax", "fmin"):  # on integers, NumPy's maximum and minimum
                which = "maximum" if entry.c == "fmax" else "minimum"
                return Value(f"ps_{which}_{self.runtime('maximum', out)}({codes[0]}, {codes[1]})", out)
            self.fail(node, f"{entry.name} of integers is not supported; convert to a float first")
        return Value(f"{entry.c}({', '.join(map(bare, codes))})", out)

    def call_predicate(self, entry: calls.Function, args: list[Value], node: ast.AST) -> Value:
        (t,) = self.numbers(entry, args, node)
        if t.kind != "f":  # integers are never NaN or infinite
            result = entry.c == "isfinite"
            return Value("true" if result else "false", Scalar(BOOL), result)
        return Value(f"({entry.c}({args[0].code}) != 0)", Scalar(BOOL))

    def call_to_int(self, entry: calls.Function, args: list[Value], node: ast.AST) -> Value:
        (t,) = self.numbers(entry, args, node)
        folded = self.folded(entry, args, node, getattr(math, entry.c))
        if folded is not None:
            return folded
        code = args[0].code if t.kind in "iub" else f"{entry.c}({args[0].code})"
        return Value(f"(long){self.atom(code)}", weak_int())

    def call_round(self, entry: calls.Function, args: list[Value], node: ast.AST) -> Value:
        (t,) = self.numbers(entry, args, node)
        folded = self.folded(entry, args, node, round)
        if folded is not None:
            return folded
        code = args[0].code if t.kind in "iub" else f"rint({args[0].code})"
        return Value(f"(long){self.atom(code)}", weak_int())

    def call_square(self, entry: calls.Function, args: list[Value], node: ast.AST) -> Value:
        return self.binary(ast.Pow(), args[0], self.constant(2, node), node)

    def call_pow(self, entry: calls.Function, args: list[Value], node: ast.AST) -> Value:
        return self.binary(ast.Pow(), args[0], args[1], node)

    def call_abs(self, entry: calls.Function, args: list[Value], node: ast.AST) -> Value:
        (t,) = self.numbers(entry, args, node)
        folded = self.folded(entry, args, node, abs)
        if folded is not None:
            return folded
        ins, out = self.resolve(np.absolute, (t,), entry.name, node)
        a = self.convert(args[0], ins[0], node)
        if out.kind == "f":
            return Value(f"fabs({a})", out)
        if out.kind == "i":
            return Value(f"ps_abs_{self.runtime('abs', out)}({a})", out)
        return Value(a, out)

    def call_max(self, entry: calls.Function, args: list[Value], node: ast.AST) -> Value:
        """Python's max and min: the first of the largest (smallest), in the type NumPy would
        give both."""
        self.numbers(entry, args, node)
        result = args[0]
        for other in args[1:]:
            folded = self.folded(entry, [result, other], node, max if entry.c == "max" else min)
            if folded is not None:
                result = folded
                continue
            pair = self.numbers(entry, [result, other], node)
            _, out = self.resolve(entry.ufunc or np.maximum, pair, entry.name, node)
            a, b = self.convert(result, out, node), self.convert(other, out, node)
            result = Value(f"ps_{entry.c}_{self.runtime('minmax', out)}({bare(a)}, {bare(b)})", out)
        return result

    call_min = call_max

    def call_maximum(self, entry: calls.Function, args: list[Value], node: ast.AST) -> Value:
        assert entry.ufunc is not None
        ins, out = self.resolve(entry.ufunc, self.numbers(entry, args, node), entry.name, node)
        a, b = (self.convert(v, t, node) for v, t in zip(args, ins))
        return Value(f"ps_{entry.c}_{self.runtime('maximum', out)}({bare(a)}, {bare(b)})", out)

    def call_clip(self, entry: calls.Function, args: list[Value], node: ast.AST) -> Value:
        x, low, high = args
        lower = self.call_maximum(calls.Function("numpy.clip", "maximum", np.maximum, "maximum"), [x, low], node)
        return self.call_maximum(calls.Function("numpy.clip", "maximum", np.minimum, "minimum"), [lower, high], node)

    def call_where(self, entry: calls.Function, args: list[Value], node: ast.AST) -> Value:
        condition, a, b = args
        if all(isinstance(v.type, Scalar) and v.type.weak for v in (a, b)):
            # NumPy makes the two values an array whatever the condition: Python numbers alone
            # become int64 or float64, as np.where(x > 0, 2, 3) is int64 for any x
            a, b = self.strengthen(a), self.strengthen(b)
        return self.choose(self.truth(condition, node), a, b, node)

    def conversion(self, entry: calls.Conversion, node: ast.Call) -> Value:
        if len(node.args) != 1:
            self.fail(node, f"{entry.name}() takes one argument here")
        value = self.expr(node.args[0])
        t = value.type
        if not isinstance(t, Scalar):
            self.fail(node, f"{entry.name}() of a {describe(t)} is not supported")
        if entry.weak:
            target = weak_int() if entry.dtype.kind == "i" else weak_float(self.fp64)
        else:
            target = Scalar(entry.dtype)
        if value.const is not None:
            python: Callable[[Any], Any] = entry.dtype.type
            if entry.weak or entry.dtype == BOOL:
                python = {"i": int, "f": float, "b": bool}[entry.dtype.kind]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    result = python(value.const)
            except (ArithmeticError, ValueError, RuntimeWarning) as exc:
                self.fail(node, f"{entry.name}({value.const!r}) fails in NumPy: {exc}")
            result = result.item() if isinstance(result, np.generic) else result
            if entry.weak:
                return self.constant(result, node)
            return Value(self.literal(result, entry.dtype, node), target, result)
        if target.dtype == BOOL:
            return Value(self.truth(value, node), target)
        return Value(self.convert(value, Scalar(target.dtype), node), target)


def bare(code: str) -> str:
    """``code`` without the parentheses around all of it (for statements and arguments)."""
    while code.startswith("(") and balanced_outer(code):
        code = code[1:-1]
    return code


def balanced_outer(code: str) -> bool:
    """Whether the parenthesis opening ``code`` closes at its end."""
    depth = 0
    for k, ch in enumerate(code):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return k == len(code) - 1
    return False


def describe(t: Type | None) -> str:
    if t is None:
        return "call that returns nothing"
    if isinstance(t, Scalar):
        return f"number of type {t}" if t.dtype != BOOL else "bool"
    if isinstance(t, Record):
        return f"struct {t}"
    return str(t)


def describe_object(obj: Any) -> str:
    if obj is Index:
        return "ps.Index"
    module = getattr(obj, "__module__", None) or getattr(obj, "__name__", "")
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
    if isinstance(obj, types.ModuleType):
        return f"the module {obj.__name__}"
    return f"{module}.{name}" if module and module != "builtins" else str(name)


_MISSING = object()
