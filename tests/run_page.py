"""Run the code of a documentation page as a reader would, outside Sphinx and Jupyter.

``python tests/run_page.py PAGE OUT`` executes the page's code in order in one namespace, in the
folder OUT: the ``{code-cell}`` cells of a MyST-NB tutorial, or the ``python`` blocks of a
Markdown page. A cell whose last statement is an expression prints its value, as a notebook
shows it. Every matplotlib figure open after a cell is saved to OUT as a PNG and closed. The
last line printed is a JSON summary: cells run, figures saved, seconds.

Cells tagged ``raises-exception`` (MyST-NB's tag) must raise; a ``python`` block of a Markdown
page preceded by ``<!-- not run: REASON -->`` is not run (a block sized for a GPU, say).
"""

from __future__ import annotations

import ast
import json
import linecache
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^(`{3,})\s*(.*)$")
_NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")


@dataclass(frozen=True)
class Block:
    """One piece of code of a page: its first line's number in the file, its text and tags."""

    line: int
    code: str
    tags: tuple[str, ...] = ()
    not_run: str = ""  # the reason, for a Markdown block marked not to run


def is_notebook(text: str) -> bool:
    """Whether a Markdown page is a MyST-NB text notebook (its front matter says so)."""
    return text.startswith("---\n") and "file_format: mystnb" in text.split("\n---\n", 1)[0]


def blocks(text: str) -> list[Block]:
    """The code of a page in order: a notebook's code cells, or a Markdown page's python blocks."""
    notebook = is_notebook(text)
    lines = text.split("\n")
    found: list[Block] = []
    k = 0
    while k < len(lines):
        opening = _FENCE.match(lines[k])
        if not opening:
            k += 1
            continue
        fence, info = opening.groups()
        end = next(j for j in range(k + 1, len(lines)) if lines[j].strip() == fence)
        body = lines[k + 1 : end]
        wanted = info.startswith("{code-cell}") if notebook else info == "python"
        if wanted:
            first = k + 2  # the 1-based line number of the body's first line
            tags: tuple[str, ...] = ()
            while body and body[0].startswith(":"):  # MyST directive options (":tags: [...]")
                name, _, value = body[0][1:].partition(":")
                if name.strip() == "tags":
                    tags = tuple(t.strip().strip("'\"") for t in value.strip().strip("[]").split(",") if t.strip())
                body, first = body[1:], first + 1
            before = lines[k - 1] if k else ""
            marked = _NOT_RUN.search(before)
            found.append(Block(first, "\n".join(body) + "\n", tags, marked.group(1) if marked else ""))
        k = end + 1
    return found


def _save_figures(out: Path, stem: str, count: int) -> int:
    if "matplotlib.pyplot" not in sys.modules:
        return count
    import matplotlib.pyplot as plt

    for number in plt.get_fignums():
        count += 1
        plt.figure(number).savefig(out / f"{stem}-{count}.png", dpi=80)
        plt.close(number)
    return count


def run(page: Path, out: Path) -> dict[str, float | int]:
    """Run ``page``'s code in ``out``; the numbers of cells run and figures saved, and the time."""
    text = page.read_text(encoding="utf-8")
    scope: dict = {"__name__": "__main__"}
    figures = cells = 0
    began = time.perf_counter()
    os.chdir(out)
    # The code is compiled under the page's own path at its own line numbers, so tracebacks
    # point into the page. What linecache holds for that path is the code run so far at those
    # lines (blank elsewhere): user functions are translated from their source when first
    # called, possibly in a later cell.
    name = str(page)
    seen = [""] * len(text.split("\n"))
    for block in blocks(text):
        if block.not_run:
            continue
        code = block.code.split("\n")
        seen[block.line - 1 : block.line - 1 + len(code)] = code
        held = "\n".join(seen) + "\n"
        linecache.cache[name] = (len(held), None, held.splitlines(keepends=True), name)
        source = "\n" * (block.line - 1) + block.code
        tree = ast.parse(source, name)
        shown = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        try:
            exec(compile(tree, name, "exec"), scope)
            if shown is not None:
                value = eval(compile(ast.Expression(shown.value), name, "eval"), scope)
                if value is not None:
                    print(repr(value))
        except Exception:
            if "raises-exception" not in block.tags:
                raise
        else:
            if "raises-exception" in block.tags:
                raise AssertionError(f"{page.name}, line {block.line}: tagged raises-exception, raised nothing")
        cells += 1
        figures = _save_figures(out, page.stem, figures)
    return {"cells": cells, "figures": figures, "seconds": round(time.perf_counter() - began, 2)}


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    page_path, out_path = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    out_path.mkdir(parents=True, exist_ok=True)
    print(json.dumps(run(page_path, out_path)))
