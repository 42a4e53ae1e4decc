"""Skeletons built from Python functions.

``ps.Map(f)`` with a Python ``f`` is a ``Map`` whose calls first find the types ``f`` receives
(the containers' dtypes, the extra arguments' types), translate ``f`` for them to C once, and
hand the call to an ordinary ``Map`` built from that C source; one such ``Map`` is kept per
tuple of types. Each skeleton's rule below says which types its functions receive.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Sequence
from typing import Any, cast

import numpy as np

from ...containers.base import Container
from ...containers.structs import struct_name
from ...errors import DTypeError, UserFunctionError
from ...runtime import Device
from ...runtime import device as select_device
from ..arguments import check_container
from ..userfn import UserFunction, dtype_of
from .function import PyFunction, function
from .types import BOOL, Pointer, Record, Scalar, Type, element, supported, weak_float, weak_int

Sources = dict[str, str]
Plan = tuple[Hashable, Callable[[], Sources]]  # the types of a call, and the C sources for them
Rule = Callable[["PythonSkeleton", tuple[Any, ...], dict[str, Any]], Plan]


def is_python_source(value: Any) -> bool:
    """Whether a skeleton argument is a function to translate (anything callable but a type)."""
    return callable(value) and not isinstance(value, type)


class PythonSkeleton:
    """Placed before a skeleton class in a subclass made for it (see :func:`python_class`)."""

    _base: type
    name: str

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        try:
            bound = inspect.signature(cast(Any, self._base).__init__).bind(None, *args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self.name}: {exc}") from None
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop(next(iter(arguments)))  # self
        self._arguments = arguments
        self._functions: dict[str, PyFunction] = {
            key: function(value) for key, value in arguments.items() if is_python_source(value)
        }
        for fn in self._functions.values():
            fn.check()
        if self.name not in RULES:
            raise UserFunctionError(f"{self.name} takes its user function as OpenCL C source, not as a Python function")
        self._rule = RULES[self.name]
        self._built: dict[Hashable, Any] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key, sources = self._rule(self, args, kwargs)
        built = self._built.get(key)
        if built is None:
            built = self._built[key] = self._base(**{**self._arguments, **sources()})
        return built(*args, **kwargs)

    def __repr__(self) -> str:
        shown = ", ".join(f"{key}={fn.name}" for key, fn in self._functions.items())
        return f"ps.{self.name}({shown})"


_classes: dict[type, type] = {}


def python_class(cls: type) -> type:
    """The subclass of skeleton class ``cls`` for Python user functions (it is still a ``cls``)."""
    found = _classes.get(cls)
    if found is None:
        attributes = {"_base": cls, "__doc__": cls.__doc__, "__module__": cls.__module__}
        attributes["__qualname__"] = cls.__qualname__
        found = _classes[cls] = type(cls.__name__, (PythonSkeleton, cls), attributes)
    return found


# -- types of call arguments -------------------------------------------------------------------


def extra_type(value: Any, fp64: bool, what: str) -> Type:
    """The type an extra argument gives its parameter: a Python number stays weak (NEP 50)."""
    if isinstance(value, Container):
        return Pointer(value.dtype)
    if isinstance(value, bool | np.bool_):
        raise DTypeError(f"{what} is a bool, which kernels cannot take as an argument; pass an int")
    if isinstance(value, np.void):
        record = Record(value.dtype)  # not a vector, or an error that says to write C
        struct_name(value.dtype)  # registered, or a DTypeError that says how
        return record
    if isinstance(value, np.generic):  # before float: np.float64 is a float too
        if not supported(value.dtype):
            raise DTypeError(f"{what} is a {value.dtype} scalar, which kernels do not take")
        return Scalar(value.dtype)
    if isinstance(value, int):
        return weak_int()
    if isinstance(value, float):
        return weak_float(fp64)
    raise TypeError(
        f"{what} is a {type(value).__name__}; give a number, a NumPy scalar, a struct record or a container"
    )


def _extras(sk: PythonSkeleton, values: Sequence[Any], fp64: bool, first: int = 0) -> tuple[Type, ...]:
    return tuple(extra_type(v, fp64, f"{sk.name}: extra argument {first + k + 1}") for k, v in enumerate(values))


def _translate(
    sk: PythonSkeleton,
    key: str,
    args: tuple[Type, ...],
    elements: int,
    fp64: bool,
    returns: Type | None = None,
    *,
    bools: bool = False,
) -> str:
    """The C source of the Python function ``sk`` holds under ``key``, for these arguments."""
    fn = sk._functions[key]
    if fn.arguments != len(args):
        raise UserFunctionError(
            f"{sk.name}: the user function {fn.name} takes {fn.arguments} argument(s) besides index parameters, "
            f"but gets {elements} element(s) and {len(args) - elements} extra argument(s) here"
        )
    done = fn.translation(args, returns, fp64=fp64)
    if done.returns == Scalar(BOOL) and not bools:
        raise fn.analysis.located.error(
            None,
            f"returns a bool, which {sk.name} cannot give (Map, Zip, Generate can); convert it: np.uint8(x > 0)",
        )
    return done.source


def _c_extras(source: str, skeleton: str, role: str, elements: int) -> tuple[int, np.dtype]:
    """How many extra arguments a C user function takes, and its return dtype."""
    fn = UserFunction(source, skeleton, role, elements)
    return len(fn.extras), dtype_of(fn.return_type, fn.where)


def _first(sk: PythonSkeleton, args: tuple[Any, ...], count: int, names: Sequence[str]) -> list[Container]:
    if len(args) < count:
        raise UserFunctionError(f"{sk.name}: expected {count} input container(s), got {len(args)} argument(s)")
    given = zip(args[:count], names)
    return [_described(a) if isinstance(a, np.ndarray) else check_container(a, f"{sk.name}: {n}") for a, n in given]


def _described(x: np.ndarray) -> Container:
    """A container borrowing a host input (nothing is copied or uploaded): it gives the types of a
    call on NumPy arrays, which the skeleton built for them then takes as they are."""
    from ...containers import of_rank

    return of_rank(x.ndim, "a NumPy input")(np.ascontiguousarray(x), copy=False)


_INPUT = ("the input",)
_INPUTS = tuple(f"input {k}" for k in range(64))


def _signature(value: Any) -> Any:
    """What decides the type an argument gives (hashable), cheap to compute on every call."""
    if isinstance(value, Container):
        return (Container, value.dtype)
    if isinstance(value, np.generic):
        return value.dtype
    return type(value)


# -- one rule per skeleton: the key of a call's types, and the C sources for them ----------------


def _elementwise(sk: PythonSkeleton, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Plan:
    count = sk._arguments.get("inputs", 1)
    inputs = _first(sk, args, count, _INPUTS if count > 1 else _INPUT)
    fp64 = inputs[0].device.info.fp64
    key = (fp64, *[c.dtype for c in inputs], *map(_signature, args[count:]))

    def sources() -> Sources:
        types = tuple(element(c.dtype) for c in inputs) + _extras(sk, args[count:], fp64)
        return {"source": _translate(sk, "source", types, count, fp64, bools=True)}

    return key, sources


def _generate(sk: PythonSkeleton, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Plan:
    out = kwargs.get("out")
    dev: Device = out.device if isinstance(out, Container) else select_device(kwargs.get("device"))
    fp64 = dev.info.fp64
    key = (fp64, *map(_signature, args[1:]))
    return key, lambda: {"source": _translate(sk, "source", _extras(sk, args[1:], fp64), 0, fp64, bools=True)}


def _operator(sk: PythonSkeleton, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Plan:
    (a,) = _first(sk, args, 1, ["the input"])
    fp64 = a.device.info.fp64
    key = (fp64, a.dtype, *map(_signature, args[1:]))

    def sources() -> Sources:
        t = element(a.dtype)
        types = (t, t) + _extras(sk, args[1:], fp64)
        return {"source": _translate(sk, "source", types, 2, fp64, returns=t)}

    return key, sources


def _two_stage(sk: PythonSkeleton, first: str, inputs: list[Container], extra: tuple[Any, ...]) -> Plan:
    """A per-element function (map, zip) followed by a reduction operator on its results;
    extra arguments go to the first as many as it takes, the rest to the operator."""
    fp64 = inputs[0].device.info.fp64
    key = (fp64, *[c.dtype for c in inputs], *map(_signature, extra))

    def sources() -> Sources:
        fn = sk._functions.get(first)
        n = len(inputs)
        role = first.split("_")[0]
        k = max(fn.arguments - n, 0) if fn is not None else _c_extras(sk._arguments[first], sk.name, role, n)[0]
        head = tuple(element(c.dtype) for c in inputs) + _extras(sk, extra[:k], fp64)
        tail = _extras(sk, extra[k:], fp64, first=k)
        found: Sources = {}
        if fn is not None:
            found[first] = _translate(sk, first, head, n, fp64)
            returns = fn.translation(head, fp64=fp64).returns
        else:
            returns = element(_c_extras(sk._arguments[first], sk.name, role, n)[1])
        if "reduce_source" in sk._functions:
            assert returns is not None
            operands = (returns, returns) + tail
            found["reduce_source"] = _translate(sk, "reduce_source", operands, 2, fp64, returns=returns)
        return found

    return key, sources


def _map_reduce(sk: PythonSkeleton, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Plan:
    return _two_stage(sk, "map_source", _first(sk, args, 1, ["the input"]), args[1:])


def _all_pairs(sk: PythonSkeleton, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Plan:
    return _two_stage(sk, "zip_source", _first(sk, args, 2, ["A", "B"]), args[2:])


def _map_overlap(sk: PythonSkeleton, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Plan:
    (a,) = _first(sk, args, 1, ["the input"])
    fp64 = a.device.info.fp64
    key = (fp64, a.dtype, a.ndim, *map(_signature, args[1:]))

    def sources() -> Sources:
        types = (Pointer(a.dtype, "window", a.ndim),) + _extras(sk, args[1:], fp64)
        return {"source": _translate(sk, "source", types, 1, fp64)}

    return key, sources


def _permute(sk: PythonSkeleton, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Plan:
    values, _ = _first(sk, args, 2, ["values", "positions"])
    fp64 = values.device.info.fp64
    key = (fp64, values.dtype, *map(_signature, args[2:]))

    def sources() -> Sources:
        types = (element(values.dtype),) + _extras(sk, args[2:], fp64)
        return {"source": _translate(sk, "source", types, 1, fp64)}

    return key, sources


RULES: dict[str, Rule] = {
    "Map": _elementwise,
    "Zip": _elementwise,
    "MapArray": _elementwise,
    "Generate": _generate,
    "Reduce": _operator,
    "Scan": _operator,
    "MapReduce": _map_reduce,
    "AllPairs": _all_pairs,
    "MapOverlap": _map_overlap,
    "Scatter": _permute,
    "Gather": _permute,
}
