"""The progress bar of the tools that run many measurements (``parskel bench``, ``parskel probe``)."""

from __future__ import annotations

from typing import Any, Self

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class Bar:
    """One bar: what runs now, steps done of all, time elapsed; gone when the block ends.

    >>> with Bar(Console(quiet=True)) as bar:
    ...     bar.plan(2)
    ...     bar.describe("first"); bar.advance()
    """

    def __init__(self, console: Console, width: int = 48) -> None:
        self.console = console
        self._progress = Progress(
            TextColumn(f"[bold]{{task.description:<{width}}}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._task: Any = None

    def __enter__(self) -> Self:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def plan(self, total: int, description: str = "planning") -> None:
        self._task = self._progress.add_task(description, total=total)

    def describe(self, text: str) -> None:
        self._progress.update(self._task, description=text)

    def advance(self) -> None:
        self._progress.advance(self._task)
