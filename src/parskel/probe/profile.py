"""Device profiles: what ``parskel probe`` measured on a device, as JSON in the user's cache.

A profile is found again by its device's key (backend, platform, name and compute units), so
that ``parskel bench`` can say how close each of its figures comes to what the device was
measured to do. ``PARSKEL_PROFILES`` names another folder than the default
(``platformdirs.user_cache_path("parskel") / "profiles"``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import platformdirs

from .._version import __version__
from ..pages import slug
from ..runtime import DeviceInfo
from .figures import SECTIONS, Figure
from .peaks import Peak

ENV_VAR = "PARSKEL_PROFILES"
SCHEMA = 1
# the sections whose best figure is the device's measured peak of each kind
PEAK_SECTIONS = ("instructions", "global", "stride")


def folder() -> Path:
    """Where profiles are kept: ``$PARSKEL_PROFILES``, else the user's cache folder."""
    chosen = os.environ.get(ENV_VAR, "").strip()
    return Path(chosen) if chosen else platformdirs.user_cache_path("parskel") / "profiles"


def key(info: DeviceInfo | Mapping[str, Any]) -> str:
    """The profile key of a device, from a :class:`DeviceInfo` or its ``as_dict()``.

    >>> key({"backend": "opencl", "platform": "Portable Computing Language",
    ...      "name": "pthread-AMD EPYC", "compute_units": 16})
    'opencl-portable-computing-language-pthread-amd-epyc-16cu'
    """
    data = info.as_dict() if isinstance(info, DeviceInfo) else info
    return slug(f"{data['backend']} {data['platform']} {data['name']} {data['compute_units']}cu")


def record(info: DeviceInfo) -> dict[str, Any]:
    """A device's description as a profile keeps it: ``as_dict()`` in JSON's types (lists for
    tuples), so that a profile read back equals the one written."""
    data: dict[str, Any] = json.loads(json.dumps(info.as_dict()))
    return data


@dataclass(frozen=True)
class Profile:
    """The figures measured on one device, its theoretical peaks, and when and how."""

    device: dict[str, Any]  # see record()
    measured: str  # ISO date and time
    command: str
    quick: bool
    peaks: dict[str, Peak]
    figures: list[Figure]
    versions: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)  # steps that raised, with the error

    @property
    def key(self) -> str:
        return key(self.device)

    @property
    def name(self) -> str:
        return f"{self.device['name']} ({self.device['id']}, {self.device['platform']})"

    def best(self, kind: str) -> Figure | None:
        """The highest figure compared with the peak ``kind``: the measured peak."""
        found = [f for f in self.figures if f.peak == kind and f.section in PEAK_SECTIONS]
        return max(found, key=lambda f: f.value) if found else None

    def measured_peak(self, kind: str) -> float | None:
        """The measured peak of ``kind`` in GFLOP/s or GB/s, or None if it was not measured."""
        best = self.best(kind)
        return best.value if best else None

    def measured_fraction(self, kind: str) -> float | None:
        """The measured peak of ``kind`` as a fraction of the theoretical one, where both exist."""
        measured, peak = self.measured_peak(kind), self.peaks.get(kind)
        return measured / peak.value if measured is not None and peak is not None and peak.value else None

    def fraction(self, figure: Figure) -> float | None:
        """``figure`` as a fraction of its theoretical peak, where one is known."""
        peak = self.peaks.get(figure.peak)
        return figure.value / peak.value if peak is not None and peak.value else None

    def merged(self, older: Profile | None) -> Profile:
        """This profile, with the sections it did not measure taken from ``older`` (a probe of
        a few sections updates them and keeps the rest)."""
        if older is None or older.key != self.key:
            return self
        mine = {f.section for f in self.figures}
        figures = [f for f in older.figures if f.section not in mine] + self.figures
        order = list(SECTIONS)
        return replace(self, figures=sorted(figures, key=lambda f: order.index(f.section)))

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "key": self.key,
            "device": self.device,
            "measured": self.measured,
            "command": self.command,
            "quick": self.quick,
            "versions": self.versions,
            "peaks": {k: p.as_dict() for k, p in self.peaks.items()},
            "measured_peaks": {k: self.measured_peak(k) for k in self.peaks},
            "figures": [f.as_dict() for f in self.figures],
            "failures": self.failures,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Profile:
        if data.get("schema") != SCHEMA:
            raise ValueError(f"profile schema {data.get('schema')!r}, expected {SCHEMA}; probe the device again")
        return cls(
            device=dict(data["device"]),
            measured=data["measured"],
            command=data["command"],
            quick=bool(data["quick"]),
            peaks={k: Peak(**p) for k, p in data["peaks"].items()},
            figures=[Figure.from_dict(f) for f in data["figures"]],
            versions=dict(data.get("versions", {})),
            failures=list(data.get("failures", [])),
        )


def versions() -> dict[str, str]:
    """The versions a profile records besides the device's driver."""
    import platform

    return {"parskel": __version__, "python": platform.python_version()}


def path_for(info: DeviceInfo | Mapping[str, Any], where: Path | None = None) -> Path:
    """The file that holds (or would hold) the profile of a device."""
    return (where or folder()) / f"{key(info)}.json"


def save(profile: Profile, where: Path | None = None) -> Path:
    """Write ``profile`` to its file (in ``where``, default :func:`folder`); the path."""
    path = path_for(profile.device, where)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(profile.as_dict(), indent=1) + "\n", encoding="utf-8")
    return path


def load(info: DeviceInfo | Mapping[str, Any], where: Path | None = None) -> Profile | None:
    """The stored profile of a device, or None if it was never probed (or the file is from an
    older parskel, or unreadable: a profile is an aid, never a reason to fail)."""
    path = path_for(info, where)
    try:
        return Profile.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
