"""The files of a report folder: HTML pages of tables, PNG charts and CSV tables.

Shared by the tools that write reports into one folder (``parskel bench``, ``probe``, ``study``):
one style sheet, one way to escape, tabulate and save, so that their pages look alike and link
to each other.
"""

from __future__ import annotations

import csv
import html
import re
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; max-width: 80em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; display: block; margin: 0.5em 0 1.5em; }
.bad { color: #b00; } .note { color: #865; }
td.holds { background: #e3f3e3; } td.fails { background: #f8dede; } td.partly { background: #fbf0d0; }
"""


def slug(text: str) -> str:
    """``text`` as a file-name part: lower case, runs of other characters as one dash.

    >>> slug("NVIDIA H200 (cuda:0)")
    'nvidia-h200-cuda-0'
    """
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def escape(value: object) -> str:
    """``str(value)`` safe inside HTML."""
    return html.escape(str(value))


def table(header: Sequence[str], rows: Sequence[Sequence[object]], numeric: set[int] | None = None) -> str:
    """An HTML table; the columns whose index is in ``numeric`` are right-aligned."""
    numeric = numeric or set()
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(f"<td{' class=n' if i in numeric else ''}>{escape(c)}</td>" for i, c in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def save_chart(fig: plt.Figure, path: Path) -> str:
    """Write ``fig`` as a PNG at ``path``, close it, and return the file's name (for ``<img>``)."""
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path.name


def write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Write a CSV table; the file's name."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path.name


def write_page(path: Path, title: str, body: Sequence[str]) -> Path:
    """Write an HTML page of the ``body`` fragments, in the shared style."""
    path.write_text(
        f"<!doctype html><html><head><meta charset=utf-8><title>{escape(title)}</title>"
        f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>",
        encoding="utf-8",
    )
    return path
