"""Variants as objects: every algorithm variant is registered here with what it needs.

The benchmark iterates :func:`variants`; public functions such as
``parskel.sort`` call :func:`dispatch`, which runs the caller's choice or the best variant known
for the device and falls back to the next one when a variant cannot run there. What is best is
data, not code: the tuning database (:mod:`parskel.tune.database`) and, for what it does not
know, ``preferred.json``; both are written by ``parskel tune --write-defaults``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, TypeVar

from ..errors import BuildError, DeviceMemoryError, LaunchError, VariantError
from ..runtime import Device
from ..runtime.memo import choices_changed, remembered
from ..tune.database import LEVELS, lookup, ordered, size_class

R = TypeVar("R")


@dataclass(frozen=True)
class Param:
    """A tunable parameter: a ``#define`` of the kernel, with its default and allowed values."""

    name: str
    default: int
    choices: tuple[int, ...] = ()
    doc: str = ""

    def check(self, value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise VariantError(f"parameter {self.name} takes an int, got {value!r}")
        if self.choices and value not in self.choices:
            raise VariantError(f"parameter {self.name}={value} is not one of {self.choices}")
        return value


@dataclass(frozen=True)
class Requirement:
    """Something a variant needs from a device, as a readable rule and a test.

    ``test(device, values)`` sees the variant's parameters and, where the call supplies them,
    facts about its operands (``itemsize``: bytes per element), with their defaults assumed
    when absent.
    """

    text: str
    test: Callable[[Device, Mapping[str, int]], bool]


@dataclass(frozen=True)
class Variant:
    """One implementation of an algorithm family.

    ``run`` is the host-level entry point; its signature is the family's (see the family module),
    with the device first and the tunable parameters as keyword arguments.
    """

    family: str
    name: str
    seed: str
    summary: str
    run: Callable[..., Any]
    params: tuple[Param, ...] = ()
    requires: tuple[Requirement, ...] = ()
    tags: frozenset[str] = field(default_factory=frozenset)
    # resolve's answers, by overrides
    _resolved: dict[Hashable, dict[str, int]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def resolve(self, overrides: Mapping[str, Any] | None = None) -> dict[str, int]:
        """The parameter values for a call: defaults, overridden and checked (remembered per
        overrides, which a call in a loop gives again)."""
        values = remembered(self._resolved, _params_key(overrides or {}), lambda: self._checked(overrides or {}))
        return dict(values)

    def _checked(self, overrides: Mapping[str, Any]) -> dict[str, int]:
        known = {p.name: p for p in self.params}
        unknown = set(overrides) - set(known)
        if unknown:
            raise VariantError(f"{self.family}/{self.name} has no parameter {sorted(unknown)}; it has {sorted(known)}")
        return {name: p.check(overrides.get(name, p.default)) for name, p in known.items()}

    def unmet(
        self, device: Device, params: Mapping[str, int] | None = None, context: Mapping[str, int] | None = None
    ) -> list[str]:
        """The requirements ``device`` does not meet (empty when it can run this variant)."""
        values = {**self.resolve(params), **(context or {})}
        return [r.text for r in self.requires if not r.test(device, values)]

    def fitted(
        self, device: Device, overrides: Mapping[str, Any] | None = None, context: Mapping[str, int] | None = None
    ) -> dict[str, int]:
        """The parameter values for a call on ``device``: the caller's, and for the others the
        defaults, or where those do not fit the device the first values that do, trying each
        parameter's choices from the largest down. Unmet requirements are left for the caller
        to report when nothing fits."""
        values = self.resolve(overrides)
        if not self.unmet(device, values, context):
            return values
        free = [p for p in self.params if p.name not in (overrides or {}) and p.choices]
        orders = [[p.default, *sorted((c for c in p.choices if c != p.default), reverse=True)] for p in free]
        for combination in itertools.product(*orders):
            trial = {**values, **{p.name: v for p, v in zip(free, combination)}}
            if not self.unmet(device, trial, context):
                return trial
        return values

    def describe(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "name": self.name,
            "seed": self.seed,
            "summary": self.summary,
            "params": [
                {"name": p.name, "default": p.default, "choices": list(p.choices), "doc": p.doc} for p in self.params
            ],
            "requires": [r.text for r in self.requires],
        }


_REGISTRY: dict[str, dict[str, Variant]] = {}


def register(variant: Variant) -> Variant:
    """Add a variant; a family module calls this at import time."""
    family = _REGISTRY.setdefault(variant.family, {})
    if variant.name in family:
        raise ValueError(f"variant {variant.family}/{variant.name} is registered twice")
    family[variant.name] = variant
    choices_changed()
    return variant


def families() -> list[str]:
    """The names of the registered families (``matmul``, ``scan``, ``sort``, ...), sorted."""
    return sorted(_REGISTRY)


def variants(family: str) -> list[Variant]:
    """Every variant of ``family`` in registration order (the seed's order)."""
    if family not in _REGISTRY:
        raise VariantError(f"unknown family {family!r}; the families are {sorted(_REGISTRY)}")
    return list(_REGISTRY[family].values())


def get(family: str, name: str) -> Variant:
    """The variant ``name`` of ``family``; :class:`VariantError` listing the family's variants if
    there is none."""
    for variant in variants(family):
        if variant.name == name:
            return variant
    names = [v.name for v in variants(family)]
    raise VariantError(f"{family} has no variant {name!r}; it has {names}")


@cache
def _preferences() -> dict[str, dict[str, list[str]]]:
    text = resources.files(__package__).joinpath("preferred.json").read_text(encoding="utf-8")
    return json.loads(text)


def reload_preferences() -> None:
    """Read ``preferred.json`` again at the next lookup (``parskel tune --write-defaults`` rewrites it)."""
    _preferences.cache_clear()
    choices_changed()


def table_order(family: str, device: Device) -> tuple[list[str], list[str]]:
    """The order of ``preferred.json`` for ``device``, and the keys it came from.

    Looked up by vendor (``vendor:nvidia``), then device type (``gpu``, ``cpu``), then
    ``default``; variants the table does not name follow in registration order.
    """
    table = _preferences()
    vendor = device.info.vendor.lower()
    keys = [k for k in table if k.startswith("vendor:") and k[7:] in vendor]
    keys += [device.type, "default"]
    order: list[str] = []
    used: list[str] = []
    for key in keys:
        for name in table.get(key, {}).get(family, []):
            if name not in order:
                order.append(name)
                if key not in used:
                    used.append(key)
    for variant in variants(family):
        if variant.name not in order:
            order.append(variant.name)
    return order, used


def preferred(family: str, device: Device, size: int | None = None, tuned_as: str | None = None) -> list[str]:
    """Variant names of ``family`` from fastest known to slowest for ``device`` (at ``size``).

    The tuning database's entry for the device, if any, orders the variants it measured
    (:mod:`parskel.tune.database`; see :func:`tuned_entry` for ``tuned_as``); ``preferred.json``
    orders the others (:func:`table_order`).
    """
    order = table_order(family, device)[0]
    found = tuned_entry(family, device, size, tuned_as)
    return order if found is None else ordered(order, found.entry.order, found.entry.refused)


def tuned_entry(family: str, device: Device, size: int | None, tuned_as: str | None = None) -> Any:
    """The tuning database's entry a call of ``family`` on ``device`` at ``size`` reads; None
    where there is none. A kind of call tuned apart (``tuned_as``: ``sort_pairs``) reads its own
    entry where it is as specific (device before vendor) and as near in size as the family's,
    else the family's: pairs tuned only at large sizes still take the keys' tuning of small ones."""
    base = lookup(family, device, size)
    own = lookup(tuned_as, device, size) if tuned_as else None
    if own is None or base is None:
        return own or base
    wanted = 0 if size is None else size_class(size)

    def rank(found: Any) -> tuple[int, int]:
        return LEVELS.index(found.entry.level), abs(size_class(found.entry.size) - wanted)

    return own if rank(own) <= rank(base) else base


def call_size(context: Mapping[str, int] | None) -> int | None:
    """The size a call is tuned by: ``size`` from its context, else ``n``."""
    context = context or {}
    return context.get("size", context.get("n"))


def fit(
    variant: Variant,
    device: Device,
    params: Mapping[str, Any],
    tuned: Mapping[str, int] | None,
    context: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """The parameter values of a call: the caller's, then the tuned ones where they still fit
    the device and the call, else the variant's defaults fitted to the device."""
    if tuned:
        try:
            values = variant.fitted(device, {**tuned, **params}, context)
        except VariantError:  # a tuned parameter the variant no longer has, or a bad value
            values = {}
        if values and not variant.unmet(device, values, context):
            return values
    return variant.fitted(device, params, context)


#: the errors of a variant after which a dispatch tries the next one
RECOVERABLE = (VariantError, LaunchError, BuildError, DeviceMemoryError)


def _untuned(
    variant: Variant,
    device: Device,
    params: Mapping[str, Any],
    values: dict[str, int],
    tuned: Mapping[str, int] | None,
    context: Mapping[str, int] | None,
) -> dict[str, int] | None:
    """The values a call falls back to if the device refuses tuned ones (None: nothing was
    tuned, or the untuned values are the same)."""
    if not tuned:
        return None
    try:
        untuned = variant.fitted(device, params, context)
    except VariantError:
        return None
    return None if untuned == values or variant.unmet(device, untuned, context) else untuned


def dispatch(
    family: str,
    device: Device,
    variant: str | None,
    params: Mapping[str, Any],
    call: Callable[[Variant, dict[str, int]], R],
    context: Mapping[str, int] | None = None,
    tuned_as: str | None = None,
) -> R:
    """Run ``call`` with the chosen variant, or with the best one for ``device``.

    A variant named by the caller runs or raises. Without one, the preferred variants are tried
    in order; one whose requirements the device does not meet, or that fails to build, launch
    or allocate there, gives way to the next. The last error is raised if none can run.
    Parameters the caller left unset take the tuned values of the tuning database, or are
    fitted to the device (:func:`fit`); ``context`` holds what the requirements may need to
    know of the operands (``itemsize``, ``n``) and the size the database is asked for.
    ``tuned_as`` names the database's entries to read where a kind of call is tuned apart from
    its family (``sort_pairs``: sorts with values), with the family's own where it has none.
    """
    found = tuned_entry(family, device, call_size(context), tuned_as)
    plan = _plan(family, device, variant, params, context, found, tuned_as)
    if variant is not None:
        ((chosen, values, untuned),) = plan.runs
        with device.current():
            return _tried(call, chosen, values, untuned, device)
    errors = list(plan.refused)
    failures: list[Exception] = []
    for candidate, values, untuned in plan.runs:
        try:
            with device.current():  # a variant's new device arrays go where its operands are
                return _tried(call, candidate, values, untuned, device)
        except RECOVERABLE as exc:
            errors.append(f"{candidate.name}: {exc}")
            failures.append(exc)
    message = f"no {family} variant can run on {device.id}:\n  " + "\n  ".join(errors)
    if failures and all(isinstance(exc, DeviceMemoryError) for exc in failures):
        raise DeviceMemoryError(message)  # what to catch when the data is too large for the device
    raise VariantError(message)


def _tried(
    call: Callable[[Variant, dict[str, int]], R],
    variant: Variant,
    values: dict[str, int],
    untuned: dict[str, int] | None,
    device: Device,
) -> R:
    """``call`` with ``values``; where those came from the tuning database and the device
    refuses them when it builds or launches the kernels (a work-group tuned through CUDA that
    NVIDIA's OpenCL compiles for fewer work-items), again with the values fitted untuned, and
    from then on with those at once: a refusal is the device's, and would come on every call."""
    if untuned is None:
        return call(variant, dict(values))
    refusal = (device, variant.family, variant.name, _params_key(values))
    if refusal not in _REFUSED:
        try:
            return call(variant, dict(values))
        except (LaunchError, BuildError):
            _REFUSED.add(refusal)
    return call(variant, dict(untuned))


#: tuned values a device refused (see _tried): device, family, variant and the values
_REFUSED: set[Hashable] = set()


@dataclass(frozen=True)
class _Plan:
    """The variants a call may run, in order, each with its parameter values, and why the
    others cannot; kept per kind of call while the tables it came from stay the same."""

    # each variant with its values, and the values fitted untuned where tuned ones differ
    runs: tuple[tuple[Variant, dict[str, int], dict[str, int] | None], ...]
    refused: tuple[str, ...]
    found: Any  # the tuning database's entry it was made from
    table: dict[str, dict[str, list[str]]]  # preferred.json as it was read
    members: tuple[Variant, ...]  # the family's variants when it was made


_PLANS: dict[Any, _Plan] = {}
_MOST_PLANS = 4096


def _params_key(params: Mapping[str, Any]) -> tuple[tuple[str, type, Any], ...]:
    """Parameters as a key for what is remembered of them, with each value's type: ``256.0`` and
    ``np.int64(256)`` compare and hash equal to ``256`` (as ``True`` does to ``1``), and must
    still be refused where ``256`` is not."""
    return tuple((name, type(value), value) for name, value in params.items())


def _plan(
    family: str,
    device: Device,
    variant: str | None,
    params: Mapping[str, Any],
    context: Mapping[str, int] | None,
    found: Any,
    tuned_as: str | None = None,
) -> _Plan:
    """The dispatch plan of a call (see :func:`dispatch`), made once per family (and the
    entries it is tuned as), device, named variant, parameters and context: a call in a loop
    only looks it up."""
    try:
        key: Any = (family, tuned_as, device, variant, _params_key(params), tuple((context or {}).items()))
        plan = _PLANS.get(key)
    except TypeError:  # an unhashable parameter value: nothing to remember it by
        key, plan = None, None
    members = tuple(_REGISTRY.get(family, {}).values())
    if plan is not None and plan.found is found and plan.table is _preferences() and plan.members == members:
        return plan
    tuned = found.entry.params if found is not None else {}
    runs: list[tuple[Variant, dict[str, int], dict[str, int] | None]] = []
    refused: list[str] = []
    if variant is not None:
        chosen = get(family, variant)
        values = fit(chosen, device, params, tuned.get(variant), context)
        unmet = chosen.unmet(device, values, context)
        if unmet:
            raise VariantError(f"{family}/{variant} cannot run on {device.id}: {'; '.join(unmet)}")
        runs.append((chosen, values, _untuned(chosen, device, params, values, tuned.get(variant), context)))
    else:
        order = table_order(family, device)[0]
        for name in order if found is None else ordered(order, found.entry.order, found.entry.refused):
            candidate = get(family, name)
            try:
                values = fit(candidate, device, params, tuned.get(name), context)
            except VariantError as exc:
                refused.append(f"{name}: {exc}")
                continue
            unmet = candidate.unmet(device, values, context)
            if unmet:
                refused.append(f"{name}: {'; '.join(unmet)}")
                continue
            runs.append((candidate, values, _untuned(candidate, device, params, values, tuned.get(name), context)))
    plan = _Plan(tuple(runs), tuple(refused), found, _preferences(), members)
    if key is not None:
        if len(_PLANS) >= _MOST_PLANS:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan
