"""What one ``parskel study`` run measures, and the run itself: the studies and variants named,
their sizes, and every point of their grids on every device, timed by the bench harness.

Kernels are named by study (``lud_perimeter``, ``crc``, ...), by application (``lud`` is both
of its studies) or ``all``; variants by name (``granularity``, in every study that has one) or
as ``study/variant``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..bench.cases import Subject
from ..bench.harness import Listener, Plan, Result, predicted, run_plan
from ..errors import DeviceMemoryError, LaunchError
from ..runtime import Device
from . import catalog  # noqa: F401  (registers every study)
from .base import STUDIES, Point, Study

# what a device cannot hold or launch: recorded as skipped, with the reason
CANNOT_RUN = (DeviceMemoryError, LaunchError)

QUICK: dict[str, Any] = {"reps": 3, "warmup": 1, "budget": None}
FULL: dict[str, Any] = {"reps": 5, "warmup": 1, "budget": 60.0}


@dataclass(frozen=True)
class Settings:
    """One study run: the studies, each one's sizes (by family), repetitions, chosen variants
    (None: all), the budget in seconds a point may take at its next size and the time limit of
    the whole run (None: no limit)."""

    studies: tuple[str, ...]
    sizes: dict[str, tuple[int, ...]]
    reps: int = 3
    warmup: int = 1
    variants: frozenset[str] | None = None
    budget: float | None = None
    time_limit: float | None = None
    seed: int = 20132

    def as_dict(self) -> dict[str, Any]:
        """For the store; ``tool`` tells a study run from a bench run there."""
        return {**asdict(self), "tool": "study"}


def studies() -> list[Study]:
    """Every study in the seed's order (by section)."""
    return sorted(STUDIES.values(), key=lambda s: tuple(int(p) for p in s.section.split(".")))


def kernel_names() -> dict[str, tuple[str, ...]]:
    """What a KERNEL argument may be, and the studies each stands for."""
    names: dict[str, tuple[str, ...]] = {"all": tuple(s.name for s in studies())}
    for study in studies():
        names[study.application] = (*names.get(study.application, ()), study.name)
        names[study.name] = (study.name,)
    return names


def select(kernels: Sequence[str]) -> tuple[str, ...]:
    """The studies that ``kernels`` name, in the seed's order; ``ValueError`` lists the names."""
    known = kernel_names()
    unknown = [k for k in kernels if k not in known]
    if unknown:
        raise ValueError(f"unknown kernel {', '.join(map(repr, unknown))}; choose from {', '.join(known)}")
    wanted = {s for k in kernels or ["all"] for s in known[k]}
    return tuple(s.name for s in studies() if s.name in wanted)


def variant_names(chosen: Sequence[str]) -> list[str]:
    """Every name ``--variants`` may use for the studies ``chosen``."""
    found: list[str] = []
    for name in chosen:
        for variant in STUDIES[name].variants():
            for key in (variant.name, f"{name}/{variant.name}"):
                if key not in found:
                    found.append(key)
    return found


def _wanted(study: Study, variants: frozenset[str] | None) -> set[str] | None:
    if variants is None:
        return None
    return {v.name for v in study.variants() if v.name in variants or f"{study.name}/{v.name}" in variants}


def default_settings(kernels: Sequence[str], *, full: bool = False, **overrides: Any) -> Settings:
    """Settings for the named kernels: quick (small sizes, one each) or full (the seed's sizes).

    ``overrides`` (reps, warmup, budget, sizes by study name, variants) replace the preset's
    values where they are not None; a budget of 0 means no limit.
    """
    chosen = select(kernels)
    values: dict[str, Any] = dict(FULL if full else QUICK)
    values.update({k: v for k, v in overrides.items() if v is not None})
    for limit in ("budget", "time_limit"):
        if values.get(limit) == 0:
            values[limit] = None
    if values["reps"] < 1 or values["warmup"] < 1:
        raise ValueError("reps and warmup must be at least 1: the first call carries the compile")
    given = values.pop("sizes", None) or {}
    sizes = {}
    for name in chosen:
        case = STUDIES[name].case
        sizes[case.family] = tuple(given.get(name, case.full_sizes if full else case.quick_sizes))
    variants = values.pop("variants", None)
    if variants is not None:
        known = variant_names(chosen)
        missing = sorted(set(variants) - set(known))
        if missing:
            listed = ", ".join(map(repr, missing))
            raise ValueError(f"unknown variant {listed} for {', '.join(chosen)}; choose from {', '.join(known)}")
        variants = frozenset(variants)
    return Settings(studies=chosen, sizes=sizes, variants=variants, **values)


def points(settings: Settings) -> list[Point]:
    """Every point the settings measure, study by study."""
    return [p for name in settings.studies for p in STUDIES[name].grid(_wanted(STUDIES[name], settings.variants))]


def run(devices: Sequence[Device], settings: Settings, listen: Listener | None = None) -> list[Result]:
    """Measure every point on every device at each of its study's sizes.

    The sizes go in rounds: every study at its smallest size, then every study at its next, so
    that a time limit cuts the largest sizes rather than the last studies. On each device the
    points of a study take turns, one call each per repetition, so that a change in the load
    of a shared machine falls on the baseline and the variants alike. A point is skipped,
    with the reason, where the device cannot run it (a work-group, local memory or buffer beyond
    its limits, known before anything is built; or an allocation or launch that fails), once it
    failed at a smaller size, where measuring it would take longer than the budget (judged from
    its last size), and once the run's time limit is reached.
    """
    owners: dict[int, tuple[Point, Device]] = {}
    by_study: dict[str, list[Subject]] = {}
    grid = points(settings)
    for name in settings.studies:
        subjects = by_study[name] = []
        for device in devices:
            for point in (p for p in grid if p.study.name == name):
                subject = point.subject(device)
                owners[id(subject)] = (point, device)
                subjects.append(subject)
    last: dict[tuple[str, str, str, str], Result] = {}  # by family, variant, parameters and device
    deadline = None if settings.time_limit is None else time.monotonic() + settings.time_limit
    calls = settings.warmup + settings.reps

    def refuse(subject: Subject, size: int) -> str | None:
        point, device = owners[id(subject)]
        if deadline is not None and time.monotonic() > deadline:
            return f"the run's time limit of {settings.time_limit:g} s was reached"
        why = point.refusal(device, size)
        if why:
            return why
        before = last.get((subject.family, subject.name, subject.params, subject.where))
        if before is not None and before.status in ("wrong", "error"):
            return f"failed at size {before.size}"
        if before is not None and before.status == "skipped":  # a smaller size was too much already
            return before.message
        budget = settings.budget
        if before is None or budget is None:
            return None
        if predicted(point.study.case, before, size, calls) > budget:
            return f"measuring it would take over {budget:g} s (judged at size {before.size})"
        return None

    def hear(event: str, payload: Any) -> None:
        if event == "done":
            last[(payload.family, payload.subject, payload.params, payload.where)] = payload
        if listen is not None:
            listen(event, payload)

    if listen is not None:
        listen("plan", sum(len(by_study[n]) * len(settings.sizes[STUDIES[n].case.family]) for n in settings.studies))
    results: list[Result] = []
    rounds = max(len(settings.sizes[STUDIES[n].case.family]) for n in settings.studies)
    for k in range(rounds):
        now = [n for n in settings.studies if k < len(settings.sizes[STUDIES[n].case.family])]
        plan: Plan = [(STUDIES[n].case, by_study[n]) for n in now]
        sizes = {STUDIES[n].case.family: (settings.sizes[STUDIES[n].case.family][k],) for n in now}
        results += run_plan(
            plan,
            sizes,
            reps=settings.reps,
            warmup=settings.warmup,
            budget=None,
            seed=settings.seed + k,
            listen=hear,
            refuse=refuse,
            cannot_run=CANNOT_RUN,
            together=True,
        )
    return results
