"""``parskel probe``: seed 003's microbenchmarks, measuring one characteristic of a device at a
time, and each figure as a fraction of the device's theoretical peak.

>>> import parskel as ps
>>> from parskel.probe import probe, save          # doctest: +SKIP
>>> profile = probe(ps.device(), quick=True)       # doctest: +SKIP
>>> profile.measured_peak("bandwidth")             # GB/s  # doctest: +SKIP
>>> save(profile)                                  # read by `parskel bench`  # doctest: +SKIP

The profile is kept in the user's cache folder (see :mod:`parskel.probe.profile`); ``parskel
bench`` reads it to say how close each of its figures comes to the device's measured peak.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from ..runtime import Device
from . import global_memory, instructions, launches, local_memory, transfers
from .figures import SECTIONS, Figure, Step
from .peaks import Peak, peaks
from .profile import Profile, load, record, save, versions
from .timing import Settings

__all__ = ["SECTIONS", "Figure", "Peak", "Profile", "Settings", "load", "plan", "probe", "save"]

Listener = Callable[[str, Any], None]
_MODULES = (instructions, global_memory, local_memory, launches, transfers)


def plan(device: Device, settings: Settings, sections: Sequence[str] | None = None) -> list[Step]:
    """The steps a probe of ``device`` takes, in order, limited to ``sections`` if given."""
    unknown = sorted(set(sections or ()) - set(SECTIONS))
    if unknown:
        raise ValueError(f"unknown sections {unknown}; choose from {', '.join(SECTIONS)}")
    found = [step for module in _MODULES for step in module.steps(device, settings)]
    wanted = set(sections or SECTIONS)
    order = list(SECTIONS)
    return sorted((s for s in found if s.section in wanted), key=lambda s: order.index(s.section))


def probe(
    device: Device,
    *,
    quick: bool = False,
    sections: Sequence[str] | None = None,
    command: str = "",
    listen: Listener | None = None,
) -> Profile:
    """Measure ``device``: every section (or those named), quick or thorough.

    ``listen(event, payload)`` hears ``("plan", steps)``, ``("start", step)`` and
    ``("done", (step, figures))``, for a progress display. A step that raises leaves no figure
    and a line in the profile's ``failures``.
    """
    settings = Settings.preset(quick)
    steps = plan(device, settings, sections)
    if listen:
        listen("plan", steps)
    figures: list[Figure] = []
    failures: list[str] = []
    for step in steps:
        if listen:
            listen("start", step)
        try:
            found = step.run()
        except Exception as exc:  # one failing probe is a note; the others still measure
            found = []
            failures.append(f"{step.section}: {step.label}: {type(exc).__name__}: {str(exc).strip()}")
        figures += found
        if listen:
            listen("done", (step, found))
    return Profile(
        device=record(device.info),
        measured=datetime.now(UTC).astimezone().isoformat(timespec="seconds"),
        command=command,
        quick=quick,
        peaks=peaks(device.info),
        figures=figures,
        versions=versions(),
        failures=failures,
    )
