"""Timing subjects on cases: warm-up, repetitions, checks, compile time, and the sweep over sizes.

Each measurement calls a subject once as a warm-up that carries any program build (its excess
over the median run is recorded as compile time, never as run time), then ``warmup - 1`` more
warm-ups and ``reps`` measured runs. Every result is checked against the NumPy reference; a wrong
result or an exception is recorded as a failure with its reason and no time.
"""

from __future__ import annotations

import statistics
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..errors import VariantError
from ..runtime import Device
from . import overhead
from . import peers as peer_lib
from .cases import CASES, GROUPS, Case, Subject
from .subjects import skeleton_subjects, variant_subjects


@dataclass
class Result:
    """One subject at one size. Times in seconds; medians unless named ``_min`` / ``_max``."""

    family: str
    subject: str
    kind: str
    where: str
    size: int
    status: str  # "ok", "wrong", "error" or "skipped"
    reps: int = 0
    e2e: float | None = None
    e2e_min: float | None = None
    e2e_max: float | None = None
    kernel: float | None = None
    kernel_min: float | None = None
    kernel_max: float | None = None
    upload: float | None = None
    download: float | None = None
    other: float | None = None
    launches: int | None = None
    compile: float | None = None
    figure: float | None = None
    metric: str = ""
    params: str = ""
    message: str = ""
    samples: list[float] = field(default_factory=list)
    spread: float | None = None  # median / fastest - 1 of the end-to-end samples
    default: bool = False  # the variant parskel's public function picks on this device

    @property
    def unstable(self) -> bool:
        """Whether the repetitions disagree so much that the median may not be the device's
        speed (the machine was busy): reports mark such figures."""
        return self.spread is not None and self.spread > UNSTABLE

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Settings:
    """What one ``bench`` run measures and how often."""

    families: tuple[str, ...]
    sizes: dict[str, tuple[int, ...]]
    reps: int = 3
    warmup: int = 1
    variants: frozenset[str] | None = None
    peers: frozenset[str] = frozenset(peer_lib.GROUPS)
    # a subject whose measurement (compile, warm-ups, repetitions) would take longer than this
    # many seconds at the next size stops before it (None: no limit)
    budget: float | None = None
    seed: int = 20131


def default_settings(groups: Sequence[str], *, full: bool = False, **overrides: Any) -> Settings:
    """Settings for the named families or groups (``matmul`` ... ``skeletons``, ``all``)."""
    families: list[str] = []
    for group in groups or ("all",):
        if group not in GROUPS:
            raise ValueError(f"unknown family {group!r}; choose from {', '.join(GROUPS)}")
        families += [f for f in GROUPS[group] if f not in families]
    sizes = {f: CASES[f].full_sizes if full else CASES[f].quick_sizes for f in families}
    base: dict[str, Any] = (
        {"reps": 10, "warmup": 2, "budget": 120.0} if full else {"reps": 3, "warmup": 1, "budget": 6.0}
    )
    base.update({k: v for k, v in overrides.items() if v is not None})
    if base.get("budget") == 0:
        base["budget"] = None
    if base["warmup"] < 1 or base["reps"] < 1:
        raise ValueError("--warmup and --reps must be at least 1: the first call carries the compile")
    if base.get("sizes") is None:
        base["sizes"] = sizes
    return Settings(families=tuple(families), **base)


Listener = Callable[[str, Any], None]

#: A measurement whose median is this much slower than its fastest repetition is re-measured
#: once with twice the repetitions; if it still is, it is kept and marked unstable.
UNSTABLE = 0.25


def measure(
    case: Case, subject: Subject, inputs: tuple[np.ndarray, ...], expected: Any, reps: int, warmup: int
) -> Result:
    """Time ``subject`` on ``inputs``: warm-ups, then ``reps`` checked runs."""
    size = int(inputs[0].shape[0])
    base: dict[str, Any] = dict(
        family=case.family,
        subject=subject.name,
        kind=subject.kind,
        where=subject.where,
        size=size,
        metric=case.metric,
        params=subject.params,
        default=subject.default_at(size),
    )
    runs: list[tuple[float, Any]] = []

    def timed(count: int) -> str | None:
        """Run the subject ``count`` times into ``runs``; what is wrong with a result, if anything."""
        for _ in range(count):
            start = time.perf_counter()
            result, timing = subject.call(inputs)
            elapsed = time.perf_counter() - start
            wrong = case.check(result, expected)
            if wrong:
                return wrong
            runs.append((timing.wall if timing is not None else elapsed, timing))
        return None

    try:
        wrong = timed(max(1, warmup))
        first = runs[0][0] if runs else 0.0
        runs.clear()
        wrong = wrong or timed(reps)
        if not wrong and reps >= 3 and _spread([t for t, _ in runs]) > UNSTABLE:
            wrong = timed(2 * reps)  # a busy moment: once more, with twice the samples
    except VariantError as exc:  # a variant that does not take this input (too many keys)
        return Result(**base, status="skipped", message=str(exc).splitlines()[0])
    except Exception as exc:  # every failure of a subject is a result, whatever raised it
        return Result(**base, status="error", message=_describe(exc))
    if wrong:
        return Result(**base, status="wrong", message=wrong)
    times = [t for t, _ in runs]
    median = statistics.median(times)
    spread = _spread(times)
    result = Result(
        **base,
        status="ok",
        reps=len(times),
        e2e=median,
        e2e_min=min(times),
        e2e_max=max(times),
        compile=max(0.0, first - median),
        figure=case.figure(size, median),
        samples=times,
        spread=spread,
        message=f"unstable: the median is {spread:.0%} above the fastest run" if spread > UNSTABLE else "",
    )
    timings = [t for _, t in runs if t is not None]
    if timings:
        kernels = [t.kernel for t in timings]
        result.kernel, result.kernel_min, result.kernel_max = statistics.median(kernels), min(kernels), max(kernels)
        result.upload = statistics.median(t.upload for t in timings)
        result.download = statistics.median(t.download for t in timings)
        result.other = statistics.median(t.other for t in timings)
        result.launches = timings[0].launches or None
    return result


def _spread(times: list[float]) -> float:
    fastest = min(times)
    return statistics.median(times) / fastest - 1.0 if fastest > 0 else 0.0


def _predicted(case: Case, result: Result, size: int, calls: int) -> float:
    """The cost of measuring at ``size``: the last compile, and ``calls`` runs grown with the work."""
    run = (result.e2e or 0.0) * case.work(size) / max(case.work(result.size), 1.0)
    return (result.compile or 0.0) + calls * run


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    at = f" (at {where.filename.rsplit('/', 1)[-1]}:{where.lineno})" if where else ""
    return f"{type(exc).__name__}: {text[0] if text else ''}{at}"


def subjects_for(family: str, devices: Sequence[Device], settings: Settings, notes: list[str]) -> list[Subject]:
    """Everything measured for ``family``: variants on each device, then baselines and peers."""
    wanted = set(settings.variants) if settings.variants is not None else None
    chosen = set(settings.peers)
    if family.startswith("overhead."):
        calls = [s for device in devices for s in overhead.parskel_subjects(family, device)]
        return calls + overhead.peer_subjects(family, chosen, notes)
    found: list[Subject] = []
    for device in devices:
        found += variant_subjects(family, device, wanted, notes)
        found += skeleton_subjects(family, device, wanted, notes)
    if not found and family in ("matmul", "scan", "sort"):
        notes.append(f"{family}: no parskel variants registered (or none selected)")
    found += peer_lib.host_subjects(family, chosen, notes)
    for device in devices:
        found += peer_lib.device_peers(family, device, chosen, notes)
    found += peer_lib.gpu_peers(family, chosen, notes)
    return found


def sweep(
    devices: Sequence[Device], settings: Settings, notes: list[str], listen: Listener | None = None
) -> list[Result]:
    """Measure every subject of every family at every size, smallest first.

    ``listen(event, payload)`` hears ``("plan", total)``, ``("start", (case, subject, size))`` and
    ``("done", result)``, for a progress display.
    """

    def tell(event: str, payload: Any) -> None:
        if listen is not None:
            listen(event, payload)

    plan = [(CASES[f], subjects_for(f, devices, settings, notes)) for f in settings.families]
    tell("plan", sum(len(subjects) * len(settings.sizes[case.family]) for case, subjects in plan))
    results: list[Result] = []
    rng = np.random.default_rng(settings.seed)
    for case, subjects in plan:
        dropped: dict[tuple[str, str], str] = {}
        sizes = settings.sizes[case.family]
        for size, following in zip(sizes, sizes[1:] + (0,)):
            inputs = case.make(size, rng)
            expected = case.reference(inputs)
            for subject in subjects:
                tell("start", (case, subject, size))
                key = (subject.name, subject.where)
                if key in dropped:
                    result = Result(
                        case.family,
                        subject.name,
                        subject.kind,
                        subject.where,
                        size,
                        "skipped",
                        metric=case.metric,
                        params=subject.params,
                        message=dropped[key],
                    )
                else:
                    result = measure(case, subject, inputs, expected, settings.reps, settings.warmup)
                    limit = settings.budget
                    calls = max(1, settings.warmup) + settings.reps
                    if result.status == "skipped":  # it does not take inputs this large
                        dropped[key] = result.message
                    elif limit is not None and result.status != "ok":
                        dropped[key] = f"failed at size {size}"
                    elif limit is not None and following and _predicted(case, result, following, calls) > limit:
                        dropped[key] = f"measuring it would take over {limit:g} s (judged at size {size})"
                results.append(result)
                tell("done", result)
    return results
