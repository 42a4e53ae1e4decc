"""What ``parskel probe`` shows: a progress bar while it measures, then one table per section
with each figure as a fraction of the device's theoretical peak."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from ..progress import Bar
from .figures import SECTIONS, Step
from .profile import Profile


def percent(value: float | None) -> str:
    """A fraction as a percentage with three significant digits, ``-`` for none.

    >>> percent(0.4567), percent(None), percent(0.0012)
    ('45.7 %', '-', '0.12 %')
    """
    return "-" if value is None else f"{value * 100:.3g} %"


class ProgressDisplay(Bar):
    """A listener for :func:`parskel.probe.probe` that draws one bar, step by step (in a log,
    a line per step)."""

    def __init__(self, console: Console) -> None:
        super().__init__(console, width=56)

    def __call__(self, event: str, payload: Any) -> None:
        if event == "plan":
            self.plan(len(payload), "building the first kernels")
        elif event == "start":
            step: Step = payload
            self.describe(f"{step.section}: {step.label}")
        elif event == "done":
            step, figures = payload
            if not self.console.is_terminal:
                self.console.print(f"{step.section}: {step.label}: " + "; ".join(f.text() for f in figures))
            self.advance()


def tables(profile: Profile) -> list[Table | str]:
    """The peaks and how they were derived, then one table per measured section."""
    peaks = Table(title=f"Peaks of {profile.name}", title_justify="left")
    for column in ("kind", "theoretical", "measured", "measured / theoretical", "measured by"):
        peaks.add_column(column)
    for kind, peak in profile.peaks.items():
        best = profile.best(kind)
        peaks.add_row(
            kind,
            peak.short(),
            "-" if best is None else best.text(),
            percent(profile.measured_fraction(kind)),
            "-" if best is None else f"{best.name} ({best.setting()})",
        )
    found: list[Table | str] = [peaks]
    found += [f"{kind}: {peak.describe()}" for kind, peak in profile.peaks.items()]
    for section, title in SECTIONS.items():
        figures = [f for f in profile.figures if f.section == section]
        if not figures:
            continue
        table = Table(title=title, title_justify="left")
        with_peak = any(f.peak for f in figures)
        with_time = any(f.unit != "us" for f in figures)  # a time in us is the figure itself
        table.add_column("measures")
        table.add_column("setting")
        table.add_column("figure", justify="right")
        if with_peak:
            table.add_column("% of peak", justify="right")
        if with_time:
            table.add_column("time", justify="right")
        for figure in figures:
            row = [figure.name, figure.setting(), figure.text()]
            row += [percent(profile.fraction(figure))] if with_peak else []
            row += [f"{figure.seconds * 1e3:.3g} ms"] if with_time else []
            table.add_row(*row)
        found.append(table)
    return found


def print_profile(console: Console, profile: Profile) -> None:
    for part in tables(profile):
        console.print(part)
        if isinstance(part, Table):
            console.print()
    for failure in profile.failures:
        console.print(f"[red]failed:[/] {failure}")
