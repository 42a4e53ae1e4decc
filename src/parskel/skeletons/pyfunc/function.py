"""``PyFunction``: a Python function that skeletons translate to C, once per tuple of argument
types (``ps.function`` is its decorator; skeletons wrap plain functions and lambdas in one)."""

from __future__ import annotations

import re
import types
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ...containers.base import Container
from ...errors import UserFunctionError
from . import ctext
from .analysis import Analysis, Index, analyse
from .source import display_name, locate
from .statements import FunctionTranslator, Translation
from .types import Pointer, Scalar, Type, element, weak_float, weak_int

_wrapped: weakref.WeakKeyDictionary[types.FunctionType, PyFunction] = weakref.WeakKeyDictionary()
_helper_names: dict[tuple[Any, ...], str] = {}


class PyFunction:
    """A Python function usable as a skeleton's user function and callable from other ones.

    It still runs as Python (``f(2.0)``); skeletons translate it to C for the types of the
    containers and arguments they are called with. :meth:`source` shows that C.

    >>> import math
    >>> @ps.function
    ... def norm(x, y):
    ...     return math.sqrt(x * x + y * y)
    >>> norm(3.0, 4.0)
    5.0
    >>> print(norm.source(np.float32, np.float32))  # doctest: +ELLIPSIS
    #include "skeletons/python.h"
    /* norm: ... */
    float norm(float x, float y)
    {
        return sqrt((x * x) + (y * y));
    }
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        if isinstance(fn, PyFunction):
            fn = fn.__wrapped__
        if not isinstance(fn, types.FunctionType):
            raise UserFunctionError(
                f"{getattr(fn, '__name__', fn)!r} is not a Python function defined with def or lambda "
                "(built-ins and NumPy functions cannot be translated themselves: wrap them, e.g. "
                "lambda x: np.sqrt(x))"
            )
        self.py: types.FunctionType = fn
        self.name = display_name(fn)
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__wrapped__: types.FunctionType = fn
        self._analysis: Analysis | None = None
        self._translations: dict[tuple[Any, ...], Translation] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.py(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<ps.function {self.name}>"

    @property
    def analysis(self) -> Analysis:
        """The function checked against the translatable subset (once)."""
        if self._analysis is None:
            self._analysis = analyse(locate(self.py), self.py)
        return self._analysis

    def check(self) -> None:
        """Raise :class:`UserFunctionError` now for anything outside the subset."""
        self.analysis  # noqa: B018 (the property does the work)

    @property
    def arguments(self) -> int:
        """How many arguments a skeleton passes (its parameters but the index ones)."""
        return sum(not p.index for p in self.analysis.params)

    @property
    def indices(self) -> int:
        return sum(p.index for p in self.analysis.params)

    def translation(
        self,
        args: tuple[Type, ...],
        returns: Type | None = None,
        *,
        fp64: bool = True,
        stack: tuple[PyFunction, ...] = (),
        main: bool = True,
    ) -> Translation:
        """The C translation for arguments of these types (cached per types)."""
        key = (args, returns, fp64, main)
        found = self._translations.get(key)
        if found is None:
            name = self._c_name() if main else _helper_name(self, args, fp64)
            translator = FunctionTranslator(
                self, self.analysis, args, returns, fp64=fp64, stack=stack, main=main, c_name=name
            )
            found = self._translations[key] = translator.translate()
        return found

    def _c_name(self) -> str:
        return ctext.Names()("lambda" if self.py.__name__ == "<lambda>" else self.py.__name__)

    def source(self, *types: Any, returns: Any = None, fp64: bool = True) -> str:
        """The C source translated for arguments of ``types``: a dtype (``np.float32``, a
        struct) for a value, Python's ``int`` or ``float`` for a Python number, a container or
        array for a container argument. Index parameters take no type."""
        args = tuple(type_of(t, fp64) for t in types)
        ret = None if returns is None else element(np.dtype(returns))
        return self.translation(args, ret, fp64=fp64).source


def type_of(spec: Any, fp64: bool = True) -> Type:
    """The type a :meth:`PyFunction.source` argument stands for."""
    if spec is int:
        return weak_int()
    if spec is float:
        return weak_float(fp64)
    if isinstance(spec, Container | np.ndarray):
        return Pointer(np.dtype(spec.dtype))
    if isinstance(spec, Scalar | Pointer):
        return spec
    return element(np.dtype(spec))


def function(fn: Callable[..., Any]) -> PyFunction:
    """Decorator: a Python function for skeletons, and callable from other user functions.

    Plain functions and lambdas given to a skeleton are wrapped the same way; decorate the
    ones that other user functions call.
    """
    if isinstance(fn, PyFunction):
        return fn
    if isinstance(fn, types.FunctionType):
        found = _wrapped.get(fn)
        if found is None:
            found = _wrapped[fn] = PyFunction(fn)
        return found
    return PyFunction(fn)


def _helper_name(fn: PyFunction, args: tuple[Type, ...], fp64: bool) -> str:
    """A C name for a helper's translation, the same for the same function and types and
    different otherwise (helpers of several user functions share one program)."""
    key = (fn, args, fp64)
    found = _helper_names.get(key)
    if found is None:
        base = "ps_" + re.sub(r"\W", "_", fn.py.__name__)
        taken = set(_helper_names.values())
        found, k = base, 1
        while found in taken:
            k += 1
            found = f"{base}_{k}"
        _helper_names[key] = found
    return found


__all__ = ["Index", "PyFunction", "function", "type_of"]
