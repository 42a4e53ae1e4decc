"""Finding a Python function's syntax tree in its file, and errors that point at its lines.

The whole file is parsed (once per file text) and the function found by its first line (a
``def``, or the first decorator) or, for a lambda, by the positions of its code in the file:
several lambdas on one line are told apart by their columns. Files that do not parse as a
whole (code run from a text that is not Python) fall back to the block at the ``def``.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import textwrap
import types
from dataclasses import dataclass

from ...errors import UserFunctionError

FunctionNode = ast.FunctionDef | ast.Lambda


@dataclass(frozen=True)
class Located:
    """A function's syntax tree with the file it came from, for messages."""

    node: FunctionNode
    path: str
    lines: tuple[str, ...]
    name: str

    def error(self, node: ast.AST | None, message: str) -> UserFunctionError:
        """An error at ``node``'s line (the function's first line if ``None``)."""
        return UserFunctionError(self.where(node) + f": {message}" + self.quote(node))

    def where(self, node: ast.AST | None) -> str:
        line = getattr(node if node is not None else self.node, "lineno", self.node.lineno)
        return f"{self.path}, line {line}, in {self.name}"

    def quote(self, node: ast.AST | None) -> str:
        line = getattr(node if node is not None else self.node, "lineno", self.node.lineno)
        if 1 <= line <= len(self.lines):
            return "\n    " + self.lines[line - 1].strip()
        return ""


def display_name(fn: types.FunctionType) -> str:
    return "<lambda>" if fn.__name__ == "<lambda>" else fn.__qualname__


def locate(fn: types.FunctionType) -> Located:
    """The syntax tree of ``fn``; a :class:`UserFunctionError` if its source cannot be read."""
    code = fn.__code__
    name = display_name(fn)
    lines = tuple(linecache.getlines(code.co_filename, fn.__globals__))
    if not lines:
        raise UserFunctionError(
            f"the source of the Python function {name} ({code.co_filename}) is not available, so it "
            "cannot be translated; define it in a file or a notebook cell, or give OpenCL C source"
        )
    tree = _parse("".join(lines))
    node: FunctionNode | None = None
    if tree is not None:
        node = _find_lambda(tree, code) if fn.__name__ == "<lambda>" else _find_def(tree, code)
    elif fn.__name__ != "<lambda>":
        node = _def_block(lines, code)
    if node is None:
        raise UserFunctionError(
            f"{code.co_filename}, line {code.co_firstlineno}: cannot find the source of the Python "
            f"function {name} there (was the file changed after it was loaded?)"
        )
    return Located(node, code.co_filename, lines, name)


@functools.lru_cache(maxsize=64)
def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _arguments(node: FunctionNode) -> list[str]:
    a = node.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if a.vararg:
        names.append(a.vararg.arg)
    if a.kwarg:
        names.append(a.kwarg.arg)
    return names


def _parameters(code: types.CodeType) -> list[str]:
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return list(code.co_varnames[:count])


def _find_def(tree: ast.AST, code: types.CodeType) -> ast.FunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == code.co_name:
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            if code.co_firstlineno in (first, node.lineno) and _arguments(node) == _parameters(code):
                return node
    return None


def _find_lambda(tree: ast.AST, code: types.CodeType) -> ast.Lambda | None:
    """The lambda on the code's first line whose body holds every position of the code."""
    # zero-width positions mark the code's entry and exit, not a place in the body
    spots = [(p[0], p[2], p[1], p[3]) for p in code.co_positions() if None not in p and (p[0], p[2]) != (p[1], p[3])]
    best: ast.Lambda | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Lambda) or node.lineno != code.co_firstlineno:
            continue
        if _arguments(node) != _parameters(code):
            continue
        body = node.body
        start = (body.lineno, body.col_offset)
        end = (body.end_lineno or body.lineno, body.end_col_offset or 0)
        inside = all(start <= (line, col) and (end_line, end_col) <= end for line, col, end_line, end_col in spots)
        if inside and (best is None or (node.lineno, node.col_offset) > (best.lineno, best.col_offset)):
            best = node  # the innermost of nested candidates
    return best


def _def_block(lines: tuple[str, ...], code: types.CodeType) -> ast.FunctionDef | None:
    """The ``def`` block at the code's first line, when the file as a whole is not Python."""
    try:
        block = inspect.getblock(list(lines[code.co_firstlineno - 1 :]))
        tree = ast.parse(textwrap.dedent("".join(block)))
    except (SyntaxError, ValueError, IndexError):
        return None
    ast.increment_lineno(tree, code.co_firstlineno - 1)
    return _find_def(tree, code)
