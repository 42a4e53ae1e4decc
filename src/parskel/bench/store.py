"""The results store: one SQLite file that outlives a run, so runs and devices can be compared.

Tables: ``runs`` (when, where, what was run and with which versions), ``devices`` (the devices
of each run, with their drivers) and ``results`` (one row per subject and size).
"""

from __future__ import annotations

import json
import platform
import socket
import sqlite3
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from ..runtime import Device
from .harness import Result

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started TEXT NOT NULL,
    finished TEXT,
    host TEXT NOT NULL,
    cpu TEXT NOT NULL,
    command TEXT NOT NULL,
    versions TEXT NOT NULL,
    settings TEXT NOT NULL,
    notes TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE IF NOT EXISTS devices (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    platform TEXT NOT NULL,
    driver TEXT NOT NULL,
    info TEXT NOT NULL,
    PRIMARY KEY (run_id, id)
);
CREATE TABLE IF NOT EXISTS results (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    family TEXT NOT NULL, subject TEXT NOT NULL, kind TEXT NOT NULL, "where" TEXT NOT NULL,
    size INTEGER NOT NULL, status TEXT NOT NULL, reps INTEGER NOT NULL,
    e2e REAL, e2e_min REAL, e2e_max REAL, kernel REAL, kernel_min REAL, kernel_max REAL,
    upload REAL, download REAL, other REAL, launches INTEGER, compile REAL,
    figure REAL, metric TEXT NOT NULL, params TEXT NOT NULL, message TEXT NOT NULL,
    samples TEXT NOT NULL, spread REAL, "default" INTEGER NOT NULL DEFAULT 0, cost REAL
);
CREATE INDEX IF NOT EXISTS results_by_run ON results(run_id, family);
"""

_COLUMNS = [f.name for f in fields(Result)]

VERSIONED = ("parskel", "numpy", "pyopencl", "numba", "matplotlib", "rich", "cupy", "torch")


@dataclass(frozen=True)
class Run:
    """A stored run with its devices."""

    id: int
    started: str
    finished: str | None
    host: str
    cpu: str
    command: str
    versions: dict[str, str]
    settings: dict[str, Any]
    notes: list[str]
    devices: list[dict[str, Any]]


def versions() -> dict[str, str]:
    """Python and the installed version of every package a result may depend on."""
    from .. import __version__

    found = {"python": sys.version.split()[0], "parskel": __version__}
    distributions = metadata.packages_distributions()  # import name -> e.g. ["cupy-cuda13x"]
    for name in VERSIONED[1:]:
        for dist in [name, *distributions.get(name, [])]:
            try:
                found[name] = metadata.version(dist)
                break
            except metadata.PackageNotFoundError:
                continue
    return found


def _now() -> str:
    return datetime.now(UTC).astimezone().isoformat(timespec="seconds")


class Store:
    """An open results database (created on first use)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.executescript(_SCHEMA)
        known = {row[1] for row in self._db.execute("PRAGMA table_info(results)")}
        added = {"spread": "REAL", "default": "INTEGER NOT NULL DEFAULT 0", "cost": "REAL"}  # since the first stores
        for column, kind in added.items():
            if column not in known:
                self._db.execute(f'ALTER TABLE results ADD COLUMN "{column}" {kind}')

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def begin(self, command: str, settings: dict[str, Any], devices: Sequence[Device]) -> int:
        """Record a new run; its id."""
        with self._db:
            cur = self._db.execute(
                "INSERT INTO runs (started, host, cpu, command, versions, settings) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    _now(),
                    socket.gethostname(),
                    platform.processor() or platform.machine(),
                    command,
                    json.dumps(versions()),
                    json.dumps(settings, default=list),
                ),
            )
            run_id = int(cur.lastrowid or 0)
            self._db.executemany(
                "INSERT INTO devices VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        run_id,
                        d.id,
                        d.name,
                        d.type,
                        _platform(d),
                        d.info.driver_version,
                        json.dumps(d.info.as_dict()),
                    )
                    for d in devices
                ],
            )
        return run_id

    def add(self, run_id: int, results: Iterable[Result]) -> None:
        rows = []
        for result in results:
            values = result.as_dict()
            values["samples"] = json.dumps(values["samples"])
            rows.append([run_id] + [values[c] for c in _COLUMNS])
        marks = ", ".join("?" for _ in range(len(_COLUMNS) + 1))
        names = ", ".join(f'"{c}"' for c in ["run_id", *_COLUMNS])
        with self._db:
            self._db.executemany(f"INSERT INTO results ({names}) VALUES ({marks})", rows)

    def finish(self, run_id: int, notes: Sequence[str]) -> None:
        with self._db:
            self._db.execute(
                "UPDATE runs SET finished = ?, notes = ? WHERE id = ?", (_now(), json.dumps(list(notes)), run_id)
            )

    # reading -------------------------------------------------------------------------------
    def runs(self) -> list[Run]:
        """Every stored run, oldest first."""
        rows = self._db.execute("SELECT * FROM runs ORDER BY id").fetchall()
        return [self._run(row) for row in rows]

    def run(self, run_id: int) -> Run:
        row = self._db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            known = [r.id for r in self.runs()]
            raise LookupError(f"{self.path} has no run {run_id}; it has {known}")
        return self._run(row)

    def latest(self) -> Run | None:
        row = self._db.execute("SELECT * FROM runs ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else self._run(row)

    def _run(self, row: sqlite3.Row) -> Run:
        devs = self._db.execute("SELECT * FROM devices WHERE run_id = ? ORDER BY id", (row["id"],)).fetchall()
        return Run(
            id=row["id"],
            started=row["started"],
            finished=row["finished"],
            host=row["host"],
            cpu=row["cpu"],
            command=row["command"],
            versions=json.loads(row["versions"]),
            settings=json.loads(row["settings"]),
            notes=json.loads(row["notes"]),
            # a sqlite3.Row iterates its values: its keys() are the column names
            devices=[{k: d[k] for k in d.keys() if k != "run_id"} for d in devs],  # noqa: SIM118
        )

    def results(self, run_id: int) -> list[Result]:
        """The results of one run, in the order they were measured."""
        rows = self._db.execute("SELECT * FROM results WHERE run_id = ? ORDER BY rowid", (run_id,)).fetchall()
        return [_result(row) for row in rows]

    def earlier(self, device: Device, family: str, size: int, tool: str) -> list[Result]:
        """The results for ``family`` at ``size`` of every stored run of ``tool`` (the
        ``tool`` of its settings) on a device like ``device`` (same name, platform and
        driver), oldest first."""
        rows = self._db.execute(
            """SELECT r.* FROM results r JOIN runs u ON u.id = r.run_id
               JOIN devices d ON d.run_id = r.run_id AND d.id = r."where"
               WHERE r.family = ? AND r.size = ? AND d.name = ? AND d.platform = ? AND d.driver = ?
               AND json_extract(u.settings, '$.tool') = ? ORDER BY r.run_id, r.rowid""",
            (family, size, device.name, _platform(device), device.info.driver_version, tool),
        ).fetchall()
        return [_result(row) for row in rows]


def _platform(device: Device) -> str:
    return f"{device.info.platform} ({device.info.platform_version})"


def _result(row: sqlite3.Row) -> Result:
    values = {c: row[c] for c in _COLUMNS}
    values["samples"] = json.loads(values["samples"])
    values["default"] = bool(values["default"])
    return Result(**values)
