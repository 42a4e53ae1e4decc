"""What every skeleton shares: a per-(element types, device) cache of built kernels, and checks
of the containers a call receives."""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

import numpy as np

from ..containers.base import Container
from ..errors import DTypeError, ShapeError
from .arguments import check_container

P = TypeVar("P")


class Skeleton:
    """Base of the skeleton classes: built once from user functions, callable many times.

    Given Python functions instead of C source, a skeleton class makes an instance of its
    subclass from ``pyfunc.specialise``, which translates them per call types and runs an
    instance built from the C.
    """

    name = "Skeleton"

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        from .pyfunc.specialise import PythonSkeleton, is_python_source, python_class

        if not issubclass(cls, PythonSkeleton) and any(map(is_python_source, (*args, *kwargs.values()))):
            cls = python_class(cls)
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__call__" in cls.__dict__:
            cls.__call__ = _placed(cls.__dict__["__call__"])  # type: ignore[method-assign]

    def __init__(self) -> None:
        self._plans: dict[Hashable, Any] = {}

    def _plan(self, key: Hashable, make: Callable[[], P]) -> P:
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = make()
        return plan

    def _inputs(
        self, values: Sequence[Any], names: Sequence[str], *, same_shape: bool = True, bools: bool = False
    ) -> list[Container]:
        """Check that the inputs are containers on one device (and of one shape if asked), of
        bool elements only where the skeleton takes them (``bools``)."""
        first = values[0]
        if not isinstance(first, Container):
            check_container(first, f"{self.name}: {names[0]}")
        found = [first]
        for value, name in zip(values, names) if not bools else ():
            if isinstance(value, Container) and value.dtype.kind == "b":
                raise DTypeError(
                    f"{self.name}: {name} holds bools, which Map, Zip and Generate take; convert it with "
                    "astype(np.uint8) for this skeleton"
                )
        for value, name in zip(values[1:], names[1:]):
            c = check_container(value, f"{self.name}: {name}", first.device)
            if same_shape and (c.shape != first.shape or type(c) is not type(first)):
                raise ShapeError(
                    f"{self.name}: {name} is a {type(c).__name__} of shape {c.shape}, "
                    f"{names[0]} a {type(first).__name__} of shape {first.shape}"
                )
            found.append(c)
        return found

    def _output(
        self,
        out: Any,
        like: Container,
        shape: tuple[int, ...],
        dtype: Any,
        inputs: Sequence[Container],
        *,
        may_alias: bool,
    ) -> Container:
        """A new output container, or ``out`` checked for shape, dtype, device and aliasing."""
        if out is None:
            return type(like)._made(shape, np.dtype(dtype), like.device)
        check_container(out, f"{self.name}: out", like.device)
        if out.shape != shape or out.dtype != dtype:
            raise ShapeError(
                f"{self.name}: out has shape {out.shape} and dtype {out.dtype}; "
                f"the result has shape {shape} and dtype {dtype}"
            )
        if not may_alias and any(out is c for c in inputs):
            raise ShapeError(
                f"{self.name}: out must not be one of the inputs (elements are read after others are written)"
            )
        return out

    def __repr__(self) -> str:
        return f"ps.{self.name}(...)"


def _placed(call: Callable[..., Any]) -> Callable[..., Any]:
    """A skeleton's ``__call__`` that hands a call with a distributed container among its
    arguments to that container's distribution (``parskel.dist``), which runs ``call`` on each
    part at once and combines the results; other calls go straight to ``call``."""

    @functools.wraps(call)
    def placed(self: Skeleton, *args: Any, **kwargs: Any) -> Any:
        for value in (*args, *kwargs.values()) if kwargs else args:
            if isinstance(value, Container) and value.distribution is not None:
                return value.distribution.run(self, call, args, kwargs)
        return call(self, *args, **kwargs)

    return placed
