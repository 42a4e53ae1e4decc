"""What ``parskel tune`` can tune: a family of registered variants with a benchmark case that
makes its inputs and checks its results.

The algorithm families (``matmul``, ``scan``, ``sort``, and ``sort_pairs``: sorts with values,
tuned apart) come with the bench cases; each kernel of ``parskel study`` (``crc``,
``lud_internal``, ...) is a target through the same small interface: its registry family
(``study.crc``), its case, which time is minimized and how one point becomes something the
bench harness times. The skeletons' work-group ceilings
(``skeletons.map``, ``skeletons.reduce``, ``skeletons.scan``) are targets with a variant of
their own. Another tool adds a target with :func:`add`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..algorithms import registry
from ..algorithms.registry import Param, Requirement, Variant
from ..bench.cases import CASES, RESIDENT, Case, Inputs, Subject
from ..bench.subjects import recorded, skeleton_call
from ..runtime import Device, Timing
from . import database
from .space import Config

#: the times a search may minimize (see :class:`Target`)
OBJECTIVES = ("e2e", "kernel", "device")


@dataclass(frozen=True)
class Target:
    """A tunable family.

    ``subject(device, variant, config)`` times one point; ``refusal(device, variant, values,
    size)`` says why a point cannot run at a size (None if it can), before anything is built;
    ``context(size)`` holds the call facts its variants' requirements read (``n``,
    ``itemsize``). ``objective`` is the time minimized: ``e2e`` (the whole call), ``kernel``
    (the device time of the kernels a study varies) or ``device`` (the kernels' time on a
    device with memory of its own, the whole call's on one that works in host memory).
    """

    name: str
    family: str
    case: Case
    sizes: tuple[int, ...]
    subject: Callable[[Device, Variant, Config], Subject]
    refusal: Callable[[Device, Variant, Mapping[str, int], int], str | None]
    context: Callable[[int], dict[str, int]]
    objective: str = "e2e"
    summary: str = ""
    own: tuple[Variant, ...] = ()  # variants of a family outside the registry (the skeletons')
    variants_of: str = ""  # the registry's family whose variants run, where it is not ``family``

    @property
    def registered(self) -> str:
        """The registry's family whose variants run: ``family``, unless it is tuned apart."""
        return self.variants_of or self.family

    @property
    def tuned_as(self) -> str | None:
        """The entries a call reads besides its registry family's (``sort_pairs``), or None."""
        return self.family if self.variants_of else None

    def variants(self) -> list[Variant]:
        return list(self.own) if self.own else registry.variants(self.registered)

    def variant(self, name: str) -> Variant:
        return next(v for v in self.variants() if v.name == name)

    def order(self, device: Device) -> list[str]:
        """The variants in the order parskel tries them without tuning."""
        return [v.name for v in self.own] if self.own else registry.table_order(self.registered, device)[0]


def _algorithm(
    family: str, size: int, context: Callable[[int], dict[str, int]], case: Case | None = None, variants_of: str = ""
) -> Target:
    """A family of registered variants (those of ``variants_of`` where given: a kind of call
    tuned apart, whose entries ``family`` names) timed on ``case`` (``family``'s by default)."""

    def subject(device: Device, variant: Variant, config: Config) -> Subject:
        call = recorded(device, variant.run, family, config.values)
        return Subject(family, variant.name, "variant", device.id, call, config.shown)

    def refusal(device: Device, variant: Variant, values: Mapping[str, int], n: int) -> str | None:
        unmet = variant.unmet(device, values, context(n))
        return f"{device.id} lacks {'; '.join(unmet)}" if unmet else None

    case = case or CASES[family]
    return Target(
        family,
        family,
        case,
        (size,),
        subject,
        refusal,
        context,
        objective="device",
        summary=case.summary,
        variants_of=variants_of,
    )


#: sorts of keys with values, tuned apart from sorts of keys alone (their dispatch reads these
#: entries first, see parskel.algorithms.sorts): a tile of pairs holds twice the data
SORT_PAIRS = dataclasses.replace(
    RESIDENT["resident.sort_pairs"],
    family="sort_pairs",
    summary="uint32 keys with their positions as values, sorted stably",
    quick_sizes=CASES["sort"].quick_sizes,
    full_sizes=CASES["sort"].full_sizes,
)


def _study_targets() -> list[Target]:
    from ..study import base, catalog  # noqa: F401  (registers the studies)

    found = []
    for study in base.STUDIES.values():

        def point(variant: Variant, config: Config, study: base.Study = study) -> base.Point:
            swept = tuple((k, v) for k, v in config.params if any(p.name == k and p.choices for p in variant.params))
            return base.Point(study, variant, config.values, swept)

        def subject(device: Device, variant: Variant, config: Config, point=point) -> Subject:
            return dataclasses.replace(point(variant, config).subject(device), params=config.shown)

        def refusal(device: Device, variant: Variant, values: Mapping[str, int], n: int, point=point) -> str | None:
            return point(variant, Config(variant.name, tuple(values.items()))).refusal(device, n)

        found.append(
            Target(
                name=study.name,
                family=study.family,
                case=study.case,
                sizes=study.case.quick_sizes[:1],
                subject=subject,
                refusal=refusal,
                context=lambda n: {"n": n},
                objective="kernel",
                summary=f"seed 002 §{study.section}: {study.case.summary}",
            )
        )
    return found


def _skeleton(name: str, case: str) -> Target:
    """The work-group ceiling of a skeleton (:func:`parskel.skeletons.program.tuned_group`) as
    a target: one variant, ``WG``, each value measured with a fresh skeleton built while the
    value is pinned in the database."""
    family = f"skeletons.{name}"

    def run(*args: object, **kwargs: object) -> None:
        raise TypeError(f"{family} is measured through its skeleton, not run")

    variant = Variant(
        family,
        name,
        "",
        f"the work-group ceiling of the {name} skeleton",
        run,
        params=(Param("WG", 256, (32, 64, 128, 256, 512, 1024), "largest work-group"),),
        requires=(
            Requirement("WG <= the device's largest work-group", lambda d, p: p["WG"] <= d.info.max_work_group_size),
        ),
    )

    def subject(device: Device, variant: Variant, config: Config) -> Subject:
        entry = database.for_device(
            device, family, 0, order=(name,), params={name: config.values}, seconds={}, measured={}
        )
        inner = skeleton_call(case, device)

        def call(inputs: Inputs) -> tuple[Any, Timing]:
            with database.pinned(entry):
                return inner(inputs)

        return Subject(family, name, "variant", device.id, call, config.shown)

    def refusal(device: Device, variant: Variant, values: Mapping[str, int], n: int) -> str | None:
        unmet = variant.unmet(device, values)
        return f"{device.id} lacks {'; '.join(unmet)}" if unmet else None

    found = CASES[case]
    return Target(
        family, family, found, (1 << 20,), subject, refusal, lambda n: {"n": n}, summary=found.summary, own=(variant,)
    )


_ADDED: list[Target] = []


def add(target: Target) -> Target:
    """Make another family tunable (a tool's own kernels)."""
    _ADDED.append(target)
    targets.cache_clear()
    return target


@cache
def targets() -> dict[str, Target]:
    """Every tunable target by the names the command line takes (``crc`` and ``study.crc``)."""
    found = [
        _algorithm("matmul", 256, lambda n: {"itemsize": 4, "size": n}),
        _algorithm("scan", 1 << 20, lambda n: {"n": n}),
        _algorithm("sort", 1 << 20, lambda n: {"n": n}),
        _algorithm("sort_pairs", 1 << 20, lambda n: {"n": n}, SORT_PAIRS, "sort"),
        *_study_targets(),
        _skeleton("map", "skeletons.map"),
        _skeleton("reduce", "reduce"),
        _skeleton("scan", "skeletons.scan"),
        *_ADDED,
    ]
    named: dict[str, Target] = {}
    for target in found:
        named[target.name] = target
        named.setdefault(target.family, target)
    return named


def find(name: str) -> Target:
    """The target named ``name``; ``KeyError`` lists the names."""
    known = targets()
    if name not in known:
        names = sorted({t.name for t in known.values()})
        raise KeyError(f"nothing to tune named {name!r}; choose from {', '.join(names)}")
    return known[name]
