"""``parskel bench``: every variant, CPU baseline and peer timed over sizes, stored and reported.

>>> import tempfile
>>> from parskel.bench import bench, default_settings
>>> from rich.console import Console
>>> settings = default_settings(["scan"], sizes={"scan": (1000,)}, peers=frozenset({"numpy"}))
>>> with tempfile.TemporaryDirectory() as out:
...     outcome = bench([ps.device()], settings, out=out, console=Console(quiet=True))
...     outcome.report.name
'index.html'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console

from ..runtime import Device
from . import e2e, resident
from .harness import Result, Settings, default_settings, sweep
from .progress import ProgressDisplay, print_summary
from .report import write_report
from .roofline import profiles_of
from .store import Store
from .summary import Row, summarize

__all__ = ["Outcome", "Result", "Settings", "Store", "bench", "default_settings", "write_report"]


@dataclass(frozen=True)
class Outcome:
    """What a bench run produced: its id in the store, results, summary rows, notes, report page."""

    run_id: int
    database: Path
    results: list[Result]
    rows: list[Row]
    notes: list[str]
    report: Path | None


def bench(
    devices: Sequence[Device],
    settings: Settings,
    *,
    out: str | Path = "bench-results",
    command: str = "",
    report: bool = True,
    console: Console | None = None,
) -> Outcome:
    """Run the sweep on ``devices``, store it in ``out/results.sqlite``, write ``out/report/``."""
    console = console or Console(stderr=True)
    if not console.is_terminal:
        console.width = max(console.width, 150)  # a log file reads better unwrapped
    folder = Path(out)
    notes: list[str] = []
    with Store(folder / "results.sqlite") as store:
        run_id = store.begin(command, asdict(settings), devices)
        with ProgressDisplay(console) as progress:
            results = sweep(devices, settings, notes, progress)
        notes += e2e.conclusions(results) + resident.conclusions(results)
        store.add(run_id, results)
        store.finish(run_id, notes)
        rows = summarize(results, profiles_of([d.info.as_dict() for d in devices]))
        page = write_report(store, folder / "report", [run_id]) if report else None
    print_summary(console, rows, results, notes)
    if page is not None:
        console.print(f"report: {page}")
    return Outcome(run_id, folder / "results.sqlite", results, rows, notes, page)
