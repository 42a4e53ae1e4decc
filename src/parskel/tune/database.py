"""The tuning database: tuned variant orders and parameters per device, family and size.

Entries are data in JSON, in two places: the defaults shipped with parskel (``defaults.json``
beside this module, written by ``parskel tune --write-defaults``) and the user's overlay
(``tuning.json`` in ``$PARSKEL_TUNING``, else ``platformdirs.user_cache_path("parskel") /
"tuning"``), which every ``parskel tune`` run updates. An entry is keyed by the device it holds
for, at one of four levels, the most specific first:

- ``device``: one device, by backend, vendor, type and name;
- ``vendor``: every device of a vendor and type (``nvidia`` GPUs);
- ``type``: every device of a type (``cpu``);
- ``default``: any device.

A lookup takes the most specific level that has entries for the family (as CLBlast's database
falls back from a device to its vendor's and type's defaults); within a level, the user's entries
before the shipped ones, and among them the one tuned at the size nearest to the call's, by
powers of two (its *size class*). An entry's ``order`` names the variants it measured, fastest
first: they go before the variants it did not measure, which follow in the order of the
``preferred.json`` table of :mod:`parskel.algorithms.registry`, except those it could not run
at its size, which keep their places in the table: an entry tuned at large sizes does not push
a small-input variant behind the others.

This module holds data access only: it imports nothing above the runtime, so that the registry
and the skeletons can read it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import platformdirs

from ..errors import ParskelError
from ..runtime import Device
from ..runtime.memo import choices_changed

ENV_VAR = "PARSKEL_TUNING"
FORMAT = 1
LEVELS = ("device", "vendor", "type", "default")
ANY = "*"

# the vendor strings devices report, by the short name entries use
_VENDORS = {
    "nvidia": "nvidia",
    "advanced micro devices": "amd",
    "authenticamd": "amd",
    "amd": "amd",
    "genuineintel": "intel",
    "intel": "intel",
    "apple": "apple",
    "arm": "arm",
    "qualcomm": "qualcomm",
}


class TuningDataError(ParskelError):
    """A tuning database file that cannot be read as one."""


def vendor(name: str) -> str:
    """The short vendor name of a device's vendor string.

    >>> vendor("NVIDIA Corporation"), vendor("AuthenticAMD"), vendor("Intel(R) Corporation"), vendor("")
    ('nvidia', 'amd', 'intel', 'unknown')
    """
    low = name.lower()
    for known, short in _VENDORS.items():
        if known in low:
            return short
    words = low.replace(",", " ").split()
    return words[0] if words else "unknown"


def size_class(size: int) -> int:
    """The power of two a size rounds up to: sizes of one class share tuned values.

    >>> size_class(1), size_class(1000), size_class(1024), size_class(1025)
    (0, 10, 10, 11)
    """
    return max(0, math.ceil(math.log2(size))) if size > 1 else 0


@dataclass(frozen=True)
class Entry:
    """One tuned result: for ``family`` on the devices its key names, at ``size``.

    ``order`` lists the variants measured, fastest first; ``params`` the best parameters
    found for each; ``seconds`` each one's best median time; ``refused`` the variants that
    could not run at that size at all. ``measured`` says when, where and how (date, command,
    strategy, evaluations, driver).
    """

    family: str
    size: int
    order: tuple[str, ...]
    params: Mapping[str, Mapping[str, int]]
    backend: str = ANY
    vendor: str = ANY
    type: str = ANY
    device: str = ANY
    seconds: Mapping[str, float] = field(default_factory=dict)
    measured: Mapping[str, Any] = field(default_factory=dict)
    refused: tuple[str, ...] = ()

    @property
    def level(self) -> str:
        if self.device != ANY:
            return "device"
        if self.vendor != ANY:
            return "vendor"
        return "type" if self.type != ANY else "default"

    @property
    def key(self) -> tuple[str, str, str, str, str, int]:
        """What an entry replaces an earlier one by: its devices, family and size class."""
        return (self.backend, self.vendor, self.type, self.device, self.family, size_class(self.size))

    def matches(self, device: Device) -> bool:
        """Whether this entry holds for ``device`` (at its level)."""
        return self._matches(identity(device))

    def _matches(self, who: Identity) -> bool:
        backend, short_vendor, kind, name = who
        if self.type not in (ANY, kind) or self.vendor not in (ANY, short_vendor):
            return False
        return self.backend in (ANY, backend) and self.device in (ANY, name)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["order"] = list(self.order)
        data["refused"] = list(self.refused)
        data["params"] = {k: dict(v) for k, v in self.params.items()}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Entry:
        values = dict(data)
        values["order"] = tuple(values.get("order", ()))
        values["refused"] = tuple(values.get("refused", ()))
        values["params"] = {str(k): {str(p): int(x) for p, x in v.items()} for k, v in values.get("params", {}).items()}
        return cls(**values)


Identity = tuple[str, str, str, str]


def identity(device: Device) -> Identity:
    """What entries match a device by: backend, short vendor, type and name."""
    info = device.info
    return (info.backend, vendor(info.vendor), info.type, info.name)


def for_device(
    device: Device,
    family: str,
    size: int,
    level: str = "device",
    *,
    order: tuple[str, ...],
    params: Mapping[str, Mapping[str, int]],
    seconds: Mapping[str, float],
    measured: Mapping[str, Any],
    refused: tuple[str, ...] = (),
) -> Entry:
    """An entry for ``device`` at ``level`` (``device``, or ``vendor`` for its vendor and type,
    through the same backend: NVIDIA's CUDA and OpenCL compilers rank the same kernel's shapes
    differently)."""
    backend, short_vendor, kind, name = identity(device)
    if level not in ("device", "vendor"):
        raise ValueError(f"entries are written for a device or its vendor, not {level!r}")
    mine = level == "device"
    return Entry(
        family=family,
        size=size,
        order=order,
        params=params,
        backend=backend,
        vendor=short_vendor,
        type=kind,
        device=name if mine else ANY,
        seconds=seconds,
        measured=measured,
        refused=refused,
    )


@dataclass(frozen=True)
class Found:
    """An entry a lookup found, with where it came from: ``origin`` is ``user`` (the overlay),
    ``shipped`` (parskel's defaults) or ``pinned`` (set for the moment by the tuner)."""

    entry: Entry
    origin: str

    @property
    def level(self) -> str:
        return self.entry.level

    def describe(self) -> str:
        """``tuned on this device at n=2^20 (user overlay, 2025-01-31)``, and the like."""
        e = self.entry
        where = {
            "device": "tuned on this device",
            "vendor": f"tuned for {e.vendor} {e.type}s" + (f" through {e.backend}" if e.backend != ANY else ""),
            "type": f"tuned for {e.type}s",
            "default": "tuned default",
        }[e.level]
        origin = {"user": "user overlay", "shipped": "shipped defaults", "pinned": "pinned"}[self.origin]
        date = e.measured.get("date", "")
        return f"{where} at n={shown_size(e.size)} ({origin}{', ' + date if date else ''})"


def shown_size(size: int) -> str:
    """``2^20`` for powers of two, else the number.

    >>> shown_size(1 << 20), shown_size(1000)
    ('2^20', '1000')
    """
    return f"2^{size.bit_length() - 1}" if size > 1 and size & (size - 1) == 0 else str(size)


# files --------------------------------------------------------------------------------------


def folder() -> Path:
    """Where the user's tuning data lives: ``$PARSKEL_TUNING``, else the user's cache folder."""
    chosen = os.environ.get(ENV_VAR, "").strip()
    return Path(chosen) if chosen else platformdirs.user_cache_path("parskel") / "tuning"


def overlay_path() -> Path:
    return folder() / "tuning.json"


def shipped_path() -> Path:
    """The shipped defaults (a file of the installed package)."""
    return Path(str(resources.files(__package__).joinpath("defaults.json")))


def read(path: Path) -> list[Entry]:
    """The entries of a database file (none if it does not exist)."""
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise TuningDataError(f"{path} is of format {data.get('format')!r}, not {FORMAT}")
        return [Entry.from_dict(e) for e in data.get("entries", [])]
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise TuningDataError(f"{path} is not a tuning database: {exc}") from None


def write(path: Path, entries: Sequence[Entry]) -> None:
    """Write ``entries`` to ``path``, sorted by family and key so that diffs stay small."""
    ordered = sorted(entries, key=lambda e: (e.family, LEVELS.index(e.level), e.key))
    data = {"format": FORMAT, "entries": [e.as_dict() for e in ordered]}
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    temporary.replace(path)


def merged(entries: Sequence[Entry], added: Sequence[Entry]) -> list[Entry]:
    """``entries`` with ``added`` replacing those of the same key (devices, family, size class).

    A search narrowed to some variants (``--variants``) replaces only what it measured: the
    variants the entry it replaces knew and it did not measure are carried over (see
    :func:`carried_over`)."""
    earlier = {e.key: e for e in entries}
    keys = {e.key for e in added}
    return [e for e in entries if e.key not in keys] + [carried_over(earlier.get(e.key), e) for e in added]


def carried_over(old: Entry | None, new: Entry) -> Entry:
    """``new`` with the variants of ``old`` that it neither measured nor refused: their
    parameters and times, ranked with the new ones by time, and where their figures come from
    (``measured["carried"]``: for each search that measured some of them, those variants and
    its date and command).

    >>> old = Entry("matmul", 4096, ("a", "b", "c"), {"a": {"X": 1}, "b": {}, "c": {}},
    ...             seconds={"a": 3.0, "b": 4.0, "c": 9.0}, measured={"date": "d0", "command": "t0"})
    >>> new = Entry("matmul", 4096, ("a",), {"a": {"X": 2}}, seconds={"a": 2.5}, measured={"date": "d1"})
    >>> both = carried_over(old, new)
    >>> both.order, both.params["a"], both.measured["carried"]
    (('a', 'b', 'c'), {'X': 2}, [{'variants': ['b', 'c'], 'date': 'd0', 'command': 't0'}])
    >>> again = carried_over(both, Entry("matmul", 4096, ("c",), {"c": {}}, seconds={"c": 5.0}))
    >>> again.order
    ('a', 'b', 'c')
    >>> for source in again.measured["carried"]:
    ...     print(source)
    {'variants': ['b'], 'date': 'd0', 'command': 't0'}
    {'variants': ['a'], 'date': 'd1', 'command': None}
    """
    if old is None:
        return new
    kept = [v for v in old.order if v not in new.order and v not in new.refused]
    if not kept:
        return new
    seconds = {**{v: old.seconds[v] for v in kept if v in old.seconds}, **new.seconds}
    timed = sorted((v for v in (*new.order, *kept) if v in seconds), key=lambda v: seconds[v])
    order = tuple(timed) + tuple(v for v in (*new.order, *kept) if v not in seconds)
    carried = []  # where the kept variants' figures come from, by the search that measured them
    for earlier in old.measured.get("carried", []):
        variants = [v for v in earlier["variants"] if v in kept]
        if variants:
            carried.append({**earlier, "variants": variants})
    own = [v for v in kept if not any(v in c["variants"] for c in carried)]
    if own:
        carried.append({"variants": own, "date": old.measured.get("date"), "command": old.measured.get("command")})
    return replace(
        new,
        order=order,
        params={**{v: old.params[v] for v in kept if v in old.params}, **new.params},
        seconds=seconds,
        measured={**new.measured, "carried": carried},
    )


def store(added: Sequence[Entry], path: Path | None = None) -> Path:
    """Add entries to a database file (the user's overlay unless told), replacing those of the
    same key; forgets cached lookups. The file written."""
    target = path or overlay_path()
    write(target, merged(read(target), added))
    reload()
    return target


# lookup -------------------------------------------------------------------------------------

_PINNED: list[Entry] = []


@cache
def _sources() -> tuple[tuple[str, tuple[Entry, ...]], ...]:
    return (("user", tuple(read(overlay_path()))), ("shipped", tuple(read(shipped_path()))))


def reload() -> None:
    """Forget what was read, so that the next lookup reads the files again."""
    _sources.cache_clear()
    _lookup.cache_clear()
    choices_changed()


@contextlib.contextmanager
def pinned(entry: Entry) -> Iterator[None]:
    """Within the block, ``entry`` comes before every other (the tuner measures a choice so)."""
    _PINNED.append(entry)
    _lookup.cache_clear()
    choices_changed()
    try:
        yield
    finally:
        _PINNED.remove(entry)
        _lookup.cache_clear()
        choices_changed()


def lookup(family: str, device: Device, size: int | None = None) -> Found | None:
    """The entry for ``family`` on ``device`` at ``size`` (None: any), or None if no level has one."""
    return _lookup(family, identity(device), None if size is None else size_class(size))


@cache
def _lookup(family: str, who: Identity, wanted: int | None) -> Found | None:
    for entry in reversed(_PINNED):
        if entry.family == family and entry._matches(who):
            return Found(entry, "pinned")
    sources = _sources()
    for level in LEVELS:
        found = [
            Found(e, origin)
            for origin, entries in sources
            for e in entries
            if e.family == family and e.level == level and e._matches(who)
        ]
        if not found:
            continue
        if wanted is None:
            return found[0]
        # the nearest size class; ties go to the larger size, then to an entry of the device's
        # own backend over one of any backend, then to the user's entries
        return min(
            found,
            key=lambda f: (
                abs(size_class(f.entry.size) - wanted),
                -size_class(f.entry.size),
                f.entry.backend == ANY,
            ),
        )
    return None


def ordered(base: Sequence[str], measured: Sequence[str], refused: Sequence[str] = ()) -> list[str]:
    """The order of a call: ``base`` (the table's) with the ``measured`` variants first, in
    measured order, then the others in ``base`` order; the variants the search ``refused`` (it
    could not run them at its size: ``local_bitonic``'s small inputs) keep their places.

    >>> ordered(["small", "a", "b", "c", "d"], ["c", "a"], refused=["small"])
    ['small', 'c', 'a', 'b', 'd']
    """
    movable = [n for n in base if n not in refused]
    filled = iter([m for m in measured if m in movable] + [n for n in movable if n not in measured])
    return [n if n in refused else next(filled) for n in base]
