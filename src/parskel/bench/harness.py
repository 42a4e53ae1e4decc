"""Timing subjects on cases: warm-up, repetitions, checks, compile time, and the sweep over sizes.

Each measurement calls a subject once as a warm-up that carries any program build (its excess
over the median run is recorded as compile time, never as run time), then ``warmup - 1`` more
warm-ups (more where the subject's device needs them to reach its steady state: PoCL's inline
queue builds a kernel again at its fourth small launch; see :func:`warm_calls`) and ``reps``
measured runs. Every result is checked against the NumPy reference (a
result identical to one that passed passes without the check again, which spares seconds where a
check is costly); a wrong result or an exception is recorded as a failure with its reason and no
time.
"""

from __future__ import annotations

import hashlib
import itertools
import statistics
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..errors import ParskelError, VariantError
from ..runtime import Device
from ..runtime.selection import find
from . import e2e, overhead, primitives, resident
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
    cost: float | None = None  # seconds the whole measurement took (what `tune` charges its budget)

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


class _Trial:
    """One subject's measurement in progress: its checked calls and what they took.

    A result that equals one that already passed its check passes without the check again,
    which spares seconds where a check is costly: ``keep`` compares with the passed result
    itself, otherwise with its SHA-256 digest (when many trials are under way at once and their
    results are large).
    """

    def __init__(
        self,
        case: Case,
        subject: Subject,
        inputs: tuple[np.ndarray, ...],
        expected: Any,
        cannot_run: tuple[type[Exception], ...],
        keep: bool,
    ) -> None:
        self.case, self.subject, self.inputs, self.expected = case, subject, inputs, expected
        self.cannot_run, self.keep = cannot_run, keep
        self.size = int(inputs[0].shape[0])
        self.base: dict[str, Any] = dict(
            family=case.family,
            subject=subject.name,
            kind=subject.kind,
            where=subject.where,
            size=self.size,
            metric=case.metric,
            params=subject.params,
            default=subject.default_at(self.size),
        )
        self.runs: list[tuple[float, Any]] = []
        self.first: float | None = None
        self.failed: Result | None = None
        self._passed: Any = None

    def call(self, measured: bool) -> None:
        """Call the subject once (unless it failed before) and check the result; keep the first
        call's time (it carries the compile) and a measured call's as a run. A measured run of
        a subject with an unrecorded call (:attr:`.cases.Subject.plain`) takes its time from
        that call and the split of it from a recorded call after it, made once the first
        call's result is checked and dropped: two results alive at once would change what
        the allocator hands the next call (on glibc, freeing two 4 MiB results at once returned
        their memory to the system, and the next call's output faulted its pages in anew)."""
        if self.failed is not None:
            return
        plain = self.subject.plain if measured else None
        try:
            if plain is not None:
                result, elapsed = plain(self.inputs)
            else:
                start = time.perf_counter()
                result, timing = self.subject.call(self.inputs)
                elapsed = time.perf_counter() - start
            if not self._checked(result):
                return
            if plain is not None:
                del result
                _, timing = self.subject.call(self.inputs)
        except VariantError as exc:  # a variant that does not take this input (too many keys)
            self.failed = Result(**self.base, status="skipped", message=str(exc).splitlines()[0])
            return
        except self.cannot_run as exc:
            self.failed = Result(**self.base, status="skipped", message=_describe(exc))
            return
        except Exception as exc:  # every failure of a subject is a result, whatever raised it
            self.failed = Result(**self.base, status="error", message=_describe(exc))
            return
        seconds = timing.wall if timing is not None and plain is None else elapsed
        if self.first is None:
            self.first = seconds
        if measured:
            self.runs.append((seconds, timing))

    def _checked(self, result: Any) -> bool:
        """Whether ``result`` is right (checked unless it equals one that passed); a wrong one
        fails the trial."""
        if not self._seen(result):
            wrong = self.case.check(result, self.expected)
            if wrong:
                self.failed = Result(**self.base, status="wrong", message=wrong)
                return False
            self._passed = result if self.keep else fingerprint(result)
        return True

    def _seen(self, result: Any) -> bool:
        if self._passed is None:
            return False
        return identical(result, self._passed) if self.keep else fingerprint(result) == self._passed

    @property
    def unstable(self) -> bool:
        """Whether the measured runs so far disagree by more than :data:`UNSTABLE`."""
        return self.failed is None and len(self.runs) >= 3 and _spread([t for t, _ in self.runs]) > UNSTABLE

    def result(self) -> Result:
        """The failure, or the medians (with fastest and slowest) of the measured runs."""
        if self.failed is not None:
            return self.failed
        times = [t for t, _ in self.runs]
        median = statistics.median(times)
        spread = _spread(times)
        result = Result(
            **self.base,
            status="ok",
            reps=len(times),
            e2e=median,
            e2e_min=min(times),
            e2e_max=max(times),
            compile=max(0.0, (self.first or 0.0) - median),
            figure=self.case.figure(self.size, median),
            samples=times,
            spread=spread,
            message=f"unstable: the median is {spread:.0%} above the fastest run" if spread > UNSTABLE else "",
        )
        timings = [t for _, t in self.runs if t is not None]
        if timings:
            kernels = [t.kernel for t in timings]
            result.kernel, result.kernel_min, result.kernel_max = statistics.median(kernels), min(kernels), max(kernels)
            result.upload = statistics.median(t.upload for t in timings)
            result.download = statistics.median(t.download for t in timings)
            result.other = statistics.median(t.other for t in timings)
            result.launches = timings[0].launches or None
        return result


def measure(
    case: Case,
    subject: Subject,
    inputs: tuple[np.ndarray, ...],
    expected: Any,
    reps: int,
    warmup: int,
    cannot_run: tuple[type[Exception], ...] = (),
) -> Result:
    """Time ``subject`` on ``inputs``: warm-ups, then ``reps`` checked runs (twice as many more
    if they disagree too much). An exception of a ``cannot_run`` type (the device cannot hold
    or launch it) is recorded as ``skipped``."""
    trial = _Trial(case, subject, inputs, expected, cannot_run, keep=True)
    for _ in range(max(1, warmup, warm_calls(subject))):
        trial.call(measured=False)
    for _ in range(reps):
        trial.call(measured=True)
    if trial.unstable:  # a busy moment: once more, with twice the samples
        for _ in range(2 * reps):
            trial.call(measured=True)
    return trial.result()


def warm_calls(subject: Subject) -> int:
    """The warm-up calls ``subject``'s device needs before its calls run as they will from then
    on (:attr:`parskel.runtime.Device.warm_calls`); 1 for host code and peers.

    >>> warm_calls(Subject("sort", "numpy", "peer", "host", lambda inputs: (None, None)))
    1
    """
    if subject.kind != "variant" or subject.where == "host":
        return 1
    try:
        return find(subject.where).warm_calls
    except ParskelError:
        return 1


def measure_together(
    case: Case,
    subjects: Sequence[Subject],
    inputs: tuple[np.ndarray, ...],
    expected: Any,
    reps: int,
    warmup: int,
    cannot_run: tuple[type[Exception], ...] = (),
    calling: Callable[[Subject], None] | None = None,
) -> list[Result]:
    """Time several subjects on one input with their repetitions interleaved: every subject's
    warm-ups, then ``reps`` rounds that call each subject once (and twice as many more rounds
    among those whose runs disagree too much). A change in the machine's load while they run
    then falls on all of them alike, so that their ratios stay fair. ``calling`` hears each
    subject before it is called."""
    trials = [_Trial(case, s, inputs, expected, cannot_run, keep=False) for s in subjects]

    turn = 0

    def round_of(group: list[_Trial], measured: bool) -> None:
        # each round starts one subject later, so that no subject always follows the same one
        # (a check of a large result leaves the caches cold for whoever comes next)
        nonlocal turn
        start, turn = turn % len(group), turn + 1
        for trial in group[start:] + group[:start]:
            if calling is not None and trial.failed is None:
                calling(trial.subject)
            trial.call(measured)

    for _ in range(max(1, warmup, *(warm_calls(s) for s in subjects))):
        round_of(trials, False)
    for _ in range(reps):
        round_of(trials, True)
    shaky = [t for t in trials if t.unstable]
    for _ in range(2 * reps if shaky else 0):
        round_of(shaky, True)
    return [trial.result() for trial in trials]


def identical(a: Any, b: Any) -> bool:
    """Whether two results are the same host arrays (or tuples of them), element for element.

    >>> identical((np.arange(3), np.ones(2)), (np.arange(3), np.ones(2))), identical(np.arange(3), [0, 1, 2])
    (True, False)
    """
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b))
    return False


def fingerprint(result: Any) -> bytes | None:
    """A SHA-256 digest of a result made of host arrays (or a tuple of them), else None.

    >>> fingerprint(np.arange(3)) == fingerprint(np.arange(3)) != fingerprint(np.arange(4)), fingerprint(3)
    (True, None)
    """
    parts = result if isinstance(result, tuple) else (result,)
    if not all(isinstance(p, np.ndarray) for p in parts):
        return None
    digest = hashlib.sha256()
    for part in parts:
        digest.update(f"{part.dtype}{part.shape}".encode())
        digest.update(np.ascontiguousarray(part).data)
    return digest.digest()


def _spread(times: list[float]) -> float:
    fastest = min(times)
    return statistics.median(times) / fastest - 1.0 if fastest > 0 else 0.0


def predicted(case: Case, result: Result, size: int, calls: int) -> float:
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
    if family.startswith("e2e."):
        return e2e.subjects(family, devices, chosen, notes)
    if family.startswith("primitives."):
        return primitives.subjects(family, devices, chosen, notes)
    if family.startswith("resident."):
        return resident.subjects(family, devices, chosen, notes, settings.sizes.get(family, ()))
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


Plan = Sequence[tuple[Case, Sequence[Subject]]]
Refusal = Callable[[Subject, int], str | None]


def sweep(
    devices: Sequence[Device], settings: Settings, notes: list[str], listen: Listener | None = None
) -> list[Result]:
    """Measure every subject of every family at every size, smallest first.

    ``listen(event, payload)`` hears ``("plan", total)``, ``("start", (case, subject, size))``,
    ``("done", result)`` and ``("note", text)`` (a size skipped for want of host memory), for a
    progress display.
    """
    plan = [(CASES[f], subjects_for(f, devices, settings, notes)) for f in _measured_first(settings.families)]
    if listen is not None:
        listen("plan", sum(len(subjects) * len(settings.sizes[case.family]) for case, subjects in plan))
    results = run_plan(
        plan,
        settings.sizes,
        reps=settings.reps,
        warmup=settings.warmup,
        budget=settings.budget,
        seed=settings.seed,
        listen=listen,
    )
    rank = {family: k for k, family in enumerate(settings.families)}
    return sorted(results, key=lambda r: rank.get(r.family, len(rank)))


def _measured_first(families: Sequence[str]) -> list[str]:
    """The families in the order they are measured: the call-overhead ones first, as a program
    calling in a loop meets them. PoCL's launches slow down in a process that has built the
    hundreds of kernels of the other families (on a 2-core machine a 16 x 16 matmul, three
    launches, took 160 us in a fresh process and 240 to 560 us after the scan and sort
    families), for a reason inside PoCL not found yet. The results keep the families' order.

    >>> _measured_first(["sort", "overhead.map", "scan", "overhead.sort"])
    ['overhead.map', 'overhead.sort', 'sort', 'scan']
    """
    return sorted(families, key=lambda family: not family.startswith("overhead."))


def _skip(
    subject: Subject, size: int, dropped: Mapping[tuple[str, str, str], str], refuse: Refusal | None
) -> str | None:
    """Why ``subject`` is not measured at ``size``, or None."""
    why = dropped.get((subject.name, subject.params, subject.where))
    return why or (refuse(subject, size) if refuse is not None else None)


def _stop(case: Case, result: Result, following: int, budget: float | None, calls: int) -> str | None:
    """Why a subject measured as ``result`` stops before the ``following`` size, or None."""
    if result.status == "skipped":  # it does not take inputs this large, or the device cannot
        return result.message
    if budget is None:
        return None
    if result.status != "ok":
        return f"failed at size {result.size}"
    if following and predicted(case, result, following, calls) > budget:
        return f"measuring it would take over {budget:g} s (judged at size {result.size})"
    return None


def run_plan(
    plan: Plan,
    sizes: Mapping[str, Sequence[int]],
    *,
    reps: int,
    warmup: int,
    budget: float | None,
    seed: int,
    listen: Listener | None = None,
    refuse: Refusal | None = None,
    cannot_run: tuple[type[Exception], ...] = (),
    together: bool = False,
) -> list[Result]:
    """Measure each case's subjects at each of its ``sizes``, smallest first, on inputs made
    once per size (from a generator seeded with ``seed``) and checked against one reference.

    A subject stops before a size once it failed or was skipped, or once measuring it there
    would take longer than ``budget`` seconds; ``refuse(subject, size)`` may name a reason to
    skip a subject at a size without running it. Both leave a ``skipped`` result with the
    reason. With ``together`` the subjects of one device are measured with their repetitions
    interleaved (:func:`measure_together`), so that their ratios hold under a changing load.
    """

    def tell(event: str, payload: Any) -> None:
        if listen is not None:
            listen(event, payload)

    results: list[Result] = []
    rng = np.random.default_rng(seed)
    calls = max(1, warmup) + reps
    for case, subjects in plan:
        dropped: dict[tuple[str, str, str], str] = {}
        steps = tuple(sizes[case.family])
        for size, following in zip(steps, steps[1:] + (0,)):
            inputs: tuple[np.ndarray, ...] = ()
            expected: Any = None
            if together:
                groups = [list(g) for _, g in itertools.groupby(subjects, key=lambda s: s.where)]
            else:
                groups = [[s] for s in subjects]
            for group in groups:
                reasons = [_skip(s, size, dropped, refuse) for s in group]
                live = [s for s, why in zip(group, reasons) if not why]
                if live and not inputs:  # inputs only where something runs on them
                    try:
                        inputs = case.make(size, rng)
                        expected = case.reference(inputs)
                    except MemoryError as exc:  # this size and the larger ones do not fit the host
                        short = f"no host memory for the inputs at n={size}: {str(exc).strip()}"
                        dropped.update({(s.name, s.params, s.where): short for s in subjects})
                        reasons, live, inputs = [short] * len(group), [], ()
                        tell("note", f"{case.family}: {short}; this size and the larger ones are skipped")
                measured: dict[int, Result] = {}
                if together and live:
                    heard = lambda s: tell("start", (case, s, size))  # noqa: B023 (called at once)
                    found = measure_together(case, live, inputs, expected, reps, warmup, cannot_run, heard)
                    measured = {id(s): r for s, r in zip(live, found)}
                for subject, why in zip(group, reasons):
                    if not together or why:
                        tell("start", (case, subject, size))
                    if why:
                        result = Result(
                            case.family,
                            subject.name,
                            subject.kind,
                            subject.where,
                            size,
                            "skipped",
                            metric=case.metric,
                            params=subject.params,
                            message=why,
                        )
                    elif together:
                        result = measured[id(subject)]
                    else:
                        result = measure(case, subject, inputs, expected, reps, warmup, cannot_run)
                    # a measured run of a subject with an unrecorded call makes two calls
                    made = calls + (reps if subject.plain is not None else 0)
                    stop = None if why else _stop(case, result, following, budget, made)
                    if stop:
                        dropped[(subject.name, subject.params, subject.where)] = stop
                    results.append(result)
                    tell("done", result)
    return results
