"""The parskel side of a benchmark: registry variants and skeletons on a device, as subjects."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import VariantError
from ..runtime import Device, Timing
from .cases import POLYNOMIAL, Inputs, Subject


def _args(family: str, inputs: Inputs) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if family == "scan":
        return inputs, {"inclusive": False}
    if family == "sort":
        return (inputs[0], None), {}
    if family == "sort_pairs":
        return (inputs[0], inputs[1]), {}
    return inputs, {}


def recorded(
    device: Device, run: Callable[..., Any], family: str, params: dict[str, int]
) -> Callable[[Inputs], tuple[Any, Timing]]:
    """A variant's ``run`` with ``params`` as a subject's call on the inputs of ``family``'s case,
    with the device's timing of it."""
    return recorded_call(device, _variant_call(device, run, family, params))


def _variant_call(
    device: Device, run: Callable[..., Any], family: str, params: dict[str, int]
) -> Callable[[Inputs], Any]:
    """A variant's ``run`` with ``params`` on the inputs of ``family``'s case."""

    def call(inputs: Inputs) -> Any:
        args, kwargs = _args(family, inputs)
        return run(device, *args, **kwargs, **params)

    return call


def recorded_call(device: Device, call: Callable[[Inputs], Any]) -> Callable[[Inputs], tuple[Any, Timing]]:
    """``call`` with ``device`` current and its commands recorded, as a subject's
    :attr:`~.cases.Subject.call`: its result and the device's timing of it."""
    import parskel as ps

    def timed(inputs: Inputs) -> tuple[Any, Timing]:
        with ps.using(device), device.record() as rec:
            result = call(inputs)
        return result, rec.timing

    return timed


def unrecorded(device: Device, call: Callable[[Inputs], Any]) -> Callable[[Inputs], tuple[Any, float]]:
    """``call`` with ``device`` current, as a subject's :attr:`~.cases.Subject.plain`: its result
    and the seconds it took, with nothing recorded. A result left on the device (not a host
    array) is waited for within the time.

    >>> import parskel as ps
    >>> plain = unrecorded(ps.device(), lambda inputs: np.sort(inputs[0]))
    >>> result, seconds = plain((np.array([3, 1, 2]),)); result.tolist(), seconds > 0
    ([1, 2, 3], True)
    """
    import parskel as ps

    def plain(inputs: Inputs) -> tuple[Any, float]:
        with ps.using(device):
            start = time.perf_counter()
            result = call(inputs)
            if not _on_host(result):
                device.finish()
            return result, time.perf_counter() - start

    return plain


def _on_host(value: Any) -> bool:
    """Whether ``value`` is a host result (NumPy arrays and numbers, or a tuple of them), which
    the device has finished writing when the call returns.

    >>> _on_host((np.zeros(2), 3.0)), _on_host(None)
    (True, False)
    """
    if isinstance(value, tuple):
        return all(_on_host(v) for v in value)
    return isinstance(value, (np.ndarray, np.generic, float, int))


def variant_subjects(family: str, device: Device, wanted: set[str] | None, notes: list[str]) -> list[Subject]:
    """Every registered variant of ``family`` that ``device`` can run (and ``wanted`` names)."""
    from ..algorithms import registry

    try:
        found = registry.variants(family)
    except VariantError:
        return []
    runnable = {v.name for v in found if not v.unmet(device, v.resolve())}

    def default_at(name: str) -> Callable[[int], bool]:
        """What ``parskel.<family>`` picks for ``size`` inputs: the tuning database's order at
        that size, where it has one (some variants take small inputs only)."""

        def test(size: int) -> bool:
            order = [v for v in registry.preferred(family, device, size) if v in runnable]
            first = next((v for v in order if not registry.get(family, v).unmet(device, None, {"n": size})), None)
            return first == name

        return test

    subjects = []
    for variant in found:
        if wanted is not None and variant.name not in wanted:
            continue
        params = variant.resolve()
        if variant.name not in runnable:
            notes.append(f"{family}/{variant.name} skipped on {device.id}: {'; '.join(variant.unmet(device, params))}")
            continue
        shown = ", ".join(f"{k}={v}" for k, v in params.items())
        bound = _variant_call(device, variant.run, family, params)
        call, plain = recorded_call(device, bound), unrecorded(device, bound)
        subjects.append(
            Subject(family, variant.name, "variant", device.id, call, shown, default_at(variant.name), plain)
        )
    return subjects


# skeletons ----------------------------------------------------------------------------------

_SQUARE = "float square(float x) { return x * x; }"
_FADD = "float add(float a, float b) { return a + b; }"
_IADD = "int add(int a, int b) { return a + b; }"
_FMUL = "float mul(float x, float y) { return x * y; }"


def _horner_c(coefficients: tuple[float, ...]) -> str:
    """``POLYNOMIAL`` as a C user function, by Horner's rule.

    >>> _horner_c((2.0, -1.0, 0.5))
    'float poly(float x) { return ((2.0f) * x + -1.0f) * x + 0.5f; }'
    """
    body = f"{coefficients[0]!r}f"
    for c in coefficients[1:]:
        body = f"({body}) * x + {c!r}f"
    return f"float poly(float x) {{ return {body}; }}"


_POLYNOMIAL = _horner_c(POLYNOMIAL)


# the same user functions in Python, translated by the skeleton: timed beside the C ones
def _square(x: Any) -> Any:
    return x * x


def _polynomial(x: Any) -> Any:
    # POLYNOMIAL written out (the translator reads the source): a test holds them together
    return (
        ((((((0.111111111 * x - 0.125) * x + 0.142857143) * x - 0.166666667) * x + 0.2) * x - 0.25) * x + 0.333333333)
        * x
        - 0.5
    ) * x + 1.0


def _add(a: Any, b: Any) -> Any:
    return a + b


def _mul(x: Any, y: Any) -> Any:
    return x * y


def _skeleton(
    device: Device, make: Callable[[Any], Any], apply: Callable[[Any, Any, Inputs], Any]
) -> tuple[Callable[[Inputs], tuple[Any, Timing]], Callable[[Inputs], tuple[Any, float]]]:
    """A timed call that builds the skeleton on first use (so its compile lands in the first
    call), and the same call unrecorded (:func:`unrecorded`)."""
    import parskel as ps

    built: list[Any] = []

    def applied(inputs: Inputs) -> Any:
        if not built:
            built.append(make(ps))
        return apply(ps, built[0], inputs)

    return recorded_call(device, applied), unrecorded(device, applied)


def _scan_values(ps: Any, skeleton: Any, inputs: Inputs) -> np.ndarray:
    values, _total = skeleton(ps.Vector(inputs[0], copy=False))
    return values.numpy()


def _reduced(ps: Any, s: Any, inputs: Inputs) -> Any:
    return s(ps.Vector(inputs[0], copy=False))


def _mapped(ps: Any, s: Any, inputs: Inputs) -> Any:
    """Map or Zip of the inputs, each borrowed by a Vector, read back."""
    return s(*[ps.Vector(x, copy=False) for x in inputs]).numpy()


Make = Callable[[Any], Any]
# family: (skeleton, made with C user functions, made with Python ones, how it is called)
_SKELETONS: dict[str, tuple[str, Make, Make, Callable[[Any, Any, Inputs], Any]]] = {
    "reduce": ("Reduce", lambda ps: ps.Reduce(_FADD, identity=0), lambda ps: ps.Reduce(_add, identity=0), _reduced),
    "skeletons.map": ("Map", lambda ps: ps.Map(_SQUARE), lambda ps: ps.Map(_square), _mapped),
    "skeletons.polynomial": ("Map", lambda ps: ps.Map(_POLYNOMIAL), lambda ps: ps.Map(_polynomial), _mapped),
    "skeletons.zip": ("Zip", lambda ps: ps.Zip(_FMUL), lambda ps: ps.Zip(_mul), _mapped),
    "skeletons.mapreduce": (
        "MapReduce",
        lambda ps: ps.MapReduce(_SQUARE, _FADD, identity=0),
        lambda ps: ps.MapReduce(_square, _add, identity=0),
        _reduced,
    ),
    "skeletons.scan": (
        "Scan",
        lambda ps: ps.Scan(_IADD, identity=0, inclusive=False),
        lambda ps: ps.Scan(_add, identity=0, inclusive=False),
        _scan_values,
    ),
}


def skeleton_call(family: str, device: Device) -> Callable[[Inputs], tuple[Any, Timing]]:
    """A timed call of the skeleton that ``family``'s case measures (its C user functions),
    built on its first call; ``KeyError`` for a family without one."""
    _, make, _, apply = _SKELETONS[family]
    return _skeleton(device, make, apply)[0]


def variant_names(family: str) -> list[str]:
    """The names ``--variants`` may give for ``family``: its registered variants, or its skeleton."""
    from ..algorithms import registry

    if family in _SKELETONS:
        name = f"skeleton_{_SKELETONS[family][0].lower()}"
        return [name, f"{name}_python"]
    try:
        return [v.name for v in registry.variants(family)]
    except VariantError:
        return []


def skeleton_subjects(family: str, device: Device, wanted: set[str] | None, notes: list[str]) -> list[Subject]:
    """The skeleton timed by ``family`` on ``device``, with C user functions (``skeleton_map``)
    and with the same ones in Python (``skeleton_map_python``), or a note when parskel has none."""
    if family not in _SKELETONS:
        return []
    import parskel as ps

    api, make_c, make_python, apply = _SKELETONS[family]
    if not (hasattr(ps, api) and hasattr(ps, "Vector")):
        notes.append(f"{family}: parskel.{api} or parskel.Vector does not exist yet; skeleton not measured")
        return []
    name = f"skeleton_{api.lower()}"
    subjects = []
    for shown, make, default in ((name, make_c, _always), (f"{name}_python", make_python, _never)):
        if wanted is None or shown in wanted:
            call, plain = _skeleton(device, make, apply)
            subjects.append(Subject(family, shown, "variant", device.id, call, default_at=default, plain=plain))
    return subjects


def _always(size: int) -> bool:
    return True


def _never(size: int) -> bool:
    return False
