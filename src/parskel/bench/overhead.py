"""The subjects of the ``overhead`` group of ``parskel bench`` (its cases are in :mod:`.cases`):
what one call costs, as users make them in loops.

Each case is a public call on a small input (``Map`` of x*x, ``Reduce`` to a host scalar,
``parskel.sort``, ``scan`` and ``matmul``) or on a large one whose data already sits on the GPU
(``parskel.scan`` of a CuPy array), timed as the median of many calls, each waited for, after
the program is built, beside the same operation in NumPy and CuPy. The figure is calls per
second; the time shown is one call.
"""

from __future__ import annotations

import importlib.util
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..runtime import Device, Timing
from .cases import Inputs, Subject, exclusive_cumsum

#: Calls per measured repetition; the repetition reports their median.
CALLS = 200

_SQUARE = "float f(float x) { return x * x; }"
_ADD = "float add(float a, float b) { return a + b; }"


def _repeated(
    call: Callable[[], Any], finish: Callable[[], None], host: Callable[[Any], Any] = lambda r: r
) -> Callable[[Inputs], tuple[Any, Timing]]:
    """A subject call: ``CALLS`` calls, each completed, reporting the median one as its time;
    the last result, brought to the host by ``host`` (outside the timing), is checked."""

    def run(inputs: Inputs) -> tuple[Any, Timing]:
        times = []
        result = None
        for _ in range(CALLS):
            start = time.perf_counter()
            result = call()
            finish()
            times.append(time.perf_counter() - start)
        return host(result), Timing(wall=statistics.median(times))

    return run


def _host(fn: Callable[[Inputs], Any]) -> Callable[[Inputs], tuple[Any, Timing]]:
    def run(inputs: Inputs) -> tuple[Any, Timing]:
        return _repeated(lambda: fn(inputs), lambda: None)(inputs)

    return run


def parskel_subjects(family: str, device: Device) -> list[Subject]:
    """parskel's public call for the case on ``device``; the skeletons are built once, outside."""
    import parskel as ps

    def subject(make: Callable[[Inputs], Callable[[], Any]], host: Callable[[Any], Any] = lambda r: r) -> Subject:
        prepared: dict[int, Callable[[], Any]] = {}

        def run(inputs: Inputs) -> tuple[Any, Timing]:
            key = id(inputs[0])
            if key not in prepared:
                prepared.clear()
                prepared[key] = make(inputs)
            return _repeated(prepared[key], device.finish, host)(inputs)

        return Subject(family, "parskel", "variant", device.id, run, default_at=lambda size: True)

    name = family.removeprefix("overhead.")
    if name == "map":
        square = ps.Map(_SQUARE)

        def map_call(inputs: Inputs) -> Callable[[], Any]:
            v = ps.Vector(inputs[0], copy=False, device=device)
            return lambda: square(v).numpy()  # type: ignore[union-attr]

        return [subject(map_call)]
    if name == "reduce":
        total = ps.Reduce(_ADD, identity=0)

        def reduce_call(inputs: Inputs) -> Callable[[], Any]:
            v = ps.Vector(inputs[0], copy=False, device=device)
            return lambda: total(v)

        return [subject(reduce_call)]
    if name == "launch":
        kernel = device.program("basics/vector_add.cl", {"T": "float"}).kernel("vector_add")

        def launch_call(inputs: Inputs) -> Callable[[], Any]:
            a, c = device.to_device(inputs[0]), device.alloc(inputs[0].nbytes)
            out = np.empty_like(inputs[0])

            def call() -> Any:
                device.launch(kernel, 1, 1, a, a, c, np.uint32(1))
                return out

            call()
            device.download(c, out)
            return call

        return [subject(launch_call)]
    if name == "sort":
        return [subject(lambda i: lambda: ps.sort(i[0], device=device))]
    if name == "scan":
        return [subject(lambda i: lambda: ps.scan(i[0], device=device))]
    if name == "matmul":
        return [subject(lambda i: lambda: ps.matmul(i[0], i[1], device=device))]
    if name == "scan_gpu" and device.backend == "cuda":
        import cupy

        def on_gpu(inputs: Inputs) -> Callable[[], Any]:
            x = cupy.asarray(inputs[0])
            return lambda: ps.scan(x, device=device)

        return [subject(on_gpu, host=lambda r: r.get())]
    return []


def peer_subjects(family: str, chosen: set[str], notes: list[str]) -> list[Subject]:
    """NumPy's and CuPy's call for the case."""
    name = family.removeprefix("overhead.")
    numpy_calls: dict[str, Callable[[Inputs], Any]] = {
        "map": lambda i: i[0] * i[0],
        "reduce": lambda i: i[0].sum(),
        "sort": lambda i: np.sort(i[0]),
        "scan": lambda i: exclusive_cumsum(i[0]),
        "matmul": lambda i: i[0] @ i[1],
    }
    found: list[Subject] = []
    if "numpy" in chosen and name in numpy_calls:
        found.append(Subject(family, "numpy", "peer", "host", _host(numpy_calls[name])))
    if "cupy" in chosen:
        found += _cupy_subjects(family, name, notes)
    return found


def _cupy_subjects(family: str, name: str, notes: list[str]) -> list[Subject]:
    from . import peers_cupy

    ok, why = peers_cupy.available()
    if not ok:
        if importlib.util.find_spec("cupy") is not None or "cuda" in why.lower():
            _note(notes, f"CuPy overhead peers skipped: {why}")
        return []
    import cupy

    # as parskel's calls: map, reduce and scan_gpu on data already on the GPU; sort, scan and
    # matmul from host arrays to a host array, so the upload is part of the call
    calls: dict[str, Callable[[Any], Any]] = {
        "map": lambda d: (d[0] * d[0]).get(),
        "reduce": lambda d: float(d[0].sum()),
        "sort": lambda h: cupy.sort(cupy.asarray(h[0])).get(),
        "scan": lambda h: cupy.cumsum(cupy.asarray(h[0])).get(),
        "matmul": lambda h: (cupy.asarray(h[0]) @ cupy.asarray(h[1])).get(),
        "scan_gpu": lambda d: cupy.cumsum(d[0]),
    }
    resident = name in ("map", "reduce", "scan_gpu")
    if name not in calls:
        return []
    fn = calls[name]
    staged: dict[int, Any] = {}

    def host(result: Any) -> Any:
        if name == "scan_gpu":
            result = result.get()
        if name in ("scan", "scan_gpu"):  # CuPy's cumsum is inclusive; the case is the exclusive scan
            return np.concatenate([np.zeros(1, result.dtype), result[:-1]])
        return result

    def run(inputs: Inputs) -> tuple[Any, Timing]:
        key = id(inputs[0])
        if key not in staged:
            staged.clear()
            staged[key] = [cupy.asarray(a) for a in inputs] if resident else list(inputs)
        given = staged[key]
        return _repeated(lambda: fn(given), cupy.cuda.Stream.null.synchronize, host)(inputs)

    return [Subject(family, "cupy", "peer", f"cupy:{peers_cupy.device_name()}", run)]


def _note(notes: list[str], note: str) -> None:
    if note not in notes:
        notes.append(note)
