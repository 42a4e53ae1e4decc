"""What every studied kernel of seed 002 has: the :class:`Study` record, the grid of
:class:`Point` s it is measured at, and the device time of the one kernel a study varies.

The variants themselves are ordinary :class:`~parskel.algorithms.registry.Variant` objects in
the shared registry, under the family ``study.<name>``: ``Param.choices`` hold the seed's levels
(coarsening 2/4/8/16, block size 32, ...), ``Requirement`` s what a level needs from a device.
A study adds what the registry does not know: the inputs and their check (a bench
:class:`~parskel.bench.cases.Case`), which kernel is timed, and how much memory a size takes.

A variant tagged :data:`COMBINED` (crc's and lud_perimeter's ``combined``, lud_internal's
``blocked``) goes beyond the seed: it applies several of a kernel's optimizations at once, each
parameter at any level.
The grid measures it at its defaults only; the tuner (``parskel tune``) searches all of it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..algorithms import registry
from ..algorithms.registry import Requirement, Variant
from ..bench.cases import Case, Subject
from ..runtime import Device, Recorder, Timing

#: The tag of a variant that combines a study's optimizations, each parameter at any of the
#: seed's levels: a space for the tuner (``parskel tune crc``), which the study measures at its
#: defaults only (sweeping it would multiply a study's points by a hundred).
COMBINED = "combined"


@dataclass(frozen=True)
class Study:
    """One kernel of seed 002 chapter 6 and the optimizations tried on it.

    ``timed`` names the kernels whose device time is measured, the one the study varies under
    each of its names (the others of the application run in their baseline form and count as
    ``other`` time); ``footprint(size)`` is the largest
    buffer and the total device memory one run takes, in bytes. Its :meth:`grid` sweeps every
    variant's levels but a :data:`COMBINED` variant's, which it takes at the defaults.
    """

    name: str
    application: str
    section: str
    timed: tuple[str, ...]
    case: Case
    footprint: Callable[[int], tuple[int, int]]
    baseline: str = "baseline"

    @property
    def family(self) -> str:
        return f"study.{self.name}"

    def variants(self) -> list[Variant]:
        """The registered variants, baseline first (the seed's order)."""
        return registry.variants(self.family)

    def run(self, device: Device, *inputs: Any, variant: str | None = None, **params: int) -> Any:
        """The application once on ``device``: with ``variant`` and ``params``, or else the
        variant and parameters the tuning database holds for the device and the input's size
        (``parskel tune crc``), falling back as every family does (registry.dispatch)."""
        size = int(inputs[0].shape[0]) if inputs and hasattr(inputs[0], "shape") else 0
        call = lambda v, p: v.run(device, *inputs, **p)
        return registry.dispatch(self.family, device, variant, params, call, {"n": size})

    def grid(self, wanted: Iterable[str] | None = None) -> list[Point]:
        """Every point of the study: each variant at every combination of its parameters'
        choices (a parameter without choices stays at its default), a :data:`COMBINED`
        variant at its defaults only. ``wanted`` keeps only the named variants; the baseline
        is always kept, speedups are measured against it."""
        keep = None if wanted is None else {*wanted, self.baseline}
        points = []
        for variant in self.variants():
            if keep is not None and variant.name not in keep:
                continue
            if COMBINED in variant.tags:
                points.append(Point(self, variant, variant.resolve(), ()))
                continue
            swept = [p for p in variant.params if p.choices]
            for values in itertools.product(*(p.choices for p in swept)):
                chosen = dict(zip((p.name for p in swept), values))
                points.append(Point(self, variant, variant.resolve(chosen), tuple(chosen.items())))
        return points


STUDIES: dict[str, Study] = {}


def add(study: Study, variants: Sequence[Variant]) -> Study:
    """Register ``study`` and its variants (the baseline first); a study module calls this."""
    if study.name in STUDIES:
        raise ValueError(f"study {study.name} is registered twice")
    if not variants or variants[0].name != study.baseline:
        raise ValueError(f"study {study.name}: the first variant must be its baseline {study.baseline!r}")
    for variant in variants:
        if variant.family != study.family:
            raise ValueError(f"variant {variant.name} belongs to {variant.family}, not {study.family}")
        registry.register(variant)
    STUDIES[study.name] = study
    return study


def label(subject: str, params: str) -> str:
    """How a point is shown: the variant and its swept values, ``granularity 4``.

    >>> label("granularity", "COARSEN=4"), label("baseline", "")
    ('granularity 4', 'baseline')
    """
    values = [part.split("=", 1)[-1] for part in params.split(", ") if part]
    return " ".join([subject, *values])


@dataclass(frozen=True)
class Point:
    """One cell of a study's grid: a variant with every parameter fixed."""

    study: Study
    variant: Variant
    values: Mapping[str, int]
    swept: tuple[tuple[str, int], ...]

    @property
    def params(self) -> str:
        """The swept parameters as stored with a result, ``COARSEN=4``."""
        return ", ".join(f"{k}={v}" for k, v in self.swept)

    @property
    def label(self) -> str:
        return label(self.variant.name, self.params)

    def refusal(self, device: Device, size: int) -> str | None:
        """Why ``device`` cannot run this point at ``size`` (unmet requirements, not enough
        memory), or None; known before anything is built or uploaded."""
        unmet = self.variant.unmet(device, self.values)
        if unmet:
            return f"{device.id} lacks {'; '.join(unmet)}"
        largest, total = self.study.footprint(size)
        info = device.info
        if largest > info.max_alloc_bytes:
            return f"a buffer of {_mib(largest)} exceeds {device.id}'s largest allocation, {_mib(info.max_alloc_bytes)}"
        if total > info.global_mem_bytes:
            return f"{_mib(total)} of buffers exceed {device.id}'s memory, {_mib(info.global_mem_bytes)}"
        return None

    def subject(self, device: Device) -> Subject:
        """The point on ``device`` as something the bench harness times: each call runs the
        application once and reports the device time of the studied kernel as ``kernel``."""
        run, values, timed = self.variant.run, dict(self.values), self.study.timed

        def call(inputs: tuple[Any, ...]) -> tuple[Any, Timing]:
            with device.record() as recorder:
                result = run(device, *inputs, **values)
            return result, kernel_timing(recorder, timed)

        return Subject(self.study.family, self.variant.name, "variant", device.id, call, self.params)


def kernel_timing(recorder: Recorder, kernels: Collection[str]) -> Timing:
    """The recorder's timing with the ``kernels`` named as kernel time, others as ``other``."""
    whole = recorder.timing
    mine = [e for e in recorder.events if e.kind == "kernel" and e.label in kernels]
    seconds = sum(e.seconds for e in mine)
    return Timing(
        upload=whole.upload,
        kernel=seconds,
        download=whole.download,
        other=whole.other + whole.kernel - seconds,
        wall=whole.wall,
        launches=len(mine),
    )


def work_group(text: str, items: Callable[[Mapping[str, int]], int]) -> Requirement:
    """A requirement that the device runs work-groups of ``items(params)`` work-items."""
    return Requirement(text, lambda device, p: items(p) <= device.info.max_work_group_size)


def local_memory(text: str, nbytes: Callable[[Mapping[str, int]], int]) -> Requirement:
    """A requirement that a work-group's ``nbytes(params)`` of local memory fit the device."""
    return Requirement(text, lambda device, p: nbytes(p) <= device.info.local_mem_bytes)


def _mib(nbytes: int) -> str:
    return f"{nbytes / (1 << 20):.0f} MiB"
