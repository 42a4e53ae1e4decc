"""Every example in parskel's docstrings runs, on the CPU device (PoCL), and shows what it says."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import parskel as ps


def _modules() -> list[str]:
    names = ["parskel"]
    for info in pkgutil.walk_packages(ps.__path__, prefix="parskel."):
        names.append(info.name)
    return sorted(names)


def _examples(name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(name)
    tests = doctest.DocTestFinder(exclude_empty=True).find(module, name)
    return [t for t in tests if t.examples]


MODULES = [name for name in _modules() if name != "parskel.__main__"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    tests = _examples(name)
    if not tests:
        return
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with ps.using("cpu"):
        for test in tests:
            test.globs.update({"np": np, "ps": ps, "parskel": ps})
            runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, f"{failed} of {attempted} examples in {name} failed (see the output above)"


def test_the_package_has_examples() -> None:
    assert sum(len(t.examples) for name in MODULES for t in _examples(name)) > 30
