"""What a Python user function is made of, checked once before any type is known: its
parameters, its local variables, the outside objects it names (constants, modules, functions,
types), and every construct outside the translatable subset, refused with its line."""

from __future__ import annotations

import ast
import builtins
import numbers
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import calls
from .source import Located

_UNSUPPORTED_EXPRESSIONS: dict[type, str] = {
    ast.List: "a list",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.ListComp: "a list comprehension",
    ast.SetComp: "a set comprehension",
    ast.DictComp: "a dict comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.Lambda: "a lambda inside a user function",
    ast.JoinedStr: "an f-string",
    ast.Starred: "* unpacking",
    ast.NamedExpr: "the := operator",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield from",
    ast.Slice: "a slice",
}
_UNSUPPORTED_STATEMENTS: dict[type, str] = {
    ast.Import: "import",
    ast.ImportFrom: "import",
    ast.Global: "a global declaration",
    ast.Nonlocal: "a nonlocal declaration",
    ast.Try: "try",
    ast.With: "with",
    ast.Raise: "raise",
    ast.Assert: "assert",
    ast.Delete: "del",
    ast.ClassDef: "a class definition",
    ast.FunctionDef: "a nested function (define it at module level with @ps.function and call it)",
    ast.AsyncFunctionDef: "an async function",
    ast.AsyncFor: "async for",
    ast.AsyncWith: "async with",
    ast.Match: "match",
}
_OPERATORS: dict[type, str] = {ast.MatMult: "the @ operator"}
_COMPARISONS = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


class Index:
    """Annotation for a parameter that receives the element's index (C's ``ps_index``): a Matrix
    gives row and column to two such parameters, a Tensor3 ``i, j, k`` to three and a Tensor4
    ``i, j, k, l`` to four (first axis first), any container the flat index to one. Keyword-only
    parameters (after ``*``, as in ``lambda x, *, i: ...``) are index parameters too."""


@dataclass(frozen=True)
class Param:
    name: str
    node: ast.arg
    index: bool
    annotation: np.dtype | None


@dataclass
class Analysis:
    """A function checked against the subset, with its names resolved."""

    located: Located
    params: list[Param]
    body: list[ast.stmt]
    returns: np.dtype | None
    locals: set[str]
    # outside objects by the node naming them (a Name, or an Attribute of a module)
    outside: dict[ast.AST, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.located.name


def is_constant(value: Any) -> bool:
    return isinstance(value, (numbers.Number, np.bool_)) and not isinstance(value, complex | np.complexfloating)


def analyse(located: Located, fn: types.FunctionType) -> Analysis:
    node = located.node
    _check_arguments(located, node.args)
    body: list[ast.stmt] = (
        [ast.Return(value=node.body, lineno=node.body.lineno, col_offset=node.body.col_offset)]
        if isinstance(node, ast.Lambda)
        else list(node.body)
    )
    resolver = _Resolver(located, fn)
    params = []
    for k, arg in enumerate([*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]):
        keyword_only = k >= len(node.args.posonlyargs) + len(node.args.args)
        annotation = resolver.annotation(arg.annotation) if arg.annotation is not None else None
        index = keyword_only or annotation is Index
        if index and annotation not in (None, Index):
            raise located.error(arg, f"the index parameter {arg.arg!r} cannot be annotated {annotation}")
        dtype = None if annotation in (None, Index) else _dtype_annotation(located, arg, annotation)
        params.append(Param(arg.arg, arg, index, dtype))
    returns = None
    if isinstance(node, ast.FunctionDef) and node.returns is not None:
        found = resolver.annotation(node.returns)
        if found is not None:
            returns = _dtype_annotation(located, node.returns, found)
    names = {p.name for p in params}
    assigned = _assigned(body)
    resolver.locals = names | assigned
    for stmt in body:
        _check_statement(located, stmt)
        resolver.visit(stmt)
    return Analysis(located, params, body, returns, assigned - names, resolver.outside)


def _dtype_annotation(located: Located, node: ast.AST, value: Any) -> np.dtype:
    dtype = calls.dtype_of_annotation(value)
    if dtype is None:
        raise located.error(
            node,
            f"the annotation {value!r} is not a type user functions know: use a NumPy scalar type "
            "(np.float32, ...), float, int, bool, a struct from ps.struct, or ps.Index",
        )
    return dtype


def _check_arguments(located: Located, args: ast.arguments) -> None:
    if args.vararg or args.kwarg:
        raise located.error(located.node, "*args and **kwargs are not supported in a user function")
    if args.defaults or any(d is not None for d in args.kw_defaults):
        kind = "a lambda" if isinstance(located.node, ast.Lambda) else "a user function"
        raise located.error(located.node, f"default parameter values are not supported in {kind}")


def _assigned(body: list[ast.stmt]) -> set[str]:
    found: set[str] = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.add(node.id)
    return found


def _check_statement(located: Located, stmt: ast.stmt) -> None:
    """Refuse the constructs outside the subset (types are checked during translation)."""
    for node in ast.walk(stmt):
        what = _UNSUPPORTED_STATEMENTS.get(type(node)) or _UNSUPPORTED_EXPRESSIONS.get(type(node))
        if what is None and isinstance(node, ast.BinOp | ast.AugAssign):
            what = _OPERATORS.get(type(node.op))
        if what is None and isinstance(node, ast.Compare):
            refused = [_COMPARISONS[type(op)] for op in node.ops if type(op) in _COMPARISONS]
            what = f"the {refused[0]!r} operator" if refused else None
        if what is None and isinstance(node, ast.For | ast.While) and node.orelse:
            what = f"else on a {'for' if isinstance(node, ast.For) else 'while'} loop"
        if what is None and isinstance(node, ast.For) and not _is_range(node.iter):
            what = "a for loop over anything but range(...)"
        if what is None and isinstance(node, ast.For) and not isinstance(node.target, ast.Name):
            what = "a for loop with more than one loop variable"
        if what is None and isinstance(node, ast.Call) and node.keywords:
            what = "keyword arguments in a call"
        if what is None and isinstance(node, ast.Constant):
            what = _constant_problem(node, stmt)
        if what is not None:
            raise located.error(node, f"{what} is not supported in a user function")


def _is_range(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "range"
        and 1 <= len(node.args) <= 3
        and not node.keywords
    )


def _constant_problem(node: ast.Constant, stmt: ast.stmt) -> str | None:
    value = node.value
    if isinstance(value, bool | int | float):
        return None
    if isinstance(value, str) and isinstance(stmt, ast.Expr) and stmt.value is node:
        return None  # a docstring or a comment-like string statement
    if value is None and isinstance(stmt, ast.Return) and stmt.value is node:
        return None
    names = {str: "a string", bytes: "bytes", complex: "a complex number", type(None): "None"}
    return names.get(type(value), f"the constant {value!r}")


class _Resolver(ast.NodeVisitor):
    """Resolves the names a function reads from outside (closure, globals, builtins) to the
    objects they are bound to now; anything but numbers, modules, known functions, types and
    @ps.function helpers is refused (a closure over a non-constant)."""

    def __init__(self, located: Located, fn: types.FunctionType) -> None:
        self.located = located
        self.locals: set[str] = set()
        self.outside: dict[ast.AST, Any] = {}
        cells = fn.__closure__ or ()
        self.closure = {name: cell for name, cell in zip(fn.__code__.co_freevars, cells)}
        self.globals = fn.__globals__

    def lookup(self, node: ast.Name) -> Any:
        name = node.id
        if name in self.closure:
            try:
                return self.closure[name].cell_contents
            except ValueError:
                raise self.located.error(node, f"{name!r} is not yet assigned where the function is defined") from None
        if name in self.globals:
            return self.globals[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise self.located.error(node, f"name {name!r} is not defined")

    def annotation(self, node: ast.expr) -> Any:
        """The object an annotation names; ``None`` for ``typing.Any`` and ``object``, which
        leave the type to inference."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a postponed annotation
            text = node.value
            try:
                parsed = ast.parse(text, mode="eval").body
            except SyntaxError:
                raise self.located.error(node, f"cannot read the annotation {text!r}") from None
            ast.increment_lineno(parsed, node.lineno - 1)
            node = parsed
        value = self._static(node)
        if value is _NOT_STATIC:
            raise self.located.error(node, "an annotation must name a type (np.float32, ps.Index, ...)")
        return None if value is Any or value is object else value

    def _static(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Name) and node.id not in self.locals:
            return self.lookup(node)
        if isinstance(node, ast.Attribute):
            base = self._static(node.value)
            if base is _NOT_STATIC:
                return _NOT_STATIC
            if not isinstance(base, types.ModuleType):
                kind = type(base).__name__
                raise self.located.error(node, f"{ast.unparse(node)}: attributes of {kind} objects are not supported")
            try:
                return getattr(base, node.attr)
            except AttributeError:
                raise self.located.error(node, f"module {base.__name__!r} has no attribute {node.attr!r}") from None
        return _NOT_STATIC

    def visit_Name(self, node: ast.Name) -> None:
        if node.id not in self.locals:
            self._keep(node, self.lookup(node))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        value = self._static(node)
        if value is _NOT_STATIC:
            self.generic_visit(node)
        else:
            self._keep(node, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.outside[node.annotation] = self.annotation(node.annotation)
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def _keep(self, node: ast.expr, value: Any) -> None:
        from .function import PyFunction

        allowed = (
            is_constant(value)
            or isinstance(value, types.ModuleType | PyFunction | np.dtype)
            or value is Index
            or value is builtins.range
            or calls.lookup(value) is not None
            or isinstance(value, types.FunctionType)  # refused where called, with advice
        )
        if not allowed and callable(value):
            raise self.located.error(
                node,
                f"{ast.unparse(node)} is a function user functions cannot call: they call math and NumPy "
                "element-wise functions, abs, min, max, round, pow, int, float, bool, NumPy scalar types "
                "and @ps.function helpers",
            )
        if not allowed:
            raise self.located.error(
                node,
                f"{ast.unparse(node)!r} is a {type(value).__name__}: a user function can only use numbers, "
                "math and NumPy functions and @ps.function helpers from outside (a closure over a "
                "non-constant); pass arrays and other values as extra arguments",
            )
        self.outside[node] = value


_NOT_STATIC = object()
