"""``parskel explain``: which variant and parameters a call would use on a device, and why.

It follows the registry's own choice (:func:`parskel.algorithms.registry.dispatch`): the same
order (tuning database, then ``preferred.json``), the same fitting of parameters, the same
requirements; only failures at run time (a build that fails) cannot be foreseen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..algorithms import registry
from ..runtime import Device
from . import database
from .targets import Target


@dataclass(frozen=True)
class Explanation:
    """The choice for ``family`` at ``size`` on ``device``: the variant and its values, the
    order tried with where it came from, where the values came from, and the variants passed
    over before it with the reason."""

    family: str
    device: Device
    size: int
    order: list[str]
    order_source: str
    variant: str | None
    values: dict[str, int]
    values_source: str
    passed_over: list[tuple[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "device": self.device.id,
            "device_name": self.device.name,
            "size": self.size,
            "variant": self.variant,
            "params": self.values,
            "variant_source": self.order_source,
            "params_source": self.values_source,
            "order": self.order,
            "passed_over": [{"variant": n, "reason": r} for n, r in self.passed_over],
        }

    def text(self) -> str:
        """What ``parskel explain`` prints."""
        shown = ", ".join(f"{k}={v}" for k, v in self.values.items()) or "(no parameters)"
        lines = [f"{self.family} at n={database.shown_size(self.size)} on {self.device.id} ({self.device.name})"]
        if self.variant is None:
            lines.append("  no variant can run here")
        else:
            lines.append(f"  variant  {self.variant}: {self.order_source}")
            lines.append(f"  params   {shown}: {self.values_source}")
        lines.append(f"  order    {', '.join(self.order)}")
        for name, reason in self.passed_over:
            lines.append(f"  passed over {name}: {reason}")
        return "\n".join(lines)


def explain(target: Target, device: Device, size: int | None = None) -> Explanation:
    """What a call of ``target``'s family with inputs of ``size`` (default: the size it is
    tuned at) would run on ``device``."""
    family = target.family
    size = target.sizes[-1] if size is None else size
    context = target.context(size)
    if target.own:  # a skeleton's work-group ceiling: tuned or the default
        (variant,) = target.own
        held = database.lookup(family, device, size)
        ceiling = dict(next(iter(held.entry.params.values()), {})) if held is not None else {}
        values = ceiling or variant.resolve()
        source = held.describe() if held is not None and ceiling else "the skeletons' default"
        return Explanation(family, device, size, [variant.name], "its only variant", variant.name, values, source)
    # a kind of call tuned apart (sort_pairs) runs its family's variants, as its dispatch does
    registered, size_of = target.registered, registry.call_size(context)
    found = registry.tuned_entry(registered, device, size_of, target.tuned_as)
    table, keys = registry.table_order(registered, device)
    order = registry.preferred(registered, device, size_of, target.tuned_as)
    tuned = found.entry.params if found is not None else {}
    passed: list[tuple[str, str]] = []
    for name in order:
        variant = registry.get(registered, name)
        values = registry.fit(variant, device, {}, tuned.get(name), context)
        unmet = variant.unmet(device, values, context)
        if unmet:
            passed.append((name, "; ".join(unmet)))
            continue
        measured = found is not None and name in found.entry.order
        if measured and found is not None:
            rank = found.entry.order.index(name) + 1
            why = f"{_ordinal(rank)} of the variants {found.describe()}"
        else:
            why = f"{_ordinal(table.index(name) + 1)} in preferred.json ({', '.join(keys) or 'registration order'})"
        if passed:
            why += f", the first that can run ({len(passed)} passed over)"
        return Explanation(
            family, device, size, order, why, name, values, _values_source(variant, device, values, found), passed
        )
    return Explanation(family, device, size, order, "", None, {}, "", passed)


def _values_source(variant: registry.Variant, device: Device, values: dict[str, int], found: Any) -> str:
    if not values:
        return "the variant has none"
    tuned = found.entry.params.get(variant.name) if found is not None else None
    if tuned and all(values.get(k) == v for k, v in tuned.items()):
        return found.describe()
    defaults = variant.resolve()
    if values == defaults:
        return "the variant's defaults" + (" (the tuned values do not fit this call)" if tuned else "")
    changed = ", ".join(f"{k}={v} (default {defaults[k]})" for k, v in values.items() if v != defaults[k])
    return f"fitted to the device: {changed}; the defaults do not fit"


def _ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` ...

    >>> [_ordinal(n) for n in (1, 2, 3, 4, 11, 12, 21)]
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '21st']
    """
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
