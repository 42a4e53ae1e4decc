"""``parskel study``: seed 002's optimization study of five OpenDwarfs kernels, rerun on today's
devices, with its conclusions judged against the measurements.

>>> import tempfile
>>> from rich.console import Console
>>> from parskel.study import study, default_settings
>>> settings = default_settings(["srad"], sizes={"srad": (40,)}, reps=1)
>>> with tempfile.TemporaryDirectory() as out:
...     outcome = study([ps.device()], settings, out=out, console=Console(quiet=True))
...     [(r.subject, r.params, r.status) for r in outcome.results], outcome.report.name
([('baseline', '', 'ok'), ('padding', 'BS=16', 'ok'), ('padding', 'BS=32', 'ok')], 'index.html')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ..bench.harness import Result
from ..bench.progress import seconds
from ..bench.store import Store
from ..progress import Bar
from ..runtime import Device
from . import findings
from .base import STUDIES, Point, Study, label
from .findings import DeviceFacts, Verdict
from .report import write_report
from .runner import Settings, default_settings, kernel_names, run, studies, variant_names

__all__ = [
    "STUDIES",
    "Outcome",
    "Point",
    "Settings",
    "Study",
    "default_settings",
    "kernel_names",
    "studies",
    "study",
    "variant_names",
    "write_report",
]


@dataclass(frozen=True)
class Outcome:
    """What a study run produced: its id in the store, results, findings and report page."""

    run_id: int
    database: Path
    results: list[Result]
    verdicts: list[Verdict]
    report: Path | None


def study(
    devices: Sequence[Device],
    settings: Settings,
    *,
    out: str | Path = "study-results",
    command: str = "",
    report: bool = True,
    console: Console | None = None,
) -> Outcome:
    """Run the grid on ``devices``, store it in ``out/results.sqlite``, judge the seed's
    conclusions, and write ``out/report/``. Each result is stored as soon as it is measured, so
    an interrupted run keeps what it measured (``parskel study --redraw`` reports it)."""
    console = console or Console(stderr=True)
    if not console.is_terminal:
        console.width = max(console.width, 150)
    folder = Path(out)
    with Store(folder / "results.sqlite") as store:
        run_id = store.begin(command, settings.as_dict(), devices)
        with Progress(console) as progress:

            def keep(event: str, payload: Any) -> None:
                if event == "done":
                    store.add(run_id, [payload])
                progress(event, payload)

            results = run(devices, settings, keep)
        store.finish(run_id, [])
        facts = [DeviceFacts.from_store(row) for row in store.run(run_id).devices]
        page = write_report(store, folder / "report", [run_id]) if report else None
    verdicts = findings.evaluate(results, facts)
    print_findings(console, verdicts, facts, results)
    if page is not None:
        console.print(f"report: {page}")
    return Outcome(run_id, folder / "results.sqlite", results, verdicts, page)


class Progress(Bar):
    """The bar while a study runs (in a log file, a line per point with its kernel time)."""

    def __call__(self, event: str, payload: Any) -> None:
        if event == "plan":
            self.plan(payload)
        elif event == "start":
            case, subject, size = payload
            name = case.family.removeprefix("study.")
            self.describe(f"{name} {label(subject.name, subject.params)} on {subject.where} n={size}")
        elif event == "done":
            r: Result = payload
            where = f"{r.family.removeprefix('study.')} {label(r.subject, r.params)} on {r.where} n={r.size}"
            if r.status in ("wrong", "error"):
                self.console.print(f"[red]{r.status}[/] {where}: {r.message}")
            elif not self.console.is_terminal:
                shown = f"kernel {seconds(r.kernel)}" if r.status == "ok" else f"{r.status}: {r.message}"
                self.console.print(f"{where}: {shown}")
            self.advance()


def print_findings(
    console: Console, verdicts: Sequence[Verdict], devices: Sequence[DeviceFacts], results: Sequence[Result]
) -> None:
    """The findings table, then the failures (wrong results, errors) if any."""
    table = Table(title="Seed 002's conclusions on these devices")
    table.add_column("conclusion")
    for device in devices:
        table.add_column(device.id)
    for claim in findings.CLAIMS:
        cells = [next(v.verdict for v in verdicts if v.claim.key == claim.key and v.device == d.id) for d in devices]
        table.add_row(claim.key, *cells)
    console.print(table)
    failed = [r for r in results if r.status in ("wrong", "error")]
    for r in failed:
        console.print(f"[red]{r.status}[/] {r.family} {r.subject} {r.params} on {r.where} at {r.size}: {r.message}")
