"""Every script in examples/ runs to completion (each asserts its own result against NumPy)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script: Path) -> None:
    if script.name.startswith("mpi_") and importlib.util.find_spec("mpi4py") is None:
        pytest.skip("the MPI examples need mpi4py: pip install '.[mpi]'")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{script.name} failed:\n{done.stdout}\n{done.stderr}"
