"""``parskel tune --write-defaults``: measurements become the defaults parskel ships.

Two files of the package are written, never edited by hand: the tuning database's shipped
defaults (``tune/defaults.json``: an entry for the device and one for its vendor and type
through the same backend, the first device's where one run tunes several of them) and
``algorithms/preferred.json``, the variant order used where the database has nothing: the
device type's list (``cpu``, ``gpu``) and, for GPUs, the vendor's (``vendor:nvidia``) are
reordered by the measured times, as a lookup orders them (the largest size measured decides,
unless the device was tuned at a larger size before).
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping, Sequence
from importlib import resources
from pathlib import Path

from ..algorithms import registry
from ..errors import VariantError
from . import database
from .tuner import Outcome

Table = dict[str, dict[str, list[str]]]


def preferred_path() -> Path:
    return Path(str(resources.files(registry.__package__ or "parskel.algorithms").joinpath("preferred.json")))


def read_preferred(path: Path | None = None) -> Table:
    table: Table = json.loads((path or preferred_path()).read_text(encoding="utf-8"))
    return table


def problems(table: Mapping[str, Mapping[str, Sequence[str]]]) -> list[str]:
    """What makes a ``preferred.json`` table invalid for the registered variants (empty if
    nothing): unknown families, unknown or repeated variant names."""
    found = []
    for key, families in table.items():
        for family, names in families.items():
            try:
                known = {v.name for v in registry.variants(family)}
            except VariantError:
                found.append(f"{key}: unknown family {family!r}")
                continue
            unknown = [n for n in names if n not in known]
            if unknown:
                found.append(f"{key}/{family}: unknown variants {unknown}")
            if len(set(names)) != len(names):
                found.append(f"{key}/{family}: a variant named twice")
    return found


def reordered(names: Sequence[str], family: str, measured: Sequence[str], refused: Sequence[str] = ()) -> list[str]:
    """A table's list for ``family``: every registered variant, the known ones in their order,
    the others after them in registration order, then ordered as a lookup orders them
    (:func:`parskel.tune.database.ordered`)."""
    registered = [v.name for v in registry.variants(family)]
    base = [n for n in names if n in registered] + [n for n in registered if n not in names]
    return database.ordered(base, measured, refused)


def keys_for(outcome: Outcome) -> list[str]:
    """The ``preferred.json`` keys a device's measurements rewrite."""
    info = outcome.device.info
    keys = [info.type]
    if info.type == "gpu":
        keys.append(f"vendor:{database.vendor(info.vendor)}")
    return keys


def format_table(table: Table) -> str:
    """The table as JSON with one line per family, as the file has always been laid out."""
    blocks = []
    for key, families in table.items():
        lines = [f"    {json.dumps(f)}: {json.dumps(names)}" for f, names in families.items()]
        blocks.append(f"  {json.dumps(key)}: {{\n" + ",\n".join(lines) + "\n  }")
    return "{\n" + ",\n".join(blocks) + "\n}\n"


def larger_known(path: Path, outcome: Outcome) -> bool:
    """Whether the database at ``path`` holds an entry for ``outcome``'s family tuned on its
    device at a larger size: then that size, not this one, keeps deciding the coarse table's
    order (a search of small sizes, whose calls are the host's work, must not reorder it)."""
    family, size = outcome.target.family, outcome.size
    return any(
        e.family == family and e.level == "device" and e.size > size and e.matches(outcome.device)
        for e in database.read(path)
    )


def write_defaults(outcomes: Sequence[Outcome], command: str) -> list[Path]:
    """Write the shipped defaults from ``outcomes``; the files written."""
    ran = [o for o in outcomes if o.best is not None]
    if not ran:
        return []
    entries: dict[Hashable, database.Entry] = {}
    for outcome in ran:  # of several devices of one vendor and type, the first given writes theirs
        for level in ("device", "vendor"):
            entry = outcome.entry(command, level)
            entries.setdefault(entry.key, entry)
    shipped = database.store(list(entries.values()), database.shipped_path())
    table = read_preferred()
    largest: dict[str, Outcome] = {}
    families = set(registry.families())  # the skeletons' work-groups have no variants to order
    for outcome in ran:  # the coarse table knows no sizes: the largest size measured decides
        family = outcome.target.family
        if family not in families:
            continue
        if family not in largest or outcome.size > largest[family].size:
            largest[family] = outcome
    for family, outcome in largest.items():
        if larger_known(shipped, outcome):
            continue
        measured = [m.config.variant for m in outcome.best_by_variant()]
        for key in keys_for(outcome):
            row = table.setdefault(key, {})
            known = row.get(family, table.get("default", {}).get(family, []))
            row[family] = reordered(known, family, measured, outcome.refused())
    wrong = problems(table)
    if wrong:
        raise VariantError("preferred.json would be invalid: " + "; ".join(wrong))
    path = preferred_path()
    path.write_text(format_table(table), encoding="utf-8")
    registry.reload_preferences()
    return [shipped, path]
