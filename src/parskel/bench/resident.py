"""The ``resident`` group of ``parskel bench``: the GPU primitives on data that stays on the device.

Each subject copies its inputs to its device once per size; from then on every call reads and
writes device memory only, and is timed as a user makes it (CUDA events around the call on a
CUDA device, the host clock until ``finish()`` on OpenCL), its kernels from a recorded call
beside it. The result is copied back after the timing and checked against NumPy.

- On a CUDA device, parskel's public calls on CuPy arrays: ``parskel.sort`` (keys, and keys
  with values), ``parskel.scan``, the ``Reduce`` and ``Map`` skeletons on containers already on
  the device (into an ``out=`` container), ``parskel.matmul``.
- On an OpenCL device, where the public sorts, scans and products take host arrays, the
  functions they run on device buffers (:func:`parskel.algorithms.sorts.sort_words`,
  :func:`parskel.algorithms.scans.scan_buffer`, and on GPUs
  :func:`parskel.algorithms.xgemm.xgemm_buffers`) with the parameters a public call gets, and
  the same skeletons. A CPU's matmul (``packed_cpu``) takes host matrices: ``parskel bench
  matmul`` times it.
- Peers on the same GPU and the same device arrays: CuPy (its sort and sum are CUB's, its
  matmul cuBLAS's) and PyTorch; and CUB's own C++ (``cub_reference.cu``, built with ``nvcc``
  where it is found, the peer group ``cub``), run once in the same process, whose figures
  :func:`conclusions` sets beside parskel's.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..runtime import Device, Timing
from .cases import Inputs, Kind, Subject
from .e2e import against_gpu_peers
from .peers import note_once

if TYPE_CHECKING:
    from .harness import Result

_SQUARE = "float f(float x) { return x * x; }"
_ADD = "float add(float a, float b) { return a + b; }"


@dataclass(frozen=True)
class _Operation:
    """One way to run a case on device data: ``place(inputs)`` copies the inputs to the device
    (once per size), ``run(placed)`` enqueues the work and gives its device result, and
    ``fetch(placed, out)`` copies that result back as NumPy arrays."""

    place: Callable[[Inputs], Any]
    run: Callable[[Any], Any]
    fetch: Callable[[Any, Any], Any]


#: ``clock(call)``: the result of ``call()`` and its seconds, from its start to its work's end.
#: An untimed call and a wait come first, so that the timed one finds the device as a loop of
#: calls does: between measurements the host copies and checks results for a while, and an idle
#: GPU lowers its clocks (on an H200 a scan of 2^24 int32 took 0.47 ms a call after such a
#: pause, 0.13 ms right after another; CuPy's `cumsum` 0.35 and 0.15 ms).
Clock = Callable[[Callable[[], Any]], tuple[Any, float]]


def _cuda_clock(call: Callable[[], Any]) -> tuple[Any, float]:
    """``call()`` between two CUDA events on the current stream, as CuPy's users time it, right
    after an untimed call (see :data:`Clock`)."""
    import cupy as cp

    call()
    cp.cuda.Device().synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    out = call()
    end.record()
    end.synchronize()
    return out, cp.cuda.get_elapsed_time(start, end) * 1e-3


def _opencl_clock(device: Device) -> Clock:
    def clock(call: Callable[[], Any]) -> tuple[Any, float]:
        call()
        device.finish()
        start = time.perf_counter()
        out = call()
        device.finish()
        return out, time.perf_counter() - start

    return clock


def _timed_subject(
    family: str, name: str, kind: Kind, where: str, op: _Operation, clock: Clock, device: Device | None
) -> Subject:
    """A subject whose inputs are placed once per size: ``plain`` times the device work alone,
    ``call`` records it on ``device`` (parskel's) for the split, or gives no split (a peer)."""
    placed: dict[str, Any] = {}

    def on_device(inputs: Inputs) -> Any:
        if placed.get("inputs") is not inputs:
            placed.clear()  # the last size's arrays go before the next size's come
            placed["data"] = op.place(inputs)
            placed["inputs"] = inputs
        return placed["data"]

    def plain(inputs: Inputs) -> tuple[Any, float]:
        data = on_device(inputs)
        out, seconds = clock(lambda: op.run(data))
        return op.fetch(data, out), seconds

    def call(inputs: Inputs) -> tuple[Any, Timing | None]:
        data = on_device(inputs)
        if device is None:  # a peer: its time is the plain call's, with no split
            out, _ = clock(lambda: op.run(data))
            return op.fetch(data, out), None
        op.run(data)  # as before a timed call (see Clock)
        device.finish()
        with device.record() as rec:
            out = op.run(data)
        return op.fetch(data, out), rec.timing

    default = (lambda size: True) if kind == "variant" else (lambda size: False)
    return Subject(family, name, kind, where, call, default_at=default, plain=plain)


# parskel ------------------------------------------------------------------------------------


def _on_cupy(inputs: Inputs) -> tuple[Any, ...]:
    """The inputs as CuPy arrays on the current GPU."""
    import cupy as cp

    return tuple(cp.asarray(x) for x in inputs)


def _from_cupy(data: Any, out: Any) -> Any:
    """A CuPy result (or a tuple of them) as NumPy arrays."""
    import cupy as cp

    return tuple(cp.asnumpy(o) for o in out) if isinstance(out, tuple) else cp.asnumpy(out)


def _parskel_cuda(family: str, device: Device) -> _Operation | None:
    import parskel as ps

    def arrays(inputs: Inputs) -> tuple[Any, ...]:
        with device.current():
            return _on_cupy(inputs)

    calls: dict[str, Callable[[Any], Any]] = {
        "resident.sort": lambda d: ps.sort(d[0]),
        "resident.sort_pairs": lambda d: ps.sort(d[0], d[1]),
        "resident.scan": lambda d: ps.scan(d[0], inclusive=True),
        "resident.matmul": lambda d: ps.matmul(d[0], d[1]),
    }
    if family in calls:
        return _Operation(arrays, calls[family], _from_cupy)
    return _skeleton(family, device)


def _parskel_opencl(family: str, device: Device) -> _Operation | None:
    from ..algorithms import scans, sorts

    def buffers(inputs: Inputs) -> tuple[Any, ...]:
        return tuple((device.to_device(x), device.alloc(x.nbytes), x) for x in inputs)

    def words(data: Any) -> Any:
        (keys, out, x), *rest = data
        values, out_values = (rest[0][0], rest[0][1]) if rest else (None, None)
        sorts.sort_words(device, keys, values, out, out_values, x.size)
        return tuple(part[1] for part in data)

    def scanned(data: Any) -> Any:
        ((src, dst, x),) = data
        scans.scan_buffer(device, src, dst, x.size, x.dtype, inclusive=True)
        return (dst,)

    def back(data: Any, out: Any) -> Any:
        hosts = []
        for (_, _, x), buffer in zip(data, out):
            host = np.empty_like(x)
            device.download(buffer, host)
            hosts.append(host)
        return hosts[0] if len(hosts) == 1 else tuple(hosts)

    calls: dict[str, Callable[[Any], Any]] = {
        "resident.sort": words,
        "resident.sort_pairs": words,
        "resident.scan": scanned,
    }
    if family in calls:
        return _Operation(buffers, calls[family], back)
    if family == "resident.matmul":  # GPUs multiply with xgemm; a CPU's own matmul takes host matrices
        return _xgemm_on_buffers(device) if device.type == "gpu" else None
    return _skeleton(family, device)


def _xgemm_on_buffers(device: Device) -> _Operation:
    """``matmul/xgemm`` on device buffers (:func:`parskel.algorithms.xgemm.xgemm_buffers`), in
    the configuration a public call of the size takes on ``device`` (``xgemm`` or
    ``xgemm_small``, with their tuned parameters; ``xgemm``'s where the call would take another
    variant): the operands are copied, padded to whole tiles, once per size, and each call
    launches the kernel alone, as ``parskel.matmul`` does once its operands are on the device."""
    from ..algorithms import registry, xgemm
    from ..algorithms.matmuls import dispatch_context, padded_product

    def place(inputs: Inputs) -> tuple[Any, ...]:
        a, b = inputs
        context = dispatch_context(a, b)
        chosen, params = registry.dispatch("matmul", device, None, {}, lambda v, p: (v, p), context)
        if chosen.run is not xgemm.run_xgemm:
            params = registry.dispatch("matmul", device, "xgemm", {}, lambda v, p: p, context)
        sides, *buffers = padded_product(device, a, b, (params["MWG"], params["KWG"], params["NWG"]))
        return (*buffers, sides, params, np.empty((a.shape[0], b.shape[1]), a.dtype))

    def run(data: tuple[Any, ...]) -> Any:
        a, b, c, sides, params, host = data
        xgemm.xgemm_buffers(device, a, b, c, sides, host.dtype, **params)
        return c

    def back(data: tuple[Any, ...], c: Any) -> np.ndarray:
        *_, sides, _, host = data
        device.download_trimmed(c, (sides[0], sides[2]), host)
        return host

    return _Operation(place, run, back)


def _skeleton(family: str, device: Device) -> _Operation | None:
    """``Reduce`` and ``Map`` on a container already on ``device``, into an ``out=`` container."""
    import parskel as ps

    skeletons: dict[str, Any] = {
        "resident.reduce": (ps.Reduce(_ADD, identity=0), lambda n: 1),
        "resident.map": (ps.Map(_SQUARE), lambda n: n),
    }
    if family not in skeletons:
        return None
    skeleton, out_size = skeletons[family]

    def place(inputs: Inputs) -> tuple[Any, Any]:
        x = ps.Vector(inputs[0], device=device)
        return x, ps.Vector.empty(out_size(inputs[0].size), np.float32, device=device)

    def run(data: tuple[Any, Any]) -> Any:
        skeleton(data[0], out=data[1])
        return data[1]

    def back(data: Any, out: Any) -> Any:
        host = out.numpy()
        return host.reshape(()) if family == "resident.reduce" else host

    return _Operation(place, run, back)


def parskel_subject(family: str, device: Device, notes: list[str]) -> Subject | None:
    """parskel's call of ``family`` on ``device``'s memory, or None (with a note) where the
    device has none."""
    op = _parskel_cuda(family, device) if device.backend == "cuda" else _parskel_opencl(family, device)
    if op is None:
        note_once(notes, f"{family}: {device.id} multiplies host matrices; `parskel bench matmul` times them")
        return None
    clock = _cuda_clock if device.backend == "cuda" else _opencl_clock(device)
    return _timed_subject(family, "parskel", "variant", device.id, op, clock, device)


# peers --------------------------------------------------------------------------------------


def _cupy_peers(family: str) -> dict[str, _Operation]:
    import cupy as cp

    def pairs(d: Any) -> Any:
        order = cp.argsort(d[0])  # CUB's stable radix sort of the positions
        return d[0][order], d[1][order]

    def square(d: Any) -> Any:
        return cp.multiply(d[0], d[0], out=d[1])

    calls: dict[str, tuple[str, Callable[[Any], Any], Callable[[Inputs], Any]]] = {
        "resident.sort": ("cupy_sort", lambda d: cp.sort(d[0]), _on_cupy),
        "resident.sort_pairs": ("cupy_argsort", pairs, _on_cupy),
        "resident.scan": ("cupy_cumsum", lambda d: cp.cumsum(d[0], dtype=d[0].dtype), _on_cupy),
        "resident.reduce": ("cupy_sum", lambda d: cp.sum(d[0]), _on_cupy),
        "resident.map": ("cupy_multiply", square, lambda i: _with_out(_on_cupy(i), cp.empty_like)),
        "resident.matmul": ("cupy_matmul", lambda d: cp.matmul(d[0], d[1]), _on_cupy),
    }
    if family not in calls:
        return {}
    name, run, place = calls[family]
    return {name: _Operation(place, run, _from_cupy)}


def _torch_peers(family: str) -> dict[str, _Operation]:
    import torch

    def tensors(inputs: Inputs) -> tuple[Any, ...]:
        # PyTorch has no uint32 sort: the keys go as int64, which orders them the same
        return tuple(torch.from_numpy(x.astype(np.int64) if x.dtype == np.uint32 else x).cuda() for x in inputs)

    def back(data: Any, out: Any) -> Any:
        parts = out if isinstance(out, tuple) else (out,)
        hosts = tuple(p.cpu().numpy() for p in parts)
        return hosts if isinstance(out, tuple) else hosts[0]

    def pairs(d: Any) -> Any:
        keys, order = torch.sort(d[0], stable=True)
        return keys, d[1][order]

    def square(d: Any) -> Any:
        return torch.mul(d[0], d[0], out=d[1])

    calls: dict[str, tuple[str, Callable[[Any], Any], Callable[[Inputs], Any]]] = {
        "resident.sort": ("torch_sort", lambda d: torch.sort(d[0]).values, tensors),
        "resident.sort_pairs": ("torch_sort_stable", pairs, tensors),
        "resident.scan": ("torch_cumsum", lambda d: torch.cumsum(d[0], 0, dtype=d[0].dtype), tensors),
        "resident.reduce": ("torch_sum", lambda d: d[0].sum(), tensors),
        "resident.map": ("torch_mul", square, lambda i: _with_out(tensors(i), torch.empty_like)),
        "resident.matmul": ("torch_matmul", lambda d: d[0] @ d[1], tensors),
    }
    if family not in calls:
        return {}
    name, run, place = calls[family]
    return {name: _Operation(place, run, back)}


def _with_out(arrays: tuple[Any, ...], empty_like: Callable[[Any], Any]) -> tuple[Any, ...]:
    """The input arrays and an output like the first, for a peer that writes into it (as the
    ``Map`` subjects write into their ``out=`` containers)."""
    return (*arrays, empty_like(arrays[0]))


def peer_subjects(family: str, chosen: set[str], notes: list[str]) -> list[Subject]:
    """CuPy's and PyTorch's calls of ``family`` on the CUDA GPU's memory, where installed."""
    from . import peers as peer_lib
    from . import peers_cupy

    def torch_where() -> str:
        import torch

        return f"torch:{torch.cuda.get_device_name()}"

    groups = (
        ("cupy", "CuPy", peers_cupy.available, lambda: f"cupy:{peers_cupy.device_name()}", _cupy_peers),
        ("torch", "PyTorch", peer_lib.torch_on_gpu, torch_where, _torch_peers),
    )
    found: list[Subject] = []
    for group, label, available, where, operations in groups:
        if group not in chosen:
            continue
        ok, why = available()
        if not ok:
            note_once(notes, f"{label} peers skipped: {why}")
            continue
        at = where()
        for name, op in operations(family).items():
            found.append(_timed_subject(family, name, "peer", at, op, _cuda_clock, None))
    return found


def subjects(
    family: str, devices: Sequence[Device], chosen: set[str], notes: list[str], sizes: Sequence[int]
) -> list[Subject]:
    """parskel's call on each device, then CuPy's and PyTorch's; CUB's C++ runs once for the
    sizes (into :data:`_cub`) where asked and possible."""
    found = [s for s in (parskel_subject(family, d, notes) for d in devices) if s is not None]
    gpus = [d for d in devices if d.backend == "cuda"]
    if "cub" in chosen and family in CUB_WORK.values() and gpus:
        cub_reference(sizes, notes, gpus[0])
    return found + peer_subjects(family, chosen, notes)


# CUB's own C++ ------------------------------------------------------------------------------

#: CUB's figures of this process: (family, log2 of the size) -> seconds
_cub: dict[tuple[str, int], float] = {}
#: the lines of cub_reference.cu's output, by the resident family they stand beside
CUB_WORK = {
    "sort keys uint32": "resident.sort",
    "sort pairs uint32": "resident.sort_pairs",
    "inclusive scan int32": "resident.scan",
    "reduce sum float32": "resident.reduce",
    "copy": "resident.map",
}
_LINE = re.compile(r"^(?P<work>[a-z0-9 ]+?)\s+2\^(?P<log2>\d+)\s+(?P<ms>[0-9.]+) ms")


def parse_cub(text: str) -> dict[tuple[str, int], float]:
    """CUB's figures from ``cub_reference.cu``'s output: (resident family, log2) -> seconds.

    >>> found = parse_cub("# NVIDIA H200, CUB 3.0.1\\nsort keys uint32       2^24     0.468 ms     35.8 Gkeys/s")
    >>> {key: round(seconds * 1e3, 6) for key, seconds in found.items()}
    {('resident.sort', 24): 0.468}
    """
    found = {}
    for line in text.splitlines():
        match = _LINE.match(line.strip())
        if match and match["work"] in CUB_WORK:
            found[(CUB_WORK[match["work"]], int(match["log2"]))] = float(match["ms"]) / 1e3
    return found


def cub_reference(sizes: Sequence[int], notes: list[str], gpu: Device | None = None) -> None:
    """Build ``cub_reference.cu`` with ``nvcc`` for ``gpu`` (a CUDA device; else the first GPU)
    once (the binary is cached by the source's digest and the GPU's name) and run it there for
    the powers of two among ``sizes`` not run yet, into :data:`_cub`; a note says what it ran,
    or why it could not."""
    wanted = sorted({s.bit_length() - 1 for s in sizes if s > 0 and s & (s - 1) == 0} - {k for _, k in _cub})
    if not wanted:
        return
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        note_once(notes, "CUB's C++ reference skipped: nvcc is not on the PATH")
        return
    source = resources.files("parskel.bench").joinpath("cub_reference.cu").read_bytes()
    from platformdirs import user_cache_dir

    digest = hashlib.sha256(source + (gpu.name if gpu else "").encode()).hexdigest()[:16]
    env = dict(os.environ)
    if gpu is not None:  # the binary runs on its first visible GPU: this one
        env["CUDA_VISIBLE_DEVICES"] = gpu.id.removeprefix("cuda:")
    binary = Path(user_cache_dir("parskel")) / f"cub_reference-{digest}"
    try:
        if not binary.exists():
            binary.parent.mkdir(parents=True, exist_ok=True)
            code = binary.with_suffix(".cu")
            code.write_bytes(source)
            build = [nvcc, "-O3", "-arch=native", "-o", str(binary), str(code)]
            subprocess.run(build, check=True, capture_output=True, text=True, timeout=600, env=env)
        run = [str(binary), *map(str, wanted)]
        ran = subprocess.run(run, check=True, capture_output=True, text=True, timeout=600, env=env)
    except (subprocess.SubprocessError, OSError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        last = (str(detail).strip().splitlines() or [""])[-1]
        note_once(notes, f"CUB's C++ reference failed: {last}")
        return
    figures = parse_cub(ran.stdout)
    _cub.update(figures)
    header = ran.stdout.splitlines()[0].lstrip("# ") if ran.stdout else ""
    shown = ", ".join(f"2^{k}" for k in wanted)
    notes.append(f"CUB's C++ reference ({header}, cub_reference.cu built with nvcc) at {shown}")


def conclusions(results: Sequence[Result]) -> list[str]:
    """One line per parskel resident result: the call and its kernels, against CUB's C++ (a
    device copy for ``Map``) where it ran, and against CuPy and PyTorch."""
    lines = []
    for r in results:
        if not (r.family.startswith("resident.") and r.kind == "variant" and r.status == "ok" and r.e2e):
            continue
        power = r.size & (r.size - 1) == 0
        label = f"2^{r.size.bit_length() - 1}" if power and r.family != "resident.matmul" else f"{r.size}"
        text = f"{r.family} {label} on {r.where}: {r.e2e * 1e3:.3f} ms a call"
        if r.kernel:
            text += f", kernels {r.kernel * 1e3:.3f} ms"
        cub = _cub.get((r.family, r.size.bit_length() - 1)) if power else None
        if cub:
            what = "CUB's copy" if r.family == "resident.map" else "CUB's C++"
            text += f"; {what} {cub * 1e3:.3f} ms: {cub / r.e2e:.2f}x the call"
            if r.kernel:
                text += f", {cub / r.kernel:.2f}x the kernels"
        lines.append(text + against_gpu_peers(r, results, 3))
    return lines
