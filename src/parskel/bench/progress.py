"""What ``parskel bench`` shows while it runs (a rich progress bar) and when it ends (tables)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from ..progress import Bar
from .harness import UNSTABLE, Result
from .roofline import ABOVE_PEAK_NOTE, peak_cell
from .summary import Row, failures


def seconds(value: float | None) -> str:
    """A duration in the unit that reads best."""
    if value is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value * 1e9:.3g} ns"


PEAK_COLUMN = "% of peak (e2e/kernel)"


def ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}x"


class ProgressDisplay(Bar):
    """A listener for :func:`parskel.bench.harness.sweep` that draws one bar."""

    def __call__(self, event: str, payload: Any) -> None:
        if event == "plan":
            self.plan(payload)
        elif event == "start":
            case, subject, size = payload
            where = "" if subject.where == "host" else f" on {subject.where}"
            self.describe(f"{case.family} {subject.name}{where} n={size}")
        elif event == "note":
            self.console.print(f"[yellow]note:[/] {payload}")
        elif event == "done":
            result: Result = payload
            if result.status in ("wrong", "error"):
                self.console.print(
                    f"[red]{result.status}[/] {result.family} {result.subject} n={result.size}: {result.message}"
                )
            elif not self.console.is_terminal:  # a log file: a line per measurement instead of a bar
                where = "" if result.where == "host" else f" on {result.where}"
                shown = seconds(result.e2e) if result.status == "ok" else result.status
                mark = " (unstable)" if result.unstable else ""
                self.console.print(f"{result.family} {result.subject}{where} n={result.size}: {shown}{mark}")
            self.advance()


def print_summary(console: Console, rows: Sequence[Row], results: Sequence[Result], notes: Sequence[str]) -> None:
    """parskel's default against the best peer, then the best variant, at each family's largest
    size; failures and notes."""
    largest_rows = _largest(rows)
    standings = Table(title="parskel's default against the best peer, at the largest size of each family")
    for column in ("family", "device", "size", "default variant", "time", "best peer", "peer time", "vs peer"):
        standings.add_column(column, justify="right" if column in ("size", "time", "peer time") else "left")
    for row in largest_rows:
        standings.add_row(
            row.family,
            row.device,
            str(row.size),
            row.default or "-",
            seconds(row.default_seconds),
            row.peer or "-",
            seconds(row.peer_seconds),
            ratio(row.default_vs_peer) + (" ~" if row.unstable else ""),
        )
    console.print(standings)
    table = Table(title="Best parskel variant at the largest size of each family")
    peaks = any(row.of_peak is not None for row in rows)  # the device was probed
    columns = ["family", "device", "size", "best", "time", "figure"]
    columns += [PEAK_COLUMN] if peaks else []
    for column in columns + ["vs CPU baseline", "best peer", "vs peer"]:
        table.add_column(column, justify="right" if column in ("size", "time", "figure", PEAK_COLUMN) else "left")
    for row in largest_rows:
        figure = "-" if row.figure is None else f"{row.figure:.3g} {row.metric}"
        cells = [row.family, row.device, str(row.size), row.best, seconds(row.seconds), figure]
        cells += [peak_cell(row.of_peak, row.kernel_of_peak)] if peaks else []
        cells += [f"{ratio(row.vs_baseline)} ({row.baseline or '-'})", row.peer or "-"]
        cells += [ratio(row.vs_peer) + (" ~" if row.unstable else "")]
        table.add_row(*cells)
    console.print(table)
    if peaks:
        console.print(
            "% of peak: of the device's best bandwidth (GB/s families, sort) or fp32 fma "
            "throughput (matmul) measured by `parskel probe`"
        )
        if any(max(r.of_peak or 0, r.kernel_of_peak or 0) > 1 for r in largest_rows):
            console.print(ABOVE_PEAK_NOTE)
    if any(row.unstable for row in largest_rows):
        console.print(
            "~ a figure of the row was unstable: its repetitions disagreed by more than "
            f"{UNSTABLE:.0%} even when measured again (the machine was busy)"
        )
    failed = failures(results)
    if failed:
        console.print(f"[red]{len(failed)} failures[/] (recorded, no times):")
        for r in failed:
            console.print(f"  {r.family} {r.subject} on {r.where} n={r.size}: {r.status}: {r.message}")
    for note in notes:
        console.print(f"[yellow]note:[/] {note}")


def _largest(rows: Sequence[Row]) -> list[Row]:
    """The row of each family and device at its largest size."""
    largest: dict[tuple[str, str], Row] = {}
    for row in rows:
        key = (row.family, row.device)
        if key not in largest or row.size > largest[key].size:
            largest[key] = row
    return list(largest.values())
