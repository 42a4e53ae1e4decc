"""The Python examples of the README, docs/python_functions.md, docs/distributions.md and
docs/primitives.md run as written."""

from __future__ import annotations

import linecache
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    ROOT / "README.md",
    ROOT / "docs" / "python_functions.md",
    ROOT / "docs" / "distributions.md",
    ROOT / "docs" / "primitives.md",
]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_python_examples_run(page: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, f"{page.name} has a Python example"
    scope: dict = {}  # the blocks of a page run in order, as a reader would run them
    for k, block in enumerate(blocks):
        # registered like a notebook cell, so that user functions' source can be read back
        name = f"<{page.name}, example {k + 1}>"
        linecache.cache[name] = (len(block), None, block.splitlines(keepends=True), name)
        exec(compile(block, name, "exec"), scope)
