"""The other side of a benchmark: CPU baselines and peers, measured in the same run.

Peer groups, as ``--peers`` names them: ``cpu`` (the compiled seed baselines of
``parskel.bench.baselines``), ``numpy``, ``pyopencl`` (PyOpenCL's primitives on each benchmarked
OpenCL device), ``cupy`` and ``torch`` (on the GPU, when installed). A peer that cannot run here
is skipped with a note naming the reason, never an error.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np

from ..runtime import Device, Timing
from . import peers_cupy, peers_pyopencl
from .cases import Inputs, Kind, Subject, exclusive_cumsum, horner

#: The peer groups of ``--peers``; ``cub`` is CUB's own C++, which only ``bench resident`` runs.
GROUPS = ("cpu", "numpy", "pyopencl", "cupy", "torch", "cub")

_NUMPY: dict[str, dict[str, Callable[..., Any]]] = {
    "matmul": {"numpy_matmul": np.matmul},
    "scan": {"numpy_cumsum": exclusive_cumsum},
    "sort": {"numpy_sort": np.sort},
    "reduce": {"numpy_sum": np.sum},
    "skeletons.map": {"numpy_multiply": lambda x: np.multiply(x, x)},
    "skeletons.zip": {"numpy_multiply": np.multiply},
    "skeletons.polynomial": {"numpy_horner": horner},
    "skeletons.mapreduce": {"numpy_dot": lambda x: np.dot(x, x)},
    "skeletons.scan": {"numpy_cumsum": exclusive_cumsum},
}


def group_of(name: str) -> str:
    """The ``--peers`` group a baseline or peer name belongs to."""
    for group in GROUPS[1:]:
        if name.startswith(group):
            return group
    return "cpu"


def _host(fn: Callable[..., Any], family: str) -> Callable[[Inputs], tuple[Any, None]]:
    def call(inputs: Inputs) -> tuple[Any, None]:
        if family == "scan":
            return fn(inputs[0], inclusive=False), None
        return fn(*inputs), None

    return call


def _host_numpy(fn: Callable[..., Any]) -> Callable[[Inputs], tuple[Any, None]]:
    return lambda inputs: (fn(*inputs), None)


def _cpu_baselines(notes: list[str]) -> dict[str, dict[str, Callable[..., Any]]]:
    try:
        from .baselines import BASELINES
    except ImportError as exc:
        notes.append(f"CPU baselines unavailable: parskel.bench.baselines cannot be imported ({exc})")
        return {}
    return BASELINES


def host_subjects(family: str, chosen: set[str], notes: list[str]) -> list[Subject]:
    """CPU baselines and NumPy peers of ``family`` (measured once, on the host)."""
    subjects: list[Subject] = []
    baselines = _cpu_baselines(notes) if {"cpu", "numpy"} & chosen else {}
    own = baselines.get(family, {})
    for name, fn in own.items():
        group = group_of(name)
        if group in chosen:
            kind: Kind = "baseline" if group == "cpu" else "peer"
            subjects.append(Subject(family, name, kind, "host", _host(fn, family)))
    if "numpy" in chosen and not any(group_of(n) == "numpy" for n in own):
        for name, fn in _NUMPY.get(family, {}).items():
            subjects.append(Subject(family, name, "peer", "host", _host_numpy(fn)))
    return subjects


def device_peers(family: str, device: Device, chosen: set[str], notes: list[str]) -> list[Subject]:
    """PyOpenCL's primitives of ``family`` on ``device``."""
    peers = peers_pyopencl.PEERS.get(family, {})
    if "pyopencl" not in chosen or not peers:
        return []
    if not peers_pyopencl.supports(device):
        return []
    ok, why = peers_pyopencl.available()
    if not ok:
        note_once(notes, f"PyOpenCL peers skipped: {why}")
        return []
    subjects = []
    for name, fn in peers.items():
        if family == "scan":
            call = _peer_call(lambda x, fn=fn: fn(device, x, inclusive=False))
        else:
            call = _peer_call(lambda *a, fn=fn: fn(device, *a))
        subjects.append(Subject(family, name, "peer", device.id, call))
    return subjects


def _peer_call(fn: Callable[..., tuple[Any, Timing]]) -> Callable[[Inputs], tuple[Any, Timing]]:
    return lambda inputs: fn(*inputs)


def gpu_peers(family: str, chosen: set[str], notes: list[str]) -> list[Subject]:
    """CuPy and PyTorch peers of ``family`` on the CUDA GPU, where installed."""
    subjects: list[Subject] = []
    if "cupy" in chosen and family in peers_cupy.PEERS:
        ok, why = peers_cupy.available()
        if ok:
            where = f"cupy:{peers_cupy.device_name()}"
            for name, fn in peers_cupy.PEERS[family].items():
                if family == "scan":
                    call = _peer_call(lambda x, fn=fn: fn(x, inclusive=False))
                else:
                    call = _peer_call(fn)
                subjects.append(Subject(family, name, "peer", where, call))
        else:
            note_once(notes, f"CuPy peers skipped: {why}")
    if "torch" in chosen and family in _TORCH:
        ok, why = _torch_available()
        if ok:
            where = f"torch:{_torch().device(_torch_device())}"
            for name, fn in _TORCH[family].items():
                subjects.append(Subject(family, name, "peer", where, _peer_call(fn)))
        else:
            note_once(notes, f"PyTorch peers skipped: {why}")
    return subjects


def note_once(notes: list[str], note: str) -> None:
    """Add ``note`` to ``notes`` unless it is there already."""
    if note not in notes:
        notes.append(note)


def select(spec: str | Sequence[str] | None) -> set[str]:
    """The peer groups named by ``--peers`` (``all`` or ``none`` too); default: all."""
    if spec is None:
        return set(GROUPS)
    names = [s.strip().lower() for s in (spec.split(",") if isinstance(spec, str) else spec)]
    names = [n for n in names if n]
    if names in (["all"], []):
        return set(GROUPS)
    if names == ["none"]:
        return set()
    unknown = sorted(set(names) - set(GROUPS))
    if unknown:
        raise ValueError(f"unknown peers {unknown}; choose from {', '.join(GROUPS)}, all or none")
    return set(names)


# PyTorch, imported lazily -------------------------------------------------------------------


@cache
def _torch() -> Any:
    import torch

    return torch


@cache
def _torch_available() -> tuple[bool, str]:
    if importlib.util.find_spec("torch") is None:
        return False, "PyTorch is not installed"
    try:
        _torch()
    except Exception as exc:  # a broken install raises anything from OSError to RuntimeError
        return False, f"PyTorch cannot be imported: {exc}"
    return True, ""


def torch_on_gpu() -> tuple[bool, str]:
    """Whether PyTorch can be imported and sees a CUDA GPU, and why not."""
    ok, why = _torch_available()
    if ok and not _torch().cuda.is_available():
        return False, "PyTorch sees no CUDA GPU"
    return ok, why


def _torch_device() -> str:
    return "cuda" if _torch().cuda.is_available() else "cpu"


def _torch_timed(inputs: tuple[np.ndarray, ...], compute: Callable[..., Any]) -> tuple[Any, Timing]:
    """Upload, compute, download; split by CUDA events on a GPU, by host clocks on a CPU."""
    torch = _torch()
    device = _torch_device()
    gpu = device == "cuda"
    marks = [torch.cuda.Event(enable_timing=True) for _ in range(4)] if gpu else []
    clocks: list[float] = []

    def mark(i: int) -> None:
        if gpu:
            marks[i].record()
        clocks.append(time.perf_counter())

    mark(0)
    on_device = [torch.from_numpy(np.ascontiguousarray(a)).to(device) for a in inputs]
    mark(1)
    produced = compute(*on_device)
    mark(2)
    out = produced.cpu().numpy()
    mark(3)
    if gpu:
        marks[3].synchronize()
        split = [a.elapsed_time(b) * 1e-3 for a, b in zip(marks, marks[1:])]
    else:
        split = [b - a for a, b in zip(clocks, clocks[1:])]
    wall = time.perf_counter() - clocks[0]
    return out, Timing(upload=split[0], kernel=split[1], download=split[2], wall=wall)


def _torch_matmul(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, Timing]:
    return _torch_timed((a, b), lambda x, y: x @ y)


def _torch_scan(x: np.ndarray) -> tuple[np.ndarray, Timing]:
    torch = _torch()

    def compute(d: Any) -> Any:
        return torch.cumsum(d, 0, dtype=d.dtype) - d  # exclusive, exact in integers

    return _torch_timed((x,), compute)


def _torch_sort(keys: np.ndarray) -> tuple[np.ndarray, Timing]:
    # PyTorch has no uint32 sort; flipping the top bit maps unsigned order onto int32 order
    flipped = (keys ^ np.uint32(0x80000000)).view(np.int32)
    out, timing = _torch_timed((flipped,), lambda d: _torch().sort(d).values)
    return out.view(np.uint32) ^ np.uint32(0x80000000), timing


def _torch_sum(x: np.ndarray) -> tuple[Any, Timing]:
    total, timing = _torch_timed((x,), lambda d: d.sum())
    return np.asarray(total)[()], timing


def _torch_square(x: np.ndarray) -> tuple[np.ndarray, Timing]:
    return _torch_timed((x,), lambda d: d * d)


def _torch_multiply(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, Timing]:
    return _torch_timed((x, y), lambda d, e: d * e)


_TORCH: dict[str, dict[str, Callable[..., tuple[Any, Timing]]]] = {
    "matmul": {"torch_matmul": _torch_matmul},
    "skeletons.map": {"torch_multiply": _torch_square},
    "skeletons.zip": {"torch_multiply": _torch_multiply},
    "scan": {"torch_cumsum": _torch_scan},
    "sort": {"torch_sort": _torch_sort},
    "reduce": {"torch_sum": _torch_sum},
}
