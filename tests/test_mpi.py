"""Distributions over MPI ranks: ``tests/mpi_check.py`` under ``mpiexec -n 2`` (every skeleton,
sort and scan against NumPy, and a failure on one rank raised on both)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _mpiexec() -> str | None:
    beside = Path(sys.executable).parent / "mpiexec"  # the mpich wheel installs it in the environment
    return str(beside) if beside.exists() else shutil.which("mpiexec")


MPIEXEC = _mpiexec()
WHY = (
    "mpi4py is not installed (pip install '.[mpi]')"
    if importlib.util.find_spec("mpi4py") is None
    else "no mpiexec on PATH or beside the Python executable"
)


@pytest.mark.skipif(MPIEXEC is None or importlib.util.find_spec("mpi4py") is None, reason=WHY)
def test_two_ranks() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent / "src"), os.environ.get("PYTHONPATH", "")])}
    # Open MPI's mpiexec refuses to start as root (containers, CI) unless told that it may;
    # MPICH's ignores these
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    assert MPIEXEC is not None
    done = subprocess.run(
        [MPIEXEC, "-n", "2", sys.executable, str(HERE / "mpi_check.py")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    # mpiexec forwards each rank's output as it comes: two ranks' lines may arrive run together
    reports = sorted(re.findall(r"rank (\d+): (\d+) checks passed", done.stdout))
    assert [rank for rank, _ in reports] == ["0", "1"], done.stdout
    counts = {int(count) for _, count in reports}
    assert len(counts) == 1 and counts.pop() > 200
