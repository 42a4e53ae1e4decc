"""The search itself: a strategy walks a target's space on a device, each point timed by the
bench harness and checked against the case's reference, every measurement kept in the results
store, and the best of each variant becomes a tuning database entry.

Measurements are a cache: a point measured before on the same device (same name, platform and
driver) at the same size is not measured again, its stored result is used. The budget is
charged what each measurement took, cached or not, so a second run of the same search (same
strategy, seed and budget) replays the first one from the store and measures nothing new, and
a run with a larger budget goes on where the last one stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from ..bench.harness import Result, measure
from ..bench.store import Store
from ..errors import BuildError, DeviceMemoryError, LaunchError
from ..runtime import Device
from . import database
from .space import Config, Space
from .strategies import STRATEGIES, Spent
from .targets import Target

TOOL = "tune"
# what a point that cannot run on the device raises: recorded as skipped, with the reason
CANNOT_RUN = (BuildError, LaunchError, DeviceMemoryError)


def store_path() -> Path:
    """The measurements cache: ``results.sqlite`` beside the user's tuning overlay."""
    return database.folder() / "results.sqlite"


@dataclass(frozen=True)
class Measured:
    """One evaluated point: its time (the target's objective; None when it failed), the
    stored result, and whether it came from the cache."""

    config: Config
    seconds: float | None
    result: Result
    cached: bool


@dataclass
class Outcome:
    """One search: a target at one size on one device."""

    target: Target
    device: Device
    size: int
    strategy: str
    space: Space
    history: list[Measured] = field(default_factory=list)
    stopped: str = "complete"  # "complete", "budget" or "evaluations"
    spent: float = 0.0  # seconds charged to the budget

    @property
    def new(self) -> int:
        """How many points this search measured (not taken from the cache)."""
        return sum(not m.cached for m in self.history)

    @property
    def best(self) -> Measured | None:
        ran = [m for m in self.history if m.seconds is not None]
        return min(ran, key=lambda m: m.seconds or 0.0) if ran else None

    def best_by_variant(self) -> list[Measured]:
        """The fastest point of each variant that ran, fastest first."""
        best: dict[str, Measured] = {}
        for m in self.history:
            held = best.get(m.config.variant)
            if m.seconds is not None and (held is None or m.seconds < (held.seconds or 0.0)):
                best[m.config.variant] = m
        return sorted(best.values(), key=lambda m: m.seconds or 0.0)

    def refused(self) -> tuple[str, ...]:
        """The variants none of whose points could run at this size (their requirements)."""
        runnable = {c.variant for c in self.space.points}
        return tuple(dict.fromkeys(c.variant for c, _ in self.space.refused if c.variant not in runnable))

    def failures(self) -> list[Measured]:
        return [m for m in self.history if m.seconds is None]

    def entry(self, command: str, level: str = "device") -> database.Entry:
        """The tuning database entry of this search (for the device, or its vendor and type)."""
        ranked = self.best_by_variant()
        info = self.device.info
        return database.for_device(
            self.device,
            self.target.family,
            self.size,
            level,
            order=tuple(m.config.variant for m in ranked),
            params={m.config.variant: m.config.values for m in ranked},
            seconds={m.config.variant: round(m.seconds or 0.0, 9) for m in ranked},
            refused=self.refused(),
            measured={
                "date": date.today().isoformat(),
                "command": command,
                "device": info.name,
                "platform": info.platform_version,
                "driver": info.driver_version,
                "strategy": self.strategy,
                "objective": self.target.objective,
                "evaluations": len(self.history),
                "points": len(self.space),
            },
        )


Listener = Callable[[Outcome, Measured], None]


@dataclass(frozen=True)
class Settings:
    """How to search: strategy, budget (seconds of measurement for the whole run, shared
    equally by the sizes; None: no limit), evaluations at most per size (None: no limit),
    repetitions, seed, and narrowed variants and parameter values."""

    strategy: str = "bayes"
    budget: float | None = 60.0
    evaluations: int | None = None
    reps: int = 3
    warmup: int = 1
    seed: int = 20133
    variants: frozenset[str] | None = None
    only: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {
            "tool": TOOL,
            "strategy": self.strategy,
            "budget": self.budget,
            "evaluations": self.evaluations,
            "reps": self.reps,
            "warmup": self.warmup,
            "seed": self.seed,
            "variants": sorted(self.variants) if self.variants is not None else None,
            "only": {k: list(v) for k, v in self.only.items()},
        }


def space_for(target: Target, device: Device, size: int, settings: Settings) -> Space:
    """The points of ``target`` that ``device`` can run at ``size`` (and the refused ones)."""
    chosen = [v for v in target.variants() if settings.variants is None or v.name in settings.variants]
    return Space.build(chosen, lambda v, values: target.refusal(device, v, values, size), settings.only)


def start_point(target: Target, device: Device, size: int, space: Space) -> Config:
    """Where a search starts: what parskel runs without tuning (``preferred.json``'s first
    variant that can run, with its parameters fitted to the device), or the first point."""
    context = target.context(size)
    kept = {v.name for v in space.variants}
    for name in target.order(device):
        if name not in kept:
            continue
        variant = target.variant(name)
        values = variant.fitted(device, None, context)
        config = Config(name, tuple((p.name, values[p.name]) for p in variant.params))
        if config in space:
            return config
        first = next((c for c in space.points if c.variant == name), None)
        if first is not None:
            return first
    return space.points[0]


def tune(
    target: Target,
    device: Device,
    sizes: Sequence[int],
    settings: Settings,
    store: Store,
    command: str = "",
    listen: Listener | None = None,
) -> list[Outcome]:
    """Search ``target`` on ``device`` at each size; the outcomes, each measurement stored in
    ``store`` as it is made."""
    if settings.strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {settings.strategy!r}; choose from {', '.join(STRATEGIES)}")
    run_id = store.begin(command, {**settings.as_dict(), "family": target.family, "sizes": list(sizes)}, [device])
    outcomes = []
    share = None if settings.budget is None else settings.budget / max(1, len(sizes))
    for k, size in enumerate(sizes):
        space = space_for(target, device, size, settings)
        outcome = Outcome(target, device, size, settings.strategy, space)
        outcomes.append(outcome)
        if not space.points:
            continue
        search = _Search(outcome, settings, share, store, run_id, np.random.default_rng([settings.seed, k]), listen)
        try:
            STRATEGIES[settings.strategy](
                space, search.evaluate, np.random.default_rng(settings.seed), start_point(target, device, size, space)
            )
        except Spent as spent:
            outcome.stopped = str(spent)
    store.finish(run_id, [])
    return outcomes


class _Search:
    """The ``evaluate`` of one search: the cache, the budget, the measurement."""

    def __init__(
        self,
        outcome: Outcome,
        settings: Settings,
        share: float | None,
        store: Store,
        run_id: int,
        rng: np.random.Generator,
        listen: Listener | None,
    ) -> None:
        self.outcome, self.settings, self.share = outcome, settings, share
        self.store, self.run_id, self.rng, self.listen = store, run_id, rng, listen
        target, device, size = outcome.target, outcome.device, outcome.size
        self.cached = {(r.subject, r.params): r for r in store.earlier(device, target.family, size, TOOL)}
        self._inputs: tuple[tuple[np.ndarray, ...], Any] | None = None

    def inputs(self) -> tuple[tuple[np.ndarray, ...], Any]:
        """The case's inputs and their reference, made when the first point is measured."""
        if self._inputs is None:
            made = self.outcome.target.case.make(self.outcome.size, self.rng)
            self._inputs = (made, self.outcome.target.case.reference(made))
        return self._inputs

    def evaluate(self, config: Config) -> float | None:
        outcome, settings = self.outcome, self.settings
        if settings.evaluations is not None and len(outcome.history) >= settings.evaluations:
            raise Spent("evaluations")
        if self.share is not None and outcome.spent >= self.share:
            raise Spent("budget")
        key = (config.variant, config.shown)
        result = self.cached.get(key)
        if result is None:
            made, expected = self.inputs()
            target = outcome.target
            subject = target.subject(outcome.device, target.variant(config.variant), config)
            began = time.perf_counter()
            result = measure(target.case, subject, made, expected, settings.reps, settings.warmup, CANNOT_RUN)
            result.cost = time.perf_counter() - began
            self.store.add(self.run_id, [result])
        measured = Measured(config, objective(outcome.target, result, outcome.device), result, key in self.cached)
        outcome.spent += result.cost or 0.0
        outcome.history.append(measured)
        if self.listen is not None:
            self.listen(outcome, measured)
        return measured.seconds


def objective(target: Target, result: Result, device: Device) -> float | None:
    """The time a target minimizes on ``device``, from a result (None for one that failed):
    ``device`` objectives take the kernels' time where the device has memory of its own (the
    copies to and from it, the same for every point, would drown the differences) and the
    whole call's on a device that works in host memory."""
    if result.status != "ok":
        return None
    kernel = target.objective == "kernel" or (target.objective == "device" and not device.shares_host_memory)
    return result.kernel if kernel and result.kernel is not None else result.e2e
